#include "reports/trace_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string_view>
#include <vector>

namespace lic::reports {
namespace {

std::string field_text(const FieldValue& v) {
  switch (v.index()) {
    case 0: return std::to_string(std::get<std::int64_t>(v));
    case 1: return std::string(std::get<Atom>(v).text());
    case 2: return format_pid(std::get<Pid>(v));
    case 3: return format_duration(std::get<Duration>(v));
    default: return std::get<std::string>(v);
  }
}

nlohmann::json field_json(const FieldValue& v) {
  switch (v.index()) {
    case 0: return std::get<std::int64_t>(v);
    case 1: return std::string(std::get<Atom>(v).text());
    case 2: return std::get<Pid>(v).id;
    case 3: return std::get<Duration>(v).ns;
    default: return std::get<std::string>(v);
  }
}

bool has_reason(EventKind k) {
  return k == EventKind::exit || k == EventKind::exit_signal || k == EventKind::down ||
         k == EventKind::drop || k == EventKind::task_exit;
}

bool is_chan(EventKind k) {
  return k == EventKind::chan_make || k == EventKind::chan_send || k == EventKind::chan_recv ||
         k == EventKind::chan_close || k == EventKind::chan_wait || k == EventKind::chan_wake;
}

/// A channel event's size key: a channel's capacity when made, its length after anything else.
const char* chan_size_key(EventKind k) { return k == EventKind::chan_make ? "cap" : "len"; }

}  // namespace

std::string format_pid(Pid p) { return p ? fmt::format("<0.{}.0>", p.id) : "world"; }

std::string format_event_text(const TraceEvent& e) {
  std::string who = format_pid(e.pid);
  if (!e.label.name.empty()) who += fmt::format(" {}#{}", e.label.name.text(), e.label.instance);
  std::string line = fmt::format("{:>12}  {:<28} {:<11}", format_time(e.time), who,
                                 e.kind == EventKind::system ? std::string(e.name.text())
                                                             : std::string(to_string(e.kind)));
  if (e.other) line += " other=" + format_pid(e.other);
  if (!e.tag.empty()) line += fmt::format(" tag={}", e.tag.text());
  if (is_chan(e.kind)) line += fmt::format(" {}={}", chan_size_key(e.kind), e.msg);
  else if (e.msg != 0) line += fmt::format(" msg={}", e.msg);
  if (has_reason(e.kind)) line += " reason=" + to_string(e.reason);
  if (is_chan(e.kind) && !e.reason.detail.empty()) line += fmt::format(" op={}", e.reason.detail.text());
  for (const TraceField& f : e.fields()) line += fmt::format(" {}={}", f.key.text(), field_text(f.value));
  return line;
}

namespace {

/// nlohmann's rendering of one string value (its escapes, its UTF-8 check and its error on bad
/// UTF-8): the fallback for text that is not plain ASCII, so every byte stays as it was.
void append_json_string_slow(std::string& out, std::string_view s) {
  out += nlohmann::json(std::string(s)).dump();
}

/// A byte that a JSON string cannot hold as it is (a control character, `"`, `\`), or one
/// past ASCII (left to nlohmann, which checks the UTF-8).
inline bool special(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

/// Text with odd bytes: escaped as nlohmann's dump() escapes (ensure_ascii off): `"` `\` and
/// the control characters, \b \f \n \r \t by name and the rest as \u00xx.
void append_json_string_escaped(std::string& out, std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return append_json_string_slow(out, s);
  }
  out += '"';
  std::size_t plain = 0;  // start of the run of bytes copied as they are
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (!special(c)) continue;
    out.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': out.append("\\\"", 2); break;
      case '\\': out.append("\\\\", 2); break;
      case '\b': out.append("\\b", 2); break;
      case '\f': out.append("\\f", 2); break;
      case '\n': out.append("\\n", 2); break;
      case '\r': out.append("\\r", 2); break;
      case '\t': out.append("\\t", 2); break;
      default: fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
    }
  }
  out.append(s.data() + plain, s.size() - plain);
  out += '"';
}

