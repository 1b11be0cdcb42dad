#!/usr/bin/env python3
"""Holds the docs' code snippets to the tested files they quote.

A fenced block in a docs page that follows a line `<!-- snippet: PATH -->` (PATH from the
repository's top) must appear in PATH: its non-blank lines, each stripped of leading and trailing
blanks, in order and next to each other among PATH's non-blank lines. PATH is compiled and run by
CTest (examples/cache is built against the installed package in CI), so a snippet that drifts
from the code fails here instead of misleading a reader.

  doc_snippets.py ROOT PAGE...      exit 0: every snippet found; 1: one was not (file:line: why)
"""
import pathlib
import re
import sys

MARK = re.compile(r"^<!-- snippet: (\S+) -->\s*$")


def lines_of(text):
    return [l.strip() for l in text.splitlines() if l.strip()]


def snippets(page):
    """(line number, path, block lines) for each marked block of `page`."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines) or not lines[j].startswith("```"):
            out.append((i + 1, m.group(1), None))
            i = j
            continue
        k = j + 1
        while k < len(lines) and not lines[k].startswith("```"):
            k += 1
        out.append((j + 1, m.group(1), lines[j + 1:k]))
        i = k + 1
    return out


def contains(haystack, needle):
    n = len(needle)
    return any(haystack[s:s + n] == needle for s in range(len(haystack) - n + 1))


def main(argv):
    root = pathlib.Path(argv[1])
    bad = 0
    seen = 0
    for name in argv[2:]:
        page = root / name
        for line, path, block in snippets(page):
            seen += 1
            where = f"{name}:{line}"
            source = root / path
            if block is None:
                print(f"{where}: a snippet mark for {path} without a ``` block after it")
                bad += 1
            elif not source.is_file():
                print(f"{where}: the snippet names {path}, which is not a file")
                bad += 1
            elif not contains(lines_of(source.read_text(encoding="utf-8")), lines_of("\n".join(block))):
                wanted = lines_of("\n".join(block))
                have = set(lines_of(source.read_text(encoding="utf-8")))
                missing = next((l for l in wanted if l not in have), None)
                why = f"its line '{missing}' is not in it" if missing else "its lines are there, but not together in this order"
                print(f"{where}: the snippet is not in {path}: {why}")
                bad += 1
    if seen == 0:
        print("no snippet marks (<!-- snippet: PATH -->) in " + ", ".join(argv[2:]))
        return 1
    print(f"{seen - bad} of {seen} snippets are in the files they quote")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
