#!/usr/bin/python3
"""Compares two sets of PostgreSQL recordings (conformance/pg/recordings/<id>.jsonl).

    /usr/bin/python3 conformance/pg/compare.py EXPECTED_DIR ACTUAL_DIR [--cases FILE] [--times] [CASE_ID ...]
    /usr/bin/python3 conformance/pg/compare.py --check DIR     # DIR against cases.yaml only

The rule is cases.yaml's: per step, the kind, `value`, `error_class` and `winners` exactly;
`elapsed_ms` within max(5 %, 50 ms) of the expected time where the case marks the step
`timed: true`. Error texts, notices and server logs are shown, not compared. A case missing on
either side is a difference. Prints one table row per difference and a summary.

Exit codes: 0 no difference; 1 differences; 2 bad input (unreadable or malformed files).
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import record  # noqa: E402  (the cases file's loader and its checks)

EXACT = ("step", "value", "error_class", "winners")


def tolerance_ms(expected):
    return max(0.05 * expected, 50.0)


def read_recording(path):
    """(header, steps) of one recording; BadInput when malformed."""
    try:
        with open(path, encoding="utf-8") as f:
            raw = f.read().splitlines()
    except OSError as e:
        raise record.BadInput("%s: cannot read: %s" % (path, e.strerror))
    rows = []
    for n, text in enumerate(raw, 1):
        try:
            rows.append(json.loads(text))
        except json.JSONDecodeError as e:
            raise record.BadInput("%s:%d:%d: not JSON: %s" % (path, n, e.colno, e.msg))
    if len(rows) < 2 or "case" not in rows[0] or "server_log" not in rows[-1]:
        raise record.BadInput("%s:1:1: expected a header line, step lines and a server_log line" % path)
    steps = rows[1:-1]
    for n, s in enumerate(steps, 2):
        if not isinstance(s, dict) or any(k not in s for k in ("i",) + EXACT + ("elapsed_ms",)):
            raise record.BadInput("%s:%d:1: a step line needs i, step, value, error_class, winners, "
                                  "elapsed_ms" % (path, n))
    return rows[0], steps



def compare_case(case, expected, actual):
    """Differences of one case: rows (case, step, field, expected, actual, note)."""
    diffs = []
    cid = case["id"]
    if len(expected) != len(actual):
        diffs.append((cid, "-", "steps", len(expected), len(actual), "different step count"))
    for i, (e, a) in enumerate(zip(expected, actual)):
        label = "%d %s" % (i, e.get("step"))
        for field in EXACT:
            if e.get(field) != a.get(field):
                note = a.get("error") or ""
                diffs.append((cid, label, field, e.get(field), a.get(field), note))
        within = case["steps"][i].get("share_within") if i < len(case["steps"]) else None
        if within is not None and e.get("rounds") and a.get("rounds"):
            # One-sided: a busy machine makes the backend wait for a core, so more rounds find
            # the lock held (52 % to 88 % while a build ran, against 14 % to 34 % idle); fewer
            # than the recording less the tolerance is a difference.
            se, sa = e["held"] / e["rounds"], a["held"] / a["rounds"]
            if sa < se - within:
                diffs.append((cid, label, "held share", round(se, 3), round(sa, 3),
                              "%.3f fewer, tolerance %g" % (se - sa, within)))
        timed = i < len(case["steps"]) and case["steps"][i].get("timed")
        if timed:
            te, ta = e.get("elapsed_ms"), a.get("elapsed_ms")
            if te is None or ta is None:
                if te != ta:
                    diffs.append((cid, label, "elapsed_ms", te, ta, "missing time"))
            elif abs(ta - te) > tolerance_ms(te):
                diffs.append((cid, label, "elapsed_ms", te, ta,
                              "off by %.0f ms, tolerance %.0f ms" % (ta - te, tolerance_ms(te))))
    return diffs


def check_against_cases(cases, folder):
    """Problems of a folder of recordings against cases.yaml: a case without a recording, a
    recording of no case, a header naming another case, steps that are not the case's steps."""
    problems = []
    ids = {c["id"] for c in cases}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".jsonl") and name[:-len(".jsonl")] not in ids:
            problems.append("%s: a recording of no case in cases.yaml" % os.path.join(folder, name))
    for case in cases:
        path = os.path.join(folder, case["id"] + ".jsonl")
        if not os.path.exists(path):
            problems.append("%s: missing (case %s)" % (path, case["id"]))
            continue
        header, steps = read_recording(path)
        if header.get("case") != case["id"]:
            problems.append("%s:1:1: header names case %r" % (path, header.get("case")))
        kinds = [next(k for k in st if k in record.STEP_KINDS) for st in case["steps"]]
        got = [st.get("step") for st in steps]
        if got != kinds:
            problems.append("%s: steps %s, but cases.yaml has %s (record it again)" %
                            (path, ",".join(map(str, got)), ",".join(kinds)))
    return problems


