#pragma once
// The wire between a client's connection process and the server (not an API: pg.hpp is): what
// each sends the other, as TCP carries it. Queries and answers are data, acknowledged by the other
// side's OS and sent again until they are; beside them go keepalive probes and their answers, and
// the ends of a connection (the server's FATAL + FIN or reset, the client's Terminate + FIN or
// reset). How TCP times all this is tcp.hpp's; what the server does with each message is its end
// of the connection (wire.cpp) and its sessions' (session.cpp); the client's end is client.cpp.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "scenarios/behaviours/pg.hpp"
#include "scenarios/behaviours/pg/tcp.hpp"

namespace lic::scenarios::pg::detail {

// The wire: client connection process <-> server. Data (queries, answers) is acknowledged by the
// other side's OS (pg_data_ack) and sent again until it is (TCP retransmission).
inline const Atom kConnect("pg_connect");    // call: Hello -> session id
inline const Atom kSql("pg_sql");            // client -> server: Sql (data)
inline const Atom kAnswer("pg_answer");      // server -> client: Answer (data)
inline const Atom kDataAck("pg_data_ack");   // either way: {session, qid} acknowledged by the OS
inline const Atom kProbe("pg_probe");        // server -> client: keepalive probe
inline const Atom kAck("pg_ack");            // client -> server: keepalive answer
inline const Atom kClientProbe("pg_cprobe"); // client -> server: the client's keepalive probe
inline const Atom kClientAck("pg_cack");     // server -> client: its answer
inline const Atom kBye("pg_bye");            // server -> client: the server ended the session: FATAL + FIN, or RST
inline const Atom kClose("pg_close");        // client -> server: {session} (Terminate + FIN)
inline const Atom kRst("pg_rst");            // client -> server: {session} the client's OS reset it
// The TCP timers each end sets itself (a Tick; the client's carry session 0).
inline const Atom kKeepalive("$keepalive");  // server -> itself: a session's keepalive timer
inline const Atom kRto("$rto");              // a retransmission timer
inline const Atom kDelAck("$delack");        // the client's delayed-ACK timer

inline const char* const kNoConnection = "ConnectionDoesNotExistError";

struct Sql {
  std::int64_t session = 0;
  std::uint64_t qid = 0;
  Pid reply_to;
  Query q;
  std::uint64_t unacked_from = 0;  // the client's oldest unacknowledged answer... of its own queries: the server forgets older ids
};

struct Hello {
  Pid client;
  Atom node;
  std::string db;
  SessionSettings set;
  /// The client OS's send buffer: the queries sent and not yet acknowledged, with their
  /// retransmission timer. The OS's, not the process's: it outlives a client killed behind a
  /// cut, and the server's model of that orphan resends them (Server::down, orphan_fin).
  std::shared_ptr<const Outbox<Sql>> sent;
};

struct Answer {
  std::uint64_t qid = 0;
  Result r;
};

struct Bye {
  std::string sqlstate;  // empty: a reset (no FATAL message)
};

struct Tick {  // a session's timer
  std::int64_t session = 0;
  std::uint64_t gen = 0;
};

inline Result refused_connection(std::string sqlstate = {}) {
  Result r;
  r.status = Result::Status::no_connection;
  r.error = kNoConnection;
  r.sqlstate = std::move(sqlstate);
  return r;
}

}  // namespace lic::scenarios::pg::detail
