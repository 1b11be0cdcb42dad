#include "scenarios/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace lic::scenarios {

namespace {

std::string joined(const std::vector<std::string>& names);

void check_schema(const std::string& what, const std::string& name, const std::vector<ArgInfo>& args) {
  if (name.empty() || name.find_first_of(" \t\n") != std::string::npos)
    throw std::invalid_argument(what + " name '" + name + "' must be a word without spaces");
  const std::vector<std::string>& types = arg_types();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgInfo& a = args[i];
    if (a.name.empty()) throw std::invalid_argument(what + " '" + name + "': an argument without a name");
    const std::vector<std::string> words = choices_of(a.type);
    if (std::find(types.begin(), types.end(), a.type) == types.end() && words.empty())
      throw std::invalid_argument(what + " '" + name + "': argument '" + a.name + "' has unknown type '" + a.type +
                                  "' (the types are " + joined(types) + ", or words to choose from, as in \"immediate|backoff\")");
    for (std::size_t w = 0; w < words.size(); ++w) {
      if (words[w].empty() || words[w].find_first_of(" \t\n") != std::string::npos ||
          std::find(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(w), words[w]) != words.begin() + static_cast<std::ptrdiff_t>(w))
        throw std::invalid_argument(what + " '" + name + "': argument '" + a.name + "' of type '" + a.type +
                                    "': the choices must be distinct words without spaces");
    }
    if (const std::string bad = check_value(a.type, a.fallback); !a.fallback.empty() && !bad.empty())
      throw std::invalid_argument(what + " '" + name + "': the default of argument '" + a.name + "' does not read: " + bad);
    for (std::size_t j = 0; j < i; ++j) {
      if (args[j].name == a.name)
        throw std::invalid_argument(what + " '" + name + "': argument '" + a.name + "' is declared twice");
    }
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

template <class Info>
std::vector<std::string> names_of(const std::vector<Info>& all) {
  std::vector<std::string> names;
  for (const Info& i : all) names.push_back(i.name);
  return names;
}

/// A behaviour's buggify point: a word, and not a name another behaviour gives another meaning.
void check_point(const std::string& owner, const BuggifyPoint& p, const std::vector<BehaviourInfo>& others) {
  if (p.name.empty() || p.name.find_first_of(" \t\n") != std::string::npos)
    throw std::invalid_argument("behaviour '" + owner + "': buggify point '" + p.name + "' must be a word without spaces");
  for (const BehaviourInfo& o : others)
    for (const BuggifyPoint& q : o.buggify)
      if (q.name == p.name && q.help != p.help)
        throw std::invalid_argument("buggify point '" + p.name + "' of behaviour '" + owner + "' is already behaviour '" + o.name +
                                    "''s with another meaning (\"" + q.help + "\")");
}

}  // namespace

Registry Registry::with_builtins() {
  Registry r;
  for (auto* list : {stock_behaviours, pipeline_behaviours, peer_behaviours, ingest_behaviours, pg_behaviours, leader_behaviours, kv_behaviours}) {
    for (BehaviourInfo& b : list()) r.add(std::move(b));
  }
  for (auto* list : {builtin_checks, tree_checks, leader_checks, history_checks}) {
    for (CheckInfo& c : list()) r.add(std::move(c));
  }
  for (auto* list : {builtin_metrics, tree_metrics, leader_metrics}) {
    for (MetricInfo& m : list()) r.add(std::move(m));
  }
  return r;
}

const Registry& Registry::builtin() {
  static const Registry r = with_builtins();
  return r;
}

void Registry::add(BehaviourInfo b) {
  check_schema("behaviour", b.name, b.args);
  if (!b.build) throw std::invalid_argument("behaviour '" + b.name + "' has no build function");
  if (behaviour(b.name) != nullptr) throw std::invalid_argument("behaviour '" + b.name + "' is already registered");
  for (const BuggifyPoint& p : b.buggify) check_point(b.name, p, behaviours_);
  const auto at = std::lower_bound(behaviours_.begin(), behaviours_.end(), b.name,
                                   [](const BehaviourInfo& x, const std::string& n) { return x.name < n; });
  behaviours_.insert(at, std::move(b));
}

void Registry::add(CheckInfo c) {
  check_schema("check", c.name, c.args);
  if (!c.build) throw std::invalid_argument("check '" + c.name + "' has no build function");
  if (check(c.name) != nullptr) throw std::invalid_argument("check '" + c.name + "' is already registered");
  checks_.push_back(std::move(c));
}

void Registry::add(MetricInfo m) {
  if (m.name.empty() || m.name.find_first_of(" \t\n") != std::string::npos)
    throw std::invalid_argument("metric name '" + m.name + "' must be a word without spaces");
  if (!m.measure) throw std::invalid_argument("metric '" + m.name + "' has no measure function");
  for (const MetricInfo& x : metrics_)
    if (x.name == m.name) throw std::invalid_argument("metric '" + m.name + "' is already registered");
  metrics_.push_back(std::move(m));
}

std::vector<BuggifyPoint> Registry::buggify_points() const {
  std::vector<std::string> all;
  for (const BehaviourInfo& b : behaviours_) all.push_back(b.name);
  return buggify_points(all);
}

std::vector<BuggifyPoint> Registry::buggify_points(const std::vector<std::string>& names) const {
  std::vector<BuggifyPoint> out;
  for (const std::string& n : names) {
    const BehaviourInfo* b = behaviour(n);
    if (b == nullptr) continue;
    for (const BuggifyPoint& p : b->buggify)
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  std::sort(out.begin(), out.end(), [](const BuggifyPoint& a, const BuggifyPoint& b) { return a.name < b.name; });
  return out;
}

const BehaviourInfo* Registry::behaviour(std::string_view name) const {
  const auto it = std::lower_bound(behaviours_.begin(), behaviours_.end(), name,
                                   [](const BehaviourInfo& x, std::string_view n) { return x.name < n; });
  return it != behaviours_.end() && it->name == name ? &*it : nullptr;
}

const CheckInfo* Registry::check(std::string_view name) const {
  for (const CheckInfo& c : checks_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

BehaviourFactory Registry::make_behaviour(const BehaviourRef& ref, std::vector<Diagnostic>& errors) const {
  const BehaviourInfo* info = behaviour(ref.name);
  if (info == nullptr) {
    const std::vector<std::string> names = names_of(behaviours_);
    const std::string near = closest_name(ref.name, names);
    errors.push_back({ref.mark, "unknown behaviour '" + ref.name + "' (" +
                                    (near.empty() ? "known: " + joined(names) : "did you mean '" + near + "'?") + ")"});
    return {};
  }
  Args args("'" + ref.name + "'", ref.mark, ref.args, info->args, errors);
  BehaviourFactory f;
  try {
    f = info->build(args);
  } catch (const std::exception& e) {
    errors.push_back({ref.mark, "behaviour '" + ref.name + "' could not be built from its arguments: " + e.what()});
    return {};
  }
  if (args.failed()) return {};
  if (!f) errors.push_back({ref.mark, "behaviour '" + ref.name + "': its build function returned no factory"});
  return f;
}

CheckJudge Registry::make_check(const CheckDecl& c, std::vector<Diagnostic>& errors) const {
  const CheckInfo* info = check(c.name);
  if (info == nullptr) {
    const std::vector<std::string> names = names_of(checks_);
    const std::string near = closest_name(c.name, names);
    errors.push_back({c.mark, "unknown check '" + c.name + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                                  "; the checks are: " + joined(names)});
    return {};
  }
  Args args("check '" + c.name + "'", c.mark, c.args, info->args, errors);
  CheckJudge j;
  try {
    j = info->build(args);
  } catch (const std::exception& e) {
    errors.push_back({c.mark, "check '" + c.name + "' could not be built from its arguments: " + e.what()});
    return {};
  }
  if (args.failed()) return {};
  if (!j) errors.push_back({c.mark, "check '" + c.name + "': its build function returned no judge"});
  return j;
}

}  // namespace lic::scenarios
