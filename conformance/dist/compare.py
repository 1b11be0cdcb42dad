#!/usr/bin/python3
"""Checks and compares recordings of distributed Erlang under cuts (conformance/dist/recordings/).

    /usr/bin/python3 conformance/dist/compare.py --check DIR [--cases FILE]
    /usr/bin/python3 conformance/dist/compare.py --times COMMITTED_DIR NEW_DIR [--cases FILE] [CASE_ID ...]
    /usr/bin/python3 conformance/dist/compare.py --table DIR [CASE_ID ...]   # the figures, as Markdown

--check: DIR holds exactly one well-formed recording per case of cases.yaml, recorded from the
case as it is now (the recording's copy of the case equals cases.yaml's), with the case's number
of runs, each run's steps all fired, its events sorted and each well-formed.

--times: a fresh recording (NEW_DIR) agrees with the committed one, by the rule of cases.yaml's
header: per run, the set of event kinds is the set of some committed run; every event but recv is
keyed by its kind and its fields other than t, elapsed and raw, numbered by occurrence; a key in
every committed run must be in every new run and a key in no committed run must not appear; each
new event's t lies within [min, max] of its key over the committed runs, widened by the tolerance
max(ticktime / 4, 250 ms), and, where the committed runs spread over less, to a window ticktime / 2
plus that tolerance wide (a tick detection's own window is ticktime / 2 wide); received sequence numbers (per receiver and sender) increase; they are
the committed ones when every committed run received the same; otherwise every seq sent before
the first cut that every committed run received is received, in no more contiguous ranges than
the most a committed run has. In a case marked `varies: true`, an outcome the committed runs do
not show (other event kinds or keys, other received seqs) is printed as a note, not a
difference. Without CASE_IDs every case that is not slow is compared (a slow case too when
NEW_DIR has it). Prints every timed key's committed spread and new times, then the
differences.

Exit codes: 0 no difference / no problem; 1 differences or problems; 2 bad input.
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import record  # noqa: E402  (the cases file's loader and its checks)

# Fields every event of a kind has (besides t and ev); `raw` and `elapsed` are never keys.
FIELDS = {
    "nodedown": ("node", "peer", "reason"),
    "nodeup": ("node", "peer"),
    "cut": ("nodes", "oneway"),
    "heal": ("nodes", "oneway"),
    "exit": ("p", "from", "reason"),
    "down": ("p", "of", "reason"),
    "recv": ("p", "from", "seq"),
    "call": ("p", "to", "result", "elapsed"),
    "global_register": ("node", "p", "name", "result", "elapsed"),
    "global": ("node", "name", "owner"),
    "proc_down": ("node", "p", "reason"),
    "send_blocked": ("p", "to", "seq", "elapsed"),
}
NOT_KEYS = ("t", "elapsed", "raw")
HEADER = ("id", "otp_release", "erts", "kernel", "ticktime", "setuptime", "recorded_at", "nodes",
          "case", "max_step_late_ms", "runs")


def tolerance_ms(ticktime_s):
    return max(ticktime_s * 1000.0 / 4.0, 250.0)


def widened(lo, hi, tol, ticktime_s):
    """[lo, hi] widened by tol, and to at least ticktime / 2 in all: a side declares a silent
    peer down 0.75 to 1.25 ticktime after the cut, by its tick phase, new every run, so two or
    three committed runs can sit together at one end of that window (dist-live once saw a
    nodedown 5 ms below 2 committed runs' 5,196 ms - 1 s)."""
    least = ticktime_s * 1000.0 / 2.0 + tol  # the detection window's width, plus a tolerance
    extra = max(tol, (least - (hi - lo)) / 2.0)
    return lo - extra, hi + extra


def read_recording(path):
    """The recording at path; BadInput when it is not JSON or lacks its header fields."""
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
    except OSError as e:
        raise record.BadInput("%s: cannot read: %s" % (path, e.strerror))
    except json.JSONDecodeError as e:
        raise record.BadInput("%s:%d:%d: not JSON: %s" % (path, e.lineno, e.colno, e.msg))
    if not isinstance(rec, dict) or any(k not in rec for k in HEADER):
        raise record.BadInput("%s:1:1: a recording needs %s" % (path, ", ".join(HEADER)))
    if not isinstance(rec["runs"], list):
        raise record.BadInput("%s:1:1: runs must be a list" % path)
    return rec


def event_problems(ev, where):
    if not isinstance(ev, dict) or not isinstance(ev.get("t"), (int, float)):
        return ["%s: an event needs a time t" % where]
    kind = ev.get("ev")
    if kind not in FIELDS:
        return ["%s: unknown event kind %r" % (where, kind)]
    missing = [f for f in FIELDS[kind] if f not in ev]
    if missing:
        return ["%s: a %s event needs %s" % (where, kind, ", ".join(missing))]
    extra = set(ev) - set(FIELDS[kind]) - {"t", "ev", "raw"}
    if extra:
        return ["%s: a %s event has unknown field(s) %s" % (where, kind, ", ".join(sorted(extra)))]
    return []


def check_recording(case, path):
    """Problems of one recording against its case."""
    rec = read_recording(path)
    problems = []
    if rec["id"] != case["id"]:
        problems.append("%s: names case %r" % (path, rec["id"]))
    if rec["case"] != record.plain(case):
        problems.append("%s: recorded from another version of case %s (record it again)" % (path, case["id"]))
    if rec["ticktime"] != case.get("ticktime", 60) or rec["setuptime"] != case.get("setuptime"):
        problems.append("%s: ticktime/setuptime differ from the case's" % path)
    if len(rec["runs"]) != case["repeat"]:
        problems.append("%s: %d run(s), the case has repeat: %d" % (path, len(rec["runs"]), case["repeat"]))
    nsteps = len(case["steps"])
    for n, run in enumerate(rec["runs"], 1):
        where = "%s: run %d" % (path, n)
        if not isinstance(run, dict) or not isinstance(run.get("events"), list) \
                or not isinstance(run.get("steps"), list):
            problems.append("%s: a run needs steps and events" % where)
            continue
        if not isinstance(run.get("ready"), dict) or sorted(run["ready"]) != sorted(case["nodes"]):
            problems.append("%s: ready must give every node's start time" % where)
        if [s.get("i") for s in run["steps"]] != list(range(nsteps)):
            problems.append("%s: steps %s, the case has %d" % (where, [s.get("i") for s in run["steps"]], nsteps))
        last = -math.inf
        for m, ev in enumerate(run["events"], 1):
            ps = event_problems(ev, "%s event %d" % (where, m))
            problems += ps
            if ps:
                continue
            if ev["t"] < last:
                problems.append("%s event %d: not sorted by t" % (where, m))
            last = ev["t"]
            if ev["t"] < 0 or (ev["t"] > case["end"] and ev["ev"] != "global"):
                problems.append("%s event %d: t %.1f outside [0, end]" % (where, m, ev["t"]))
    return problems


def check_folder(cases, folder, strays=True):
    """Problems of a folder against the cases (and, with strays, recordings of no case)."""
    problems = []
    ids = {c["id"] for c in cases}
    for name in sorted(os.listdir(folder)) if strays else []:
        if name.endswith(".json") and name[:-len(".json")] not in ids:
            problems.append("%s: a recording of no case in cases.yaml" % os.path.join(folder, name))
    for case in cases:
        path = os.path.join(folder, case["id"] + ".json")
        if not os.path.exists(path):
            problems.append("%s: missing (case %s)" % (path, case["id"]))
            continue
        problems += check_recording(case, path)
    return problems


# ---------------------------------------------------------------------------------------------
# comparison


def keyed(events):
    """{key: t} of a run's events but recv; key = (kind, fields..., occurrence)."""
    out = {}
    seen = {}
    for ev in events:
        if ev["ev"] == "recv":
            continue
        base = (ev["ev"],) + tuple((k, json.dumps(ev[k])) for k in sorted(ev) if k not in NOT_KEYS + ("ev",))
        k = seen.get(base, 0)
        seen[base] = k + 1
        out[base + (k,)] = ev["t"]
    return out


def key_text(key):
    kind, *fields, occ = key
    text = kind + " " + " ".join("%s=%s" % (k, json.loads(v)) for k, v in fields)
    return text + ("" if occ == 0 else " #%d" % (occ + 1))


def streams(events):
    """{(p, from): [seq, ...]} in the order received."""
    out = {}
    for ev in events:
        if ev["ev"] == "recv":
            out.setdefault((ev["p"], ev["from"]), []).append(ev["seq"])
    return out


def ranges(seqs):
    rs = []
    for s in seqs:
        if rs and s == rs[-1][1] + 1:
            rs[-1][1] = s
        else:
            rs.append([s, s])
    return rs


def compare_case(case, committed, new):
    """(differences, notes, timing lines) of one case. In a case marked `varies`, an outcome the
    committed runs do not show (other event kinds or keys, other received seqs) is a note."""
    cid = case["id"]
    tol = tolerance_ms(case.get("ticktime", 60))
    diffs, notes, lines = [], [], []
    outcome = notes if case.get("varies") else diffs
    c_runs = [r["events"] for r in committed["runs"]]
    n_runs = [r["events"] for r in new["runs"]]
    c_kinds = [frozenset(e["ev"] for e in evs) for evs in c_runs]
    c_keys = [keyed(evs) for evs in c_runs]
    always = set.intersection(*(set(k) for k in c_keys)) if c_keys else set()
    spread = {}
    for ks in c_keys:
        for k, t in ks.items():
            lo, hi = spread.get(k, (t, t))
            spread[k] = (min(lo, t), max(hi, t))
    new_times = {}
    for n, evs in enumerate(n_runs, 1):
        kinds = frozenset(e["ev"] for e in evs)
        if kinds not in c_kinds:
            outcome.append("%s run %d: event kinds %s; the committed runs have %s"
                         % (cid, n, sorted(kinds), " or ".join(str(sorted(k)) for k in set(c_kinds))))
        ks = keyed(evs)
        for k in sorted(always - set(ks), key=key_text):
            outcome.append("%s run %d: missing %s (in every committed run, at %.0f..%.0f ms)"
                         % (cid, n, key_text(k), *spread[k]))
        for k, t in ks.items():
            new_times.setdefault(k, []).append(t)
            if k not in spread:
                outcome.append("%s run %d: %s at %.1f ms, in no committed run" % (cid, n, key_text(k), t))
                continue
            lo, hi = spread[k]
            low, high = widened(lo, hi, tol, case.get("ticktime", 60))
            if not low <= t <= high:
                diffs.append("%s run %d: %s at %.1f ms, outside the committed %.1f..%.1f ms widened to %.1f..%.1f ms"
                             % (cid, n, key_text(k), t, lo, hi, low, high))
    for k in sorted(set(spread) | set(new_times), key=lambda k: (spread.get(k, (math.inf,))[0], key_text(k))):
        if k[0] in ("cut", "heal"):
            continue
        c = spread.get(k)
        lines.append("  %-24s %-58s %-19s %s" % (
            cid, key_text(k)[:58], "%.0f..%.0f" % c if c else "-",
            " ".join("%.0f" % t for t in new_times.get(k, [])) or "-"))
    outcome += compare_streams(case, c_runs, n_runs)
    return diffs, notes, lines


def first_cut_sent_before(case, p, to):
    """The last seq of P's sends to TO sent before the case's first cut (0 when none)."""
    cut = next((s["at"] for s in case["steps"] if "cut" in s), math.inf)
    last = 0
    for s in case["steps"]:
        if s.get("send") == p and s.get("to") == to:
            every = s.get("every") or 0
            for k in range(1, s["count"] + 1):
                if s["at"] + (k - 1) * every < cut:
                    last = max(last, k)
    return last


def compare_streams(case, c_runs, n_runs):
    cid = case["id"]
    diffs = []
    c_streams = [streams(evs) for evs in c_runs]
    n_streams = [streams(evs) for evs in n_runs]
    pairs = set()
    for s in c_streams + n_streams:
        pairs |= set(s)
    for pair in sorted(pairs):
        committed = [s.get(pair, []) for s in c_streams]
        for n, s in enumerate(n_streams, 1):
            got = s.get(pair, [])
            label = "%s run %d: recv %s<-%s" % (cid, n, pair[0], pair[1])
            if any(b <= a for a, b in zip(got, got[1:])):
                diffs.append("%s: not in increasing order: %s" % (label, ranges(got)))
                continue
            if all(c == committed[0] for c in committed) and not case.get("varies"):
                if got != committed[0]:
                    diffs.append("%s: seqs %s, committed %s" % (label, ranges(got), ranges(committed[0])))
                continue
            # The committed runs differ (how many messages a long cut loses depends on the
            # detection time and on the reconnection): nothing sent before the first cut that
            # every committed run received may be missing, and the received seqs form no more
            # contiguous ranges than some committed run's.
            before = first_cut_sent_before(case, pair[1], pair[0])
            needed = set.intersection(*(set(c) for c in committed))
            missing = sorted(k for k in needed if k <= before and k not in got)
            if missing:
                diffs.append("%s: missing %s, sent before the cut and received by every committed run"
                             % (label, ranges(missing)))
            most = max(len(ranges(c)) for c in committed)
            if len(ranges(got)) > most:
                diffs.append("%s: seqs %s in %d ranges; the committed runs have at most %d"
                             % (label, ranges(got), len(ranges(got)), most))
    return diffs


def table(cases, folder):
    """Markdown rows of the recorded figures: per case, every event key (but recv, cut, heal)
    with the runs that have it and its time after the run's first cut (min / median / max, ms),
    then the received seqs as ranges, with how many runs received each pattern."""
    rows = ["| case | runs | event | in runs | after the cut: min / median / max (ms) |",
            "|---|---|---|---|---|"]
    for case in cases:
        path = os.path.join(folder, case["id"] + ".json")
        if not os.path.exists(path):
            continue
        rec = read_recording(path)
        per_key = {}
        patterns = {}
        for run in rec["runs"]:
            cut = next((e["t"] for e in run["events"] if e["ev"] == "cut"), 0.0)
            for k, t in keyed(run["events"]).items():
                if k[0] not in ("cut", "heal"):
                    per_key.setdefault(k, []).append(t - cut)
            for pair, seqs in sorted(streams(run["events"]).items()):
                text = "%s<-%s %s" % (pair[0], pair[1], ",".join(
                    "%d" % a if a == b else "%d-%d" % (a, b) for a, b in ranges(seqs)))
                patterns[text] = patterns.get(text, 0) + 1
        first = True
        for k in sorted(per_key, key=lambda k: (sorted(per_key[k])[len(per_key[k]) // 2], key_text(k))):
            ts = sorted(per_key[k])
            med = ts[len(ts) // 2] if len(ts) % 2 else (ts[len(ts) // 2 - 1] + ts[len(ts) // 2]) / 2
            rows.append("| %s | %s | %s | %d | %.0f / %.0f / %.0f |" % (
                "`%s`" % case["id"] if first else "", len(rec["runs"]) if first else "",
                key_text(k), len(ts), ts[0], med, ts[-1]))
            first = False
        for text, n in sorted(patterns.items(), key=lambda x: -x[1]):
            rows.append("| %s | %s | recv %s | %d | |" % (
                "`%s`" % case["id"] if first else "", len(rec["runs"]) if first else "", text, n))
            first = False
    return rows


def main(argv):
    ap = argparse.ArgumentParser(prog="compare.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", metavar="DIR", help="check DIR against cases.yaml")
    ap.add_argument("--times", nargs=2, metavar=("COMMITTED_DIR", "NEW_DIR"),
                    help="compare a fresh recording with the committed one")
    ap.add_argument("--table", metavar="DIR",
                    help="print the recorded figures of DIR as a Markdown table (docs/conformance-dist.md)")
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.yaml"))
    ap.add_argument("ids", nargs="*", metavar="CASE_ID")

    def error(message):
        raise record.BadInput("compare.py: %s (see --help)" % message)

    ap.error = error
    try:
        args = ap.parse_intermixed_args(argv)
        if sum(map(bool, (args.check, args.times, args.table))) != 1:
            raise record.BadInput("compare.py: give --check DIR, --times COMMITTED_DIR NEW_DIR or --table DIR")
        cases = record.load_cases(args.cases)
        known = {c["id"] for c in cases}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            raise record.BadInput("unknown case id(s): %s" % ", ".join(unknown))
        if args.table:
            print("\n".join(table([c for c in cases if not args.ids or c["id"] in args.ids], args.table)))
            return 0
        if args.check:
            if not os.path.isdir(args.check):
                raise record.BadInput("%s: not a folder of recordings" % args.check)
            chosen = [c for c in cases if not args.ids or c["id"] in args.ids]
            problems = check_folder(chosen, args.check, strays=not args.ids)
            for pr in problems:
                print(pr)
            print("compare.py --check: %d case(s), %d problem(s)" % (len(chosen), len(problems)))
            return 1 if problems else 0
        committed_dir, new_dir = args.times
        for d in (committed_dir, new_dir):
            if not os.path.isdir(d):
                raise record.BadInput("%s: not a folder of recordings" % d)
        if args.ids:
            chosen = [c for c in cases if c["id"] in args.ids]
        else:
            chosen = [c for c in cases if not c.get("slow")
                      or os.path.exists(os.path.join(new_dir, c["id"] + ".json"))]
        diffs, notes, lines = [], [], []
        for case in chosen:
            pc, pn = (os.path.join(d, case["id"] + ".json") for d in (committed_dir, new_dir))
            missing = [p for p in (pc, pn) if not os.path.exists(p)]
            if missing:
                diffs.append("%s: missing %s" % (case["id"], ", ".join(missing)))
                continue
            committed, new = read_recording(pc), read_recording(pn)
            for path, rec in ((pc, committed), (pn, new)):
                probs = check_recording(case, path)
                # A fresh recording may have another number of runs (--repeat); nothing else.
                probs = [p for p in probs if "run(s), the case has repeat" not in p]
                if probs:
                    raise record.BadInput("; ".join(probs[:3]) + (
                        "; and %d more problem(s)" % (len(probs) - 3) if len(probs) > 3 else ""))
            d, ns, ls = compare_case(case, committed, new)
            diffs += d
            notes += ns
            lines += ls
    except record.BadInput as e:
        print("compare.py: %s" % e if not str(e).startswith("compare.py") else str(e), file=sys.stderr)
        return 2
    print("timed events (ms after t=0): case, event, committed min..max, new runs")
    print("\n".join(lines))
    if notes:
        print("%d note(s): outcomes that the committed runs of a case marked varies do not show "
              "(not differences):" % len(notes))
        for n in notes:
            print("  " + n)
    if diffs:
        print("%d difference(s) over %d case(s):" % (len(diffs), len(chosen)))
        for d in diffs:
            print("  " + d)
        return 1
    print("compare.py: %d case(s) agree: event kinds, every event within the committed spread "
          "+- max(ticktime/4, 250 ms) (to ticktime/2 at least), received seqs" % len(chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
