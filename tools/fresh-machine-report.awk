# tools/fresh-machine-time.sh's report: reads the load samples ("EPOCH LOAD1"), the phase lines of
# tools/phase-times.sh and the per-object times of its compiler launcher, in that order.
# -v jobs=N: the build's parallelism (setup.sh builds with -j nproc).
function val(field,  i) { for (i = 3; i <= NF; i++) if (index($i, field "=") == 1) return substr($i, length(field) + 2); return 0 }
function load_between(t0, t1,  i, s, n, best, bd) {
  s = 0; n = 0; best = ""; bd = 1e18
  for (i = 1; i <= nload; i++) {
    if (lt[i] >= t0 && lt[i] <= t1) { s += lv[i]; n++ }
    if ((lt[i] - t0) ^ 2 < bd) { bd = (lt[i] - t0) ^ 2; best = lv[i] }
  }
  return n ? sprintf("%.1f", s / n) : (best == "" ? "?" : sprintf("%.1f", best))
}
FILENAME == ARGV[1] { nload++; lt[nload] = $1; lv[nload] = $2; next }
FILENAME == ARGV[2] {
  n++; sc[n] = $1; ph[n] = $2; t0[n] = val("start"); t1[n] = val("end"); wall[n] = val("wall_s"); cpu[n] = val("user_s") + val("sys_s")
  if (ph[n] == "download-again") download = wall[n]
  next
}
{
  obj = $1; w = substr($2, 8); c = substr($3, 7)
  if (obj ~ /\.o$/) {
    t = obj
    if (match(obj, /CMakeFiles\/[^\/]*\.dir/)) t = substr(obj, RSTART + 11, RLENGTH - 15)
    tcpu[t] += c; tn[t]++; compile_cpu += c; nobj++
    top[obj] = c
  } else { link_cpu += c; links[obj] = c }
}
END {
  printf "%-20s %-22s %9s %9s %6s %14s\n", "script", "phase", "wall s", "CPU s", "load", "idle-2-core s*"
  for (i = 1; i <= n; i++) {
    est = cpu[i]
    if (ph[i] == "build") est = (cpu[i] - link_cpu) / (jobs < 2 ? jobs : 2) + link_cpu
    leaf = sc[i] == "setup" || (sc[i] == "main-job" && ph[i] != "setup")
    if (ph[i] ~ /^install/ || ph[i] ~ /^apt-get/) apt_cpu += cpu[i]
    printf "%-20s %-22s %9.1f %9.1f %6s %14s\n", sc[i], ph[i], wall[i], cpu[i], load_between(t0[i], t1[i]), leaf ? sprintf("%.1f", est) : ""
    if (leaf) { total_est += est; total_cpu += cpu[i] }
  }
  printf "\nCPU time of the main job (sum of its phases): %.1f s\n", total_cpu
  printf "download alone (the same packages fetched again after the job): %.1f s wall\n", download
  printf "* estimate, not a measurement: CPU time / parallelism (the build: compiles / min(cores, 2) + links),\n"
  printf "  plus the download for the installs (network and dpkg's disk waits are not CPU time)\n"
  printf "ESTIMATE on 2 idle cores: %.1f s = %.1f min\n", total_est + download, (total_est + download) / 60
  if (nobj) {
    printf "\ncompiled objects: %d, %.1f s CPU; links %.1f s CPU\n", nobj, compile_cpu, link_cpu
    for (t in tcpu) printf "  target %-28s %3d objects %8.1f s CPU\n", t, tn[t], tcpu[t] | "sort -k5 -nr"
    close("sort -k5 -nr")
    for (l in links) printf "  link %-40s %8.1f s CPU\n", l, links[l]
    printf "the 12 slowest objects (CPU s):\n"
    for (o in top) printf "  %8.1f  %s\n", top[o], o | "sort -nr | head -n 12"
    close("sort -nr | head -n 12")
  }
}
