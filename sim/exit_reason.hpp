#pragma once
// Exit reasons with OTP's meanings. The kernel compares kinds, never text.

#include <cstdint>
#include <string>

#include "sim/atom.hpp"

namespace lic {

enum class ReasonKind : std::uint8_t {
  normal,        ///< ended its work; ignored by non-trapping linked processes
  shutdown,      ///< asked to stop (supervisors); a trapping gen_server runs terminate
  shutdown_term, ///< {shutdown, Term}
  kill,          ///< exit(Pid, kill) is untrappable; ending *oneself* with kill is ordinary
  killed,        ///< what a killed process's links and monitors see
  noproc,        ///< the process did not exist (monitor or link on a dead pid)
  noconnection,  ///< the node holding the other side was lost
  error,         ///< a crash: error(What), e.g. a thrown exception
  other,         ///< any other atom reason, e.g. exit(timeout)
};

struct Reason {
  ReasonKind kind = ReasonKind::normal;
  Atom detail;  ///< the Term of {shutdown, Term}, the What of error(What), the atom of other

  static Reason normal() { return {ReasonKind::normal, {}}; }
  static Reason shutdown() { return {ReasonKind::shutdown, {}}; }
  static Reason shutdown(Atom term) { return {ReasonKind::shutdown_term, term}; }
  static Reason kill() { return {ReasonKind::kill, {}}; }
  static Reason killed() { return {ReasonKind::killed, {}}; }
  static Reason noproc() { return {ReasonKind::noproc, {}}; }
  static Reason noconnection() { return {ReasonKind::noconnection, {}}; }
  static Reason error(Atom what) { return {ReasonKind::error, what}; }
  static Reason other(Atom what) { return {ReasonKind::other, what}; }

  bool operator==(const Reason&) const = default;
  /// normal, shutdown or {shutdown, _}: the reasons a transient child is not restarted for.
  bool is_clean() const {
    return kind == ReasonKind::normal || kind == ReasonKind::shutdown ||
           kind == ReasonKind::shutdown_term;
  }
};

/// Erlang-like text: normal, shutdown, {shutdown,T}, kill, killed, noproc, noconnection,
/// {error,What}, What. For reports and test messages; the kernel never calls it.
std::string to_string(const Reason& r);

/// The inverse of to_string for the forms it prints; false on anything else.
bool parse_reason(const std::string& text, Reason& out);

}  // namespace lic
