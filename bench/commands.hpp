#pragma once
// Workloads run as whole `letitcrash` commands (the binary runs itself): a long pipeline run
// with every report, a sweep at --jobs 1 and 2, and reports for a wide tree. Timed from
// outside, start-up included, as a user sees them; peak memory from the kernel's accounting of
// the finished child.

#include <filesystem>
#include <string>
#include <vector>

namespace lic::bench {

struct CommandResult {
  double wall_s = 0;
  double cpu_s = 0;  ///< user + system time of it and the children it waited for
  double peak_rss_mib = 0;
  int exit_code = -1;  ///< -1: it did not start or was killed
};

/// Runs argv[0] with argv (stdin, stdout and stderr on /dev/null) and waits for it.
CommandResult run_command(const std::vector<std::string>& argv);

/// The benchmark's pipeline: the catalogue's mini pipeline on node a with Poisson crashes of its
/// parser and validator, beside a client on a pinging a server on b over a network that is
/// partitioned and lossy every hour (docs/benchmarks.md).
extern const char* const kPipelineScenario;

/// A small catalogue file (scenarios/catalog/one_for_one.yaml, copied): three idle workers, one
/// crash, five checks; what `merge` and the sweep's cost per seed are measured on.
extern const char* const kSmallScenario;

/// A root supervisor with `children` idle workers, run for one virtual second.
std::string wide_tree_scenario(std::size_t children);

/// A lifecycle supervisor with `services` services in one depends_on chain, each started after
/// the one before and stopped before it (the ordered stop at 500 ms): one level per service.
std::string lifecycle_chain_scenario(std::size_t services);

/// A fresh folder for one bench invocation's files, removed when it goes.
class ScratchFolder {
 public:
  ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ~ScratchFolder();
  const std::filesystem::path& path() const { return path_; }
  /// Writes `text` to `name` in the folder and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

}  // namespace lic::bench
