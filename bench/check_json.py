#!/usr/bin/env python3
"""Checks what `letitcrash bench --json` printed (CTest's smoke test; no figure's value is asserted):
one JSON object, every headline name of issue 17 present, each a number or null with its reason
under `why_absent`, a unit for every measured figure, and a verdict under `targets` for every
headline name (met true or false when the figure was measured in full mode, null when it was
not or in quick mode, and true exactly when the figure is on the target's side; a missed target
carries its `why`). Usage: check_json.py FILE MODE"""
import json
import sys

HEADLINE = ("pipeline_reports_x_realtime pipeline_reports_peak_rss_mib trace_keep_overhead_pct "
            "trace_hash_overhead_pct w3_1m_events_per_s w3_1k_vs_simgrid sweep_jobs2_speedup "
            "supervised_worker_bytes_1m out_10k_children_s sweep_seed_overhead_pct explore_feedback_overhead_pct "
            "trace_bytes_per_event").split()


def main(path, mode):
    with open(path) as f:
        d = json.load(f)  # the whole of stdout: one object, nothing else
    problems = []
    if d.get("mode") != mode:
        problems.append(f"mode is {d.get('mode')!r}, not {mode!r}")
    meta = {"units", "why_absent", "targets", "mode"}
    for name in HEADLINE:
        t = d.get("targets", {}).get(name)
        if t is None:
            problems.append(f"{name} has no target verdict")
            continue
        value = d.get(name)
        if mode == "quick":
            if t["met"] is not None:
                problems.append(f"{name}: quick mode judged its target (met={t['met']})")
            continue
        if value is None:
            if t["met"] is not None:
                problems.append(f"{name} was not measured but its target says met={t['met']}")
            continue
        on_side = value >= t["target"] if t["op"] == ">=" else value <= t["target"]
        if t["met"] is not on_side:
            problems.append(f"{name} = {value}: target {t['op']} {t['target']} says met={t['met']}")
        if t["met"] is False and not t.get("why"):
            problems.append(f"{name} misses its target without a why")
    for name in HEADLINE:
        if name not in d:
            problems.append(f"{name} is missing")
        elif d[name] is None and name not in d["why_absent"]:
            problems.append(f"{name} is null without a reason")
    measured = [k for k, v in d.items() if k not in meta and isinstance(v, (int, float))]
    for k, v in d.items():
        if k in meta:
            continue
        if v is None and k not in d["why_absent"]:
            problems.append(f"{k} is null without a reason")
        if isinstance(v, (int, float)) and k not in d["units"]:
            problems.append(f"{k} has no unit")
    if len(measured) < 10:
        problems.append(f"only {len(measured)} figures measured")
    print(f"{len(measured)} figures measured, {len(d['why_absent'])} absent with a reason")
    for p in problems:
        print("problem:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
