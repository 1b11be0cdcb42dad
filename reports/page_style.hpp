#pragma once
// The CSS every page of reports/ shares (a run's index.html, a sweep's index.html): one look.
// Internal to reports/.

#include <string_view>

namespace lic::reports {

/// A `<style>` element, ending in a newline.
std::string_view page_style();

}  // namespace lic::reports
