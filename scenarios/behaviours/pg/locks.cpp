// Advisory locks (server.hpp): per database, in two key spaces (one bigint; two int4), at
// session or transaction level, exclusive or shared; granted at once, or a statement waits in
// line (at most lock_timeout: 55P03) and looks for a deadlock after deadlock_timeout (40P01).
// As PostgreSQL's lock manager does it (lock.c LockAcquireExtended, proc.c ProcSleep and
// ProcLockWakeup, deadlock.c): two modes, ShareLock and ExclusiveLock; exclusive conflicts
// with both, shared with exclusive only. Every acquisition of an exclusive bigint lock in the
// default database takes the next fencing token, which a fenced write is checked against (the
// tables, server.cpp). When a statement ends, and with it a transaction or a session, is
// session.cpp's: it lets go of their locks through release_level and drop.
#include "scenarios/behaviours/pg/server.hpp"

#include <cstddef>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "properties/leader.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios::pg::detail {

namespace ev = properties::leader;

namespace {

Key key_of(const std::string& db, const Query& q) {
  return q.lock2 ? Key{db, 2, q.lock, *q.lock2} : Key{db, 1, q.lock, 0};
}

bool default_space(const Key& k) { return std::get<0>(k) == kDefaultDb && std::get<1>(k) == 1; }

constexpr unsigned kShareMode = 1, kExclMode = 2;
unsigned mode_of(bool shared) { return shared ? kShareMode : kExclMode; }
/// Whether `mode` conflicts with any mode in `mask` (the conflict table).
bool conflict(unsigned mode, unsigned mask) { return mode == kExclMode ? mask != 0 : (mask & kExclMode) != 0; }

unsigned modes(const Hold& x) {
  return (x.exclusive() > 0 ? kExclMode : 0) | (x.shared[0] + x.shared[1] > 0 ? kShareMode : 0);
}

Result deadlock() { return sql_error("40P01", "deadlock detected"); }

}  // namespace

/// The modes session `id` holds on `key`, at either level.
unsigned Server::held(const Key& key, std::int64_t id) const {
  const auto it = locks_.find(key);
  if (it == locks_.end()) return 0;
  const auto h = it->second.find(id);
  if (h == it->second.end()) return 0;
  return modes(h->second);
}

/// Whether another session's hold on `key` conflicts with `mode` (LockCheckConflicts: a
/// session never conflicts with itself).
bool Server::conflicts(const Key& key, std::int64_t id, unsigned mode) const {
  const auto it = locks_.find(key);
  if (it == locks_.end()) return false;
  for (const auto& [other, h] : it->second)
    if (other != id && conflict(mode, modes(h))) return true;
  return false;
}

/// The modes waited for on `key` (the lock's waitMask).
unsigned Server::wait_mask(const Key& key) const {
  unsigned m = 0;
  for (const Waiter& w : waiters_)
    if (w.key == key) m |= mode_of(w.q.q.shared);
  return m;
}

/// LockAcquire's first steps: a mode the session holds already is granted at once (its local
/// lock table); otherwise a request that conflicts with a waiter's, or with another session's
/// hold, must wait.
bool Server::grantable(const Key& key, std::int64_t id, unsigned mode) const {
  if ((held(key, id) & mode) != 0) return true;
  return !conflict(mode, wait_mask(key)) && !conflicts(key, id, mode);
}

/// Takes `key` for session `id`; the fencing token of the default database's exclusive
/// bigint locks (0 for others).
std::int64_t Server::take(Context& ctx, std::int64_t id, Session& s, const Key& key, bool shared, bool xact) {
  Hold& h = locks_[key][id];
  s.keys.insert(key);
  const bool first = h.exclusive() == 0;
  (shared ? h.shared : h.excl)[xact ? 1 : 0] += 1;
  if (shared || !default_space(key)) return 0;
  const std::int64_t lock = std::get<2>(key);
  if (!first) return d_->tokens[lock];  // re-entrant: the same session takes it again
  // The same node again, with an epoch that moves only with the holder's node: the same token.
  const bool keep = !c_.epoch_every_acquisition && d_->tokens[lock] != 0 && d_->token_node[lock] == s.node;
  const std::int64_t token = keep ? d_->tokens[lock] : ++d_->tokens[lock];
  d_->token_node[lock] = s.node;
  ctx.emit(ev::kLock, {{ev::kLockKey, lock}, {ev::kSessionKey, id}, {keys::kNode, s.node}, {ev::kToken, token}});
  return token;
}

