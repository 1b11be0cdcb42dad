#include "scenarios/behaviours/ingest.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "properties/ingest_conservation.hpp"
#include "scenarios/behaviours/table.hpp"
#include "scenarios/faults/fault.hpp"

namespace lic::scenarios::ingest {

namespace ev = properties::ingest;

namespace {

const Atom kRun("$run");
const Atom kPut("put");
const Atom kOk("ok");
const Atom kError("error");
const Atom kFull("full");
const Atom kOpen("open");
const Atom kClose("close");
const Atom kTimeout("timeout");
const Atom kSlow("slow");
const Atom kErrors("errors");

struct Event {
  std::int64_t id;
};

struct Batch {
  std::int64_t id = 0;
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t events = 0;
  std::int64_t bytes = 0;
};

/// What the goroutines share: the channels, the context, the configuration.
struct Shared {
  ServerConfig c;
  Chan events;        // EventCh
  Chan uploads;       // UploadCh
  Chan stop;          // closed by main: the HTTP server stops accepting
  Chan ingress_done;  // closed by ingress once stopped
  Chan collect_done;  // closed by CollectLoop when it returns (the wait group)
  Chan upload_done;   // closed by UploadLoop when it returns
  CancelContext ctx;
  WaitGroup in_flight;  // net/http's handlers in flight (handlers mode)
};

std::vector<TraceField> batch_fields(const Batch& b, std::vector<TraceField> more = {}) {
  std::vector<TraceField> f{{ev::kBatch, b.id}, {ev::kFirst, b.first}, {ev::kLast, b.last}, {ev::kEvents, b.events}};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

// ---- HTTP ingress ---------------------------------------------------------------------------

/// The time to the next request: exponential at the rate in force now (a burst's or the base).
Duration next_gap(Context& ctx, const ServerConfig& c) {
  const bool burst = c.burst_rate > 0 && c.burst_every > Duration::zero() &&
                     (ctx.now() - Time{}).ns % c.burst_every.ns < c.burst_for.ns;
  const std::int64_t rate = burst ? c.burst_rate : c.rate;
  return ctx.rng().exponential(Duration{kSecond.ns / rate});
}

/// The server looks for its stop when a request comes (the request in hand is the last it
/// handles, as http.Server.Shutdown lets it finish): true, and the request refused (503, not
/// lost), from then on. On noticing it, with `wait_handlers`, it waits for the handlers in
/// flight, then tells main (ingress_done).
bool stopping(Context& ctx, const Shared& s, bool& stopped, bool wait_handlers) {
  SelectCase stop[] = {SelectCase::recv(s.stop)};
  if (!stopped && ctx.select(stop, Duration::zero()) == 0) {
    stopped = true;
    if (wait_handlers) ctx.wg_wait(s.in_flight);
    ctx.chan_close(s.ingress_done);
  }
  if (stopped) ctx.emit(ev::kRefused, {{ev::kWhy, Atom("shutting_down")}});
  return stopped;
}

/// Requests arrive; each event is put on EventCh (waiting at most ingress_wait, then 503 busy).
void ingress(Context& ctx, const Shared& s) {
  std::int64_t accepted = 0;
  bool stopped = false;
  for (;;) {
    ctx.sleep(next_gap(ctx, s.c));
    if (stopping(ctx, s, stopped, false)) continue;
    SelectCase put[] = {SelectCase::send(s.events, Event{accepted + 1})};
    if (ctx.select(put, s.c.ingress_wait) == 0) ctx.emit(ev::kAccepted, {{ev::kId, ++accepted}});
    else ctx.emit(ev::kRefused, {{ev::kWhy, Atom("busy")}});
  }
}

/// One request's handler goroutine (net/http): the event goes on EventCh within ingress_wait,
/// or 503. Its id is its place on EventCh, so ids are in the order CollectLoop takes them, whichever
/// handler wakes first. A send on EventCh closed meanwhile panics here: net/http recovers it,
/// and nothing else goes down.
void handler(Context& ctx, const Shared& s) {
  SelectCase put[] = {SelectCase::send(s.events, Event{0})};
  if (ctx.select(put, s.c.ingress_wait) == 0) ctx.emit(ev::kAccepted, {{ev::kId, static_cast<std::int64_t>(put[0].seq)}});
  else ctx.emit(ev::kRefused, {{ev::kWhy, Atom("busy")}});
  ctx.wg_done(s.in_flight);
}

/// net/http's accept loop: a handler goroutine a request. On stop it accepts no more and, as
/// http.Server.Shutdown does, waits for the handlers in flight (unless `wait_handlers` is off).
void http_server(Context& ctx, const std::shared_ptr<Shared>& shared) {
  const Shared& s = *shared;
  const std::string me(ctx.label().name.text());
  const Label handler_label{Atom(me.substr(0, me.rfind('/')) + "/handler"), 1};
  bool stopped = false;
  for (;;) {
    ctx.sleep(next_gap(ctx, s.c));
    if (stopping(ctx, s, stopped, s.c.wait_handlers)) continue;
    ctx.wg_add(s.in_flight, 1);
    SpawnOptions o;
    o.label = handler_label;
    ctx.spawn([shared](Context& c) { handler(c, *shared); }, o);  // each holds the shared state
  }
}

// ---- CollectLoop ----------------------------------------------------------------------------

class Collector {
 public:
  Collector(Context& ctx, const Shared& s) : ctx_(ctx), s_(s), next_flush_(ctx.now() + s.c.batch_every) {}

  void run() {
    for (;;) {
      SelectCase cs[] = {SelectCase::recv(s_.ctx.done), SelectCase::recv(s_.events)};
      const int r = ctx_.select(cs, std::max(Duration::zero(), next_flush_ - ctx_.now()));
      if (r == 0) return quit();  // cancelled: the open batch goes with it
      if (r == 1 && !cs[1].received.ok) {
        // EventCh closed: the final batch, then UploadCh is closed (seed §3).
        if (flush()) ctx_.chan_close(s_.uploads);
        return ctx_.chan_close(s_.collect_done);
      }
      if (r == 1) {
        // The ingress goroutine numbers its events; a handler's is its place on EventCh, which
        // is the order they arrive here.
        ++received_;
        const std::int64_t sent = cs[1].received.value.get<Event>()->id;
        const std::int64_t id = sent != 0 ? sent : received_;
        open_.push_back(id);
        ctx_.emit(ev::kCollected, {{ev::kId, id}, {ev::kBatch, batches_ + 1}});
        // Buggify: a batch flushed short of its size (a size limit hit early, a flush on a signal).
        if (static_cast<std::int64_t>(open_.size()) < s_.c.batch_size && !lic::buggify(ctx_, "ingest.short_batch", Ratio::percent(1)))
          continue;
      }
      if (!flush()) return ctx_.chan_close(s_.collect_done);
    }
  }

 private:
  Batch open_batch() const {
    const auto n = static_cast<std::int64_t>(open_.size());
    return Batch{batches_ + 1, open_.front(), open_.back(), n, n * s_.c.event_bytes};
  }

  void quit() {
    if (!open_.empty()) ctx_.emit(ev::kDropped, batch_fields(open_batch(), {{ev::kWhy, Atom("cancelled")}}));
    ctx_.chan_close(s_.collect_done);
  }

  /// Sends the open batch on UploadCh (waiting while it is full, unless cancelled); false when
  /// the loop must end.
  bool flush() {
    next_flush_ = ctx_.now() + s_.c.batch_every;
    if (open_.empty()) return true;
    const Batch b = open_batch();
    SelectCase cs[] = {SelectCase::send(s_.uploads, b), SelectCase::recv(s_.ctx.done)};
    const int r = ctx_.select(cs);
    open_.clear();
    ++batches_;
    if (r == 1) {
      ctx_.emit(ev::kDropped, batch_fields(b, {{ev::kWhy, Atom("cancelled")}}));
      return false;
    }
    ctx_.emit(ev::kQueued, batch_fields(b));
    return true;
  }

  Context& ctx_;
  const Shared& s_;
  Time next_flush_;
  std::vector<std::int64_t> open_;
  std::int64_t batches_ = 0;
  std::int64_t received_ = 0;
};

// ---- UploadLoop -----------------------------------------------------------------------------

/// A put to S3 in a goroutine of its own, so that the loop can wait for it or the context.
/// Returns ok, error, timeout or a reason; nothing when the context was cancelled first.
std::optional<Atom> put(Context& ctx, const Shared& s, const Batch& b) {
  const Chan result = ctx.make_chan(1, Atom("s3_result"));
  const Atom s3 = s.c.s3;
  const Duration timeout = s.c.upload_timeout;
  ctx.spawn([result, s3, b, timeout](Context& c) {
    const CallResult r = c.call(s3, kPut, b, timeout);
    const Atom outcome = r.ok() ? r.reply->tag
                         : r.status == CallResult::Status::timeout ? kTimeout
                                                                   : Atom(to_string(r.reason));
    c.chan_send(result, outcome);
  });
  ctx.emit(ev::kPut, batch_fields(b));
  SelectCase cs[] = {SelectCase::recv(result), SelectCase::recv(s.ctx.done)};
  if (ctx.select(cs) == 1) return std::nullopt;
  return *cs[0].received.value.get<Atom>();
}

/// The batch to the DLQ: a gzip file whose write takes time in proportion to its size.
void save_dlq(Context& ctx, const Shared& s, const Batch& b) {
  const CallResult open = ctx.call(s.c.disk, kOpen, b, kSecond * 5);
  if (!open.ok() || open.reply->tag != kOk) return;  // the disk said full, or is gone: traced by it
  const std::int64_t mb_x1000 = b.bytes * 1000 / (1024 * 1024);
  ctx.sleep(Duration{s.c.gzip_per_mb.ns * mb_x1000 / 1000});
  ctx.call(s.c.disk, kClose, b.id, kSecond * 5);
}

void upload_loop(Context& ctx, const Shared& s) {
  for (;;) {
    SelectCase cs[] = {SelectCase::recv(s.ctx.done), SelectCase::recv(s.uploads)};
    if (ctx.select(cs) == 0 || !cs[1].received.ok) break;  // cancelled (§4.1), or closed and drained
    const Batch b = *cs[1].received.value.get<Batch>();
    ctx.emit(ev::kTaken, batch_fields(b));
    const std::optional<Atom> outcome = put(ctx, s, b);
    if (!outcome) {
      ctx.emit(ev::kUploadCancelled, batch_fields(b, {{ev::kWhy, Atom("cancelled")}}));
      break;
    }
    if (*outcome == kOk) {
      ctx.emit(ev::kUploaded, batch_fields(b));
      continue;
    }
    ctx.emit(ev::kUploadFailed, batch_fields(b, {{ev::kWhy, *outcome}}));
    save_dlq(ctx, s, b);
  }
  ctx.chan_close(s.upload_done);
}

// ---- main -----------------------------------------------------------------------------------

void step(Context& ctx, const char* what) { ctx.emit(ev::kShutdownStep, {{ev::kStep, Atom(what)}}); }

void wait_group(Context& ctx, const Shared& s) {
  ctx.chan_recv(s.collect_done);
  ctx.chan_recv(s.upload_done);
  step(ctx, "wait");
}

/// Manager.Shutdown() in the order chosen, after the HTTP server stopped accepting (seed §3, §4).
void shutdown(Context& ctx, const Shared& s) {
  ctx.chan_close(s.stop);
  ctx.chan_recv(s.ingress_done);
  step(ctx, "stop_ingress");
  const auto close = [&](Chan c, const char* what) {
    ctx.chan_close(c);
    step(ctx, what);
  };
  switch (s.c.order) {
    case Order::correct:
      close(s.events, "close_event_ch");
      wait_group(ctx, s);
      ctx.cancel(s.ctx);
      step(ctx, "cancel");
      break;
    case Order::cancel_first:
      ctx.cancel(s.ctx);
      step(ctx, "cancel");
      close(s.events, "close_event_ch");
      close(s.uploads, "close_upload_ch");
      wait_group(ctx, s);
      break;
    case Order::close_upload_first:
      close(s.uploads, "close_upload_ch");
      close(s.events, "close_event_ch");
      wait_group(ctx, s);
      ctx.cancel(s.ctx);
      step(ctx, "cancel");
      break;
  }
}

class Server final : public Behaviour {
 public:
  explicit Server(ServerConfig c) : s_(std::make_shared<Shared>()) { s_->c = c; }

  InitResult init(Context& ctx) override {
    ctx.set_main();
    sig_ = ctx.make_chan(1, Atom("sigCh"));
    ctx.notify_signals(sig_);
    Shared& s = *s_;
    s.events = ctx.make_chan(static_cast<std::size_t>(s.c.event_ch), Atom("EventCh"));
    s.uploads = ctx.make_chan(static_cast<std::size_t>(s.c.upload_ch), Atom("UploadCh"));
    s.stop = ctx.make_chan(0, Atom("stop_ingress"));
    s.ingress_done = ctx.make_chan(0, Atom("ingress_done"));
    s.collect_done = ctx.make_chan(0, Atom("collect_done"));
    s.upload_done = ctx.make_chan(0, Atom("upload_done"));
    s.ctx = ctx.make_context(Atom("ctx.Done"));
    if (s.c.handlers) s.in_flight = ctx.make_waitgroup(Atom("handlers"));
    // Goroutines: linked, so that a panic in one ends the program, as in Go. Each holds the
    // shared state, which outlives whichever of them ends last.
    const std::string me(ctx.label().name.text());
    const auto go = [&](const char* name, auto body) {
      SpawnOptions o;
      o.label = Label{Atom(me + "/" + name), 1};
      ctx.spawn_link([shared = s_, body](Context& c) { body(c, shared); }, o);
    };
    const auto plain = [](void (*body)(Context&, const Shared&)) {
      return [body](Context& c, const std::shared_ptr<Shared>& sh) { body(c, *sh); };
    };
    if (s.c.handlers) go("ingress", http_server);
    else go("ingress", plain(ingress));
    go("collect", plain([](Context& c, const Shared& sh) { Collector(c, sh).run(); }));
    go("upload", plain(upload_loop));
    ctx.send(ctx.self(), kRun);
    return InitResult::ok();
  }

  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag != kRun) return;
    ctx.chan_recv(sig_);  // main blocks until SIGTERM
    step(ctx, "sigterm");
    shutdown(ctx, *s_);
    step(ctx, "exit");
    ctx.stop(Reason::normal());  // main returns: the task ends (task_exit)
  }

