#!/usr/bin/env bash
# tools/setup.sh --main-job's configure flags, with dpkg-query and cmake replaced by stand-ins
# (every package installed but those in NOT_INSTALLED; cmake records its arguments):
# a new build folder gets no tests and -O2 without -g; an existing one keeps its tests and build
# type, unless its tests are on and Catch2/RapidCheck are not installed (a plain `cmake -B build`
# tried first), when they are turned off: its configure would fail on find_package(Catch2).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
cat > "$dir/bin/dpkg-query" <<'EOF'
#!/usr/bin/env bash
for p in $NOT_INSTALLED; do [ "$p" = "${!#}" ] && exit 1; done
printf 'install ok installed'
EOF
cat > "$dir/bin/cmake" <<'EOF'
#!/usr/bin/env bash
echo "$*" >> "$CMAKE_LOG"
EOF
chmod +x "$dir/bin/dpkg-query" "$dir/bin/cmake"

# configure_args NOT_INSTALLED CACHE: the arguments of setup.sh's configure call; CACHE is the
# build folder's CMakeCache.txt ("": no build folder).
configure_args() {
  rm -rf "$dir/build"
  : > "$dir/cmake.log"
  if [ -n "$2" ]; then mkdir -p "$dir/build" && echo "$2" > "$dir/build/CMakeCache.txt"; fi
  NOT_INSTALLED="$1" CMAKE_LOG="$dir/cmake.log" PATH="$dir/bin:$PATH" \
    bash "$root/tools/setup.sh" --main-job --build-dir "$dir/build" > "$dir/out.txt"
  grep -m1 -- '^-S ' "$dir/cmake.log"
}
fail() { echo "setup-test: $*" >&2; exit 1; }
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }

a="$(configure_args "" "")"
has "$a" -DLETITCRASH_TESTS=OFF && has "$a" -DCMAKE_BUILD_TYPE=Release || fail "new folder: $a"
a="$(configure_args "" "LETITCRASH_TESTS:BOOL=ON")"
! has "$a" -DLETITCRASH_TESTS=OFF && ! has "$a" -DCMAKE_BUILD_TYPE=Release || fail "folder with tests, Catch2 installed: $a"
a="$(configure_args "catch2" "LETITCRASH_TESTS:BOOL=ON")"
has "$a" -DLETITCRASH_TESTS=OFF && ! has "$a" -DCMAKE_BUILD_TYPE=Release || fail "folder with tests, no Catch2: $a"
grep -q "turned off" "$dir/out.txt" || fail "folder with tests, no Catch2: no note of it"
a="$(configure_args "librapidcheck-dev" "LETITCRASH_TESTS:BOOL=ON")"
has "$a" -DLETITCRASH_TESTS=OFF || fail "folder with tests, no RapidCheck: $a"
a="$(configure_args "catch2" "LETITCRASH_TESTS:BOOL=OFF")"
! has "$a" -DLETITCRASH_TESTS=OFF || fail "folder without tests: $a"
echo "setup-test: ok"
