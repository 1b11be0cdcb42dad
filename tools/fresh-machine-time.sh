#!/usr/bin/env bash
# Times a newcomer's first command, `bash tools/main-job.sh`, on a fresh Debian 12 (bookworm)
# with only the compilers, phase by phase (docs/benchmarks.md, "A fresh machine"). Not part of CI:
# it needs root, debootstrap and the network (deb.debian.org), and takes minutes.
#
#   sudo tools/fresh-machine-time.sh [--work DIR] [--ref REF] [--keep]
#
# The first run builds the fresh root with debootstrap (default variant: Debian's required and
# important packages, plus build-essential cmake git ca-certificates; the sources of a real
# install, bookworm + bookworm-updates + bookworm-security, with empty package lists and cache) and
# keeps it as DIR/bookworm-compilers.tar.gz. Every run unpacks that tarball into DIR/root, mounts
# /proc in it and this repository read-only at /mnt/src, clones REF (default: this checkout's
# HEAD commit; uncommitted changes are not measured) into /root/letitcrash and runs
# `bash tools/main-job.sh` there as root, then re-downloads the same packages to time the
# download alone. The mounts are undone on every exit path; DIR/root is removed unless --keep.
#
# It prints (and writes to DIR/report.txt) each phase's wall time, CPU time (user + system of
# the finished processes: the honest figure on a shared machine), the mean load average during
# it and an estimate of the phase's wall time on 2 idle cores (CPU time / the phase's parallelism,
# plus the download time for the installs), the packages installed and their size, the time of
# each compiled object, and whether every product of the main job is there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/var/tmp/letitcrash-fresh
ref=HEAD
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work="$2"; shift 2 ;;
    --ref) ref="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "fresh-machine-time.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "fresh-machine-time.sh: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
commit="$(git -C "$root" rev-parse --verify "$ref^{commit}")" ||
  { echo "fresh-machine-time.sh: '$ref' is not a commit of $root" >&2; exit 2; }
