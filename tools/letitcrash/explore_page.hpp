#pragma once
// The explore page (docs/explore.md "The explore page"): index.html beside explore.json, drawn from
// explore.json alone, so that `merge` draws the page of a guided sweep's shards from their
// explore.json files as `explore` and `sweep --guided` draw their own.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace lic::tools {

/// explore.json's `format`.
inline constexpr const char* kExploreFormat = "letitcrash-explore/1";

/// The page for an explore.json object (explore's, a guided sweep shard's or a merge of them):
/// the counts, each failure with its reproducer, coverage and each guided check's best margin over
/// runs (one line per shard in a merge), and the corpus. `title` names the file explored.
std::string explore_page(const nlohmann::json& state, const std::string& title);

/// A margin as the page and the progress line print it: "+0.250", or "coverage only" (none).
std::string margin_text(const std::optional<double>& margin);

}  // namespace lic::tools
