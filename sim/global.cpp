// OTP's `global` under net ticks (docs/network.md, "global"): a name table replicated on every
// node, registration under global's lock on every known node, the name clash resolved when two
// nodes that both had a name connect again (random_exit_name: the lower pid keeps it, the other
// is killed), and OTP 25's prevent_overlapping_partitions. Read from lib/kernel/src/global.erl
// (OTP 25-27: set_lock_known, set_lock_on_nodes, handle_nodedown, inform_connection_loss,
// lost_connection, remove_connection) and held to recordings of real OTP 25 nodes
// (conformance/dist: global_clash, global_register_in_cut, three_node_overlap).
//
// The name servers are not processes: each node's table, lock and registrar queue live here, and
// their messages are kernel callbacks that go only where the connection, as each side sees it,
// carries them. A run that names nothing globally and has fewer than three nodes schedules
// nothing here (prevent_overlapping_partitions needs a third node).

#include <algorithm>
#include <stdexcept>

#include "sim/kernel.hpp"

namespace lic {

namespace {
const Atom kDisconnect("disconnect");
const Atom kRegistered("registered");
const Atom kUnregistered("unregistered");
const Atom kConflict("conflict");
/// global's server handling one of its messages (and writing the warning that goes with
/// prevent_overlapping_partitions): from the reporter's nodedown to the third node's disconnect,
/// two such hops, took 2.5 to 5.7 ms on loopback in 8 of 8 runs of three_node_overlap.
constexpr Duration kGlobalHandle = kMicrosecond * 1500;
/// From a new connection to the exchange of the two name tables (a clash is resolved then):
/// 201.6 and 201.7 ms after the second nodeup in the 2 runs of global_clash.
constexpr Duration kSyncDelay = kMillisecond * 200;
/// random_sleep(Times): uniform in [1, Tmax] ms, Tmax = 2^Times / 8 s up to Times 5, then 8 s.
Duration random_sleep(Rng& r, int times) {
  const std::int64_t tmax = times > 5 ? 8000 : (std::int64_t{1} << times) * 1000 / 8;
  return kMillisecond * r.uniform_range(1, tmax);
}
}  // namespace

GlobalNode& Simulation::Impl::gnode(std::uint32_t n) {
  if (gnodes.size() <= n) gnodes.resize(std::max<std::size_t>(nodes.size(), n + 1));
  return gnodes[n];
}

void Simulation::Impl::later(Time at, std::function<void()> fn) {
  const std::uint64_t id = queue.push(at, EventQueue::Item{kCallback, 0, 0});
  callbacks.emplace(id, std::move(fn));
}

void Simulation::Impl::require_global(const char* what) const {
  if (!ticks())
    throw std::logic_error(std::string(what) +
                           ": global names need net ticks (Simulation::set_net_ticks, or `network: {detection: ticks}` in a scenario)");
}

bool Simulation::Impl::g_known(std::uint32_t n, std::uint32_t j) {
  return j != n && nodes[j].up && nodes[j].hosted && side_up(n, j) && (n >= gnodes.size() || gnodes[n].removing.count(j) == 0);
}

std::vector<std::uint32_t> Simulation::Impl::g_known_list(std::uint32_t n) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t j = 0; j < nodes.size(); ++j)
    if (g_known(n, j)) out.push_back(j);
  std::sort(out.begin(), out.end(), [&](std::uint32_t x, std::uint32_t y) { return nodes[x].name.text() < nodes[y].name.text(); });
  return out;
}

void Simulation::Impl::note_global(std::uint32_t node, Pid pid, Pid other, const std::string& name, Atom why) {
  if (!sim.trace_.enabled()) return;
  TraceEvent e;
  e.time = sim.now_;
  e.kind = EventKind::global_name;
  e.node = nodes[node].name;
  e.pid = pid;
  e.other = other;
  e.tag = Atom(name);
  e.reason = Reason::other(why);
  sim.trace_.append(e);
}

// ---- registration: the registrar's trans_all_known -----------------------------------------

