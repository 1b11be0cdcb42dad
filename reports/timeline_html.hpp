#pragma once
// The interactive timeline section of index.html (reports/timeline_html.cpp, drawn by
// reports/timeline.js). Internal to reports/.

#include <string>

#include "reports/run_report.hpp"

namespace lic::reports {

/// The section: its style, the zoom controls and legend, div#timeline with an svg the script
/// draws into, div#tip, the run's view as JSON, and the script. A failing check's witness links
/// to `#t=<ns>`, which centres the window there and draws #tl-cursor.
std::string timeline_html(const RunReport& r);
/// The same from a view already built from the run (write_reports builds it once for every
/// writer that reads it).
std::string timeline_html(const RunReport& r, const RunView& v);

}  // namespace lic::reports
