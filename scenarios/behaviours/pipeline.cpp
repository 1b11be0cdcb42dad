#include "scenarios/behaviours/pipeline.hpp"

#include <cassert>
#include <charconv>
#include <utility>
#include <vector>

#include "properties/conservation.hpp"
#include "scenarios/behaviours/table.hpp"

namespace lic::scenarios::pipeline {

namespace line = properties::line;

namespace {

const Atom kTick("tick");
const Atom kLine("line");    // Reader -> Parser: Line
const Atom kEvent("event");  // Parser -> Validator: Event
const Atom kBad("bad");      // Parser -> DeadLetter: Bad
const Atom kStore("store");  // Validator -> DB.Sink: Event
const Atom kFlush("flush");  // DB.Sink -> itself: the flush timer (the buffer's generation)
const Atom kCrashed("crashed");

struct Line {
  std::int64_t seq;
  std::string text;
};

struct Event {
  std::int64_t seq;
  std::string key;
  std::int64_t value;
};

struct Bad {
  std::int64_t seq;
  std::string text;
  Atom why;
};

/// Traces the line protocol's hand-off, then sends: the order conservation relies on.
void pass_on(Context& ctx, Atom event, std::int64_t seq, Atom to, Atom tag, Payload payload) {
  ctx.emit(event, {{line::kSeq, seq}, {line::kTo, to}});
  ctx.send(to, tag, std::move(payload));
}

class Reader final : public Behaviour {
 public:
  explicit Reader(ReaderConfig c) : c_(c) {
    assert(check_mix(c_.negative, c_.unparsable).empty());
    // One draw in [0, den) decides a line: below `garbage_`, garbage; below `negative_`, v < 0.
    den_ = c_.negative.den * c_.unparsable.den;
    garbage_ = c_.unparsable.num * c_.negative.den;
    negative_ = garbage_ + c_.negative.num * c_.unparsable.den;
  }

  InitResult init(Context& ctx) override {
    ctx.register_name(c_.name);
    ctx.send_after(c_.interval, ctx.self(), kTick);
    return InitResult::ok();
  }

  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag != kTick || m.from != ctx.self()) return;
    const std::int64_t seq = kSeqsPerReader * static_cast<std::int64_t>(ctx.self().id) + ++count_;
    std::string text = make_line(ctx.rng());
    pass_on(ctx, line::kEmitted, seq, c_.to, kLine, Line{seq, std::move(text)});
    ctx.send_after(c_.interval, ctx.self(), kTick);
  }

 private:
  std::string make_line(Rng& rng) const {
    const std::uint64_t x = rng.uniform(den_);
    const std::string key = "k" + std::to_string(rng.uniform(100));
    if (x < garbage_) {
      const std::string v = std::to_string(rng.uniform(1000));
      switch (rng.uniform(3)) {
        case 0: return key + " " + v;             // no comma
        case 1: return key + ",x" + v;            // not a number
        default: return key + "," + v + "," + v;  // three fields
      }
    }
    const std::int64_t v = x < negative_ ? rng.uniform_range(-999, -1) : rng.uniform_range(0, 999);
    return key + "," + std::to_string(v);
  }

  ReaderConfig c_;
  std::uint64_t den_ = 1;
  std::uint64_t garbage_ = 0;
  std::uint64_t negative_ = 0;
  std::int64_t count_ = 0;
};

/// A stage that registers its name and handles one message tag.
class Stage : public Behaviour {
 public:
  Stage(Atom name, Atom tag) : name_(name), tag_(tag) {}
  InitResult init(Context& ctx) override {
    ctx.register_name(name_);
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag == tag_) handle(ctx, m);
  }

 private:
  virtual void handle(Context& ctx, const Message& m) = 0;
  Atom name_;
  Atom tag_;
};

class Parser final : public Stage {
 public:
  explicit Parser(ParserConfig c) : Stage(c.name, kLine), c_(c) {}

