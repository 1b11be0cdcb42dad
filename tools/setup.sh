#!/usr/bin/env bash
# Installs the Debian packages the build needs (only what is missing), then configures and
# builds. Idempotent and quiet when everything is there; fails loudly, naming the package, when
# an install fails.
#
#   tools/setup.sh [--build-dir DIR] [--sanitize] [--werror] [--compiler gcc|clang] [--fuzz] [--otp] [--go] [--pg] [--slurm] [--main-job] [--no-build]
#
# --main-job installs and builds only what tools/main-job.sh runs: the letitcrash program and the
#   SimGrid peer of its benchmark, no tests (no Catch2, RapidCheck, clang-tidy or Chromium). A new
#   build folder gets -O2 -DNDEBUG without debug info (-g) and no tests; an existing one keeps both
#   (its tests are turned off only when Catch2 or RapidCheck is not installed). A later run
#   without it (tools/test.sh) adds the rest to the same build folder, with the same flags.
# --fuzz builds the libFuzzer targets with clang (tools/fuzz/, docs/robustness.md) and no tests.
#   With --sanitize too, one build holds both (CI's clang stage): the tests under ASan + UBSan,
#   every object also instrumented for libFuzzer's coverage, and the fuzz targets beside them.
# Debug info: --sanitize and --fuzz builds are -O1 with line tables only (-gline-tables-only, or
#   g++'s -g1), the sanitizers' own advice: a report still names file:line, for a third less
#   compile time. Under CI=true a new plain build is -O2 with line tables only as well.
# --otp installs Erlang/OTP (erlang-base) for the conformance recorder: with it, CTest also runs
# the otp-live label (docs/conformance.md). Building letitcrash never needs Erlang.
# --go also installs golang-go, for the go-live conformance label (docs/conformance-go.md); the
#   build itself never needs Go.
# --pg also installs PostgreSQL 15, Debian's python3-psycopg2 / python3-yaml, nftables and iproute2
#   for the pg-live conformance label (conformance/pg/record.py, docs/conformance-pg.md); the build
#   itself never needs them.
# --slurm also installs Slurm (slurmctld, slurmd, the client commands) and munge, and iproute2,
#   for tools/slurm/local-cluster.sh and the slurm-live label (docs/sweeps.md). That script starts
#   its own daemons in a temporary folder and never uses the host's /etc/slurm or /etc/munge.
#
# -Werror is on when CI=true or --werror is given.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/tools/phase-times.sh"  # `phase NAME`: timed only when LETITCRASH_PHASES is set
build_dir="$root/build"
sanitize=OFF
werror=OFF
compiler=gcc
do_build=1
fuzz=OFF
otp=0
go=0
pg=0
slurm=0
main_job=0
[ "${CI:-}" = "true" ] && werror=ON

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --sanitize) sanitize=ON; shift ;;
    --werror) werror=ON; shift ;;
    --compiler) compiler="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --fuzz) fuzz=ON; compiler=clang; shift ;;
    --otp) otp=1; shift ;;
    --go) go=1; shift ;;
    --pg) pg=1; shift ;;
    --slurm) slurm=1; shift ;;
    --main-job) main_job=1; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config
  libboost-fiber1.74-dev libboost-context1.74-dev
  libfmt-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libxxhash-dev
  graphviz libsimgrid-dev
)
if [ "$main_job" = 0 ]; then
  packages+=(catch2 librapidcheck-dev)  # the tests
  packages+=(clang-tidy)  # tools/function-size.sh: no function over 70 lines in scenarios/ and tools/
  packages+=(python3 python3-yaml)  # conformance/pg/compare.py --check: every case of cases.yaml has its recording
  packages+=(chromium fonts-liberation)  # the reports' headless-browser check (tools/screenshot-check.py)
