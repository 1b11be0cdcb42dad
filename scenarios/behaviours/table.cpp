#include "scenarios/behaviours/table.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

#include "scenarios/behaviours/peer.hpp"
#include "scenarios/behaviours/pipeline.hpp"
#include "supervision/stock_worker.hpp"

namespace lic::scenarios {

namespace {

using supervision::SelfCrash;
using supervision::StockWorker;
using supervision::StopStyle;
using supervision::WorkerConfig;

// ---- the value parsers: text -> value, or an error that quotes the text ---------------------

bool parse_value(const std::string& text, Duration& out, std::string& error) {
  const DurationParse d = parse_duration(text);
  if (!d.ok) error = "bad duration '" + text + "': " + d.error;
  out = d.value;
  return d.ok;
}

bool parse_value(const std::string& text, Ratio& out, std::string& error) {
  return parse_ratio(text, out, error);
}

bool parse_value(const std::string& text, std::int64_t& out, std::string& error) {
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, out);
  if (text.empty() || ec != std::errc() || end != last) {
    error = "bad integer '" + text + "'";
    return false;
  }
  return true;
}

bool parse_value(const std::string& text, bool& out, std::string& error) {
  if (text != "true" && text != "false") {
    error = "write true or false, not '" + text + "'";
    return false;
  }
  out = text == "true";
  return true;
}

bool parse_value(const std::string& text, Atom& out, std::string& error) {
  if (text.empty()) {
    error = "empty name";
    return false;
  }
  out = Atom(text);
  return true;
}

/// parse_reason's forms, and `shutdown:T` / `error:W` for {shutdown,T} / {error,W}, which need
/// no quotes in YAML.
bool parse_value(const std::string& text, Reason& out, std::string& error) {
  for (const char* head : {"shutdown", "error"}) {
    const std::string prefix = std::string(head) + ":";
    if (text.size() > prefix.size() && text.compare(0, prefix.size(), prefix) == 0) {
      return parse_value("{" + std::string(head) + "," + text.substr(prefix.size()) + "}", out, error);
    }
  }
  if (parse_reason(text, out)) return true;
  error = "bad exit reason '" + text +
          "' (write normal, shutdown, kill, {shutdown,T} or shutdown:T, {error,W} or error:W, or an atom)";
  return false;
}

/// ok | ignore | error ({error,init_failed}) | error:What | stop:Reason.
bool parse_value(const std::string& text, InitResult& out, std::string& error) {
  if (text == "ok") {
    out = InitResult::ok();
  } else if (text == "ignore") {
    out = InitResult::ignore();
  } else if (text == "error") {
    out = InitResult::stop(Reason::error(Atom("init_failed")));
  } else if (text.starts_with("error:")) {
    out = InitResult::stop(Reason::error(Atom(text.substr(6))));
    if (text.size() == 6) error = "empty error in init result 'error:'";
    return text.size() > 6;
  } else if (text.starts_with("stop:")) {
    Reason r;
    if (!parse_value(text.substr(5), r, error)) return false;
    out = InitResult::stop(r);
  } else {
    error = "bad init result '" + text + "' (write ok, ignore, error, error:What or stop:Reason)";
    return false;
  }
  return true;
}

// ---- did you mean -------------------------------------------------------------------------


std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// ---- reading a reference's arguments --------------------------------------------------------

/// The arguments of one reference, read by type. Every mistake is appended to `errors` and the
/// reading goes on (a fallback value stands in), so one pass reports all of them.
class Args {
 public:
  Args(const BehaviourRef& ref, const BehaviourInfo& info, std::vector<Diagnostic>& errors)
      : ref_(ref), info_(info), errors_(errors), errors_before_(errors.size()) {
    check_names();
  }

  Duration duration(std::string_view name) { return scalar<Duration>(name, "duration"); }
  /// A duration that must be more than zero.
  Duration positive(std::string_view name) {
    const std::size_t before = errors_.size();
    const Duration d = duration(name);
    if (errors_.size() == before && d <= Duration::zero()) invalid(name, "must be more than 0");
    return d;
  }
  Ratio ratio(std::string_view name) { return scalar<Ratio>(name, "ratio"); }
  std::int64_t integer(std::string_view name) { return scalar<std::int64_t>(name, "int"); }
  Atom atom(std::string_view name) { return scalar<Atom>(name, "string"); }
  bool flag(std::string_view name) { return scalar<bool>(name, "bool"); }
  /// A name, or nothing when it is `-` (the fallback of an optional name).
  Atom optional_atom(std::string_view name) {
    const Atom a = atom(name);
    return a.text() == "-" ? Atom() : a;
  }
  Reason reason(std::string_view name) { return scalar<Reason>(name, "reason"); }
  std::vector<InitResult> init_results(std::string_view name);

