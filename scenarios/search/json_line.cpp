#include "scenarios/search/json_line.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace lic::scenarios {

namespace {

using Json = nlohmann::json;

/// A recursive descent over one line. Every method returns false to decline: the caller then
/// leaves the line to nlohmann, so declining is always safe and accepting must be exact.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  bool document(Json& out) {
    skip_space();
    if (!value(out, 0)) return false;
    skip_space();
    return p_ == end_;
  }

 private:
  static constexpr int kMaxDepth = 64;

  void skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  bool value(Json& out, int depth) {
    if (p_ == end_ || depth > kMaxDepth) return false;
    switch (*p_) {
      case '{': return object(out, depth + 1);
      case '[': return array(out, depth + 1);
      case '"': {
        std::string s;
        if (!string(s)) return false;
        out = std::move(s);
        return true;
      }
      case 't': return literal("true") && (out = true, true);
      case 'f': return literal("false") && (out = false, true);
      case 'n': return literal("null") && (out = nullptr, true);
      default: return number(out);
    }
  }

  bool object(Json& out, int depth) {
    out = Json::object();
    return members([&](std::string key) {
      Json v;
      if (!value(v, depth)) return false;
      out[key] = std::move(v);  // a key twice: the last one, as nlohmann's DOM keeps
      return true;
    });
  }

  bool array(Json& out, int depth) {
    out = Json::array();
    return list([&] {
      Json v;
      if (!value(v, depth)) return false;
      out.push_back(std::move(v));
      return true;
    });
  }

  /// A string of printable ASCII and the short escapes; declines \u and any byte past ASCII
  /// (nlohmann checks their UTF-8 and surrogates).
  bool string(std::string& out) {
    ++p_;  // '"'
    const char* run = p_;
    for (;;) {
      if (p_ == end_) return false;
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out.append(run, p_);
        ++p_;
        return true;
      }
      if (c < 0x20 || c >= 0x80) return false;
      if (c != '\\') {
        ++p_;
        continue;
      }
      out.append(run, p_);
      if (++p_ == end_) return false;
      switch (*p_) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        default: return false;  // \u, or not an escape
      }
      run = ++p_;
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  /// A number as nlohmann types it.
  struct Number {
    enum Kind { kUnsigned, kSigned, kFloat } kind = kFloat;
    std::uint64_t u = 0;
    std::int64_t i = 0;
    double f = 0;
    double as_double() const { return kind == kUnsigned ? static_cast<double>(u) : kind == kSigned ? static_cast<double>(i) : f; }
  };

  /// JSON's number grammar; typed as nlohmann types it: an integer without '-' that fits 64
  /// bits is unsigned, one with '-' that fits is signed, anything else strtod's double, which
  /// must be finite.
  bool number(Number& n) {
    const char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !digit(*p_)) return false;
    if (*p_ == '0') ++p_;
    else
      while (p_ != end_ && digit(*p_)) ++p_;
    bool integer = true;
    if (p_ != end_ && *p_ == '.') {
      integer = false;
      if (++p_ == end_ || !digit(*p_)) return false;
      while (p_ != end_ && digit(*p_)) ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      if (++p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !digit(*p_)) return false;
      while (p_ != end_ && digit(*p_)) ++p_;
    }
    const std::string token(start, p_);  // strto* want a terminated string
    char* stop = nullptr;
    errno = 0;
    if (integer && !negative) {
      const unsigned long long x = std::strtoull(token.c_str(), &stop, 10);
      if (errno == 0) return n.kind = Number::kUnsigned, n.u = x, true;
    } else if (integer) {
      const long long x = std::strtoll(token.c_str(), &stop, 10);
      if (errno == 0) return n.kind = Number::kSigned, n.i = x, true;
    }
    n.kind = Number::kFloat;
    n.f = std::strtod(token.c_str(), &stop);
    return std::isfinite(n.f);  // nlohmann refuses an overflow ("number overflow"); an underflow is 0
  }

  bool number(Json& out) {
    Number n;
    if (!number(n)) return false;
    if (n.kind == Number::kUnsigned) out = n.u;
    else if (n.kind == Number::kSigned) out = n.i;
    else out = n.f;
    return true;
  }

 public:
  // ---- a seed's result line, straight into a SeedResult ------------------------------------

  /// The line as read_result reads its JSON, for the lines a sweep writes for a passing seed
  /// (no witnesses, swarm or buggify); declines every other field, a key twice, a field of
  /// another type, or a required field missing: the caller's DOM path says what is wrong.
  bool result(SeedResult& r) {
    unsigned seen = 0;  // a bit a field
    skip_space();
    const bool read = members([&](std::string key) {
      const int field = field_of(key);
      if (field < 0 || (seen & (1U << field)) != 0) return false;
      seen |= 1U << field;
      return field_value(field, r);
    });
    skip_space();
    constexpr unsigned kRequired = (1U << 7) - 1;  // seed .. determinism
    return read && p_ == end_ && (seen & kRequired) == kRequired;
  }

 private:
  static int field_of(std::string_view k) {
    static constexpr std::string_view kFields[] = {"seed", "passed", "trace_hash", "events", "virtual_time_ns", "failed",
                                                   "determinism", "metrics", "faults", "reached", "judged"};
    for (int i = 0; i < static_cast<int>(std::size(kFields)); ++i)
      if (kFields[i] == k) return i;
    return -1;
  }

  bool unsigned_number(std::uint64_t& out) {
    Number n;
    if (p_ == end_ || !number(n) || n.kind != Number::kUnsigned) return false;
    out = n.u;
    return true;
  }

  bool boolean(bool& out) {
    if (p_ != end_ && *p_ == 't') return literal("true") && (out = true, true);
    return p_ != end_ && *p_ == 'f' && literal("false") && (out = false, true);
  }

  bool quoted(std::string& out) { return p_ != end_ && *p_ == '"' && string(out); }

  /// `[ "a", "b" ]` into `out`.
  bool strings(std::vector<std::string>& out) {
    return list([&] {
      std::string s;
      if (!quoted(s)) return false;
      out.push_back(std::move(s));
      return true;
    });
  }

  /// OPEN item, ... CLOSE, each item read by `item`.
  template <class Item>
  bool sequence(char open, char close, Item item) {
    if (p_ == end_ || *p_ != open) return false;
    ++p_;
    skip_space();
    if (p_ != end_ && *p_ == close) return ++p_, true;
    for (;;) {
      if (!item()) return false;
      skip_space();
      if (p_ == end_) return false;
      if (*p_ == close) return ++p_, true;
      if (*p_ != ',') return false;
      ++p_;
      skip_space();
    }
  }

  /// `[ item, ... ]`, each read by `item`.
  template <class Item>
  bool list(Item item) {
    return sequence('[', ']', item);
  }

  /// `{ "key": value, ... }`, each value read by `item(key)`.
  template <class Item>
  bool members(Item item) {
    return sequence('{', '}', [&] {
      std::string key;
      if (!quoted(key)) return false;
      skip_space();
      if (p_ == end_ || *p_ != ':') return false;
      ++p_;
      skip_space();
      return item(std::move(key));
    });
  }

  bool metric(std::string name, reports::Metrics& out) {
    reports::MetricValue m;
    Number n;
    if (p_ != end_ && *p_ == '[') {
      m.list = true;
      if (!list([&] { return p_ != end_ && number(n) && (m.values.push_back(n.as_double()), true); })) return false;
    } else if (p_ == end_ || !number(n)) {
      return false;
    } else {
      m.values.push_back(n.as_double());
    }
    // A name twice (nlohmann keeps the last), or more than a line may hold: the DOM path's.
    return out.size() < kMaxMetrics && out.emplace(std::move(name), std::move(m)).second;
  }

  bool fault(std::vector<FaultUse>& out) {
    FaultUse f;
    unsigned seen = 0;
    const bool ok = members([&](std::string key) {
      const int i = key == "name" ? 0 : key == "on" ? 1 : key == "injected" ? 2 : key == "skipped" ? 3 : -1;
      if (i < 0 || (seen & (1U << i)) != 0) return false;
      seen |= 1U << i;
      switch (i) {
        case 0: return quoted(f.name);
        case 1: return boolean(f.on);
        case 2: return unsigned_number(f.injected);
        default: return unsigned_number(f.skipped);
      }
    });
    if (!ok || seen != 0xF) return false;
    out.push_back(std::move(f));
    return true;
  }

  bool field_value(int field, SeedResult& r) {
    switch (field) {
      case 0: return unsigned_number(r.seed);
      case 1: return boolean(r.passed);
      case 2: return quoted(r.trace_hash);
      case 3: return unsigned_number(r.events);
      case 4: {
        Number n;
        if (p_ == end_ || !number(n)) return false;
        if (n.kind == Number::kSigned) r.virtual_time_ns = n.i;
        else if (n.kind == Number::kUnsigned && n.u <= static_cast<std::uint64_t>(INT64_MAX)) r.virtual_time_ns = static_cast<std::int64_t>(n.u);
        else return false;
        return true;
      }
      case 5: return strings(r.failed);
      case 6:
        if (p_ != end_ && *p_ == 'n') return literal("null");
        r.determinism.emplace();
        return quoted(*r.determinism);
      case 7: return members([&](std::string name) { return metric(std::move(name), r.metrics); });
      case 8: return list([&] { return fault(r.faults); });
      case 9: return strings(r.reached);
      default: return strings(r.judged);
    }
  }

 public:
  static constexpr std::size_t kMaxMetrics = 10000;

 private:
  const char* p_;
  const char* end_;
};

}  // namespace

std::optional<nlohmann::json> parse_json_line(std::string_view text) {
  Json out;
  if (!LineReader(text).document(out)) return std::nullopt;
  return out;
}

bool identical_json(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y)
      if (x.key() != y.key() || !identical_json(x.value(), y.value())) return false;
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!identical_json(a[i], b[i])) return false;
    return true;
  }
  if (a.is_number_float()) {  // bit for bit: -0.0 is not 0.0 to a reader that prints it
    const double x = a.get<double>(), y = b.get<double>();
    return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0;
  }
  return a == b;
}

std::optional<SeedResult> read_result_line(std::string_view text) {
  SeedResult r;
  if (!LineReader(text).result(r)) return std::nullopt;
  return r;
}

}  // namespace lic::scenarios
