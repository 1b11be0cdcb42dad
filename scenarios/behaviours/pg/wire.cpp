// The server's end of each connection (server.hpp), as its OS and its socket see it: a query
// arrives (the OS acknowledges it; a copy sent again is not run twice), an answer leaves and is
// kept until the client's OS acknowledges it (sent again meanwhile, until TCP gives up), and
// keepalive watches the connection while nothing is unacknowledged; the client's keepalive
// probes are answered. What the messages are is wire.hpp's, TCP's timers tcp.hpp's. Running a
// statement, and ending a session when TCP gives up, are session.cpp's; the client's end of the
// connection is client.cpp.
#include "scenarios/behaviours/pg/server.hpp"

#include <optional>
#include <string>
#include <utility>

#include "sim/simulation.hpp"

namespace lic::scenarios::pg::detail {

/// The session's keepalive timer, `wait` from now.
void Server::arm(Context& ctx, std::int64_t id, Session& s, Duration wait) {
  ++s.ka.gen;
  ctx.send_after(linux_timer(ctx.now(), wait), ctx.self(), kKeepalive, Tick{id, s.ka.gen});
}

/// Anything from the client: keepalive starts again from now.
Session* Server::heard(Context& ctx, std::int64_t id) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  Session& s = it->second;
  if (s.ka.heard(ctx.now())) arm(ctx, id, s, s.ka.idle);
  return &s;
}

void Server::keepalive(Context& ctx, const Tick& t) {
  const auto it = sessions_.find(t.session);
  if (it == sessions_.end() || it->second.ka.gen != t.gen) return;
  Session& s = it->second;
  const Keepalive::Step step = s.ka.step(ctx.now(), !s.out.segs.empty());
  if (step.what == Keepalive::Do::dead) return socket_end(ctx, t.session, "keepalive", std::string());  // with a reset
  if (step.what == Keepalive::Do::probe) {
    // The client's OS answers a probe for a socket it no longer has with a reset; an orphan
    // socket (its FIN still being resent) acknowledges it, and the session waits for the FIN.
    if (!ctx.alive(s.client) && reachable(ctx, s)) {
      if (!s.fin.armed) return socket_end(ctx, t.session, "reset");
      s.ka.heard(ctx.now());
      return arm(ctx, t.session, s, s.ka.idle);
    }
    ctx.send(s.client, kProbe, t.session);
  }
  arm(ctx, t.session, s, step.next);
}

void Server::data_acked(Context& ctx, const std::pair<std::int64_t, std::uint64_t>& a) {
  Session* s = heard(ctx, a.first);
  if (s != nullptr && s->out.acked(ctx.now(), a.second))
    ctx.send_after(linux_timer(ctx.now(), s->out.rto), ctx.self(), kRto, Tick{a.first, s->out.gen});
}

/// The client's keepalive probe: the server's OS answers it, or resets a socket it no longer has.
void Server::client_probe(Context& ctx, const std::pair<std::int64_t, Pid>& p) {
  if (heard(ctx, p.first) != nullptr) ctx.send(p.second, kClientAck, p.first);
  else ctx.send(p.second, kBye, Bye{});
}

/// The retransmission timer of a session's answers.
void Server::retransmit(Context& ctx, const Tick& t) {
  const auto it = sessions_.find(t.session);
  if (it == sessions_.end() || it->second.out.gen != t.gen || it->second.out.segs.empty()) return;
  Session& s = it->second;
  const std::optional<Duration> next = s.out.fire(ctx.now(), s.ka.user_timeout, c_.tcp_retries2);
  if (!next) return socket_end(ctx, t.session, "retransmit");  // the OS gives up without a reset
  // The client's OS answers data for a socket it no longer has with a reset.
  if (!ctx.alive(s.client) && reachable(ctx, s)) return socket_end(ctx, t.session, "reset");
  for (const Answer& a : s.out.segs) ctx.send(s.client, kAnswer, a);
  ctx.send_after(linux_timer(ctx.now(), *next), ctx.self(), kRto, Tick{t.session, s.out.gen});
}

/// A query arrives: its OS acknowledges it; a copy sent again is not run twice.
void Server::sql(Context& ctx, const Sql& q) {
  Session* s = heard(ctx, q.session);
  if (s == nullptr) return reply(ctx, q, refused_connection());  // the OS resets it
  ctx.send(q.reply_to, kDataAck, std::pair<std::int64_t, std::uint64_t>{q.session, q.qid});
  s->seen.erase(s->seen.begin(), s->seen.lower_bound(q.unacked_from));
  if (!s->seen.insert(q.qid).second) return;
  s->busy = true;
  ++s->idle_gen;
  ctx.send_after(c_.query_latency, ctx.self(), kExec, q);
}

void Server::reply(Context& ctx, const Sql& q, const Result& r) {
  const auto it = sessions_.find(q.session);
  if (it == sessions_.end()) return ctx.send(q.reply_to, kAnswer, Answer{q.qid, r});  // a reset: not data
  Session& s = it->second;
  const Answer a{q.qid, r};
  ctx.send(s.client, kAnswer, a);
  if (s.out.add(ctx.now(), a)) ctx.send_after(linux_timer(ctx.now(), s.out.rto), ctx.self(), kRto, Tick{q.session, s.out.gen});
}

}  // namespace lic::scenarios::pg::detail