  /// A value that parsed but is out of range: the error stands at the argument.
  void invalid(std::string_view name, const std::string& message) {
    const ArgValue* v = given(name);
    add(v != nullptr ? v->mark : ref_.mark, "argument '" + std::string(name) + "' of '" +
                                                ref_.name + "': " + message);
  }
  bool failed() const { return errors_.size() > errors_before_; }

 private:
  void add(Mark at, std::string message) { errors_.push_back({at, std::move(message)}); }

  const ArgInfo& info(std::string_view name, std::string_view type) const {
    auto it = std::find_if(info_.args.begin(), info_.args.end(),
                           [&](const ArgInfo& a) { return a.name == name; });
    assert(it != info_.args.end() && it->type == type);
    (void)type;
    return *it;
  }

  const ArgValue* given(std::string_view name) const {
    for (const auto& [n, v] : ref_.args) {
      if (n == name) return &v;
    }
    return nullptr;
  }

  /// Unknown and repeated names, each at its own mark.
  void check_names() {
    std::vector<std::string> known;
    for (const ArgInfo& a : info_.args) known.push_back(a.name);
    for (std::size_t i = 0; i < ref_.args.size(); ++i) {
      const auto& [n, v] = ref_.args[i];
      if (std::find(known.begin(), known.end(), n) == known.end()) {
        std::string m = "unknown argument '" + n + "' for '" + ref_.name + "' (";
        if (const std::string near = closest_name(n, known); !near.empty()) m += "did you mean '" + near + "'? ";
        m += known.empty() ? "it takes none)" : "it takes " + joined(known) + ")";
        add(v.mark, std::move(m));
      } else if (given(n) != &v) {
        add(v.mark, "argument '" + n + "' of '" + ref_.name + "' is given twice");
      }
    }
  }

  /// The text to read for `a`: the one given, or the fallback; null when it is missing or a
  /// list (both reported).
  const std::string* text(const ArgInfo& a, bool list_ok) {
    const ArgValue* v = given(a.name);
    if (v == nullptr) {
      if (a.fallback.empty()) {
        add(ref_.mark, "'" + ref_.name + "' needs argument '" + a.name + "' (" + a.type + ": " + a.help + ")");
        return nullptr;
      }
      return &a.fallback;
    }
    if (v->is_list && !list_ok) {
      add(v->mark, "argument '" + a.name + "' of '" + ref_.name + "' takes one " + a.type + ", not a list");
      return nullptr;
    }
    return &v->scalar;
  }

  template <class T>
  T scalar(std::string_view name, std::string_view type) {
    const ArgInfo& a = info(name, type);
    T out{};
    const std::string* t = text(a, false);
    std::string error;
    if (t != nullptr && !parse_value(*t, out, error)) invalid(name, error);
    return out;
  }