 private:
  std::shared_ptr<Shared> s_;
  Chan sig_;
};

// ---- S3 and the DLQ disk ----------------------------------------------------------------------

/// Turns a $degrade message into a mode switch; false for any other message.
bool degrade(const Message& m, Atom mode, bool& on) {
  if (m.tag != faults::kDegrade) return false;
  const auto* d = m.payload.get<faults::Degrade>();
  if (d != nullptr && d->mode == mode) on = d->on;
  return true;
}

class S3 final : public Behaviour {
 public:
  explicit S3(S3Config c) : c_(c) {}
  InitResult init(Context& ctx) override {
    ctx.register_name(c_.name);
    // S3 is an HTTP service, not an Erlang node: a put crosses on a connection of its own, so
    // under net ticks a link's loss still loses a request (a stalled connection), as it does
    // under instant detection, instead of being resent as distributed Erlang's TCP would.
    ctx.raw_network(true);
    return InitResult::ok();
  }
  CallReply handle_call(Context& ctx, const Message& m, From from) override {
    if (m.tag != kPut) return CallReply::reply(kError);
    // Requests run in parallel, each in a process of its own: S3 is not one queue.
    // The request's latency, then the transfer of its bytes.
    Duration d = c_.latency_min + ctx.rng().exponential(c_.latency - c_.latency_min);
    if (slow_ || lic::buggify(ctx, "ingest.s3_slow_reply", Ratio::percent(5))) d = Duration{d.ns * c_.spike};
    if (const auto* b = m.payload.get<Batch>(); b != nullptr && c_.mb_per_s > 0)
      d = d + Duration{b->bytes * (kSecond.ns / (1024 * 1024)) / c_.mb_per_s};
    const bool fail = errors_ || ctx.rng().chance(c_.errors);
    ctx.spawn([from, d, fail](Context& c) {
      c.raw_network(true);  // the reply crosses on the request's HTTP connection
      c.sleep(d);
      c.reply(from, fail ? kError : kOk);
    });
    return CallReply::noreply();
  }
  void handle_info(Context&, const Message& m) override {
    degrade(m, kSlow, slow_);
    degrade(m, kErrors, errors_);
  }

