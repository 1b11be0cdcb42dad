#pragma once
// Metrics as JSON, for the writers that use nlohmann::json (summary.json, results.jsonl). Not an
// installed header: nlohmann::json is a build-time dependency only.

#include <nlohmann/json.hpp>

#include "reports/run_report.hpp"

namespace lic::reports {

/// {name: number, or [numbers] for a list}.
nlohmann::ordered_json metrics_json(const Metrics& m);
/// The inverse; false when `j` is not such an object.
bool read_metrics(const nlohmann::ordered_json& j, Metrics& out);

}  // namespace lic::reports
