#pragma once
// OTP's child specification and supervisor flags, with OTP's defaults (supervisor(3)).
// Data only: the supervisor process (issue 3) and the scenario parser (issue 5) fill them in.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/atom.hpp"
#include "sim/time.hpp"

namespace lic::supervision {

enum class RestartType : std::uint8_t {
  permanent,  ///< always restarted
  transient,  ///< restarted unless it ended normal, shutdown or {shutdown, _}
  temporary,  ///< never restarted
};

enum class ChildType : std::uint8_t { worker, supervisor };

enum class Strategy : std::uint8_t { one_for_one, one_for_all, rest_for_one, simple_one_for_one };

enum class AutoShutdown : std::uint8_t { never, any_significant, all_significant };

/// How a child is stopped: brutal_kill (kill at once), a timeout (shutdown, then kill after the
/// timeout), or infinity (shutdown, wait for ever).
struct Shutdown {
  enum class Kind : std::uint8_t { brutal_kill, timeout, infinity };
  Kind kind = Kind::timeout;
  Duration timeout = kSecond * 5;

  static Shutdown brutal_kill() { return {Kind::brutal_kill, {}}; }
  static Shutdown after(Duration d) { return {Kind::timeout, d}; }
  static Shutdown infinity() { return {Kind::infinity, {}}; }
  bool operator==(const Shutdown&) const = default;
};

struct ChildSpec {
  std::string id;
  RestartType restart = RestartType::permanent;
  ChildType type = ChildType::worker;
  /// OTP's default: 5000 ms for a worker, infinity for a supervisor (see default_shutdown).
  Shutdown shutdown = Shutdown::after(kSecond * 5);
  bool significant = false;
  /// The node the child runs on; empty: its supervisor's node.
  Atom node{};
  /// A bounded mailbox (seed 002's backpressure): at most this many messages waiting (0: no
  /// bound); when full, a message is dropped, or with mailbox_block a sender on the node waits.
  std::uint32_t mailbox_max = 0;
  bool mailbox_block = false;
  bool operator==(const ChildSpec&) const = default;
};

/// OTP's default shutdown for a child of this type.
inline Shutdown default_shutdown(ChildType t) {
  return t == ChildType::supervisor ? Shutdown::infinity() : Shutdown::after(kSecond * 5);
}

/// How the restart window is measured (docs/supervision.md).
enum class IntensityWindow : std::uint8_t {
  otp_seconds,  ///< OTP's rule: restart times floored to whole seconds of monotonic time
  precise,      ///< a restart counts while it is at most `period` old, to the nanosecond
};

struct SupFlags {
  Strategy strategy = Strategy::one_for_one;
  std::uint32_t intensity = 1;  ///< MaxR: OTP's default 1 (Elixir's is 3)
  Duration period = kSecond * 5;  ///< MaxT: OTP's default 5 s (Elixir's too)
  AutoShutdown auto_shutdown = AutoShutdown::never;
  IntensityWindow window = IntensityWindow::otp_seconds;
  /// DynamicSupervisor's max_children: start_child fails with max_children at this many
  /// children (simple_one_for_one only); nothing: no limit.
  std::optional<std::uint32_t> max_children;

  bool operator==(const SupFlags&) const = default;
  static SupFlags otp() { return {}; }
  static SupFlags elixir() {
    SupFlags f;
    f.intensity = 3;
    return f;
  }
};

std::string_view to_string(RestartType t);
std::string_view to_string(Strategy s);
std::string_view to_string(ChildType t);
std::string_view to_string(AutoShutdown a);
bool parse_restart_type(std::string_view text, RestartType& out);
bool parse_strategy(std::string_view text, Strategy& out);
bool parse_child_type(std::string_view text, ChildType& out);
bool parse_auto_shutdown(std::string_view text, AutoShutdown& out);

}  // namespace lic::supervision
