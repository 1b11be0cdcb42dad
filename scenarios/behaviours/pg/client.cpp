// The client's side of a connection (pg.hpp's Conn): the driver's connection process on the
// client's node, which owns the session's socket and plays the client's OS. Its owner calls it
// (open, query, close); it sends each query and keeps it until the server's OS acknowledges it
// (sent again meanwhile, until TCP gives up), acknowledges each answer (delayed up to 40 ms, or
// sooner with the next query, as Linux's delayed ACK), answers the server's
// keepalive probes whatever its owner is doing, runs libpq's keepalives while the connection is
// idle, and fails a query after its command timeout. What crosses to the server is wire.hpp's,
// TCP's timers tcp.hpp's; the server's end of the connection is wire.cpp.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/behaviours/pg.hpp"
#include "scenarios/behaviours/pg/tcp.hpp"
#include "scenarios/behaviours/pg/wire.hpp"

namespace lic::scenarios::pg {

using namespace detail;  // the wire and TCP, which this end shares with the server

namespace {

// The owner <-> its connection process.
const Atom kOpen("conn_open");
const Atom kQuery("conn_query");
const Atom kShut("conn_close");
const Atom kQueryTimeout("$query_timeout");

/// The driver's connection: a process on the client's node that owns the session (the socket
/// and the client's OS), forwards its owner's queries, answers keepalive probes at any time,
/// sends unacknowledged queries again, probes an idle connection with libpq's keepalives, and
/// gives up on a query after its command timeout.
class ConnProc final : public Behaviour {
 public:
  ConnProc(Atom server, Pid owner, ClientOptions o) : server_(server), owner_(owner), o_(std::move(o)) {}

  /// The socket is the owner's: an abnormal end takes it down through the link (the OS resets
  /// it); a normal one is seen here, and the OS closes it (FIN).
  InitResult init(Context& ctx) override {
    ctx.raw_network(true);  // its messages are the TCP connection's segments (this file models TCP)
    ctx.monitor(owner_);
    ka_.idle = o_.keepalives_idle > Duration::zero() ? o_.keepalives_idle : kSecond * 7200;
    ka_.interval = o_.keepalives_interval > Duration::zero() ? o_.keepalives_interval : kSecond * 75;
    ka_.count = o_.keepalives_count > 0 ? o_.keepalives_count : 9;
    ka_.user_timeout = o_.tcp_user_timeout;
    return InitResult::ok();
  }

  CallReply handle_call(Context& ctx, const Message& m, From from) override {
    if (m.tag == kOpen) return open(ctx);
    if (m.tag == kShut) {
      if (session_ != 0 && !dead_) ctx.send(server_, kClose, session_);
      ctx.stop(Reason::normal());
      return CallReply::reply(kShut);
    }
    if (m.tag != kQuery) return CallReply::noreply();
    const auto& [q, timeout] = *m.payload.get<std::pair<Query, Duration>>();
    if (dead_) return CallReply::reply(kAnswer, gone());  // the socket is closed
    const std::uint64_t qid = ++next_qid_;
    pending_[qid] = from;
    ack_now(ctx);  // the query carries the ACK held back
    const Sql sql{session_, qid, ctx.self(), q, out_->segs.empty() ? qid : out_->segs.front().qid};
    ctx.send(server_, kSql, sql);
    if (out_->add(ctx.now(), sql)) ctx.send_after(linux_timer(ctx.now(), out_->rto), ctx.self(), kRto, Tick{0, out_->gen});
    ctx.send_after(timeout, ctx.self(), kQueryTimeout, qid);
    return CallReply::noreply();
  }

