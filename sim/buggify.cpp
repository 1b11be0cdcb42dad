#include "sim/buggify.hpp"

namespace lic {

void Buggify::enable(const std::set<std::string>& names, Ratio fire) {
  on_.insert(names.begin(), names.end());
  fire_ = fire;
}

bool Buggify::ask(const Rng& root, std::string_view name, std::optional<Ratio> fire) {
  auto c = counts_.find(name);
  if (c == counts_.end()) c = counts_.emplace(std::string(name), Count{}).first;
  ++c->second.evaluated;
  if (!chaos_ || !on_.contains(name)) return false;
  auto s = streams_.find(name);
  if (s == streams_.end()) s = streams_.emplace(std::string(name), root.derive("buggify/" + std::string(name))).first;
  if (!s->second.chance(fire.value_or(fire_))) return false;
  ++c->second.fired;
  return true;
}

}  // namespace lic
