#include "supervision/child_spec.hpp"

#include <array>
#include <utility>

namespace lic::supervision {
namespace {

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& names, E v) {
  for (const auto& [e, n] : names) {
    if (e == v) return n;
  }
  return "?";
}

template <class E, std::size_t N>
bool parse_name(const std::array<std::pair<E, std::string_view>, N>& names, std::string_view text,
                E& out) {
  for (const auto& [e, n] : names) {
    if (n == text) {
      out = e;
      return true;
    }
  }
  return false;
}

constexpr std::array<std::pair<RestartType, std::string_view>, 3> kRestart{{
    {RestartType::permanent, "permanent"},
    {RestartType::transient, "transient"},
    {RestartType::temporary, "temporary"},
}};
constexpr std::array<std::pair<Strategy, std::string_view>, 4> kStrategy{{
    {Strategy::one_for_one, "one_for_one"},
    {Strategy::one_for_all, "one_for_all"},
    {Strategy::rest_for_one, "rest_for_one"},
    {Strategy::simple_one_for_one, "simple_one_for_one"},
}};
constexpr std::array<std::pair<ChildType, std::string_view>, 2> kType{{
    {ChildType::worker, "worker"},
    {ChildType::supervisor, "supervisor"},
}};
constexpr std::array<std::pair<AutoShutdown, std::string_view>, 3> kAuto{{
    {AutoShutdown::never, "never"},
    {AutoShutdown::any_significant, "any_significant"},
    {AutoShutdown::all_significant, "all_significant"},
}};

}  // namespace

std::string_view to_string(RestartType t) { return name_of(kRestart, t); }
std::string_view to_string(Strategy s) { return name_of(kStrategy, s); }
std::string_view to_string(ChildType t) { return name_of(kType, t); }
std::string_view to_string(AutoShutdown a) { return name_of(kAuto, a); }
bool parse_restart_type(std::string_view text, RestartType& out) { return parse_name(kRestart, text, out); }
bool parse_strategy(std::string_view text, Strategy& out) { return parse_name(kStrategy, text, out); }
bool parse_child_type(std::string_view text, ChildType& out) { return parse_name(kType, text, out); }
bool parse_auto_shutdown(std::string_view text, AutoShutdown& out) { return parse_name(kAuto, text, out); }

}  // namespace lic::supervision
