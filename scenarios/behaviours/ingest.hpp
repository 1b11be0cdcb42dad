#pragma once
// Seed 004's ingest server, written the way its Go code is (DESIGN §6.3, docs/graceful-shutdown.md):
// goroutines sharing bounded channels on one node, shut down on SIGTERM in one of three orders.
//
//   HTTP ingress --EventCh--> CollectLoop --UploadCh--> UploadLoop --> S3 (another node)
//                 (bounded)   batches by size            (bounded)     \-> the DLQ disk on error
//                             and by time
//
// - `ingest.server` is the task's main (Context::set_main: when it returns, the task ends and
//   what is left on the node is killed, as when Go's main returns). It asks for SIGTERM, starts
//   the goroutines (linked to it: a panic in one takes the program down, as in Go), and on
//   SIGTERM runs the shutdown `order`:
//     correct             stop ingress, close(EventCh); CollectLoop flushes its last batch and
//                         closes UploadCh; UploadLoop drains it; wait for both; cancel(); exit.
//     cancel_first        cancel(); close(EventCh); close(UploadCh); wait (seed §4.1).
//     close_upload_first  close(UploadCh); close(EventCh); wait; cancel() (seed §4.2: CollectLoop
//                         panics, "send on closed channel").
//   With `handlers`, ingress is net/http's: a goroutine a request, each blocked on EventCh
//   at most ingress_wait; on SIGTERM the server stops accepting and (with `wait_handlers`)
//   waits for the handlers in flight, as http.Server.Shutdown does, before main closes EventCh.
// - `ingest.s3`: a store on its own node; each put takes a latency drawn from a distribution and
//   fails with a probability; degrade modes `slow` and `errors`.
// - `ingest.disk`: the DLQ, a disk of a capacity; a batch is written as a gzip file whose write
//   takes time in proportion to its size (a SIGKILL in the middle leaves it corrupt); degrade
//   mode `full`.
//
// Every accepted event has an id (1, 2, ... in the order ingress accepts them) and batches hold
// consecutive ids, so conservation (properties/ingest_conservation.hpp) tells from the trace
// where each event ended: uploaded, in the DLQ, or lost (which batch, where, why).

#include <cstdint>
#include <memory>

#include "sim/process.hpp"

namespace lic::scenarios::ingest {

enum class Order : std::uint8_t { correct, cancel_first, close_upload_first };

struct ServerConfig {
  Order order = Order::correct;
  std::int64_t rate = 200;             ///< events a second, Poisson arrivals
  std::int64_t burst_rate = 0;         ///< during bursts (0: no bursts)
  Duration burst_every{};              ///< a burst starts every this long
  Duration burst_for{};                ///< and lasts this long
  std::int64_t event_ch = 1000;        ///< EventCh's capacity
  std::int64_t upload_ch = 10;         ///< UploadCh's capacity
  std::int64_t batch_size = 500;       ///< a batch is flushed at this many events...
  Duration batch_every = kSecond;      ///< ...or this long after the last flush
  std::int64_t event_bytes = 200;      ///< an event's size (a batch's size is the sum)
  Duration ingress_wait = kMillisecond * 100;  ///< a request waits this long for room, then 503
  /// net/http: each request runs in a handler goroutine of its own (unlinked: the server
  /// recovers a handler's panic, which takes nothing else down), and the event's id is its place
  /// on EventCh. Off: one ingress goroutine takes the requests one at a time.
  bool handlers = false;
  /// With handlers: http.Server.Shutdown waits for the handlers in flight before main goes on to
  /// close(EventCh). Off: it does not (a Shutdown whose context ran out, or srv.Close()): a
  /// handler still blocked on a full EventCh panics, "send on closed channel".
  bool wait_handlers = true;
  Duration upload_timeout = kSecond * 10;      ///< a put to S3
  Duration gzip_per_mb = kMillisecond * 40;    ///< DLQ: gzip time per MB of batch
  Atom s3{"S3"};
  Atom disk{"DLQDisk"};
};

struct S3Config {
  Atom name{"S3"};
  Duration latency_min = kMillisecond * 20;  ///< every put takes at least this
  Duration latency = kMillisecond * 80;      ///< the mean (min + an exponential)
  Ratio errors{};                            ///< the chance that a put fails
  std::int64_t spike = 20;                   ///< degrade `slow` multiplies the latency by this
  std::int64_t mb_per_s = 100;               ///< transfer: a put takes bytes / this longer (0: none)
};

struct DiskConfig {
  Atom name{"DLQDisk"};
  std::int64_t capacity_mb = 1024;
};

std::unique_ptr<Behaviour> server(const ServerConfig& c);
std::unique_ptr<Behaviour> s3(const S3Config& c);
std::unique_ptr<Behaviour> disk(const DiskConfig& c);

/// "correct", "cancel_first", "close_upload_first".
bool parse_order(std::string_view text, Order& out);

}  // namespace lic::scenarios::ingest
