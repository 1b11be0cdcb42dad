#pragma once
// A configurable worker for testing supervisors (the start of issue 5's stock catalogue): init's
// result per start attempt, an init that takes time, a crash on request, and a stop that is
// prompt, slow or stalled. The reference-model harness, the supervision tests and the
// availability tests all use it.

#include <string_view>
#include <vector>

#include "sim/process.hpp"
#include "sim/simulation.hpp"
#include "supervision/supervisor.hpp"

namespace lic::supervision {

/// Tag of the message that makes a stock worker crash: the payload is the exit Reason.
extern const Atom kCrash;

/// How a worker stops when its supervisor asks (`shutdown`): at once (it does not trap exits),
/// after a delay (terminate takes it), or never (terminate blocks until the worker is killed).
/// A crash is always immediate.
enum class StopStyle : std::uint8_t { prompt, delay, stall };

struct WorkerConfig {
  /// init's result for start attempt k (the label's instance): inits[k-1], the last repeating;
  /// empty: always ok.
  std::vector<InitResult> inits{};
  Duration init_delay{};  ///< init sleeps this long first (a slow start, a repair time)
  StopStyle stop = StopStyle::prompt;
  Duration stop_delay{};  ///< with StopStyle::delay
};

class StockWorker final : public Behaviour {
 public:
  explicit StockWorker(WorkerConfig config) : config_(std::move(config)) {}
  InitResult init(Context& ctx) override;
  void handle_info(Context& ctx, const Message& m) override;
  void terminate(Context& ctx, const Reason& r) override;

 private:
  WorkerConfig config_;
  bool crashing_ = false;
};

/// A child entry that starts a StockWorker with `config`.
Child stock_child(ChildSpec spec, WorkerConfig config);

/// The live process whose label names `path` (a tree path), or Pid{}.
Pid find_by_path(const Simulation& sim, std::string_view path);

}  // namespace lic::supervision
