// reports_demo DIR: writes the reports of a small real run (two nodes, a partition, a pause, a
// node crash, a lifecycle supervisor) into DIR, for the headless-browser screenshot check.

#include <cstdio>

#include "reports/run_report.hpp"
#include "reports/test_runs.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: reports_demo DIR\n");
    return 2;
  }
  const auto run = lic::reports::testing::network_run();
  const auto errors = lic::reports::write_reports(run.report, argv[1]);
  for (const auto& e : errors) std::fprintf(stderr, "reports_demo: %s\n", e.c_str());
  return errors.empty() ? 0 : 1;
}
