#pragma once
// Escaping for the text formats the reports write (XML and HTML, Graphviz DOT) and shortening a
// label to fit. Internal to reports/.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lic::reports {

/// Text safe inside an XML or HTML element or a double- or single-quoted attribute: & < > " '
/// become references, a newline or tab becomes a character reference (attributes keep them),
/// and the control characters XML 1.0 forbids become U+FFFD.
std::string xml_escape(std::string_view text);

/// The inside of a double-quoted DOT string: `"` and `\` escaped, a newline as Graphviz's
/// centred line break `\n`.
std::string dot_escape(std::string_view text);

/// At most `max_chars` characters (UTF-8 code points): the end of `text`, after "…", when it is
/// longer (a tree path is told apart by its end).
std::string truncate_left(std::string_view text, std::size_t max_chars);

/// At most `max_chars` characters: the start of `text`, then "…", when it is longer.
std::string truncate_right(std::string_view text, std::size_t max_chars);

/// The 16-digit hex form of a trace hash, as the CLI prints it.
std::string hash_hex(std::uint64_t h);

}  // namespace lic::reports