/// A JSON string as nlohmann's dump() writes it: plain text (paths, atoms, names: nearly all)
/// in one copy.
void append_json_string(std::string& out, std::string_view s) {
  for (const char c : s) {
    if (special(static_cast<unsigned char>(c))) return append_json_string_escaped(out, s);
  }
  out += '"';
  out.append(s.data(), s.size());
  out += '"';
}

/// A string literal without strlen.
template <std::size_t N>
void lit(std::string& out, const char (&text)[N]) {
  out.append(text, N - 1);
}

template <class Int>
void append_int(std::string& out, Int v) {
  const fmt::format_int digits(v);
  out.append(digits.data(), digits.size());
}

void append_field_value(std::string& out, const FieldValue& v) {
  switch (v.index()) {
    case 0: return append_int(out, std::get<std::int64_t>(v));
    case 1: return append_json_string(out, std::get<Atom>(v).text());
    case 2: return append_int(out, std::get<Pid>(v).id);
    case 3: return append_int(out, std::get<Duration>(v).ns);
    default: return append_json_string(out, std::get<std::string>(v));
  }
}

/// Two fields with one key: nlohmann's object keeps the first place and the last value; the
/// rare event that has them takes the reference path.
bool has_duplicate_keys(std::span<const TraceField> fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (fields[i].key == fields[j].key) return true;
    }
  }
  return false;
}

void append_fields(std::string& out, std::span<const TraceField> fields) {
  lit(out, ",\"fields\":{");
  bool first = true;
  for (const TraceField& f : fields) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, f.key.text());
    out += ':';
    append_field_value(out, f.value);
  }
  out += '}';
}

/// The reference rendering (nlohmann::ordered_json, key by key): the fast path below writes
/// the same bytes, and a test holds the two equal over whole catalogue traces.
std::string event_json_reference(const TraceEvent& e) {
  nlohmann::ordered_json j;
  j["seq"] = e.seq;
  j["t_ns"] = e.time.ns;
  j["kind"] = e.kind == EventKind::system ? std::string(e.name.text()) : std::string(to_string(e.kind));
  j["node"] = std::string(e.node.text());
  j["pid"] = e.pid.id;
  if (!e.label.name.empty()) {
    j["path"] = std::string(e.label.name.text());
    j["start"] = e.label.instance;
  }
  if (e.other) j["other"] = e.other.id;
  if (!e.tag.empty()) j["tag"] = std::string(e.tag.text());
  if (e.kind == EventKind::clock_change) {
    j["skew_ns"] = static_cast<std::int64_t>(e.msg);
    j["drift_ppm"] = static_cast<std::int64_t>(e.other.id);
    return j.dump();
  }
  if (is_chan(e.kind)) j[chan_size_key(e.kind)] = e.msg;
  else if (e.msg != 0) j["msg"] = e.msg;
  if (has_reason(e.kind)) j["reason"] = to_string(e.reason);
  if (is_chan(e.kind) && !e.reason.detail.empty()) j["op"] = std::string(e.reason.detail.text());
  if (e.field_count != 0) {
    nlohmann::ordered_json f = nlohmann::ordered_json::object();
    for (const TraceField& x : e.fields()) f[std::string(x.key.text())] = field_json(x.value);
    j["fields"] = std::move(f);
  }
  return j.dump();
}

}  // namespace

std::string format_event_json_reference(const TraceEvent& e) { return event_json_reference(e); }

namespace {

/// No byte a JSON string must escape nor one past ASCII: a branch-free test the compiler
/// vectorises.
bool plain(std::string_view s) {
  unsigned odd = 0;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    odd |= static_cast<unsigned>(u < 0x20) | static_cast<unsigned>(u == '"') | static_cast<unsigned>(u == '\\') |
           static_cast<unsigned>(u >= 0x80);
  }
  return odd == 0;
}