std::uint64_t Simulation::Impl::global_start(Process* caller, std::string name, Pid pid, bool reg) {
  const std::uint64_t id = next_gop++;
  gused = true;
  GlobalOp& op = gops[id];
  op.caller = caller->pid;
  op.node = caller->node_ix;
  op.name = std::move(name);
  op.pid = pid;
  const Process* target = find(pid);
  op.pid_node = target != nullptr ? target->node_ix : caller->node_ix;
  op.reg = reg;
  GlobalNode& g = gnode(op.node);
  g.ops.push_back(id);
  if (g.ops.size() == 1) g_try(id);  // else after the ones before it: one registrar a node
  return id;
}

void Simulation::Impl::g_try(std::uint64_t id) {
  GlobalOp& op = gops.at(id);
  // set_lock_known: global's lock on the boss (the greatest node name) first, then on all.
  op.known = g_known_list(op.node);
  op.nodes = op.known;
  op.nodes.insert(op.nodes.begin(), op.node);
  std::uint32_t boss = op.node;
  for (std::uint32_t j : op.known)
    if (nodes[j].name.text() > nodes[boss].name.text()) boss = j;
  g_phase(id, 1, {boss});
}

void Simulation::Impl::g_phase(std::uint64_t id, int phase, std::vector<std::uint32_t> to) {
  GlobalOp& op = gops.at(id);
  op.phase = phase;
  const std::uint64_t round = ++op.round;
  op.denied = false;
  op.outstanding = static_cast<int>(to.size());
  for (std::uint32_t j : to) g_rpc(id, round, j);
}

void Simulation::Impl::g_rpc(std::uint64_t id, std::uint64_t round, std::uint32_t j) {
  auto it = gops.find(id);
  if (it == gops.end() || it->second.round != round) return;
  const std::uint32_t n = it->second.node;
  if (j == n) {
    g_arrive(id, j);
    return g_reply(id, round);
  }
  // gen_server:multi_call. A node it cannot reach is a bad node (no reply), which
  // set_lock_on_nodes and the change both pass over; a call to a node not connected connects.
  if (!nodes[j].up || !nodes[n].up) return g_reply(id, round);
  if (!side_up(n, j) && !reach(n, j)) {
    if (attempting(n, j)) gwaits.push_back({id, round, n, j});  // held by the attempt
    else g_reply(id, round);
    return;
  }
  if (path_blocked(n, j) || path_blocked(j, n) || !side_up(j, n)) {
    // Into a cut, or to a side that dropped the connection unseen: it waits for the heal, or
    // fails when this side sees the connection go.
    gwaits.push_back({id, round, n, j});
    return;
  }
  const Time there = sim.now_ + effective(channel(n, j)).latency_min;
  const Time back = there + effective(channel(j, n)).latency_min;
  const std::uint32_t tj = conn(n, j).token[side_of(j, n)];
  later(there, [this, id, round, n, j, tj] {
    auto o = gops.find(id);
    if (o == gops.end() || o->second.round != round) return;
    if (conn(n, j).token[side_of(j, n)] != tj || !nodes[j].up) return;  // lost with the connection
    g_arrive(id, j);
  });
  later(back, [this, id, round] { g_reply(id, round); });
}

void Simulation::Impl::g_arrive(std::uint64_t id, std::uint32_t j) {
  GlobalOp& op = gops.at(id);
  GlobalNode& g = gnode(j);
  switch (op.phase) {
    case 1:
    case 2:  // {set_lock, {global, Registrar}}: free, or this registrar's already
      if (g.lock == 0 || g.lock == id) g.lock = id;
      else op.denied = true;
      break;
    case 3:  // {register, ...} / {unregister, ...}
      if (!op.reg) {
        g.names.erase(op.name);
      } else if (const Process* p = find(op.pid); p != nullptr && !p->dead) {
        g.names[op.name] = GlobalNode::Name{op.pid, op.pid_node};
      }
      break;
    case 4:
      if (g.lock == id) g.lock = 0;
      break;
    default:
      break;
  }
}

void Simulation::Impl::g_reply(std::uint64_t id, std::uint64_t round) {
  auto it = gops.find(id);
  if (it == gops.end() || it->second.round != round) return;
  if (--it->second.outstanding == 0) g_done(id);
}