  void handle_info(Context& ctx, const Message& m) override {
    if (m.kind == MsgKind::down) {  // the owner ended without closing
      if (session_ != 0 && !dead_) ctx.send(server_, kClose, session_);
      ctx.stop(Reason::normal());
      return;
    }
    if (m.tag == kQueryTimeout) return timed_out(ctx, *m.payload.get<std::uint64_t>());
    if (m.tag == kRto) return retransmit(ctx, *m.payload.get<Tick>());
    if (m.tag == kDelAck) {
      if (!dead_ && m.payload.get<Tick>()->gen == delack_gen_) ack_now(ctx);
      return;
    }
    if (m.tag == kKeepalive) return keepalive(ctx, *m.payload.get<Tick>());
    if (dead_) return;  // the socket is closed: nothing more arrives
    heard(ctx);
    if (m.tag == kProbe) {
      ack_now(ctx);  // the probe's answer acknowledges everything received
      ctx.send(server_, kAck, session_);
    } else if (m.tag == kAnswer) {
      const Answer& a = *m.payload.get<Answer>();
      if (a.r.status == Result::Status::no_connection) return lost(ctx, a.r.sqlstate);  // a reset
      received(ctx, a.qid);
      answer(ctx, a.qid, a.r);
    } else if (m.tag == kDataAck) {
      if (out_->acked(ctx.now(), m.payload.get<std::pair<std::int64_t, std::uint64_t>>()->second))
        ctx.send_after(linux_timer(ctx.now(), out_->rto), ctx.self(), kRto, Tick{0, out_->gen});
    } else if (m.tag == kBye) {
      lost(ctx, m.payload.get<Bye>()->sqlstate);
    }
  }

 private:
  CallReply open(Context& ctx) {
    const Hello h{ctx.self(), ctx.node(), o_.database, o_.set, out_};
    const CallResult r = ctx.call(server_, kConnect, h, kSecond * 10);
    if (!r.ok() || r.reply->payload.get<std::int64_t>() == nullptr) {
      ctx.stop(Reason::normal());
      return CallReply::reply(kOpen, std::int64_t{0});
    }
    session_ = *r.reply->payload.get<std::int64_t>();
    heard(ctx);
    return CallReply::reply(kOpen, session_);
  }

  /// Anything from the server: the client's keepalive starts again.
  void heard(Context& ctx) {
    const bool first = ka_.gen == 0;
    if ((ka_.heard(ctx.now()) || first) && o_.keepalives) arm(ctx, ka_.idle);
  }

  void arm(Context& ctx, Duration wait) {
    ++ka_.gen;
    ctx.send_after(linux_timer(ctx.now(), wait), ctx.self(), kKeepalive, Tick{0, ka_.gen});
  }

  /// An answer arrived. Its ACK waits kDelayedAck for a query to ride on, as Linux's delayed ACK
  /// does in an interactive exchange; a copy of one already received (a retransmission) is
  /// acknowledged at once, as Linux's duplicate ACK is.
  void received(Context& ctx, std::uint64_t qid) {
    if (qid <= highest_got_) {
      ctx.send(server_, kDataAck, std::pair<std::int64_t, std::uint64_t>{session_, qid});
      return;
    }
    highest_got_ = qid;
    held_acks_.push_back(qid);
    if (held_acks_.size() == 1) ctx.send_after(linux_timer(ctx.now(), kDelayedAck), ctx.self(), kDelAck, Tick{0, ++delack_gen_});
  }

  /// The ACKs held back go now (alone when the timer fires, or ahead of the segment that carries them).
  void ack_now(Context& ctx) {
    for (const std::uint64_t qid : held_acks_) ctx.send(server_, kDataAck, std::pair<std::int64_t, std::uint64_t>{session_, qid});
    held_acks_.clear();
    ++delack_gen_;
  }

  void keepalive(Context& ctx, const Tick& t) {
    if (dead_ || t.gen != ka_.gen) return;
    const Keepalive::Step step = ka_.step(ctx.now(), !out_->segs.empty());
    if (step.what == Keepalive::Do::dead) {
      ctx.send(server_, kRst, session_);  // the client's OS resets it (lost if the path is cut)
      return lost(ctx, {});
    }
    if (step.what == Keepalive::Do::probe) {
      ack_now(ctx);  // a probe acknowledges everything received
      ctx.send(server_, kClientProbe, std::pair<std::int64_t, Pid>{session_, ctx.self()});
    }
    arm(ctx, step.next);
  }

  void retransmit(Context& ctx, const Tick& t) {
    if (dead_ || t.gen != out_->gen || out_->segs.empty()) return;
    const std::optional<Duration> next = out_->fire(ctx.now(), o_.tcp_user_timeout, o_.tcp_retries2);
    if (!next) return lost(ctx, {});  // ETIMEDOUT
    for (const Sql& q : out_->segs) ctx.send(server_, kSql, q);
    ctx.send_after(linux_timer(ctx.now(), *next), ctx.self(), kRto, Tick{0, out_->gen});
  }

