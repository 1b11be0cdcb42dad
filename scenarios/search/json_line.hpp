#pragma once
// A fast reader for the JSON lines of a results file (docs/sweeps.md, "Merging in bounded
// memory"). nlohmann's parser reads a character at a time through an input adapter, about 6 µs
// for a 320-byte seed line before any DOM is built: most of a ten-million-seed merge. This one
// reads the plain JSON a results file holds (ASCII strings, the common escapes, numbers,
// nesting) straight into the same nlohmann::json value nlohmann's parser would build, and
// declines anything else: a byte past ASCII in a string, a \u escape, nesting past 64, or a
// line that is not valid JSON. The caller then parses the line with nlohmann as before, so
// nothing is read differently: where this one answers, the value is equal to nlohmann's (the
// results fuzz target checks it on every input). A seed's usual line is read further still,
// straight into its SeedResult with no DOM at all (building and freeing nlohmann's maps was the
// next half of the time).

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "scenarios/search/sweep.hpp"

namespace lic::scenarios {

/// The value of `text` as nlohmann::json::parse(text) builds it, or nothing when this reader
/// declines it (not valid JSON, or not the plain JSON it reads).
std::optional<nlohmann::json> parse_json_line(std::string_view text);

/// A seed's result line read straight into a SeedResult, with no DOM, for the lines a sweep
/// writes for most seeds (its fields seed .. judged, no witnesses, swarm or buggify; each field
/// once). Declines everything else, valid or not: the caller reads those as before. Where it
/// answers, the result equals what the results file's DOM reader gives (the line itself aside).
std::optional<SeedResult> read_result_line(std::string_view text);

/// The same JSON with the same types all through (nlohmann's == calls 1 and 1u equal, which a
/// reader asking is_number_unsigned does not): what the tests and the fuzz target compare.
bool identical_json(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace lic::scenarios
