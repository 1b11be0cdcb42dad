#include "scenarios/file/fix.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "scenarios/file/write.hpp"

namespace lic::scenarios {

namespace {

constexpr std::array<std::string_view, 7> kFlags{"strategy", "intensity", "period", "auto_shutdown", "window", "max_children", "init"};

/// The node at `path` in the written scenario's `trees` (a root, a child, or a lifecycle
/// service), bound into `at`; false when nothing is there. (yaml-cpp's Node is a handle: `a = b`
/// would write b into what a refers to, and a default Node is a defined null, so reset() rebinds
/// and the answer is a bool.)
bool find(const YAML::Node& trees, const std::string& path, YAML::Node& at) {
  YAML::Node level;
  level.reset(trees);
  bool any = false;
  std::size_t i = 1;
  while (i <= path.size()) {
    const std::size_t slash = std::min(path.find('/', i), path.size());
    const std::string id = path.substr(i, slash - i);
    i = slash + 1;
    bool found = false;
    if (level.IsSequence()) {
      for (YAML::Node c : level) {
        const YAML::Node& view = c;
        const YAML::Node key = view["id"] ? view["id"] : view["name"];
        if (key && key.IsScalar() && key.Scalar() == id) {
          at.reset(c);
          found = true;
          break;
        }
      }
    }
    if (!found) return false;
    any = true;
    const YAML::Node& view = at;
    YAML::Node next;
    if (view["supervisor"]) next.reset(at["children"]);
    else if (view["lifecycle"]) next.reset(at["lifecycle"]["services"]);
    level.reset(next);
  }
  return any;
}

}  // namespace

ParseResult apply_fix(const Scenario& s, const Registry& registry) {
  ParseResult out;
  Scenario base = s;
  base.fix.clear();
  if (s.fix.empty()) {
    out.scenario = base;
    return out;
  }
  const auto fail = [&](const std::string& why) {
    out.errors.push_back({s.fix_mark, "fix: " + why});
    return out;
  };
  YAML::Node doc;
  YAML::Node fix;
  try {
    doc = YAML::Load(to_yaml(base));
    fix = YAML::Load(s.fix);
  } catch (const YAML::Exception& e) {
    return fail(std::string("cannot be read: ") + e.what());
  }
  const YAML::Node tree = fix["tree"];
  if (!tree || !tree.IsMap()) return fail("give `tree: {PATH: {...}}`");
  for (const auto& kv : tree) {
    const std::string path = kv.first.Scalar();
    YAML::Node at;
    const bool there = find(doc["trees"], path, at);
    if (!there) fail(path + " names nothing in the file's trees");
    if (!there || !kv.second.IsMap()) continue;
    for (const auto& change : kv.second) {
      const std::string key = change.first.Scalar();
      if (key == "args") {
        if (!static_cast<const YAML::Node&>(at)["behaviour"]) {
          fail(path + " is not a worker: it has no `args` to change");
          continue;
        }
        if (!change.second.IsMap()) {
          fail(path + ": `args` is a map of arguments, e.g. {args: {timeout: 5s}}");
          continue;
        }
        for (const auto& arg : change.second) at["args"][arg.first.Scalar()] = arg.second;
      } else if (static_cast<const YAML::Node&>(at)["supervisor"] && std::find(kFlags.begin(), kFlags.end(), key) != kFlags.end()) {
        at["supervisor"][key] = change.second;
      } else {
        at[key] = change.second;
      }
    }
  }
  if (!out.errors.empty()) return out;
  YAML::Emitter y;
  y << doc;
  ParseResult fixed = parse_scenario(y.c_str(), s.file, registry);
  for (const Diagnostic& d : fixed.errors) fail("the file with its fix does not read: " + d.message);
  if (!out.errors.empty()) return out;
  out.scenario = std::move(fixed.scenario);
  out.scenario.file = s.file;
  return out;
}

}  // namespace lic::scenarios