fi
[ "$compiler" = clang ] && packages+=(clang)
# libFuzzer's runtime, and clang's ASan + UBSan runtimes: only recommended by clang, which
# --no-install-recommends leaves out (CI's clang sanitizer stage runs before the fuzz stage).
{ [ "$fuzz" = ON ] || { [ "$compiler" = clang ] && [ "$sanitize" = ON ]; }; } && packages+=(libclang-rt-14-dev)
[ "$otp" = 1 ] && packages+=(erlang-base)  # conformance/otp/: the recorder runs real OTP 25
[ "$go" = 1 ] && packages+=(golang-go)  # conformance/go/go-live.sh: the channel rules on real Go
# conformance/pg/record.py: a throwaway PostgreSQL 15 cluster, cuts in a private network namespace
[ "$pg" = 1 ] && packages+=(postgresql-15 python3-psycopg2 python3-yaml nftables iproute2)
# tools/slurm/local-cluster.sh: a one-node Slurm cluster in a network namespace of its own
[ "$slurm" = 1 ] && packages+=(slurmctld slurmd slurm-client munge iproute2 python3)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
      echo "setup: missing packages ${missing[*]} and not root (no sudo): install them and re-run" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  phase apt-get-update
  apt_log="$(mktemp /tmp/letitcrash-apt.XXXXXX.log)"  # apt's output, shown when it fails
  if ! "${sudo_cmd[@]}" apt-get update -qq >"$apt_log" 2>&1; then
    cat "$apt_log" >&2
    echo "setup: apt-get update failed" >&2
    exit 1
  fi
  # One apt-get call for all: one dependency resolution, one download, one run of dpkg's
  # triggers (man-db, ldconfig). Only when it fails, one package at a time, to name the culprit.
  phase install
  if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$apt_log" 2>&1; then
    for p in "${missing[@]}"; do
      if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$p" >>"$apt_log" 2>&1; then
        tail -n 20 "$apt_log" >&2
        echo "setup: FAILED to install Debian package '$p'" >&2
        exit 1
      fi
    done
  fi
  rm -f "$apt_log"
fi

phase
[ "$do_build" = 1 ] || exit 0

cmake_args=(-S "$root" -B "$build_dir" -DLETITCRASH_SANITIZE="$sanitize" -DLETITCRASH_WERROR="$werror")
line_tables=-g1; [ "$compiler" = clang ] && line_tables=-gline-tables-only
if [ "$sanitize" = ON ] || [ "$fuzz" = ON ]; then
  cmake_args+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 $line_tables -DNDEBUG")
elif [ "${CI:-}" = true ] && [ "$main_job" = 0 ] && [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake_args+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 $line_tables -DNDEBUG")
fi
if [ "$fuzz" = ON ] && [ "$sanitize" = ON ]; then cmake_args+=(-DLETITCRASH_FUZZ=ON -DLETITCRASH_TESTS=ON)
elif [ "$fuzz" = ON ]; then cmake_args+=(-DLETITCRASH_FUZZ=ON -DLETITCRASH_TESTS=OFF)
elif [ "$main_job" = 1 ]; then
  # A new build folder for the main job gets no tests (their packages are not installed) and the
  # default's -O2 -DNDEBUG without -g: debug info is a quarter of the compile time and the main
  # job never opens a debugger. An existing folder keeps its build type and its tests (the main
  # job builds only its own targets): turning them off there left a later `make` not rebuilding
  # the test binaries while ctest still ran the old ones.
  # An existing folder whose tests cannot configure here (a plain `cmake -B build` tried first,
  # without Catch2 or RapidCheck, which the main job does not install) gets them turned off.
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake_args+=(-DLETITCRASH_TESTS=OFF -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG")
  elif grep -Eiq '^LETITCRASH_TESTS:[A-Z]+=(on|1|true|yes|y)$' "$build_dir/CMakeCache.txt" &&
       ! { installed catch2 && installed librapidcheck-dev; }; then
    echo "setup: $build_dir had its tests on without Catch2/RapidCheck installed: turned off (tools/test.sh installs them and turns them on)"
    cmake_args+=(-DLETITCRASH_TESTS=OFF)
  fi
else cmake_args+=(-DLETITCRASH_TESTS=ON); fi
if [ "$otp" = 1 ]; then cmake_args+=(-DLETITCRASH_OTP_LIVE=ON); else cmake_args+=(-DLETITCRASH_OTP_LIVE=OFF); fi
if [ "$compiler" = clang ]; then
  cmake_args+=(-DCMAKE_CXX_COMPILER=clang++)
elif [ "$compiler" != gcc ]; then
  echo "setup.sh: --compiler takes gcc or clang" >&2; exit 2
fi
jobs="$(nproc 2>/dev/null || echo 2)"
mkdir -p "$build_dir"
phase configure
if ! cmake "${cmake_args[@]}" >"$build_dir/setup-configure.log" 2>&1; then
  cat "$build_dir/setup-configure.log" >&2
  echo "setup: cmake configure failed" >&2
  exit 1
fi
phase build
targets=()
[ "$main_job" = 1 ] && targets=(--target letitcrash) && [ -n "$(grep -s '^SIMGRID_FOUND:INTERNAL=1' "$build_dir/CMakeCache.txt")" ] &&
  targets+=(letitcrash-simgrid-peer)
if ! cmake --build "$build_dir" -j "$jobs" "${targets[@]}" >"$build_dir/setup-build.log" 2>&1; then
  grep -E "error|Error" "$build_dir/setup-build.log" | head -n 40 >&2 || tail -n 40 "$build_dir/setup-build.log" >&2
  echo "setup: build failed (full log: $build_dir/setup-build.log)" >&2
  exit 1
fi
phase