 private:
  S3Config c_;
  bool slow_ = false;
  bool errors_ = false;
};

class Disk final : public Behaviour {
 public:
  explicit Disk(DiskConfig c) : c_(c) {}
  InitResult init(Context& ctx) override {
    ctx.register_name(c_.name);
    return InitResult::ok();
  }
  CallReply handle_call(Context& ctx, const Message& m, From) override {
    if (m.tag == kOpen) {
      const Batch& b = *m.payload.get<Batch>();
      const std::int64_t capacity = c_.capacity_mb * 1024 * 1024;
      if (full_ || used_ + b.bytes > capacity) {
        ctx.emit(ev::kDlqFull, batch_fields(b, {{ev::kBytes, b.bytes}, {ev::kFree, full_ ? 0 : capacity - used_}}));
        return CallReply::reply(kFull);
      }
      used_ += b.bytes;
      ctx.emit(ev::kDlqOpen, batch_fields(b, {{ev::kBytes, b.bytes}}));
      return CallReply::reply(kOk);
    }
    if (m.tag == kClose) {
      ctx.emit(ev::kDlqWritten, {{ev::kBatch, *m.payload.get<std::int64_t>()}});
      return CallReply::reply(kOk);
    }
    return CallReply::reply(kError);
  }
  void handle_info(Context&, const Message& m) override { degrade(m, kFull, full_); }