/// Drops holds of session `id` on `key` (`level` 0 session, 1 transaction; -1 both) and
/// grants what waited for them.
void Server::drop(Context& ctx, std::int64_t id, const Key& key, int level, const char* why) {
  const auto it = locks_.find(key);
  if (it == locks_.end() || !it->second.contains(id)) return;
  Hold& h = it->second[id];
  const bool had = h.exclusive() > 0;
  for (int l = 0; l < 2; ++l)
    if (level < 0 || level == l) h.excl[l] = h.shared[l] = 0;
  released(ctx, id, key, had && h.exclusive() == 0, why);
}

/// After a hold went down: the unlock event, the key forgotten when nobody holds it, waiters.
void Server::released(Context& ctx, std::int64_t id, const Key& key, bool exclusive_gone, const char* why) {
  auto& holds = locks_[key];
  const auto s = sessions_.find(id);
  if (exclusive_gone && default_space(key))
    ctx.emit(ev::kUnlock, {{ev::kLockKey, std::get<2>(key)}, {ev::kSessionKey, id},
                           {keys::kNode, s != sessions_.end() ? s->second.node : Atom()}, {keys::kWhy, Atom(why)}});
  if (holds[id].empty()) {
    holds.erase(id);
    if (s != sessions_.end() && !waits_on(id, key)) s->second.keys.erase(key);
  }
  if (holds.empty()) locks_.erase(key);
  grant_waiters(ctx, key);
}

bool Server::waits_on(std::int64_t id, const Key& key) const {
  for (const Waiter& w : waiters_)
    if (w.q.session == id && w.key == key) return true;
  return false;
}

Result Server::try_lock(Context& ctx, std::int64_t id, Session& s, const Query& q) {
  Result r;
  const Key key = key_of(s.db, q);
  if (!grantable(key, id, mode_of(q.shared))) return r;
  r.value = true;
  r.token = take(ctx, id, s, key, q.shared, q.xact);
  return r;
}

/// Who holds the lock (not the asker) and how long that session has been idle, as pg_locks
/// joined with pg_stat_activity says: a session running a statement has been idle for no time.
Result Server::holder(Context& ctx, std::int64_t id, const Session& s, const Query& q) const {
  Result r;
  const auto it = locks_.find(key_of(s.db, q));
  if (it == locks_.end()) return r;
  for (const auto& [sid, hold] : it->second) {
    const auto h = sessions_.find(sid);
    if (sid == id || h == sessions_.end()) continue;
    r.value = true;
    r.holder = sid;
    r.idle = h->second.busy ? Duration::zero() : ctx.now() - h->second.state_change;
    break;
  }
  return r;
}

/// pg_advisory_lock: granted now, or it waits (at most lock_timeout) in line. A session that
/// holds a mode a waiter needs goes ahead of that waiter, and is granted at once when nothing
/// ahead of it stands in the way; if it must also wait for that waiter, that is a deadlock,
/// found at once (ProcSleep). Otherwise it joins the end of the line.
void Server::lock(Context& ctx, const Sql& q, Session& s) {
  const Key key = key_of(s.db, q.q);
  const unsigned mode = mode_of(q.q.shared);
  if (grantable(key, q.session, mode)) return granted(ctx, q, s, key);
  auto at = waiters_.end();
  if (const unsigned mine = held(key, q.session); mine != 0) {
    unsigned ahead = 0;
    for (auto w = waiters_.begin(); w != waiters_.end(); ++w) {
      if (w->key != key) continue;
      if (conflict(mode_of(w->q.q.shared), mine)) {
        if (conflict(mode, held(key, w->q.session))) return finish(ctx, q, deadlock());
        if (!conflict(mode, ahead) && !conflicts(key, q.session, mode)) return granted(ctx, q, s, key);
        at = w;
        break;
      }
      ahead |= mode_of(w->q.q.shared);
    }
  }
  waiters_.insert(at, Waiter{q, key, ++waiter_gen_});
  s.keys.insert(key);
  if (s.lock_timeout > Duration::zero())
    ctx.send_after(s.lock_timeout, ctx.self(), kLockWait, Waiting{q.session, q.qid});
  if (s.deadlock_timeout > Duration::zero())
    ctx.send_after(s.deadlock_timeout, ctx.self(), kDeadlockCheck, Waiting{q.session, q.qid});
}

void Server::granted(Context& ctx, const Sql& q, Session& s, const Key& key) {
  Result r;
  r.token = take(ctx, q.session, s, key, q.q.shared, q.q.xact);
  finish(ctx, q, r);
}