def fmt(v):
    return "null" if v is None else (json.dumps(v) if not isinstance(v, str) else repr(v))


def print_table(diffs):
    head = ("case", "step", "field", "expected", "actual", "note")
    rows = [head] + [tuple(fmt(c) if k in (3, 4) else str(c) for k, c in enumerate(d)) for d in diffs]
    widths = [min(max(len(r[k]) for r in rows), 40) for k in range(5)]
    for r in rows:
        print("  ".join(r[k][:40].ljust(widths[k]) for k in range(5)) + "  " + r[5])


def timing_table(cases, exp_dir, act_dir):
    """Every timed step: expected, actual, difference (informational)."""
    out = []
    for case in cases:
        pe, pa = (os.path.join(d, case["id"] + ".jsonl") for d in (exp_dir, act_dir))
        if not (os.path.exists(pe) and os.path.exists(pa)):
            continue
        _, se = read_recording(pe)
        _, sa = read_recording(pa)
        for i, st in enumerate(case["steps"]):
            if st.get("timed") and i < len(se) and i < len(sa):
                te, ta = se[i].get("elapsed_ms"), sa[i].get("elapsed_ms")
                if te is not None and ta is not None:
                    out.append("  %-40s step %-2d %9.1f %9.1f %+8.1f" % (case["id"], i, te, ta, ta - te))
    return out


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="compare.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("expected")
    ap.add_argument("actual", nargs="?")
    ap.add_argument("--check", action="store_true",
                    help="only check EXPECTED against cases.yaml: one recording per case, with its steps")
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.yaml"))
    ap.add_argument("--times", action="store_true", help="also print every timed step's two times")
    ap.add_argument("ids", nargs="*", metavar="CASE_ID")

    def error(message):
        raise record.BadInput("compare.py: %s (see --help)" % message)

    ap.error = error
    try:
        args = ap.parse_intermixed_args(argv)
        cases = record.load_cases(args.cases)
        known = {c["id"] for c in cases}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            raise record.BadInput("unknown case id(s): %s" % ", ".join(unknown))
        if args.check:
            if not os.path.isdir(args.expected):
                raise record.BadInput("%s: not a folder of recordings" % args.expected)
            problems = check_against_cases(cases, args.expected)
            for pr in problems:
                print(pr)
            print("compare.py --check: %d case(s), %d problem(s)" % (len(cases), len(problems)))
            return 1 if problems else 0
        if args.actual is None:
            raise record.BadInput("compare.py: ACTUAL is required (or --check)")
        for d in (args.expected, args.actual):
            if not os.path.isdir(d):
                raise record.BadInput("%s: not a folder of recordings" % d)
        chosen = [c for c in cases if not args.ids or c["id"] in args.ids]
        diffs, compared = [], 0
        for case in chosen:
            pe, pa = (os.path.join(d, case["id"] + ".jsonl") for d in (args.expected, args.actual))
            missing = [p for p in (pe, pa) if not os.path.exists(p)]
            if missing:
                diffs.append((case["id"], "-", "recording", "", "", "missing: " + ", ".join(missing)))
                continue
            _, se = read_recording(pe)
            _, sa = read_recording(pa)
            diffs += compare_case(case, se, sa)
            compared += 1
    except record.BadInput as e:
        print("compare.py: %s" % e if not str(e).startswith("compare.py") else str(e), file=sys.stderr)
        return 2
    if args.times:
        print("timed steps: case, step, expected ms, actual ms, difference")
        print("\n".join(timing_table(chosen, args.expected, args.actual)))
    if diffs:
        print("%d difference(s) over %d case(s) (%d compared):" % (len(diffs), len(chosen), compared))
        print_table(diffs)
        return 1
    print("compare.py: %d case(s) compared: value, error_class, winners equal; timed steps within "
          "max(5 %%, 50 ms)" % compared)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