void Simulation::Impl::g_done(std::uint64_t id) {
  GlobalOp& op = gops.at(id);
  switch (op.phase) {
    case 1:
      if (op.denied) return g_retry_later(id);
      return g_phase(id, 2, op.nodes);
    case 2: {
      // lock_on_known_nodes: locked everywhere, and no node became known meanwhile.
      bool grown = false;
      for (std::uint32_t j : g_known_list(op.node))
        if (std::find(op.known.begin(), op.known.end(), j) == op.known.end()) grown = true;
      if (op.denied || grown) {
        g_release(id);
        return g_retry_later(id);
      }
      // The registration's own test, on this node's table: the name free, the pid unnamed.
      GlobalNode& g = gnode(op.node);
      if (op.reg) {
        bool free = g.names.count(op.name) == 0;
        for (const auto& [nm, e] : g.names)
          if (e.pid == op.pid) free = false;
        op.result = free;
        if (!free) return g_phase(id, 4, op.nodes);
      } else {
        op.result = true;
      }
      return g_phase(id, 3, op.nodes);
    }
    case 3:
      note_global(op.node, op.pid, Pid{}, op.name, op.reg ? kRegistered : kUnregistered);
      return g_phase(id, 4, op.nodes);
    default:
      return g_finish(id);
  }
}

void Simulation::Impl::g_release(std::uint64_t id) {
  // del_lock where this try holds it (taken as instant: the retry sleeps long after it).
  for (GlobalNode& g : gnodes)
    if (g.lock == id) g.lock = 0;
}

void Simulation::Impl::g_retry_later(std::uint64_t id) {
  GlobalOp& op = gops.at(id);
  const std::uint64_t round = ++op.round;  // nothing of the failed try counts any more
  Rng r = sim.root_rng_.derive("global").derive(nodes[op.node].name.text()).derive(id).derive(static_cast<std::uint64_t>(op.times));
  const Duration d = random_sleep(r, op.times++);
  later(sim.now_ + d, [this, id, round] {
    auto it = gops.find(id);
    if (it != gops.end() && it->second.round == round) g_try(id);
  });
}

void Simulation::Impl::g_finish(std::uint64_t id) {
  auto it = gops.find(id);
  const GlobalOp op = std::move(it->second);
  gops.erase(it);
  g_release(id);
  GlobalNode& g = gnode(op.node);
  if (!g.ops.empty() && g.ops.front() == id) g.ops.pop_front();
  if (Process* c = find(op.caller); c != nullptr && !c->dead) {
    gresults[id] = op.result;
    unpark(c);
  }
  if (!g.ops.empty()) g_try(g.ops.front());
}

void Simulation::Impl::g_wake(std::uint32_t from, std::uint32_t to, bool fail) {
  std::vector<GlobalWait> woken;
  std::erase_if(gwaits, [&](const GlobalWait& w) {
    if (w.from != from || w.to != to) return false;
    woken.push_back(w);
    return true;
  });
  for (const GlobalWait& w : woken) {
    if (fail) g_reply(w.op, w.round);
    else g_rpc(w.op, w.round, w.to);
  }
}

void Simulation::Impl::g_fail_later(std::uint32_t from, std::uint32_t to) {
  std::vector<GlobalWait> failed;
  std::erase_if(gwaits, [&](const GlobalWait& w) {
    if (w.from != from || w.to != to) return false;
    failed.push_back(w);
    return true;
  });
  if (failed.empty()) return;
  later(sim.now_, [this, failed] {
    for (const GlobalWait& w : failed) g_reply(w.op, w.round);
  });
}

void Simulation::Impl::g_wake_pair(std::uint32_t a, std::uint32_t b, bool fail) {
  if (gwaits.empty()) return;
  g_wake(a, b, fail);
  g_wake(b, a, fail);
}

// ---- the servers' messages -------------------------------------------------------------------

void Simulation::Impl::g_send(std::uint32_t from, std::uint32_t to, std::function<void()> fn) {
  // gns_volatile_send: [noconnect], so only over a connection this side has. One sent into a cut
  // waits in TCP: it lands after the heal if the connection survives it (global_healed).
  if (!nodes[to].up || !side_up(from, to)) return;
  const std::uint32_t tt = conn(from, to).token[side_of(to, from)];
  if (path_blocked(from, to)) {
    gheld.push_back({from, to, tt, std::move(fn)});
    return;
  }
  later(sim.now_ + effective(channel(from, to)).latency_min + kGlobalHandle, [this, from, to, tt, fn = std::move(fn)] {
    if (!nodes[to].up || conn(from, to).token[side_of(to, from)] != tt || !side_up(to, from)) return;
    fn();
  });
}

