#pragma once
// A configurable worker for testing supervisors, and the body of every stock behaviour in the
// scenario catalogue (scenarios/catalogue.cpp): init's result per start attempt, an init that
// takes time, a crash on request or on its own schedule (after a fixed time, or an exponential
// one), a periodic tick, an echo, and a stop that is prompt, slow or stalled. The
// reference-model harness, the supervision tests and the availability tests all use it.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/process.hpp"
#include "sim/simulation.hpp"
#include "supervision/supervisor.hpp"
#include "supervision/tree_path.hpp"

namespace lic::supervision {

/// Tag of the message that makes a stock worker crash: the payload is the exit Reason.
extern const Atom kCrash;
/// Tag of a ticking worker's timer message, and the name of the system event it traces
/// (`tick {n}`, n counting from 1 in each incarnation).
extern const Atom kTick;

/// How a worker stops for an exit signal from its parent (`shutdown`, any other reason, or an
/// orphan's `killed`): at once (it does not trap exits), after a delay (terminate takes it, as
/// a trapping gen_server's terminate runs for any reason from its parent), or never (terminate
/// blocks until the worker is killed). Its own crash is always immediate.
enum class StopStyle : std::uint8_t { prompt, delay, stall };

/// A crash a worker plans for itself at the end of each successful init: `time` later (after),
/// or after a time drawn from its own random stream, exponential with mean `time`.
struct SelfCrash {
  enum class Kind : std::uint8_t { none, after, exponential };
  Kind kind = Kind::none;
  Duration time{};
  Reason reason = Reason::error(Atom("crash"));
};

struct WorkerConfig {
  /// init's result for start attempt k (the label's instance): inits[k-1], the last repeating;
  /// empty: always ok.
  std::vector<InitResult> inits{};
  Duration init_delay{};  ///< init sleeps this long first (a slow start, a repair time)
  StopStyle stop = StopStyle::prompt;
  Duration stop_delay{};  ///< with StopStyle::delay
  SelfCrash crash{};
  /// Sends itself a tick every `tick` from the end of init and traces each one.
  std::optional<Duration> tick{};
  /// With tick: ends `normal` after this many ticks (0: never).
  std::uint64_t ticks_max = 0;
  /// Answers every call with its own tag and payload, and sends a plain message from another
  /// process back to it.
  bool echo = false;
};

class StockWorker final : public Behaviour {
 public:
  explicit StockWorker(WorkerConfig config) : config_(std::move(config)) {}
  InitResult init(Context& ctx) override;
  CallReply handle_call(Context& ctx, const Message& m, From from) override;
  void handle_info(Context& ctx, const Message& m) override;
  void terminate(Context& ctx, const Reason& r) override;

 private:
  void on_tick(Context& ctx);

  WorkerConfig config_;
  bool crashing_ = false;
  std::uint64_t ticks_ = 0;
};

/// A child entry that starts a StockWorker with `config`.
Child stock_child(ChildSpec spec, WorkerConfig config);

}  // namespace lic::supervision
