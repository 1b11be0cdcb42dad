#pragma once
// Outputs are written atomically: to a temporary file in the same directory, then renamed, so a
// reader never sees half a report and an interrupted run leaves the old file intact.

#include <filesystem>
#include <string>
#include <string_view>

namespace lic::reports {

/// Writes `content` to `path` atomically; creates parent directories. A `<path>.tmp.<pid>` left
/// beside it by a writer that was killed (its process is gone) is removed first. Returns an
/// error message, empty on success.
std::string write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Removes what a killed writer left beside `path`: each `<name>.tmp.<pid>` (a file or a
/// staging folder) whose process is gone. A live writer's (kill(pid, 0) finds it) is left alone.
void remove_stale_temporaries(const std::filesystem::path& path);

}  // namespace lic::reports
