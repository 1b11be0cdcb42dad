// Fuzz target: the command line's parser (issue 18, docs/robustness.md). The bytes are split at
// NUL into arguments after the program name and parsed with every option's check, as
// `letitcrash` parses them; nothing runs (cli_parse_only). The answer is 0 or 2 with a message;
// anything else (an abort, a sanitizer report, an uncaught exception) is a finding. The parser's
// messages go to stderr: tools/fuzz/run.sh passes -close_fd_mask=3 (libFuzzer keeps its own).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/letitcrash/cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words{"letitcrash"};
  std::string word;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(data[i]);
    }
  }
  if (!word.empty() || size == 0) words.push_back(word);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int rc = lic::cli_parse_only(static_cast<int>(words.size()), argv.data());
  if (rc != 0 && rc != 2) {
    std::fprintf(stderr, "cli_fuzz: exit code %d\n", rc);
    std::abort();
  }
  return 0;
}
