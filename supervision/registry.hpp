#pragma once
// Elixir's Registry with unique keys, and the "one process per key" pattern of seed 000 (a
// DynamicSupervisor + a Registry: ensure_session). The registry is a process: it maps keys to
// pids and links to every holder (as Elixir's does: if the registry dies, its holders die with
// it), forgetting a holder when it ends; registering a key that a live process holds fails with
// that pid, a key whose holder is dead is taken over, and lookup never answers a dead pid.
//
// `keyed(registry, key, behaviour)` wraps a behaviour so that its init registers the process
// under the key first and ignores the start when another holds it — the
// `name: {:via, Registry, {reg, key}}` of GenServer.start_link, without a crash in the trace. `ensure_started` is the pattern:
// look the key up, else start a keyed child under a dynamic supervisor, and if another process
// won the race, answer its pid. Two callers racing for one key get one process.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "sim/process.hpp"
#include "supervision/supervisor.hpp"

namespace lic::supervision {

class Registry final : public Behaviour {
 public:
  /// Registered under `name` (whereis) when not empty.
  explicit Registry(Atom name = {}) : name_(name) {}
  InitResult init(Context& ctx) override;
  CallReply handle_call(Context& ctx, const Message& m, From from) override;
  void handle_info(Context& ctx, const Message& m) override;
  /// The keys and their pids, read directly (tests, reports).
  const std::map<std::string, Pid>& entries() const { return keys_; }

 private:
  Atom name_;
  std::map<std::string, Pid> keys_;      // ordered: deterministic listings
  std::map<Pid, std::size_t> holders_;  // linked holders and how many keys each holds
};

struct RegisterResult {
  bool ok = false;
  Pid holder;  ///< when not ok: the live process holding the key
};

/// Registers the calling process under `key`.
RegisterResult register_key(Context& ctx, Pid registry, const std::string& key);
void unregister_key(Context& ctx, Pid registry, const std::string& key);
/// The pid holding `key`, or Pid{}.
Pid lookup(Context& ctx, Pid registry, const std::string& key);

/// `inner` started under `key`: init registers first; when another live process holds the key,
/// init returns ignore (the start is ok with no pid; the process ends `normal`).
std::unique_ptr<Behaviour> keyed(Atom registry, std::string key, std::unique_ptr<Behaviour> inner);

/// Seed 000's ensure_session: the pid under `key`, starting `make(key)` (wrapped by keyed())
/// under the dynamic supervisor `sup` when there is none. Pid{} when the start failed for
/// another reason (`error` says which).
Pid ensure_started(Context& ctx, Atom registry, Pid sup, const std::string& key,
                   const std::function<Child(const std::string&)>& make, Reason* error = nullptr);

}  // namespace lic::supervision