git_dir="$(cd "$root" && cd "$(git rev-parse --git-common-dir)" && pwd)"
case "$work/" in "$root"/*) echo "fresh-machine-time.sh: --work must be outside the repository" >&2; exit 2 ;; esac
[ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ] &&
  echo "fresh-machine-time.sh: note: uncommitted changes are not measured (it clones $commit)" >&2
mkdir -p "$work"
tarball="$work/bookworm-compilers.tar.gz"
fresh="$work/root"
compilers=build-essential,cmake,git,ca-certificates

make_tarball() {
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
  local base="$work/base"
  rm -rf "$base"
  echo "fresh-machine-time: debootstrap bookworm + $compilers into $base (a few minutes)"
  debootstrap --include="$compilers" bookworm "$base" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; echo "fresh-machine-time: debootstrap failed" >&2; exit 1; }
  cat > "$base/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  rm -rf "$base"/var/lib/apt/lists/* "$base"/var/cache/apt/*.bin
  find "$base/var/cache/apt/archives" -name '*.deb' -delete
  tar -C "$base" -czf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  rm -rf "$base"
}

mounted=()
sampler=""
cleanup() {
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null || true
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" || true
  done
  mounted=()
  [ "$keep" = 1 ] || rm -rf "$fresh"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -f "$tarball" ] || make_tarball
for m in $(awk -v r="$fresh/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do umount -l "$m"; done
rm -rf "$fresh"
mkdir -p "$fresh"
tar -C "$fresh" -xzf "$tarball"
cp -L /etc/resolv.conf "$fresh/etc/resolv.conf"
mount -t proc proc "$fresh/proc" && mounted+=("$fresh/proc")
mkdir -p "$fresh/mnt/src"
mount --bind "$git_dir" "$fresh/mnt/src" && mounted+=("$fresh/mnt/src")
mount -o remount,bind,ro "$fresh/mnt/src"

# Each compiled object's and link's wall and CPU time (CMake reads the launchers from the
# environment on the first configure); a bash and an awk per object, a few ms each.
cat > "$fresh/root/tu-time.sh" <<'EOF'
#!/bin/bash
out=?; prev=""; for a in "$@"; do [ "$prev" = -o ] && out="$a"; prev="$a"; done
t0=$EPOCHREALTIME; "$@"; rc=$?; t1=$EPOCHREALTIME
times > /tmp/tu-time.$$
awk -v o="$out" -v t0="$t0" -v t1="$t1" 'function sec(t,  m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
  NR == 2 { printf "%s wall_s=%.3f cpu_s=%.3f\n", o, t1 - t0, sec($1) + sec($2) }' /tmp/tu-time.$$ >> /root/tu-times.txt
rm -f /tmp/tu-time.$$
exit $rc
EOF
chmod +x "$fresh/root/tu-time.sh"

in_root() {
  chroot "$fresh" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb "$@"
}

(while :; do echo "$EPOCHREALTIME $(cut -d' ' -f1 /proc/loadavg)"; sleep 2; done) > "$work/load.txt" &
sampler=$!
in_root dpkg-query -W -f='${Package}\n' | sort > "$work/packages-before.txt"
phases="$work/phases.txt"
: > "$phases"
export LETITCRASH_PHASES="$phases"  # read by tools/phase-times.sh, in this script
. "$root/tools/phase-times.sh"
_phase_script=fresh-machine-time
phase clone
in_root git clone -q /mnt/src /root/letitcrash
in_root git -C /root/letitcrash checkout -q "$commit"
phase main-job
set +e
in_root env LETITCRASH_PHASES=/root/phases.txt CMAKE_CXX_COMPILER_LAUNCHER=/root/tu-time.sh \
  CMAKE_CXX_LINKER_LAUNCHER=/root/tu-time.sh bash -c 'cd /root/letitcrash && bash tools/main-job.sh' > "$work/main-job.log" 2>&1
job_rc=$?
set -e
phase
# A main job that failed before its first phase ended wrote no phase line: the report still
# comes (with the job's exit code), where a plain cat would have stopped the script here.
if [ -f "$fresh/root/phases.txt" ]; then
  cat "$fresh/root/phases.txt" >> "$phases"
else
  echo "fresh-machine-time: the main job recorded no phase (exit $job_rc; see $work/main-job.log)" >&2
fi
cp "$fresh/root/tu-times.txt" "$work/tu-times.txt" 2>/dev/null || : > "$work/tu-times.txt"
in_root dpkg-query -W -f='${Package}\n' | sort > "$work/packages-after.txt"
new_packages="$(comm -13 "$work/packages-before.txt" "$work/packages-after.txt")"
installed_kib=0  # dpkg-query -W without a package lists them all: only with new packages
if [ -n "$new_packages" ]; then
  installed_kib="$(in_root dpkg-query -W -f='${Installed-Size} ${Package}\n' $new_packages | awk '{ s += $1 } END { print s + 0 }')"
fi
download_bytes="$(find "$fresh/var/cache/apt/archives" -name '*.deb' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')"
phase download-again
in_root apt-get clean
[ -z "$new_packages" ] || in_root apt-get install -y -qq --reinstall --download-only $new_packages > /dev/null 2>&1 || true
phase
kill "$sampler" 2>/dev/null || true
sampler=""

products="$(cd "$fresh/root/letitcrash" && {
  missing=0; n=0
  for f in scenarios/catalog/*.yaml; do
    n=$((n + 1)); d="out/$(basename "$f" .yaml)"
    for r in index.html trace.jsonl tree.dot tree.svg timeline.svg trace.perfetto.json junit.xml summary.json; do
      [ -s "$d/$r" ] || { echo "MISSING $d/$r"; missing=$((missing + 1)); }
    done
  done
  for r in out/index.html out/bench.txt; do [ -s "$r" ] || { echo "MISSING $r"; missing=$((missing + 1)); }; done
  echo "$n catalogue files; missing report files: $missing"
})"
bench_peer="$(grep -c 'simgrid' "$fresh/root/letitcrash/out/bench.txt" 2>/dev/null || true)"
cp "$fresh/root/letitcrash/out/bench.txt" "$work/bench.txt" 2>/dev/null || true

jobs="$(nproc)"
{
  echo "letitcrash $commit: bash tools/main-job.sh on a fresh Debian 12, exit $job_rc ($(date -u +%FT%TZ), $jobs cores)"
  echo "packages installed by the job: $(echo $new_packages | wc -w), download $(awk -v b="$download_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB, installed $(awk -v k="$installed_kib" 'BEGIN { printf "%.1f", k / 1024 }') MiB"
  echo "$products"
  echo "bench.txt lines naming SimGrid: $bench_peer"
  echo
  awk -v jobs="$jobs" -f "$root/tools/fresh-machine-report.awk" "$work/load.txt" "$phases" "$work/tu-times.txt"
  echo
  echo "packages: $(echo $new_packages)"
} | tee "$work/report.txt"
exit $job_rc