  /// The connection is gone (`fatal`: the SQLSTATE of the FATAL the server sent first, if any):
  /// every query waiting fails, and every later one at once. libpq does not surface the FATAL's
  /// SQLSTATE (the result has none: connection_lost); its text comes first in the message.
  void lost(Context& ctx, const std::string& fatal) {
    dead_ = fatal;
    out_->segs.clear();
    ++out_->gen;
    for (const auto& [qid, from] : std::map<std::uint64_t, From>(pending_)) answer(ctx, qid, gone());
  }

  Result gone() const {
    Result r = refused_connection();
    if (dead_ && !dead_->empty()) r.notices.push_back("FATAL " + *dead_);
    return r;
  }

  void timed_out(Context& ctx, std::uint64_t qid) {
    Result r;
    r.status = Result::Status::timeout;
    r.error = "TimeoutError";
    answer(ctx, qid, r);
  }

  void answer(Context& ctx, std::uint64_t qid, const Result& r) {
    const auto it = pending_.find(qid);
    if (it == pending_.end()) return;  // answered already (late, or after its timeout)
    ctx.reply(it->second, kAnswer, r);
    pending_.erase(it);
  }

  Atom server_;
  Pid owner_;
  ClientOptions o_;
  std::int64_t session_ = 0;
  std::uint64_t next_qid_ = 0;
  std::map<std::uint64_t, From> pending_;
  Keepalive ka_;
  std::shared_ptr<Outbox<Sql>> out_ = std::make_shared<Outbox<Sql>>();  // the OS's: the server's model of an orphan reads it (Hello::sent)
  std::uint64_t highest_got_ = 0;          // the latest answer received
  std::vector<std::uint64_t> held_acks_;   // answers received whose ACK is held back (delayed ACK)
  std::uint64_t delack_gen_ = 0;           // a stale delayed-ACK timer carries an older one
  std::optional<std::string> dead_;  // the connection is gone (the FATAL's SQLSTATE, or empty)
};

}  // namespace

std::string error_class(const Result& r) {
  switch (r.status) {
    case Result::Status::ok:
    case Result::Status::refused: return {};
    case Result::Status::timeout: return "no_answer";
    case Result::Status::sql_error: return r.sqlstate;
    case Result::Status::no_connection:
    case Result::Status::error: return r.sqlstate.empty() ? "connection_lost" : r.sqlstate;
  }
  return {};
}

std::optional<Conn> Conn::connect(Context& ctx, Atom server, Duration timeout, const ClientOptions& opts) {
  SpawnOptions o;
  o.link = true;  // the socket goes with its owner (a normal end: ConnProc's monitor)
  o.label = Label{Atom(std::string(ctx.label().name.text()) + "/conn"), 1};
  const Pid p = ctx.spawn(std::make_unique<ConnProc>(server, ctx.self(), opts), o);
  const CallResult r = ctx.call(p, kOpen, {}, timeout);
  const std::int64_t* id = r.ok() ? r.reply->payload.get<std::int64_t>() : nullptr;
  if (id == nullptr || *id == 0) {
    if (ctx.alive(p)) {
      ctx.unlink(p);
      ctx.exit(p, Reason::kill());
    }
    return std::nullopt;
  }
  Conn c;
  c.pid_ = p;
  c.session_ = *id;
  return c;
}

Result Conn::query(Context& ctx, const Query& q, Duration timeout) const {
  const CallResult r = ctx.call(pid_, kQuery, std::pair<Query, Duration>{q, timeout}, timeout + kSecond);
  if (r.ok() && r.reply->payload.get<Result>() != nullptr) return *r.reply->payload.get<Result>();
  Result out;
  out.status = Result::Status::error;
  out.error = "the connection is gone";
  return out;
}

void Conn::close(Context& ctx) const {
  if (!ctx.alive(pid_)) return;
  ctx.call(pid_, kShut, {}, kSecond);
  ctx.unlink(pid_);
}

}  // namespace lic::scenarios::pg
