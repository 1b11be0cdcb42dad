// junit.xml: one test suite per run, one test case per check; a failed check's text carries
// the command that reproduces the run, so a CI page shows how to get it back.

#include <fmt/format.h>

#include <algorithm>

#include "reports/escape.hpp"
#include "reports/run_report.hpp"

namespace lic::reports {

std::string junit_xml(const RunReport& r) {
  const auto failures =
      std::count_if(r.checks.begin(), r.checks.end(), [](const CheckOutcome& c) { return !c.passed; });
  const std::string suite = xml_escape(r.scenario);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"letitcrash\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                     r.checks.size(), failures);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                     suite, r.checks.size(), failures);
  out += "    <properties>\n";
  for (const auto& [name, value] : {std::pair<const char*, std::string>{"file", r.file},
                                    {"seed", std::to_string(r.seed)},
                                    {"tie_break", r.tie_break},
                                    {"virtual_time", format_time(r.end)},
                                    {"events", std::to_string(r.events)},
                                    {"trace_hash", hash_hex(r.trace_hash)},
                                    {"reproduce", r.reproduce}}) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escape(value));
  }
  out += "    </properties>\n";
  for (const CheckOutcome& c : r.checks) {
    out += fmt::format("    <testcase name=\"{}\" classname=\"{}\"", xml_escape(c.name), suite);
    if (!c.judged) {  // nothing to judge: reported as skipped, with why
      out += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escape(c.detail));
      continue;
    }
    if (c.passed) {
      out += "/>\n";
      continue;
    }
    out +=
        fmt::format(">\n      <failure message=\"{}\" type=\"check failed\">{}</failure>\n    </testcase>\n",
                    xml_escape(c.witness ? c.detail + " [witness: " + format_witness(*c.witness) + "]" : c.detail),
                    xml_escape(fmt::format("{}\n\n{}Reproduce with:\n  {}\n", c.detail,
                                           c.witness ? "Witness: " + format_witness(*c.witness) + "\n\n" : "", r.reproduce)));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace lic::reports
