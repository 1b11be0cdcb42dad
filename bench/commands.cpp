#include "bench/commands.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>

extern char** environ;  // NOLINT: POSIX's, for posix_spawn

namespace lic::bench {

CommandResult run_command(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  CommandResult r;
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (spawned != 0) return r;
  int status = 0;
  struct rusage ru {};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  r.cpu_s = secs(ru.ru_utime) + secs(ru.ru_stime);
  // ru_maxrss is in KiB, and it is the larger of the child's peak and this process's peak when
  // the child was spawned (the kernel folds the spawning mm's high-water mark in at exec): bench
  // runs its whole commands before its own workloads grow it (bench.cpp, run()).
  r.peak_rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const char* const kSmallScenario = R"(scenario: one_for_one_crash_scope
seed: 1
duration: 5s
tree:
  root: {strategy: one_for_one, intensity: 3, period: 5s}
  children:
    - {id: a, behaviour: idle}
    - {id: b, behaviour: idle}
    - {id: c, behaviour: idle}
script:
  - {at: 1s, crash: /root/b, reason: {error: boom}}
  - {at: 2s, which_children: /root}
checks:
  - model
  - no_escalation
  - {restarts: {of: /root/a, count: 0}}
  - {restarts: {of: /root/b, count: 1}}
  - {restarts: {of: /root/c, count: 0}}
)";

const char* const kPipelineScenario = R"(scenario: bench_pipeline
description: >-
  letitcrash bench's pipeline: the mini pipeline on node a with Poisson crashes of its parser and
  validator, beside a client on node a pinging a server on node b across a network that is
  partitioned and lossy every hour.
seed: 1
duration: 24h
nodes: [a, b]
network:
  default: {latency: 3ms, latency_min: 1ms}
trees:
  - id: root
    node: a
    supervisor: {strategy: one_for_one, intensity: 3, period: 5s}
    children:
      - id: sink
        supervisor: {strategy: one_for_one}
        children:
          - {id: db, behaviour: pipeline.sink}
          - {id: dead_letter, behaviour: pipeline.dead_letter}
      - id: input
        supervisor: {strategy: rest_for_one, intensity: 10, period: 5s}
        children:
          - {id: reader, behaviour: pipeline.reader, args: {interval: 50ms, negative: 0.5%, unparsable: 2%}}
          - {id: parser, behaviour: pipeline.parser}
          - {id: validator, behaviour: pipeline.validator}
      - {id: client, behaviour: peer, args: {name: client, peer: server, interval: 500ms, crash_on_disconnect: true}}
  - id: root_b
    node: b
    supervisor: {strategy: one_for_one, intensity: 5, period: 10s}
    children:
      - {id: server, behaviour: peer, args: {name: server}}
faults:
  - {name: parser_crash, mtbf: 10m, crash: /root/input/parser}
  - {name: validator_crash, mtbf: 5m, crash: /root/input/validator}
  - {name: split, at: 10m, every: 1h, partition: [a], to: [b], duration: 30s}
  - {name: lossy, at: 40m, every: 1h, loss: [a], to: [b], ratio: 10%, duration: 5m}
checks:
  - no_escalation
  - conservation
  - {restarts: {of: /root/input/reader, count: 0}}
  - {availability: {of: /root/sink, min: 99%}}
)";

std::string wide_tree_scenario(std::size_t children) {
  std::string s =
      "scenario: bench_wide_tree\n"
      "description: letitcrash bench's wide tree, one root supervisor and its idle workers\n"
      "seed: 1\nduration: 1s\ntree:\n  root: {strategy: one_for_one}\n  children:\n";
  for (std::size_t i = 0; i < children; ++i) s += "    - {id: w" + std::to_string(i) + ", behaviour: idle}\n";
  s += "checks:\n  - no_escalation\n";
  return s;
}

std::string lifecycle_chain_scenario(std::size_t services) {
  std::string s =
      "scenario: bench_lifecycle_chain\n"
      "description: letitcrash bench's depends_on chain, each service waiting on the one before\n"
      "seed: 1\nduration: 1s\ntrees:\n  - id: app\n    lifecycle:\n      services:\n";
  for (std::size_t i = 0; i < services; ++i) {
    s += "        - {name: s" + std::to_string(i) + ", behaviour: idle, auto_start: true";
    if (i != 0) s += ", depends_on: [s" + std::to_string(i - 1) + "]";
    s += "}\n";
  }
  s += "script:\n  - {at: 500ms, stop: /app}\n";
  return s;
}

ScratchFolder::ScratchFolder() {
  path_ = std::filesystem::temp_directory_path() / ("letitcrash-bench." + std::to_string(::getpid()));
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  std::filesystem::create_directories(path_, ec);
}

ScratchFolder::~ScratchFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path ScratchFolder::write(const std::string& name, const std::string& text) const {
  const std::filesystem::path p = path_ / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace lic::bench
