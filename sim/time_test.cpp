#include "sim/time.hpp"

#include <catch2/catch.hpp>

using namespace lic;
using namespace lic::literals;

TEST_CASE("durations parse in every unit and print back to the same text", "[time]") {
  struct Case {
    const char* text;
    Duration value;
  };
  const Case cases[] = {{"250ms", 250_ms}, {"5s", 5_s},      {"1m", 1_min},  {"1h", 1_h},
                        {"10us", 10_us},   {"100ns", 100_ns}, {"2min", 2_min}, {"1.5s", 1500_ms},
                        {"0", Duration{0}}};
  for (const Case& c : cases) {
    const DurationParse p = parse_duration(c.text);
    INFO(c.text << ": " << p.error);
    REQUIRE(p.ok);
    CHECK(p.value == c.value);
    CHECK(parse_duration(format_duration(p.value)).value == c.value);
  }
  CHECK(format_duration(250_ms) == "250ms");
  CHECK(format_duration(90_s) == "90s");
  CHECK(format_duration(120_s) == "2m");
  CHECK(format_duration(1500_us) == "1500us");
  CHECK(format_duration(Duration{0}) == "0s");
}

TEST_CASE("bad durations are errors with the column of the mistake", "[time]") {
  CHECK_FALSE(parse_duration("").ok);
  CHECK_FALSE(parse_duration("-5s").ok);
  const DurationParse unit = parse_duration("5sec");
  CHECK_FALSE(unit.ok);
  CHECK(unit.error_column == 1);
  CHECK(unit.error.find("unknown unit") != std::string::npos);
  const DurationParse missing = parse_duration("5");
  CHECK_FALSE(missing.ok);
  CHECK(missing.error.find("missing unit") != std::string::npos);
  CHECK_FALSE(parse_duration("1.5ns").ok);  // not a whole number of nanoseconds
  CHECK_FALSE(parse_duration("ms").ok);
  CHECK_FALSE(parse_duration("99999999999h").ok);  // overflows int64 nanoseconds
  CHECK_FALSE(parse_duration("1.s").ok);
}

TEST_CASE("a duration times a count, either way round", "[time]") {
  static_assert(5 * kSecond == kSecond * 5);
  CHECK(3 * kMillisecond == Duration{3'000'000});
  CHECK(std::int64_t{-2} * kSecond == Duration{-2'000'000'000});
}

TEST_CASE("time arithmetic saturates at Time::max so infinite deadlines stay valid", "[time]") {
  CHECK(Time{5} + 3_ns == Time{8});
  CHECK(Time::max() + 1_s == Time::max());
  CHECK((Time{0} + 2_s) - Time{0} == 2_s);
  CHECK(format_time(Time{0} + 1500_ms) == "1.5s");
  CHECK(format_time(Time{0} + 2_s) == "2s");
}
