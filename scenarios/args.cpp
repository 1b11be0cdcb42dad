#include "scenarios/args.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>

namespace lic::scenarios {

namespace {

// ---- the value parsers: text -> value, or an error that quotes the text ---------------------

bool parse_value(const std::string& text, Duration& out, std::string& error) {
  const DurationParse d = parse_duration(text);
  if (!d.ok) error = "bad duration '" + text + "': " + d.error;
  out = d.value;
  return d.ok;
}

bool parse_value(const std::string& text, Ratio& out, std::string& error) { return parse_ratio(text, out, error); }

bool parse_value(const std::string& text, std::int64_t& out, std::string& error) {
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, out);
  if (ec == std::errc::result_out_of_range) {
    error = "integer '" + text + "' is outside a 64-bit integer (-9223372036854775808..9223372036854775807)";
    return false;
  }
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

bool parse_value(const std::string& text, std::string& out, std::string&) {
  out = text;
  return true;
}

bool parse_value(const std::string& text, Reason& out, std::string& error) { return parse_reason_arg(text, out, error); }

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

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

bool parse_reason_arg(const std::string& text, Reason& out, std::string& error) {
  for (const char* head : {"shutdown", "error"}) {
    const std::string prefix = std::string(head) + ":";
    if (text.size() > prefix.size() && text.compare(0, prefix.size(), prefix) == 0) {
      return parse_reason_arg("{" + std::string(head) + "," + text.substr(prefix.size()) + "}", out, error);
    }
  }
  if (parse_reason(text, out)) return true;
  error = "bad exit reason '" + text +
          "' (write normal, shutdown, kill, {shutdown,T} or shutdown:T, {error,W} or error:W, or an atom)";
  return false;
}

bool parse_init_result(const std::string& text, InitResult& out, std::string& error) {
  return parse_value(text, out, error);
}

std::vector<std::string> choices_of(const std::string& type) {
  std::vector<std::string> words;
  if (type.find('|') == std::string::npos) return words;
  for (std::size_t i = 0; i <= type.size();) {
    const std::size_t j = std::min(type.find('|', i), type.size());
    words.push_back(type.substr(i, j - i));
    i = j + 1;
  }
  return words;
}

namespace {

/// Why `text` is not one of `words` ("" when it is one), with the nearest as "did you mean".
std::string not_one_of(const std::vector<std::string>& words, const std::string& text) {
  if (std::find(words.begin(), words.end(), text) != words.end()) return {};
  const std::string near = closest_name(text, words);
  return "'" + text + "' is not one of " + joined(words) + (near.empty() ? "" : " (did you mean '" + near + "'?)");
}

}  // namespace

std::string check_value(const std::string& type, const std::string& text) {
  if (const std::vector<std::string> words = choices_of(type); !words.empty()) return not_one_of(words, text);
  std::string error;
  const auto reads = [&](auto v) { return parse_value(text, v, error); };
  bool ok = true;
  if (type == "duration") ok = reads(Duration{});
  else if (type == "ratio") ok = reads(Ratio{});
  else if (type == "int") ok = reads(std::int64_t{});
  else if (type == "bool") ok = reads(false);
  else if (type == "reason") ok = reads(Reason{});
  else if (type == "init results") ok = reads(InitResult{});
  return ok ? std::string() : error;
}

const std::vector<std::string>& arg_types() {
  static const std::vector<std::string> types{"duration", "ratio",        "int",  "bool", "string",
                                              "reason",   "init results", "path", "supervisor path", "list"};
  return types;
}

Args::Args(std::string owner, Mark at, const std::vector<std::pair<std::string, ArgValue>>& given,
           const std::vector<ArgInfo>& schema, std::vector<Diagnostic>& errors)
    : owner_(std::move(owner)), at_(at), given_(given), schema_(schema), errors_(errors), errors_before_(errors.size()) {
  check_names();
}

Duration Args::duration(std::string_view name) { return scalar<Duration>(name, "duration"); }

Duration Args::positive(std::string_view name) {
  const std::size_t before = errors_.size();
  const Duration d = duration(name);
  if (errors_.size() == before && d <= Duration::zero() && given(name)) invalid(name, "must be more than 0");
  return d;
}

Ratio Args::ratio(std::string_view name) { return scalar<Ratio>(name, "ratio"); }
std::int64_t Args::integer(std::string_view name) { return scalar<std::int64_t>(name, "int"); }
bool Args::flag(std::string_view name) { return scalar<bool>(name, "bool"); }
Atom Args::atom(std::string_view name) { return scalar<Atom>(name, "string"); }
std::string Args::text(std::string_view name) { return scalar<std::string>(name, "string"); }
std::string Args::path(std::string_view name) { return scalar<std::string>(name, "path"); }
std::string Args::supervisor_path(std::string_view name) { return scalar<std::string>(name, "supervisor path"); }
Reason Args::reason(std::string_view name) { return scalar<Reason>(name, "reason"); }

Atom Args::optional_atom(std::string_view name) {
  const Atom a = atom(name);
  return a.text() == "-" ? Atom() : a;
}

std::vector<std::string> Args::words(std::string_view name) {
  const ArgInfo& a = info(name, "list");
  const ArgValue* v = find(name);
  if (v != nullptr) return v->is_list ? v->list : std::vector<std::string>{v->scalar};
  if (a.required()) add(at_, owner_ + " needs argument '" + a.name + "' (" + a.type + ": " + a.help + ")");
  if (a.fallback.empty()) return {};
  return {a.fallback};
}

std::string Args::choice(std::string_view name) {
  auto it = std::find_if(schema_.begin(), schema_.end(), [&](const ArgInfo& a) { return a.name == name; });
  assert(it != schema_.end() && !choices_of(it->type).empty());  // a bug in the caller, not in the file
  const std::string* t = text_of(*it);
  if (t == nullptr) return {};
  if (const std::string why = not_one_of(choices_of(it->type), *t); !why.empty()) {
    invalid(name, why);
    return {};
  }
  return *t;
}

std::vector<InitResult> Args::init_results(std::string_view name) {
  const ArgInfo& a = info(name, "init results");
  const ArgValue* v = find(name);
  std::vector<std::string> items;
  if (v != nullptr && v->is_list) {
    items = v->list;
    if (items.empty()) invalid(name, "an empty list (give at least one result, e.g. [ok])");
  } else if (const std::string* t = text_of(a)) {
    items.push_back(*t);
  }
  std::vector<InitResult> out;
  for (const std::string& item : items) {
    InitResult r;
    std::string error;
    if (parse_value(item, r, error)) out.push_back(r);
    else invalid(name, error);
  }
  return out;
}

bool Args::given(std::string_view name) const { return find(name) != nullptr; }

void Args::invalid(std::string_view name, const std::string& message) {
  const ArgValue* v = find(name);
  add(v != nullptr ? v->mark : at_, "argument '" + std::string(name) + "' of " + owner_ + ": " + message);
}

void Args::invalid(const std::string& message) { add(at_, owner_ + ": " + message); }

const ArgInfo& Args::info(std::string_view name, std::string_view type) const {
  auto it = std::find_if(schema_.begin(), schema_.end(), [&](const ArgInfo& a) { return a.name == name; });
  // Reading an argument the schema does not declare, or as another type, is a bug in the
  // behaviour's or check's own code, not in the file.
  assert(it != schema_.end() && it->type == type);
  (void)type;
  return *it;
}

const ArgValue* Args::find(std::string_view name) const {
  for (const auto& [n, v] : given_) {
    if (n == name) return &v;
  }
  return nullptr;
}

void Args::check_names() {
  std::vector<std::string> known;
  for (const ArgInfo& a : schema_) known.push_back(a.name);
  for (const auto& [n, v] : given_) {
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      std::string m = "unknown argument '" + n + "' for " + owner_ + " (";
      if (const std::string near = closest_name(n, known); !near.empty()) m += "did you mean '" + near + "'? ";
      m += known.empty() ? "it takes none)" : "it takes " + joined(known) + ")";
      add(v.mark, std::move(m));
    } else if (find(n) != &v) {
      add(v.mark, "argument '" + n + "' of " + owner_ + " is given twice");
    }
  }
}

/// The text to read for `a`: the one given, or the default; null when it is missing (reported
/// when it is required), absent and optional, or a list (reported).
const std::string* Args::text_of(const ArgInfo& a) {
  const ArgValue* v = find(a.name);
  if (v == nullptr) {
    if (a.required()) add(at_, owner_ + " needs argument '" + a.name + "' (" + a.type + ": " + a.help + ")");
    return a.fallback.empty() ? nullptr : &a.fallback;
  }
  if (v->is_list) {
    add(v->mark, "argument '" + a.name + "' of " + owner_ + " takes one " + a.type + ", not a list");
    return nullptr;
  }
  return &v->scalar;
}

template <class T>
T Args::scalar(std::string_view name, std::string_view type) {
  const ArgInfo& a = info(name, type);
  T out{};
  const std::string* t = text_of(a);
  std::string error;
  if (t != nullptr && !parse_value(*t, out, error)) invalid(name, error);
  return out;
}

}  // namespace lic::scenarios
