// `sweep --vary`'s grid (search/vary.hpp): exact ends, no overflow, no silent one-value walk.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "scenarios/registry.hpp"
#include "scenarios/search/vary.hpp"

using namespace lic::scenarios;

namespace {
std::vector<std::string> grid(const std::string& text, std::size_t steps, std::string& error) {
  Vary v;
  REQUIRE(parse_vary(text, v).empty());
  std::vector<std::string> out;
  error = vary_values(v, Registry::builtin(), steps, out);
  return out;
}
}  // namespace

TEST_CASE("vary: an int range up to 2^63-1 walks without overflow, its ends as given", "[vary]") {
  std::string error;
  const std::vector<std::string> v = grid("ingest.disk:capacity_mb=0..9223372036854775807", 3, error);
  REQUIRE(error.empty());
  CHECK(v == std::vector<std::string>{"0", "4611686018427387904", "9223372036854775807"});
}

TEST_CASE("vary: a duration grid's first value is the low end, never rounded below it", "[vary]") {
  std::string error;
  const std::vector<std::string> v = grid("ingest.s3:latency=1ns..1h", 4, error);
  REQUIRE(error.empty());
  REQUIRE(v.size() == 4);
  CHECK(v.front() == "1ns");  // rounding 1ns to the millisecond gave 0s, below A
  CHECK(v[1] == "20m");
  CHECK(v.back() == "1h");
}

TEST_CASE("vary: --steps 1 over a range that is not one value is refused", "[vary]") {
  std::string error;
  grid("ingest.s3:latency=100ms..10s", 1, error);
  CHECK(error.find("--steps 1 would run 100ms alone and never 10s") != std::string::npos);
  grid("ingest.s3:latency=100ms..100ms", 1, error);
  CHECK(error.empty());
}
