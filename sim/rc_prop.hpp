#pragma once
// rc::prop for Catch2 that can be reproduced: RapidCheck's own Catch integration gives the
// property no id, so a failure prints the counterexample but no reproduce string. This one names
// the property "<test case>/<description>"; RapidCheck then prints, when the binary exits,
//   Some of your RapidCheck properties had failures. To reproduce these, run with:
//   RC_PARAMS="reproduce=..."
// and running the test binary with that RC_PARAMS replays the shrunk case at once.

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <iostream>
#include <sstream>
#include <string>
#include <utility>

namespace lic::test {

/// The id of the property prop() is checking ("<test case>/<description>"), for what it writes.
inline std::string& current_property() {
  static std::string id;
  return id;
}

/// The scenario file the current property last wrote its failing case to (scenarios/
/// counterexample.hpp), or empty. The shrinker tries smaller failing cases one after another and
/// each overwrites the file, so when the property ends it holds the shrunk case.
inline std::string& counterexample_written() {
  static std::string path;
  return path;
}

template <typename Testable>
void prop(const std::string& description, Testable&& testable) {
  using namespace rc::detail;
  SECTION(description) {
    TestMetadata metadata;
    metadata.id = Catch::getResultCapture().getCurrentTestName() + "/" + description;
    metadata.description = description;
    current_property() = metadata.id;
    counterexample_written().clear();
    const auto result = checkTestable(std::forward<Testable>(testable), metadata);
    std::ostringstream message;
    printResultMessage(result, message);
    if (!result.template is<SuccessResult>() && !counterexample_written().empty()) {
      message << "\nThe shrunk case is the scenario file " << counterexample_written()
              << "\nReplay it: build/letitcrash run " << counterexample_written() << "\n";
    }
    if (result.template is<SuccessResult>()) {
      if (!result.template get<SuccessResult>().distribution.empty()) {
        std::cout << "- " << description << "\n" << message.str() << "\n";
      }
      SUCCEED();
    } else {
      INFO(message.str() << "\n(the reproduce string is printed when the test binary exits)");
      FAIL();
    }
  }
}

}  // namespace lic::test
