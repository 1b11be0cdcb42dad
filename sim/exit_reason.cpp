#include "sim/exit_reason.hpp"

namespace lic {

std::string to_string(const Reason& r) {
  switch (r.kind) {
    case ReasonKind::normal: return "normal";
    case ReasonKind::shutdown: return "shutdown";
    case ReasonKind::shutdown_term: return "{shutdown," + std::string(r.detail.text()) + "}";
    case ReasonKind::kill: return "kill";
    case ReasonKind::killed: return "killed";
    case ReasonKind::noproc: return "noproc";
    case ReasonKind::noconnection: return "noconnection";
    case ReasonKind::error: return "{error," + std::string(r.detail.text()) + "}";
    case ReasonKind::other: return std::string(r.detail.text());
  }
  return "?";
}

bool parse_reason(const std::string& text, Reason& out) {
  auto wrapped = [&](const std::string& head, std::string& inner) {
    const std::string open = "{" + head + ",";
    if (text.size() <= open.size() + 1 || text.compare(0, open.size(), open) != 0 ||
        text.back() != '}')
      return false;
    inner = text.substr(open.size(), text.size() - open.size() - 1);
    return !inner.empty();
  };
  std::string inner;
  if (text == "normal") out = Reason::normal();
  else if (text == "shutdown") out = Reason::shutdown();
  else if (text == "kill") out = Reason::kill();
  else if (text == "killed") out = Reason::killed();
  else if (text == "noproc") out = Reason::noproc();
  else if (text == "noconnection") out = Reason::noconnection();
  else if (wrapped("shutdown", inner)) out = Reason::shutdown(Atom(inner));
  else if (wrapped("error", inner)) out = Reason::error(Atom(inner));
  else if (!text.empty() && text.find_first_of("{},") == std::string::npos)
    out = Reason::other(Atom(text));
  else return false;
  return true;
}

}  // namespace lic
