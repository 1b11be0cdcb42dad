#pragma once
// Outputs are written atomically: to a temporary file in the same directory, then renamed, so a
// reader never sees half a report and an interrupted run leaves the old file intact.

#include <filesystem>
#include <string>
#include <string_view>

namespace lic::reports {

/// Writes `content` to `path` atomically; creates parent directories. Returns an error message,
/// empty on success.
std::string write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace lic::reports
