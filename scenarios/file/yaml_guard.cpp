// What the scenario reader refuses before yaml-cpp builds a document (reader.hpp): bytes that are
// not UTF-8 or are control characters, aliases that expand past the node limit, nesting past
// yaml-cpp's depth, a second document.
#include "scenarios/file/reader.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <sstream>

namespace lic::scenarios::reading {

using supervision::ChildType;
using supervision::Shutdown;

/// The length of the well-formed UTF-8 sequence at text[i] (1 to 4 bytes), or 0 when the bytes
/// there are not one (a stray continuation byte, a cut-off sequence, an overlong 2-byte form).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > text.size() || (len == 2 && c < 0xC2)) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return 0;
  return len;
}

/// Where `text` stops being what YAML reads: a byte that is not UTF-8, or a control character
/// (YAML allows tab, line feed and carriage return only). Names reach JSON and terminals, so this
/// is refused here, at its line and column, not later by a writer.
std::optional<Diagnostic> unreadable_byte(std::string_view text) {
  int line = 1;
  int col = 1;
  for (std::size_t i = 0; i < text.size(); ++col) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length(text, i);
    const bool ok = len != 0;
    if (!ok) return Diagnostic{{line, col}, fmt::format("the file is not UTF-8: byte 0x{:02X} (scenario files are UTF-8 text)", c)};
    if (len == 1 && ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F))
      return Diagnostic{{line, col}, fmt::format("a control character (0x{:02X}) is not allowed in a scenario file", c)};
    if (c == '\n') line += 1, col = 0;
    i += len;
  }
  return std::nullopt;
}

Mark mark_of(const YAML::Mark& m) { return m.is_null() ? Mark{} : Mark{m.line + 1, m.column + 1}; }

/// Where the walk of past_node_limit stopped, and why.
struct Overrun {
  YAML::Node at;
  enum class Why : std::uint8_t { count, depth, cycle } why = Why::count;
};

/// Counts the nodes the reader will visit, an alias counting its whole value each time it is
/// used, and stops at the limit: a YAML alias bomb is a small file that expands to billions of
/// nodes. It also stops where the values, aliases expanded, nest deeper than a file without
/// aliases can (kYamlNesting): an alias inside its own value (`&d [a, *d]`) nests for ever, and
/// walking it overflowed the stack. Returns where it stopped, if it did.
std::optional<Overrun> past_node_limit(const YAML::Node& n, std::size_t& left, std::vector<YAML::Node>& path) {
  if (left == 0) return Overrun{n, Overrun::Why::count};
  if (path.size() > static_cast<std::size_t>(kYamlNesting) + 1) {
    for (std::size_t i = 0; i < path.size(); ++i)
      for (std::size_t j = i + 1; j < path.size(); ++j)
        if (path[i].is(path[j])) return Overrun{path[j], Overrun::Why::cycle};
    return Overrun{n, Overrun::Why::depth};
  }
  --left;
  if (!n.IsMap() && !n.IsSequence()) return std::nullopt;
  path.push_back(n);
  std::optional<Overrun> out;
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end() && !out; ++it)
      if (!(out = past_node_limit(it->first, left, path))) out = past_node_limit(it->second, left, path);
  } else {
    for (auto it = n.begin(); it != n.end() && !out; ++it) out = past_node_limit(*it, left, path);
  }
  path.pop_back();
  return out;
}

/// Where each document of a YAML stream starts (the parser's events, no nodes built).
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

/// The file's one document; a second one is an error at its start (it would be ignored).
/// yaml-cpp 0.7's LoadAll loops for ever on a token no document can start with (a lone ',':
/// yaml-cpp issue 1040, fixed upstream in 2024 by PR 1319), so the documents are counted here,
/// at most two, and a document that starts where the last one did is that stray token.
std::optional<YAML::Node> one_document(std::string_view text, std::vector<Diagnostic>& errors) {
  YAML::Node doc;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    DocumentStarts docs;
    for (int i = 0; i < 2 && parser.HandleNextDocument(docs); ++i) {
    }
    if (docs.starts.size() == 2 && docs.starts[0].pos == docs.starts[1].pos) {
      const YAML::Mark m = docs.starts[0];
      const std::size_t at = static_cast<std::size_t>(std::max(m.pos, 0));
      errors.push_back({mark_of(m), fmt::format("YAML: no value can start with '{}' here", at < text.size() ? text.substr(at, 1) : "")});
      return std::nullopt;
    }
    if (docs.starts.size() == 2) {
      errors.push_back({mark_of(docs.starts[1]), "a scenario file holds one YAML document; a second one starts here (split it into two files)"});
      return std::nullopt;
    }
    doc = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    errors.push_back({mark_of(e.mark), fmt::format("the file nests maps and lists deeper than the YAML reader allows "
                                                   "(yaml-cpp stops at {} levels of its own recursion: {} levels of maps "
                                                   "and lists, a tree {} supervisors deep below its root)",
                                                   kYamlRecursion, kYamlNesting, kYamlTreeDepth)});
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    errors.push_back({e.mark.is_null() ? Mark{} : Mark{e.mark.line + 1, e.mark.column + 1}, "YAML: " + e.msg});
    return std::nullopt;
  }
  if (!doc) return YAML::Node();
  std::size_t left = kMaxYamlNodes;
  std::vector<YAML::Node> path;
  if (const std::optional<Overrun> o = past_node_limit(doc, left, path)) {
    const Mark at = mark_of(o->at.Mark());
    switch (o->why) {
      case Overrun::Why::count:
        errors.push_back({at, fmt::format("the file expands to more than {} YAML values (an alias counts its whole "
                                          "value each time it is used): this is where the count ran out",
                                          kMaxYamlNodes)});
        break;
      case Overrun::Why::cycle:
        errors.push_back({at, "this value contains an alias of itself (as in `&d [a, *d]`): it would nest for ever"});
        break;
      case Overrun::Why::depth:
        errors.push_back({at, fmt::format("the file, its aliases expanded, nests maps and lists deeper than {} levels "
                                          "(the most a file without aliases can)", kYamlNesting)});
        break;
    }
    return std::nullopt;
  }
  return doc;
}


}  // namespace lic::scenarios::reading
