#pragma once
// Property tests write their failing case as a scenario file (DESIGN.md §5), so the shrunk
// counterexample is something `letitcrash run` replays, not only a RapidCheck reproduce string.
// Test code only. The files go to $LETITCRASH_COUNTEREXAMPLES, or ./counterexamples (under
// CTest: the test's build folder), named after the property.

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "reports/atomic_file.hpp"
#include "scenarios/file/write.hpp"
#include "sim/rc_prop.hpp"

namespace lic::test {

inline std::filesystem::path counterexample_dir() {
  const char* env = std::getenv("LETITCRASH_COUNTEREXAMPLES");
  if (env != nullptr && *env != '\0') return std::filesystem::path(env);
  return std::filesystem::current_path() / "counterexamples";
}

/// A file name from a property id: letters, digits, '-' and '_' kept, runs of anything else one '-'.
inline std::string counterexample_name(const std::string& property) {
  std::string out;
  for (char c : property) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (keep) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "counterexample" : out;
}

/// Writes `s` as the current property's failing case (atomically) and returns its path. Call it
/// where the property is about to fail: the last case written is the shrunk one.
inline std::string write_counterexample(scenarios::Scenario s) {
  const std::string name = counterexample_name(current_property());
  s.name = name;
  const std::filesystem::path path = counterexample_dir() / (name + ".yaml");
  const std::string text = "# The failing case of the property\n#   " + current_property() +
                           "\n# as RapidCheck shrank it. Replay: letitcrash run " + path.string() + "\n" +
                           scenarios::to_yaml(s);
  const std::string error = reports::write_file_atomically(path, text);
  if (!error.empty()) throw std::runtime_error("cannot write the counterexample: " + error);
  counterexample_written() = path.string();
  return path.string();
}

}  // namespace lic::test
