// Fuzz target: the reading of a sweep's results file (issue 34, docs/robustness.md), as `merge`
// and a resumed `sweep` read it. The bytes are written to a file; it is merged with itself (every
// seed twice, through spilled sorted runs of a few lines each and the k-way merge; the merged
// file merged again, which must read back with as many seeds), and, when its header reads, a
// sweep of that header resumes a copy of it. Each line also goes through the fast line readers
// (search/json_line.hpp), whose answer, where they give one, must be nlohmann's DOM's. A file
// that is not one a sweep wrote is bad input (an error naming its line); anything else (an
// abort, a sanitizer report, an uncaught exception, a merged file that does not read back, a
// fast reader that reads a line otherwise than the DOM) is a finding.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/search/json_line.hpp"
#include "scenarios/search/results_file.hpp"

namespace {

bool write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool written = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && written;
}

/// The fast line readers (search/json_line.hpp) against nlohmann's DOM, line by line: where
/// one answers, its answer must be the DOM's.
void check_fast_readers(std::string_view text) {
  using namespace lic::scenarios;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (const std::optional<nlohmann::json> fast = parse_json_line(line)) {
      const nlohmann::json dom = nlohmann::json::parse(line, nullptr, false);
      if (dom.is_discarded() || !identical_json(*fast, dom)) {
        std::fprintf(stderr, "the fast JSON reader's value differs from nlohmann's\n");
        std::abort();
      }
    }
    if (const std::optional<SeedResult> fast = read_result_line(line)) {
      const std::optional<SeedResult> dom = read_result_json(line);
      if (!dom || !(*dom == *fast)) {
        std::fprintf(stderr, "the fast result reader's result differs from the DOM reader's\n");
        std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lic::scenarios;
  check_fast_readers(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string base = "/tmp/lic-results-fuzz." + std::to_string(::getpid());
  const std::string in = base + ".jsonl", merged = base + ".merged.jsonl", resumed = base + ".resumed.jsonl";
  if (!write_file(in, data, size) || !write_file(resumed, data, size)) return 0;
  // merge: one input alone, written back, and the written file merged again.
  // A chunk of 256 bytes: a few lines a sorted run, so the spill and the k-way merge run too.
  MergeOptions small;
  small.chunk_bytes = 256;
  Merged m;
  std::uint64_t counted = 0;
  if (merge_results({in, in}, merged, m, [&counted](const SeedResult&) { ++counted; }, small).empty()) {
    Merged again;
    const std::string error = merge_results({merged}, merged + ".again", again);
    std::remove((merged + ".again").c_str());
    if (!error.empty() || again.seeds != m.seeds || counted != m.seeds) {
      std::fprintf(stderr, "a merged file does not read back: %s\n", error.c_str());
      std::abort();
    }
  }
  // resume: a sweep of the file's own header opens a copy of it to append to.
  ResultsReader reader(in);
  SeedRange range;
  Shard shard;
  if (reader.exists() && reader.error().empty() && !reader.empty() && parse_seed_range(reader.header().seeds, range).empty() &&
      parse_shard(reader.header().shard, shard).empty()) {
    ResultsWriter w;
    std::vector<std::string> notes;
    if (w.open(resumed, reader.header(), range, shard, false, notes).empty()) (void)w.close();
  }
  std::remove(in.c_str());
  std::remove(merged.c_str());
  std::remove(resumed.c_str());
  return 0;
}
