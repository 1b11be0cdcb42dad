#include "reports/escape.hpp"

#include <fmt/format.h>

namespace lic::reports {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\xef\xbf\xbd";  // U+FFFD: XML 1.0 has no way to write these
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string dot_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += is_continuation(c) ? 0 : 1;
  return n;
}

const char* const kEllipsis = "\xe2\x80\xa6";

}  // namespace

std::string truncate_left(std::string_view text, std::size_t max_chars) {
  if (code_points(text) <= max_chars) return std::string(text);
  if (max_chars == 0) return {};
  // Keep the last max_chars - 1 code points after the ellipsis.
  std::size_t keep = max_chars - 1;
  std::size_t at = text.size();
  while (at > 0 && keep > 0) {
    --at;
    if (!is_continuation(text[at])) --keep;
  }
  return kEllipsis + std::string(text.substr(at));
}

std::string truncate_right(std::string_view text, std::size_t max_chars) {
  if (code_points(text) <= max_chars) return std::string(text);
  if (max_chars == 0) return {};
  // Keep the first max_chars - 1 code points: stop at the lead byte of the next one.
  std::size_t keep = max_chars - 1;
  std::size_t at = 0;
  for (; at < text.size(); ++at) {
    if (!is_continuation(text[at]) && keep-- == 0) break;
  }
  return std::string(text.substr(0, at)) + kEllipsis;
}

std::string hash_hex(std::uint64_t h) { return fmt::format("{:016x}", h); }

}  // namespace lic::reports
