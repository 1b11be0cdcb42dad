// Known-answer tests: the published reference outputs of splitmix64 and xoshiro256**, then our
// own integer algorithms pinned to fixed values so a change in any of them (or a compiler that
// computes them differently) fails here first. Statistical checks show the algorithms are right,
// the pins show they do not drift.

#include "sim/rng.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

using namespace lic;
using namespace lic::literals;

TEST_CASE("splitmix64 matches its reference outputs", "[rng]") {
  std::uint64_t state = 0;
  CHECK(splitmix64(state) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64(state) == 0x6e789e6aa1b965f4ULL);
  CHECK(splitmix64(state) == 0x06c45d188009454fULL);
}

TEST_CASE("xoshiro256** matches the reference implementation from state {1 -2 -3 -4}", "[rng]") {
  // Values from running Blackman & Vigna's xoshiro256starstar.c with s = {1, 2, 3, 4}.
  Rng r = Rng::from_state(1, 2, 3, 4);
  CHECK(r.next_u64() == 11520ULL);
  CHECK(r.next_u64() == 0ULL);
  CHECK(r.next_u64() == 1509978240ULL);
  CHECK(r.next_u64() == 1215971899390074240ULL);
}

TEST_CASE("stable_hash is FNV-1a 64 with a fixed finaliser", "[rng]") {
  CHECK(stable_hash("") == stable_hash(""));
  CHECK(stable_hash("faults") != stable_hash("network"));
  CHECK(stable_hash("faults") == 0x080bc16a02c6f3bdULL);
}

TEST_CASE("known answers: raw stream - uniform - chance - exponential - jitter for seed 42", "[rng]") {
  Rng r(42);
  CHECK(r.next_u64() == 0x15780b2e0c2ec716ULL);
  CHECK(r.next_u64() == 0x6104d9866d113a7eULL);
  CHECK(r.uniform(100) == 68);
  CHECK(r.uniform(1'000'000) == 924692);
  CHECK(r.chance(Ratio::percent(50)) == false);
  CHECK(r.exponential(1_s) == Duration{261'703'184});
  CHECK(r.jitter(1_s, Ratio::percent(10)) == Duration{1'043'851'716});
  CHECK(r.uniform_range(-5, 5) == 4);
}

TEST_CASE("derived streams are independent of each other and of the parent's position", "[rng]") {
  Rng root(7);
  Rng a1 = root.derive("faults");
  root.next_u64();
  root.next_u64();
  Rng a2 = root.derive("faults");
  CHECK(a1.next_u64() == a2.next_u64());
  Rng b = Rng(7).derive("network");
  Rng a3 = Rng(7).derive("faults");
  CHECK(a3.next_u64() != b.next_u64());
  CHECK(Rng(7).derive(std::uint64_t{1}).next_u64() != Rng(7).derive(std::uint64_t{2}).next_u64());
}

TEST_CASE("uniform stays in range and is close to flat", "[rng]") {
  Rng r(1);
  std::vector<int> buckets(10, 0);
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t v = r.uniform(10);
    REQUIRE(v < 10);
    ++buckets[v];
  }
  // Chi-square with 9 degrees of freedom: 27.9 is the 0.999 quantile.
  double chi = 0;
  for (int c : buckets) chi += (c - n / 10.0) * (c - n / 10.0) / (n / 10.0);
  CHECK(chi < 27.9);
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t v = r.uniform_range(-3, 3);
    REQUIRE(v >= -3);
    REQUIRE(v <= 3);
  }
}

TEST_CASE("chance is exact at 0 and 1 and close to the ratio between", "[rng]") {
  Rng r(3);
  int hits = 0;
  for (int i = 0; i < 10'000; ++i) {
    REQUIRE_FALSE(r.chance(Ratio::never()));
    REQUIRE(r.chance(Ratio::always()));
    hits += r.chance(Ratio{1, 4}) ? 1 : 0;
  }
  // Binomial(10000, 0.25): sd = 43.3; 5 sd either side.
  CHECK(hits > 2500 - 217);
  CHECK(hits < 2500 + 217);
}

TEST_CASE("the fixed-point logarithm is accurate to 1e-8", "[rng]") {
  for (std::uint64_t x : {1ULL, 2ULL, 12345ULL, 1ULL << 32, 1ULL << 63, ~0ULL, 0x8000000000001ULL}) {
    const double expect = -std::log(static_cast<double>(x) / 18446744073709551616.0);
    const double got = static_cast<double>(neg_log_q32(x)) / 4294967296.0;
    INFO("x = " << x);
    CHECK(std::abs(got - expect) < 1e-8);
  }
}

TEST_CASE("exponential draws have the requested mean", "[rng]") {
  Rng r(11);
  const int n = 200'000;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const Duration d = r.exponential(1_s);
    REQUIRE(d >= Duration{0});
    sum += static_cast<double>(d.ns);
  }
  const double mean = sum / n / 1e9;
  // The sample mean of n exponentials has sd = mean/sqrt(n) = 0.00224; allow 5 sd.
  CHECK(std::abs(mean - 1.0) < 0.0112);
}

TEST_CASE("jitter stays within its bounds", "[rng]") {
  Rng r(5);
  for (int i = 0; i < 10'000; ++i) {
    const Duration d = r.jitter(1_s, Ratio::percent(10));
    REQUIRE(d >= 900_ms);
    REQUIRE(d <= 1100_ms);
  }
}