 private:
  void handle(Context& ctx, const Message& m) override {
    const Line* l = m.get<Line>();
    if (l == nullptr) return;
    std::string key;
    std::int64_t value = 0;
    const Atom why = parse_line(l->text, key, value);
    if (!why.empty()) {
      pass_on(ctx, line::kSent, l->seq, c_.dead_letter, kBad, Bad{l->seq, l->text, why});
      return;
    }
    pass_on(ctx, line::kSent, l->seq, c_.to, kEvent, Event{l->seq, std::move(key), value});
  }
  ParserConfig c_;
};

class Validator final : public Stage {
 public:
  explicit Validator(ValidatorConfig c) : Stage(c.name, kEvent), c_(c) {}

 private:
  void handle(Context& ctx, const Message& m) override {
    const Event* e = m.get<Event>();
    if (e == nullptr) return;
    if (e->value < 0) {
      // Seed 000's validator raises on an invalid event; the event goes down with it.
      ctx.emit(line::kLost, {{line::kSeq, e->seq}, {line::kWhy, kCrashed}});
      ctx.stop(Reason::error(Atom("negative_value")));
      return;
    }
    pass_on(ctx, line::kSent, e->seq, c_.to, kStore, Event{*e});
  }
  ValidatorConfig c_;
};

/// Seed 000's DB.Sink with its buffer: lines wait in the state (line_buffered) until a flush
/// stores them (line_stored), `batch` at a time or `flush_every` after the first of them came.
class Sink final : public Stage {
 public:
  explicit Sink(DbSinkConfig c) : Stage(c.name, kStore), c_(c) {}

  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag != kFlush || m.from != ctx.self()) {
      Stage::handle_info(ctx, m);
      return;
    }
    const std::uint64_t* gen = m.get<std::uint64_t>();
    if (gen != nullptr && *gen == generation_) flush(ctx);  // else a timer of a buffer already flushed
  }

 private:
  void handle(Context& ctx, const Message& m) override {
    const Event* e = m.get<Event>();
    if (e == nullptr) return;
    ctx.emit(line::kBuffered, {{line::kSeq, e->seq}});
    buffer_.push_back(e->seq);
    if (static_cast<std::int64_t>(buffer_.size()) >= c_.batch) {
      flush(ctx);
    } else if (buffer_.size() == 1) {
      timer_ = ctx.send_after(c_.flush_every, ctx.self(), kFlush, generation_);
    }
  }

  void flush(Context& ctx) {
    for (const std::int64_t seq : buffer_) ctx.emit(line::kStored, {{line::kSeq, seq}});
    buffer_.clear();
    ++generation_;
    if (timer_) ctx.cancel_timer(timer_);
    timer_ = Ref{};
  }

  DbSinkConfig c_;
  std::vector<std::int64_t> buffer_;  // seqs, oldest first
  std::uint64_t generation_ = 0;      // flushes so far: names the buffer a timer was set for
  Ref timer_;
};

class DeadLetter final : public Stage {
 public:
  explicit DeadLetter(SinkConfig c) : Stage(c.name, kBad) {}

 private:
  void handle(Context& ctx, const Message& m) override {
    if (const Bad* b = m.get<Bad>()) {
      ctx.emit(line::kDeadLettered, {{line::kSeq, b->seq}, {line::kWhy, b->why}});
    }
  }
};

}  // namespace

std::string check_mix(Ratio negative, Ratio unparsable) {
  std::uint64_t den = 0;
  if (__builtin_mul_overflow(negative.den, unparsable.den, &den)) {
    return "negative and unparsable are too finely divided to draw exactly (use fewer digits)";
  }
  // negative + unparsable <= 1, over the common denominator (each term <= den, no overflow).
  if (negative.num * unparsable.den > den - unparsable.num * negative.den) {
    return "negative and unparsable add up to more than 100%";
  }
  return "";
}

Atom parse_line(const std::string& text, std::string& key, std::int64_t& value) {
  static const Atom kNotTwoFields("not_two_fields");
  static const Atom kEmptyKey("empty_key");
  static const Atom kNotAnInteger("not_an_integer");
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) {
    return kNotTwoFields;
  }
  if (comma == 0) return kEmptyKey;
  const char* first = text.data() + comma + 1;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (first == last || ec != std::errc() || end != last) return kNotAnInteger;
  key = text.substr(0, comma);
  return Atom();
}