/// ProcLockWakeup: in line order, every waiter on `key` that neither a hold nor a waiter
/// ahead of it stands in the way of. A grant ends a statement, which may release locks and
/// wake waiters in turn, so the walk starts again after each.
void Server::grant_waiters(Context& ctx, const Key& key) {
  for (bool again = true; again;) {
    again = false;
    unsigned ahead = 0;
    for (std::size_t i = 0; i < waiters_.size(); ++i) {
      const Waiter w = waiters_[i];
      if (w.key != key) continue;
      const unsigned mode = mode_of(w.q.q.shared);
      // A waiter sent SIGTERM takes nothing (it wakes only to die, answering nothing), and stands
      // in the line until it is gone: those behind it wait for its end.
      if (conflict(mode, ahead) || conflicts(key, w.q.session, mode) || sessions_.at(w.q.session).terminating) {
        ahead |= mode;
        continue;
      }
      waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      granted(ctx, w.q, sessions_.at(w.q.session), key);
      again = true;
      break;
    }
  }
}

/// A waiting statement gives up (lock_timeout: 55P03; a deadlock: 40P01).
bool Server::give_up(Context& ctx, const Waiting& w, const Result& why) {
  for (std::size_t i = 0; i < waiters_.size(); ++i) {
    if (waiters_[i].q.session != w.session || waiters_[i].q.qid != w.qid) continue;
    const Waiter gone = waiters_[i];
    waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
    finish(ctx, gone.q, why);
    grant_waiters(ctx, gone.key);  // a shared waiter behind it may go now
    return true;
  }
  return false;
}

void Server::lock_timeout(Context& ctx, const Waiting& w) {
  give_up(ctx, w, sql_error("55P03", "canceling statement due to lock timeout"));
}

/// deadlock_timeout after a statement began to wait, it looks once for a cycle of sessions
/// each waiting for a lock another holds in a conflicting mode (CheckDeadLock); one through
/// it fails its statement (40P01). Queue-order ("soft") cycles, which PostgreSQL breaks by
/// reordering the line, are not modelled: only cycles of holds.
void Server::deadlock_check(Context& ctx, const Waiting& w) {
  if (waiting(w.session) == nullptr || waiting(w.session)->q.qid != w.qid) return;
  std::set<std::int64_t> seen;
  if (waits_for(w.session, w.session, seen)) give_up(ctx, w, deadlock());
}

const Waiter* Server::waiting(std::int64_t id) const {
  for (const Waiter& x : waiters_)
    if (x.q.session == id) return &x;
  return nullptr;
}

/// Whether session `from` waits, through holders that wait in turn, for session `target`.
bool Server::waits_for(std::int64_t from, std::int64_t target, std::set<std::int64_t>& seen) const {
  const Waiter* w = waiting(from);
  if (w == nullptr || !seen.insert(from).second) return false;
  const auto it = locks_.find(w->key);
  if (it == locks_.end()) return false;
  for (const auto& [holder, h] : it->second) {
    if (holder == from || !conflict(mode_of(w->q.q.shared), modes(h))) continue;
    if (holder == target || waits_for(holder, target, seen)) return true;
  }
  return false;
}

/// pg_advisory_unlock(_shared): one session-level hold less, or false and a WARNING.
Result Server::unlock_one(Context& ctx, std::int64_t id, const Session& s, const Query& q) {
  Result r;
  const Key key = key_of(s.db, q);
  const auto it = locks_.find(key);
  Hold* h = it != locks_.end() && it->second.contains(id) ? &it->second[id] : nullptr;
  std::int64_t* count = h == nullptr ? nullptr : q.shared ? &h->shared[0] : &h->excl[0];
  if (count == nullptr || *count == 0) {
    r.notices.push_back(std::string("you don't own a lock of type ") + (q.shared ? "ShareLock" : "ExclusiveLock"));
    return r;
  }
  --*count;
  r.value = true;
  released(ctx, id, key, !q.shared && h->exclusive() == 0, "unlock");
  return r;
}

void Server::release_level(Context& ctx, std::int64_t id, const Session& s, int level) {
  for (const Key& key : std::set<Key>(s.keys)) drop(ctx, id, key, level, "unlock");
}

void Server::unlock_all(Context& ctx, std::int64_t id, const Session& s) { release_level(ctx, id, s, 0); }

}  // namespace lic::scenarios::pg::detail
