#include "bench/figures.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace lic::bench {

void Figures::add(const std::string& name, double value, const std::string& unit) {
  if (!std::isfinite(value)) return absent(name, "the workload failed (see stderr)");
  entries_.push_back({name, value, unit});
  if (!json_) {
    std::printf("%s %.3g %s\n", name.c_str(), value, unit.c_str());
    std::fflush(stdout);
  }
}

void Figures::absent(const std::string& name, const std::string& why) {
  entries_.push_back({name, std::nullopt, why});
  if (!json_) {
    std::printf("%s - (%s)\n", name.c_str(), why.c_str());
    std::fflush(stdout);
  }
}

void Figures::alias(const std::string& name, const std::string& from, const std::string& why) {
  for (const Entry& e : entries_) {
    if (e.name == from && e.value) {
      entries_.push_back({name, e.value, e.unit});
      return;
    }
  }
  entries_.push_back({name, std::nullopt, why});
}

std::optional<double> Figures::get(const std::string& name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

bool Figures::has(const std::string& name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return true;
  }
  return false;
}

void Figures::verdict(const std::string& name, const std::string& op, double target, std::optional<bool> met,
                      std::string why) {
  verdicts_.push_back({name, op, target, met, std::move(why)});
}

std::string Figures::to_json(bool quick) const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  nlohmann::ordered_json units = nlohmann::ordered_json::object();
  nlohmann::ordered_json why = nlohmann::ordered_json::object();
  for (const Entry& e : entries_) {
    if (e.value) {
      j[e.name] = *e.value;
      units[e.name] = e.unit;
    } else {
      j[e.name] = nullptr;
      why[e.name] = e.unit;
    }
  }
  j["units"] = std::move(units);
  j["why_absent"] = std::move(why);
  nlohmann::ordered_json targets = nlohmann::ordered_json::object();
  for (const Verdict& v : verdicts_) {
    targets[v.name] = {{"op", v.op}, {"target", v.target}, {"met", nullptr}};
    if (v.met) targets[v.name]["met"] = *v.met;
    if (v.met && !*v.met) targets[v.name]["why"] = v.why;
  }
  j["targets"] = std::move(targets);
  j["mode"] = quick ? "quick" : "full";
  return j.dump(2);
}

}  // namespace lic::bench
