#include "scenarios/file/read.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "scenarios/file/fix.hpp"
#include "scenarios/file/reader.hpp"
#include "scenarios/file/validate.hpp"

// The reader's parts live in reader.hpp and the files it names; here they are put together.

namespace lic::scenarios {

using reading::one_document;
using reading::read_scenario;
using reading::Reader;
using reading::unreadable_byte;
using reading::utf8_length;

ParseResult parse_scenario(std::string_view text, const std::string& file, const Registry& registry) {
  ParseResult out;
  out.scenario.file = file;
  if (text.size() > kMaxScenarioBytes) {
    out.errors.push_back({Mark{1, 1}, fmt::format("the file is larger than a scenario file may be ({} bytes; the limit "
                                                  "is {} MiB)", text.size(), kMaxScenarioBytes >> 20)});
    return out;
  }
  if (std::optional<Diagnostic> bad = unreadable_byte(text)) {
    out.errors.push_back(std::move(*bad));
    return out;
  }
  const std::optional<YAML::Node> parsed = one_document(text, out.errors);
  if (!parsed) return out;
  const YAML::Node doc = *parsed;
  if (!doc || doc.IsNull()) {
    out.errors.push_back({Mark{1, 1}, "the file is empty: a scenario needs at least `scenario` and `tree`"});
    return out;
  }
  Reader rd;
  read_scenario(rd, doc, out.scenario, registry);
  out.errors = std::move(rd.errors);
  // The whole-scenario checks can trust only what was read without mistakes; run them when the
  // reading went well, or when the mistakes were elsewhere (they are still worth reporting).
  validate_into(out.scenario, registry, out.errors);
  // A known bug's fix must apply: every path it names is in the trees, and the fixed file reads.
  if (out.errors.empty() && !out.scenario.fix.empty())
    for (Diagnostic& d : apply_fix(out.scenario, registry).errors) out.errors.push_back(std::move(d));
  std::stable_sort(out.errors.begin(), out.errors.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::pair(a.mark.line, a.mark.col) < std::pair(b.mark.line, b.mark.col);
  });
  // The same mistake found twice (by the reader and the validator) is reported once.
  out.errors.erase(std::unique(out.errors.begin(), out.errors.end(),
                               [](const Diagnostic& a, const Diagnostic& b) {
                                 return a.mark.line == b.mark.line && a.mark.col == b.mark.col && a.message == b.message;
                               }),
                   out.errors.end());
  return out;
}

ParseResult load_scenario(const std::filesystem::path& path, const Registry& registry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult r;
    r.scenario.file = path.string();
    r.errors.push_back({Mark{}, "cannot read the file"});
    return r;
  }
  // Read at most one byte past the limit: an endless input (a character device, a pipe that
  // never closes) is refused at the limit instead of read until memory runs out.
  std::string text(kMaxScenarioBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) {
    ParseResult r;
    r.scenario.file = path.string();
    r.errors.push_back({Mark{}, "cannot read the file"});
    return r;
  }
  return parse_scenario(text, path.string(), registry);
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length(text, i);
    const bool ok = len != 0;
    const bool control = (len == 1 && ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F)) ||
                         (ok && len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F);
    if (!ok || control) {
      const std::size_t n = ok ? len : 1;
      for (std::size_t k = 0; k < n; ++k) out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i + k]));
      i += n;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::string format_diagnostic(const std::string& file, const Diagnostic& d) {
  return printable(file + ":" + std::to_string(d.mark.line) + ":" + std::to_string(d.mark.col) + ": " + d.message);
}

}  // namespace lic::scenarios