/// plain() of an atom's text, remembered by atom index (an atom's text never changes): each
/// thread its own, so nothing is shared.
bool plain(Atom a) {
  thread_local std::vector<std::uint8_t> known;  // 0 not yet seen, 1 plain, 2 not
  const std::uint32_t i = a.index();
  if (i >= known.size()) known.resize(std::max<std::size_t>(i + 1, 2 * known.size()), 0);
  if (known[i] == 0) known[i] = plain(a.text()) ? 1 : 2;
  return known[i] == 1;
}

/// Writes into room made beforehand (no capacity check, no call a piece).
struct Cursor {
  char* p;
  template <std::size_t N>
  void lit(const char (&text)[N]) {
    std::memcpy(p, text, N - 1);
    p += N - 1;
  }
  void ch(char c) { *p++ = c; }
  void str(std::string_view s) {  // plain text only
    *p++ = '"';
    if (!s.empty()) std::memcpy(p, s.data(), s.size());  // an empty view's data() may be null
    p += s.size();
    *p++ = '"';
  }
  template <class Int>
  void num(Int v) {
    const fmt::format_int digits(v);
    std::memcpy(p, digits.data(), digits.size());
    p += digits.size();
  }
};

constexpr std::size_t kIntRoom = 24;  // a 64-bit integer's digits and sign, and then some

/// Room a field needs, or 0 when its text is not plain.
std::size_t field_room(const TraceField& f) {
  if (!plain(f.key)) return 0;
  std::size_t room = f.key.text().size() + 4 + kIntRoom;
  if (const Atom* a = std::get_if<Atom>(&f.value)) {
    if (!plain(*a)) return 0;
    room += a->text().size();
  } else if (const std::string* t = std::get_if<std::string>(&f.value)) {
    if (!plain(*t)) return 0;
    room += t->size();
  }
  return room;
}

void put_field_value(Cursor& c, const FieldValue& v) {
  switch (v.index()) {
    case 0: return c.num(std::get<std::int64_t>(v));
    case 1: return c.str(std::get<Atom>(v).text());
    case 2: return c.num(std::get<Pid>(v).id);
    case 3: return c.num(std::get<Duration>(v).ns);
    default: return c.str(std::get<std::string>(v));
  }
}

/// append_event_json for an event whose text is all plain (nearly every one): room for the
/// longest rendering is made once, then written with plain stores. False, with `out` as it
/// was, for an event with text to escape.
bool append_plain_event_json(std::string& out, const TraceEvent& e) {
  const bool system = e.kind == EventKind::system;
  const bool reason = has_reason(e.kind), chan = is_chan(e.kind);
  if ((system && !plain(e.name)) || !plain(e.node) || !plain(e.label.name) || !plain(e.tag)) return false;
  if (chan && !plain(e.reason.detail)) return false;
  const std::string why = reason ? to_string(e.reason) : std::string();
  if (!plain(why)) return false;
  const std::string_view kind = system ? e.name.text() : to_string(e.kind);  // the kinds' names are plain
  const std::string_view node = e.node.text(), path = e.label.name.text(), tag = e.tag.text();
  const std::string_view op = chan ? e.reason.detail.text() : std::string_view();
  std::size_t room = 160 + 8 * kIntRoom + kind.size() + node.size() + path.size() + tag.size() + why.size() + op.size();
  for (const TraceField& f : e.fields()) {
    const std::size_t r = field_room(f);
    if (r == 0) return false;
    room += r;
  }
  const std::size_t at = out.size();
  out.resize(at + room);
  Cursor c{out.data() + at};
  c.lit("{\"seq\":");
  c.num(e.seq);
  c.lit(",\"t_ns\":");
  c.num(e.time.ns);
  c.lit(",\"kind\":");
  c.str(kind);
  c.lit(",\"node\":");
  c.str(node);
  c.lit(",\"pid\":");
  c.num(e.pid.id);
  if (!path.empty()) {
    c.lit(",\"path\":");
    c.str(path);
    c.lit(",\"start\":");
    c.num(e.label.instance);
  }
  if (e.other) {
    c.lit(",\"other\":");
    c.num(e.other.id);
  }
  if (!tag.empty()) {
    c.lit(",\"tag\":");
    c.str(tag);
  }
  if (e.kind == EventKind::clock_change) {
    c.lit(",\"skew_ns\":");
    c.num(static_cast<std::int64_t>(e.msg));
    c.lit(",\"drift_ppm\":");
    c.num(static_cast<std::int64_t>(e.other.id));
  } else {
    if (chan) {
      c.ch(',');
      c.str(chan_size_key(e.kind));
      c.ch(':');
      c.num(e.msg);
    } else if (e.msg != 0) {
      c.lit(",\"msg\":");
      c.num(e.msg);
    }
    if (reason) {
      c.lit(",\"reason\":");
      c.str(why);
    }
    if (chan && !op.empty()) {
      c.lit(",\"op\":");
      c.str(op);
    }
    if (e.field_count != 0) {
      c.lit(",\"fields\":{");
      bool first = true;
      for (const TraceField& f : e.fields()) {
        if (!first) c.ch(',');
        first = false;
        c.str(f.key.text());
        c.ch(':');
        put_field_value(c, f.value);
      }
      c.ch('}');
    }
  }
  c.ch('}');
  out.resize(static_cast<std::size_t>(c.p - out.data()));
  return true;
}

}  // namespace