  const BehaviourRef& ref_;
  const BehaviourInfo& info_;
  std::vector<Diagnostic>& errors_;
  std::size_t errors_before_;
};

std::vector<InitResult> Args::init_results(std::string_view name) {
  const ArgInfo& a = info(name, "init results");
  const ArgValue* v = given(name);
  std::vector<std::string> items;
  if (v != nullptr && v->is_list) {
    items = v->list;
    if (items.empty()) invalid(name, "an empty list (give at least one result, e.g. [ok])");
  } else if (const std::string* t = text(a, false)) {
    items.push_back(*t);
  }
  std::vector<InitResult> out;
  for (const std::string& item : items) {
    InitResult r;
    std::string error;
    if (parse_value(item, r, error)) {
      out.push_back(r);
    } else {
      invalid(name, error);
    }
  }
  return out;
}

// ---- the behaviours -------------------------------------------------------------------------

using Build = BehaviourFactory (*)(Args&);

struct Entry {
  BehaviourInfo info;
  Build build;
};

const char* const kReasonHelp = "the exit reason: normal, shutdown, {shutdown,T} or shutdown:T, "
                                "{error,W} or error:W, kill, or an atom";

/// Every stock worker's own arguments, then the two they share. (So there is no separate
/// `init_results` behaviour: `idle` with `init: [ok, error, ignore]` is that.)
std::vector<ArgInfo> stock_args(std::vector<ArgInfo> own) {
  own.push_back({"init", "init results", "ok",
                 "init's result per start attempt: the k-th start takes the k-th entry, the last "
                 "repeats; each ok, ignore, error ({error,init_failed}), error:What or "
                 "stop:Reason; one result or a list"});
  own.push_back({"init_delay", "duration", "0", "init takes this long before it returns (a slow start)"});
  return own;
}

WorkerConfig stock(Args& a) {
  WorkerConfig w;
  w.inits = a.init_results("init");
  w.init_delay = a.duration("init_delay");
  return w;
}

BehaviourFactory of(WorkerConfig w) {
  return [w = std::move(w)](const std::string&) { return std::make_unique<StockWorker>(w); };
}

BehaviourFactory build_idle(Args& a) { return of(stock(a)); }

BehaviourFactory build_trap_exit(Args& a) {
  WorkerConfig w = stock(a);
  w.stop = StopStyle::delay;
  w.stop_delay = a.duration("shutdown_delay");
  return of(w);
}

BehaviourFactory build_stall(Args& a) {
  WorkerConfig w = stock(a);
  w.stop = StopStyle::stall;
  return of(w);
}

BehaviourFactory build_crash_after(Args& a) {
  WorkerConfig w = stock(a);
  w.crash = SelfCrash{SelfCrash::Kind::after, a.duration("after"), a.reason("reason")};
  return of(w);
}

BehaviourFactory build_flaky(Args& a) {
  WorkerConfig w = stock(a);
  w.crash = SelfCrash{SelfCrash::Kind::exponential, a.positive("mtbf"), a.reason("reason")};
  return of(w);
}

BehaviourFactory build_echo(Args& a) {
  WorkerConfig w = stock(a);
  w.echo = true;
  return of(w);
}

BehaviourFactory build_ticker(Args& a) {
  WorkerConfig w = stock(a);
  w.tick = a.positive("interval");
  const std::int64_t ticks = a.integer("ticks");
  if (ticks < 0) a.invalid("ticks", "must be 0 (for ever) or more");
  w.ticks_max = static_cast<std::uint64_t>(std::max<std::int64_t>(ticks, 0));
  return of(w);
}

BehaviourFactory build_reader(Args& a) {
  pipeline::ReaderConfig c;
  c.interval = a.positive("interval");
  c.negative = a.ratio("negative");
  c.unparsable = a.ratio("unparsable");
  c.name = a.atom("name");
  c.to = a.atom("to");
  if (const std::string mix = pipeline::check_mix(c.negative, c.unparsable); !mix.empty()) {
    a.invalid("negative", mix);
  }
  return [c](const std::string&) { return pipeline::reader(c); };
}

BehaviourFactory build_parser(Args& a) {
  const pipeline::ParserConfig c{a.atom("name"), a.atom("to"), a.atom("dead_letter")};
  return [c](const std::string&) { return pipeline::parser(c); };
}

BehaviourFactory build_validator(Args& a) {
  const pipeline::ValidatorConfig c{a.atom("name"), a.atom("to")};
  return [c](const std::string&) { return pipeline::validator(c); };
}

BehaviourFactory build_sink(Args& a) {
  const pipeline::SinkConfig c{a.atom("name")};
  return [c](const std::string&) { return pipeline::sink(c); };
}

BehaviourFactory build_dead_letter(Args& a) {
  const pipeline::SinkConfig c{a.atom("name")};
  return [c](const std::string&) { return pipeline::dead_letter(c); };
}

BehaviourFactory build_peer(Args& a) {
  systems::PeerConfig c;
  c.name = a.optional_atom("name");
  c.peer = a.optional_atom("peer");
  c.interval = a.positive("interval");
  c.crash_on_disconnect = a.flag("crash_on_disconnect");
  return [c](const std::string&) { return std::make_unique<systems::Peer>(c); };
}

ArgInfo name_arg(const char* fallback) {
  return {"name", "string", fallback, "the name it registers (the other stages send to it by name)"};
}

std::vector<Entry> make_entries() {
  std::vector<Entry> e{
      {{"idle", "does nothing; stops at once when asked", stock_args({})}, build_idle},
      {{"trap_exit", "traps exits; asked to stop (shutdown), it takes shutdown_delay to stop",
        stock_args({{"shutdown_delay", "duration", "0", "how long its stop takes"}})},
       build_trap_exit},
      {{"stall",
        "traps exits and never stops when asked: its supervisor kills it after the child's "
        "shutdown timeout (never, with shutdown: infinity)",
        stock_args({})},
       build_stall},
      {{"crash_after", "crashes with reason, after each successful init (every incarnation)",
        stock_args({{"after", "duration", "", "how long after init it crashes"},
                    {"reason", "reason", "{error,crash}", kReasonHelp}})},
       build_crash_after},
      {{"flaky",
        "crashes with reason after an exponentially distributed time with mean mtbf from each "
        "successful init, drawn from the process's own random stream",
        stock_args({{"mtbf", "duration", "", "the mean time to its crash (more than 0)"},
                    {"reason", "reason", "{error,crash}", kReasonHelp}})},
       build_flaky},
      {{"echo",
        "answers each call with the call's own tag and payload; sends each plain message "
        "from another process back to it",
        stock_args({})},
       build_echo},
      {{"ticker",
        "sends itself a tick every interval from init and traces each as a `tick {n}` event",
        stock_args({{"interval", "duration", "1s", "the time between ticks (more than 0)"},
                    {"ticks", "int", "0", "ends normal after this many ticks; 0: never"}})},
       build_ticker},
      {{"peer",
        "keeps a link to the process registered as `peer` (on any node) and pings it every "
        "interval: cross-node traffic; losing an established link is peer_lost (a crash with "
        "crash_on_disconnect), a failed attempt peer_unreachable (retried)",
        {{"name", "string", "-", "the name it registers (- : none)"},
         {"peer", "string", "-", "the registered name it links to (- : none, it only answers pings)"},
         {"interval", "duration", "500ms", "the time between connection attempts and pings (more than 0)"},
         {"crash_on_disconnect", "bool", "false", "crash with the link's exit reason when an established link is lost"}}},
       build_peer},
      {{"pipeline.reader",
        "seed 000's Input.Reader: one line `k,v` a tick, each traced line_emitted {seq} and "
        "sent to `to`",
        {{"interval", "duration", "50ms", "the time between lines (more than 0)"},
         {"negative", "ratio", "0", "the share of lines with v < 0 (they crash the validator)"},
         {"unparsable", "ratio", "0", "the share of lines that are garbage (dead-lettered)"},
         name_arg("Input.Reader"),
         {"to", "string", "Input.Parser", "where lines go"}}},
       build_reader},
      {{"pipeline.parser",
        "seed 000's Input.Parser: splits `k,v`, sends events to `to` and unparsable lines to "
        "`dead_letter`",
        {name_arg("Input.Parser"),
         {"to", "string", "Input.Validator", "where parsed events go"},
         {"dead_letter", "string", "DeadLetter.Sink", "where unparsable lines go"}}},
       build_parser},
      {{"pipeline.validator",
        "seed 000's Input.Validator: crashes on v < 0 (the event is lost: line_lost, why "
        "crashed), sends the rest to `to`",
        {name_arg("Input.Validator"), {"to", "string", "DB.Sink", "where valid events go"}}},
       build_validator},
      {{"pipeline.sink", "seed 000's DB.Sink: stores events (line_stored)",
        {name_arg("DB.Sink")}},
       build_sink},
      {{"pipeline.dead_letter",
        "seed 000's DeadLetter.Sink: collects unparsable lines (line_dead_lettered)",
        {name_arg("DeadLetter.Sink")}},
       build_dead_letter},
  };
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.info.name < b.info.name; });
  return e;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> e = make_entries();
  return e;
}

}  // namespace

const std::vector<BehaviourInfo>& catalogue() {
  static const std::vector<BehaviourInfo> infos = [] {
    std::vector<BehaviourInfo> out;
    for (const Entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return infos;
}

BehaviourFactory make_behaviour(const BehaviourRef& ref, std::vector<Diagnostic>& errors) {
  const std::vector<Entry>& all = entries();
  auto it = std::lower_bound(all.begin(), all.end(), ref.name,
                             [](const Entry& e, const std::string& n) { return e.info.name < n; });
  if (it == all.end() || it->info.name != ref.name) {
    std::vector<std::string> names;
    for (const Entry& e : all) names.push_back(e.info.name);
    const std::string near = closest_name(ref.name, names);
    errors.push_back({ref.mark, "unknown behaviour '" + ref.name + "' (" +
                                    (near.empty() ? "known: " + joined(names) : "did you mean '" + near + "'?") +
                                    ")"});
    return {};
  }
  Args args(ref, it->info, errors);
  BehaviourFactory f = it->build(args);
  if (args.failed()) return {};
  return f;
}

}  // namespace lic::scenarios