 private:
  DiskConfig c_;
  std::int64_t used_ = 0;
  bool full_ = false;
};

}  // namespace

bool parse_order(std::string_view text, Order& out) {
  if (text == "correct") out = Order::correct;
  else if (text == "cancel_first") out = Order::cancel_first;
  else if (text == "close_upload_first") out = Order::close_upload_first;
  else return false;
  return true;
}

std::unique_ptr<Behaviour> server(const ServerConfig& c) { return std::make_unique<Server>(c); }
std::unique_ptr<Behaviour> s3(const S3Config& c) { return std::make_unique<S3>(c); }
std::unique_ptr<Behaviour> disk(const DiskConfig& c) { return std::make_unique<Disk>(c); }

}  // namespace lic::scenarios::ingest

// ---- what a file can name ----------------------------------------------------------------------

namespace lic::scenarios {

namespace {

/// A count that must be at least `least`.
std::int64_t count(Args& a, std::string_view name, std::int64_t least) {
  const std::int64_t v = a.integer(name);
  if (v < least) a.invalid(name, "must be " + std::to_string(least) + " or more");
  return v;
}

BehaviourFactory build_server(Args& a) {
  ingest::ServerConfig c;
  const std::string order = a.choice("order");
  if (!order.empty()) ingest::parse_order(order, c.order);
  c.rate = count(a, "rate", 1);
  c.burst_rate = count(a, "burst_rate", 0);
  c.burst_every = a.duration("burst_every");
  c.burst_for = a.duration("burst_for");
  if (c.burst_rate > 0 && c.burst_every <= Duration::zero()) a.invalid("burst_every", "must be more than 0 with a burst_rate");
  c.event_ch = count(a, "event_ch", 0);
  c.upload_ch = count(a, "upload_ch", 0);
  c.batch_size = count(a, "batch_size", 1);
  c.batch_every = a.positive("batch_every");
  c.event_bytes = count(a, "event_bytes", 1);
  c.ingress_wait = a.duration("ingress_wait");
  c.handlers = a.flag("handlers");
  c.wait_handlers = a.flag("wait_handlers");
  if (a.given("wait_handlers") && !c.handlers) a.invalid("wait_handlers", "is for `handlers: true` (net/http's handler goroutines)");
  c.upload_timeout = a.positive("upload_timeout");
  c.gzip_per_mb = a.duration("gzip_per_mb");
  c.s3 = a.atom("s3");
  c.disk = a.atom("disk");
  return [c](const std::string&) { return ingest::server(c); };
}

BehaviourFactory build_s3(Args& a) {
  ingest::S3Config c;
  c.name = a.atom("name");
  c.latency_min = a.duration("latency_min");
  c.latency = a.positive("latency");
  if (c.latency < c.latency_min) a.invalid("latency", "the mean is less than latency_min");
  c.errors = a.ratio("errors");
  c.spike = count(a, "spike", 1);
  c.mb_per_s = count(a, "mb_per_s", 0);
  return [c](const std::string&) { return ingest::s3(c); };
}

BehaviourFactory build_disk(Args& a) {
  ingest::DiskConfig c;
  c.name = a.atom("name");
  c.capacity_mb = count(a, "capacity_mb", 0);
  return [c](const std::string&) { return ingest::disk(c); };
}

}  // namespace

std::vector<BehaviourInfo> ingest_behaviours() {
  std::vector<BehaviourInfo> r;
  r.push_back(BehaviourInfo{
      "ingest.server",
      "seed 004's ingest server, the task's main: HTTP ingress -> EventCh -> CollectLoop -> UploadCh -> UploadLoop -> "
      "S3 or the DLQ; on SIGTERM it shuts down in `order` (docs/graceful-shutdown.md)",
      {{"order", "correct|cancel_first|close_upload_first", "correct", "the shutdown order: correct, cancel_first (seed 4.1) or close_upload_first (4.2)"},
       {"rate", "int", "200", "requests a second (Poisson arrivals; more than 0)"},
       {"burst_rate", "int", "0", "requests a second during bursts (0: no bursts)"},
       {"burst_every", "duration", "0", "a burst starts every this long"},
       {"burst_for", "duration", "0", "and lasts this long"},
       {"event_ch", "int", "1000", "EventCh's capacity (0: a rendezvous)"},
       {"upload_ch", "int", "10", "UploadCh's capacity"},
       {"batch_size", "int", "500", "CollectLoop flushes a batch at this many events"},
       {"batch_every", "duration", "1s", "or this long after its last flush"},
       {"event_bytes", "int", "200", "an event's size in bytes"},
       {"ingress_wait", "duration", "100ms", "a request waits this long for room in EventCh, then gets 503"},
       {"handlers", "bool", "false", "net/http: a handler goroutine a request (a panic in one is recovered: nothing else goes down)"},
       {"wait_handlers", "bool", "true", "with handlers: on SIGTERM the HTTP server waits for the handlers in flight before main closes EventCh (http.Server.Shutdown)"},
       {"upload_timeout", "duration", "10s", "a put to S3 fails after this long"},
       {"gzip_per_mb", "duration", "40ms", "writing a batch to the DLQ takes this long per MB"},
       refers_to({"s3", "string", "S3", "S3's registered name"}),
       refers_to({"disk", "string", "DLQDisk", "the DLQ disk's registered name"})},
      build_server,
      {{"ingest.short_batch", "CollectLoop flushes a batch before it is full (1 % of events while on)"}},
      /*goroutines=*/true});
  r.push_back(BehaviourInfo{
      "ingest.s3", "an object store: each put takes latency_min plus an exponential (mean `latency`) and fails with "
                   "probability `errors`; degrade modes slow (x spike) and errors (every put fails)",
      {registered_as({"name", "string", "S3", "the name it registers"}),
       {"latency_min", "duration", "20ms", "the least a put takes"},
       {"latency", "duration", "80ms", "the mean time a put takes"},
       {"errors", "ratio", "0", "the chance that a put fails"},
       {"spike", "int", "20", "degrade slow multiplies the latency by this"},
       {"mb_per_s", "int", "100", "the upload's speed: a put takes its bytes / this longer (0: no transfer time)"}},
      build_s3,
      {{"ingest.s3_slow_reply", "a put takes `spike` times its latency, as degrade slow does, for one put (5 % of puts while on)"}}});
  r.push_back(BehaviourInfo{"ingest.disk", "the DLQ's disk: batches as gzip files up to its capacity; degrade mode full",
                            {registered_as({"name", "string", "DLQDisk", "the name it registers"}),
                             {"capacity_mb", "int", "1024", "its size in MB (0: full from the start)"}},
                            build_disk});
  return r;
}

}  // namespace lic::scenarios