void append_event_json(std::string& out, const TraceEvent& e) {
  if (has_duplicate_keys(e.fields())) {
    out += event_json_reference(e);
    return;
  }
  if (append_plain_event_json(out, e)) return;
  lit(out, "{\"seq\":");
  append_int(out, e.seq);
  lit(out, ",\"t_ns\":");
  append_int(out, e.time.ns);
  lit(out, ",\"kind\":");
  append_json_string(out, e.kind == EventKind::system ? e.name.text() : to_string(e.kind));
  lit(out, ",\"node\":");
  append_json_string(out, e.node.text());
  lit(out, ",\"pid\":");
  append_int(out, e.pid.id);
  if (!e.label.name.empty()) {
    lit(out, ",\"path\":");
    append_json_string(out, e.label.name.text());
    lit(out, ",\"start\":");
    append_int(out, e.label.instance);
  }
  if (e.other) {
    lit(out, ",\"other\":");
    append_int(out, e.other.id);
  }
  if (!e.tag.empty()) {
    lit(out, ",\"tag\":");
    append_json_string(out, e.tag.text());
  }
  if (e.kind == EventKind::clock_change) {
    lit(out, ",\"skew_ns\":");
    append_int(out, static_cast<std::int64_t>(e.msg));
    lit(out, ",\"drift_ppm\":");
    append_int(out, static_cast<std::int64_t>(e.other.id));
    out += '}';
    return;
  }
  if (is_chan(e.kind)) {
    out += ',';
    append_json_string(out, chan_size_key(e.kind));
    out += ':';
    append_int(out, e.msg);
  } else if (e.msg != 0) {
    lit(out, ",\"msg\":");
    append_int(out, e.msg);
  }
  if (has_reason(e.kind)) {
    lit(out, ",\"reason\":");
    append_json_string(out, to_string(e.reason));
  }
  if (is_chan(e.kind) && !e.reason.detail.empty()) {
    lit(out, ",\"op\":");
    append_json_string(out, e.reason.detail.text());
  }
  if (e.field_count != 0) append_fields(out, e.fields());
  out += '}';
}

std::string format_event_json(const TraceEvent& e) {
  std::string out;
  append_event_json(out, e);
  return out;
}

void JsonlSink::on_event(const TraceEvent& e) {
  line_.clear();
  append_event_json(line_, e);
  line_ += '\n';
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

}  // namespace lic::reports