std::unique_ptr<Behaviour> reader(const ReaderConfig& c) { return std::make_unique<Reader>(c); }
std::unique_ptr<Behaviour> parser(const ParserConfig& c) { return std::make_unique<Parser>(c); }
std::unique_ptr<Behaviour> validator(const ValidatorConfig& c) {
  return std::make_unique<Validator>(c);
}
std::unique_ptr<Behaviour> sink(const DbSinkConfig& c) { return std::make_unique<Sink>(c); }
std::unique_ptr<Behaviour> dead_letter(const SinkConfig& c) {
  return std::make_unique<DeadLetter>(c);
}

}  // namespace lic::scenarios::pipeline

// ---- what a file can name ----------------------------------------------------------------------

namespace lic::scenarios {

namespace {

ArgInfo name_arg(const char* fallback) {
  return registered_as({"name", "string", fallback, "the name it registers (the other stages send to it by name)"});
}

BehaviourFactory build_reader(Args& a) {
  pipeline::ReaderConfig c;
  c.interval = a.positive("interval");
  c.negative = a.ratio("negative");
  c.unparsable = a.ratio("unparsable");
  c.name = a.atom("name");
  c.to = a.atom("to");
  if (const std::string mix = pipeline::check_mix(c.negative, c.unparsable); !mix.empty()) a.invalid("negative", mix);
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
  const pipeline::DbSinkConfig c{a.atom("name"), a.integer("batch"), a.positive("flush_every")};
  if (c.batch < 1) a.invalid("batch", "must be 1 or more");
  return [c](const std::string&) { return pipeline::sink(c); };
}

BehaviourFactory build_dead_letter(Args& a) {
  const pipeline::SinkConfig c{a.atom("name")};
  return [c](const std::string&) { return pipeline::dead_letter(c); };
}

}  // namespace

std::vector<BehaviourInfo> pipeline_behaviours() {
  std::vector<BehaviourInfo> r;
  r.push_back(BehaviourInfo{"pipeline.reader",
                      "seed 000's Input.Reader: one line `k,v` a tick, each traced line_emitted {seq} and sent to `to`",
                      {pacing({"interval", "duration", "50ms", "the time between lines (more than 0)"}),
                       {"negative", "ratio", "0", "the share of lines with v < 0 (they crash the validator)"},
                       {"unparsable", "ratio", "0", "the share of lines that are garbage (dead-lettered)"},
                       name_arg("Input.Reader"),
                       refers_to({"to", "string", "Input.Parser", "where lines go"})},
                      build_reader});
  r.push_back(BehaviourInfo{"pipeline.parser",
                      "seed 000's Input.Parser: splits `k,v`, sends events to `to` and unparsable lines to `dead_letter`",
                      {name_arg("Input.Parser"),
                       refers_to({"to", "string", "Input.Validator", "where parsed events go"}),
                       refers_to({"dead_letter", "string", "DeadLetter.Sink", "where unparsable lines go"})},
                      build_parser});
  r.push_back(BehaviourInfo{"pipeline.validator",
                      "seed 000's Input.Validator: crashes on v < 0 (the event is lost: line_lost, why crashed), "
                      "sends the rest to `to`",
                      {name_arg("Input.Validator"), refers_to({"to", "string", "DB.Sink", "where valid events go"})},
                      build_validator});
  r.push_back(BehaviourInfo{"pipeline.sink",
                      "seed 000's DB.Sink: buffers events in its state (line_buffered) and stores them at a flush "
                      "(line_stored), every `batch` events or `flush_every` after the first one waiting; a crash loses "
                      "the buffer (sink_buffer)",
                      {name_arg("DB.Sink"),
                       {"batch", "int", "100", "flush when this many are buffered (1 or more; 1: store each at once)"},
                       {"flush_every", "duration", "200ms", "flush when the oldest buffered event is this old (more than 0)"}},
                      build_sink});
  r.push_back(BehaviourInfo{"pipeline.dead_letter", "seed 000's DeadLetter.Sink: collects unparsable lines (line_dead_lettered)",
                      {name_arg("DeadLetter.Sink")}, build_dead_letter});
  return r;
}

}  // namespace lic::scenarios
