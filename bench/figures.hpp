#pragma once
// The figures one `letitcrash bench` invocation measured: printed one per line as
// `name value unit` as they come, or gathered into one JSON object printed at the end
// (`--json`: nothing else goes to stdout). A figure bench cannot measure in this run is kept as
// a null with the reason, never a made-up number.

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace lic::bench {

class Figures {
 public:
  explicit Figures(bool json) : json_(json) {}

  /// A measured figure (printed at once in text mode).
  void add(const std::string& name, double value, const std::string& unit);
  /// A figure not measured in this run, and why (text mode prints `name - (why)`).
  void absent(const std::string& name, const std::string& why);
  /// A figure already added under `from`, also under `name` in the JSON object only (the
  /// issue's headline names); absent with `why` when `from` was not measured.
  void alias(const std::string& name, const std::string& from, const std::string& why);

  /// The value of a measured figure; nothing when it is absent or was never added.
  std::optional<double> get(const std::string& name) const;
  /// Added, measured or absent.
  bool has(const std::string& name) const;
  bool json() const { return json_; }
  /// A target's verdict on the figure `name` (bench/targets.hpp): met, not met, or not judged
  /// (nothing) when the figure was not measured. Goes into to_json's `targets` object.
  /// `why`: the cause of a miss (docs/benchmarks.md), in the JSON beside met=false only.
  void verdict(const std::string& name, const std::string& op, double target, std::optional<bool> met,
               std::string why = {});
  /// The JSON object: every figure by name (a number, or null), then `units` and
  /// `why_absent` objects, the `targets` object (name -> {op, target, met: true, false or
  /// null, and `why` when met is false}) and the `mode` ("quick" or "full").
  std::string to_json(bool quick) const;

 private:
  struct Entry {
    std::string name;
    std::optional<double> value;
    std::string unit;  ///< or, when value is empty, why
  };
  struct Verdict {
    std::string name, op;
    double target;
    std::optional<bool> met;
    std::string why;
  };
  bool json_;
  std::vector<Entry> entries_;
  std::vector<Verdict> verdicts_;
};

}  // namespace lic::bench