void Simulation::Impl::g_forget_node(std::uint32_t n, std::uint32_t o) {
  GlobalNode& g = gnode(n);
  std::erase_if(g.names, [&](const auto& e) { return e.second.node == o; });
  if (g.lock != 0) {
    auto it = gops.find(g.lock);
    if (it == gops.end() || it->second.node == o) g.lock = 0;
  }
}

void Simulation::Impl::global_nodedown(std::uint32_t s, std::uint32_t o) {
  if (!gused && (nodes.size() < 3 || !net.prevent_overlapping_partitions)) return;  // nothing to do
  if (!nodes[s].hosted) return;  // a node only named runs no global (its ticks are the model's)
  g_forget_node(s, o);
  g_fail_later(s, o);
  GlobalNode& g = gnode(s);
  const bool removing = g.removing.erase(o) != 0;
  if (!net.prevent_overlapping_partitions || removing) return;
  // inform_connection_loss: every other node s knows hears that s lost o.
  const std::uint64_t opid = ++lost_ops;
  for (std::uint32_t c : g_known_list(s)) {
    if (c == o) continue;
    g_send(s, c, [this, c, s, opid, o] { g_lost_connection(c, s, opid, o); });
  }
}

void Simulation::Impl::g_lost_connection(std::uint32_t c, std::uint32_t a, std::uint64_t opid, std::uint32_t b) {
  GlobalNode& g = gnode(c);
  auto seen = g.lost_seen.find({a, b});
  if (seen != g.lost_seen.end() && opid <= seen->second) return;  // handled already
  g.lost_seen[{a, b}] = opid;
  // Passed on to every node c knows but a, so all hear of it even if a loses some meanwhile.
  for (std::uint32_t j : g_known_list(c)) {
    if (j == a) continue;
    g_send(c, j, [this, j, a, opid, b] { g_lost_connection(j, a, opid, b); });
  }
  const std::uint32_t rm = c == b ? a : b;
  if (!g_known(c, rm)) return;
  g_send(c, rm, [this, rm, c] { g_remove_connection(rm, c); });
  gnode(c).removing.insert(rm);
  g_forget_node(c, rm);
  g_fail_later(c, rm);
}

void Simulation::Impl::g_remove_connection(std::uint32_t x, std::uint32_t c) {
  // OTP ignores a remove_connection from a node it is removing itself (is_node_potentially_known
  // is false then). Two nodes that each heard a stale lost_connection about the other after a
  // quick reconnect then stay connected for ever, each with the other's names dropped (the
  // global property found it): here the connection goes either way. A departure from
  // global.erl, not recorded on real nodes.
  if (!g_known(x, c) && !(nodes[c].up && side_up(x, c) && gnode(x).removing.count(c) != 0)) return;
  gnode(x).removing.insert(c);
  lose_side(x, c, kDisconnect);  // net_kernel:async_disconnect; c sees the close
}

// ---- the tables' upkeep ------------------------------------------------------------------------

void Simulation::Impl::global_exit(const Process* p) {
  // Each node's global monitors the pids in its table: the DOWN reaches it across the
  // connection, or the connection's end removes the name (global_nodedown).
  for (std::uint32_t j = 0; j < gnodes.size(); ++j) {
    GlobalNode& g = gnodes[j];
    for (auto it = g.names.begin(); it != g.names.end();) {
      if (it->second.pid != p->pid) {
        ++it;
        continue;
      }
      const std::uint32_t n = p->node_ix;
      if (j == n || !nodes[j].up) {
        it = g.names.erase(it);
        continue;
      }
      if (side_up(n, j) && side_up(j, n) && !path_blocked(n, j)) {
        const std::string name = it->first;
        const Pid pid = p->pid;
        later(sim.now_ + effective(channel(n, j)).latency_min, [this, j, name, pid] {
          GlobalNode& h = gnode(j);
          auto e = h.names.find(name);
          if (e != h.names.end() && e->second.pid == pid) h.names.erase(e);
        });
      }
      ++it;
    }
  }
}

void Simulation::Impl::global_healed(std::uint32_t a, std::uint32_t b) {
  if (!gheld.empty()) {
    std::vector<GlobalHeld> held;
    std::erase_if(gheld, [&](GlobalHeld& h) {
      if (!((h.from == a && h.to == b) || (h.from == b && h.to == a))) return false;
      held.push_back(std::move(h));
      return true;
    });
    for (GlobalHeld& h : held)
      if (conn(h.from, h.to).token[side_of(h.to, h.from)] == h.token) g_send(h.from, h.to, std::move(h.fn));
  }
  if (!gused) return;
  // A name's process that ended during the cut: its DOWN was held too.
  for (const auto& [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
    const Duration lat = effective(channel(y, x)).latency_min;
    std::vector<std::pair<std::string, Pid>> gone;
    for (const auto& [name, e] : gnode(x).names)
      if (e.node == y && find(e.pid) == nullptr) gone.emplace_back(name, e.pid);
    for (const auto& g : gone) {
      later(sim.now_ + lat, [this, x = x, name = g.first, pid = g.second] {
        GlobalNode& h = gnode(x);
        auto it = h.names.find(name);
        if (it != h.names.end() && it->second.pid == pid) h.names.erase(it);
      });
    }
  }
  g_wake_pair(a, b, false);
}

void Simulation::Impl::global_crash(std::uint32_t n) {
  if (gnodes.size() <= n) return;
  GlobalNode& g = gnodes[n];
  // Its global server dies with it: the table, the lock, the registrar's queue.
  for (std::uint64_t id : g.ops) gops.erase(id);
  std::erase_if(gwaits, [&](const GlobalWait& w) { return w.from == n; });
  g = GlobalNode{};
}

void Simulation::Impl::global_connected(std::uint32_t a, std::uint32_t b) {
  g_wake_pair(a, b, false);
  if (!gused) return;
  const Time up_at = conn(a, b).up_at;
  later(sim.now_ + kSyncDelay, [this, a, b, up_at] { g_sync(a, b, up_at); });
}

void Simulation::Impl::g_sync(std::uint32_t a, std::uint32_t b, Time up_at) {
  if (conn(a, b).up_at != up_at || !side_up(a, b) || !side_up(b, a) || !nodes[a].up || !nodes[b].up) return;
  // The two tables merge; a name both have for different pids goes to the lower pid (node name
  // first, as Erlang orders pids of different nodes), and the other is killed (random_exit_name).
  std::map<std::string, GlobalNode::Name, std::less<>> merged = gnode(a).names;
  const auto lower = [&](const GlobalNode::Name& x, const GlobalNode::Name& y) {
    const std::string_view nx = nodes[x.node].name.text(), ny = nodes[y.node].name.text();
    return nx != ny ? nx < ny : x.pid.id < y.pid.id;
  };
  std::vector<std::pair<std::string, std::pair<GlobalNode::Name, GlobalNode::Name>>> clashes;
  for (const auto& [name, e] : gnode(b).names) {
    auto it = merged.find(name);
    if (it == merged.end()) {
      merged.emplace(name, e);
    } else if (it->second.pid != e.pid) {
      const GlobalNode::Name keep = lower(it->second, e) ? it->second : e;
      const GlobalNode::Name lose = lower(it->second, e) ? e : it->second;
      it->second = keep;
      clashes.push_back({name, {keep, lose}});
    }
  }
  // Both partitions take the merged table.
  std::set<std::uint32_t> to{a, b};
  for (std::uint32_t j : g_known_list(a)) to.insert(j);
  for (std::uint32_t j : g_known_list(b)) to.insert(j);
  for (std::uint32_t j : to) gnode(j).names = merged;
  for (const auto& [name, kl] : clashes) {
    const auto& [keep, lose] = kl;
    note_global(lose.node, keep.pid, lose.pid, name, kConflict);
    if (Process* l = find(lose.pid); l != nullptr && !l->dead) sim.exit(lose.pid, Reason::kill());
  }
}

}  // namespace lic
