#!/usr/bin/env python3
"""Runs the commands a docs page quotes and holds their output to what the page quotes.

In PAGE:
  - a ```console block is commands and their output: a line `$ CMD` is a command (a line ending
    in `\\` goes on to the next), every other line is what it prints on stdout. The commands run
    one after another with bash, in WORKDIR. Their stdout, blank lines left out and runs of blanks
    made one, must match the quoted lines from the first to the last: a quoted line `...` stands
    for any number of lines, a `…` inside a line for any text (a wall time, a path);
  - `<!-- file: PATH -->` before a ``` block writes the block to WORKDIR/PATH first (the page's
    own source files: a tutorial builds what it shows).
  - `<!-- not run -->` before a ```console block leaves it out (a command that needs what the
    test does not have).
A command exits 0 or 1 (1: a check failed), or what a `# exit N` at its end says.

  doc_commands.py PAGE WORKDIR [NAME=VALUE...]   (NAME=VALUE: environment for the commands)
Exit 0: every block printed what it quotes; 1: one did not (PAGE:LINE, the command, the quoted
and the actual output); 2: usage.
"""
import os
import pathlib
import re
import subprocess
import sys

FILE = re.compile(r"^<!-- file: (\S+) -->\s*$")
NOT_RUN = re.compile(r"^<!-- not run -->\s*$")


def blocks(lines):
    """(line number of the fence, info string, body lines, the mark before it or None)."""
    out = []
    mark = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if FILE.match(line) or NOT_RUN.match(line):
            mark = line.strip()
            i += 1
            continue
        if line.startswith("```"):
            info = line[3:].strip()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append((i + 1, info, lines[i + 1:j], mark))
            mark = None
            i = j + 1
            continue
        if line.strip():
            mark = None
        i += 1
    return out


def commands_and_output(body):
    cmds, expected = [], []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith("$ "):
            cmd = line[2:]
            while cmd.endswith("\\") and i + 1 < len(body):
                i += 1
                cmd = cmd[:-1] + " " + body[i].strip()
            cmds.append(cmd)
        else:
            expected.append(line)
        i += 1
    return cmds, expected


def norm(lines):
    return [" ".join(l.split()) for l in lines if l.strip()]


def pattern(expected):
    parts = []
    for line in norm(expected):
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(p) for p in line.split("…")) + r"\n")
    return re.compile("".join(parts))


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    page, work = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    env = dict(os.environ)
    for kv in argv[3:]:
        k, _, v = kv.partition("=")
        env[k] = v
    work.mkdir(parents=True, exist_ok=True)
    lines = page.read_text(encoding="utf-8").splitlines()
    checked = bad = 0
    for line_no, info, body, mark in blocks(lines):
        if mark and mark.startswith("<!-- file:"):
            path = work / FILE.match(mark).group(1)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(body) + "\n", encoding="utf-8")
            continue
        if info != "console" or mark == "<!-- not run -->":
            continue
        cmds, expected = commands_and_output(body)
        actual = ""
        for cmd in cmds:
            r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            actual += r.stdout
            # `CMD  # exit N` says the exit code; otherwise 0 or 1 (a check failed, which a page
            # may well show).
            said = re.search(r"#\s*exit (\d+)\s*$", cmd)
            if (int(said.group(1)),) != (r.returncode,) if said else r.returncode not in (0, 1):
                print(f"{page}:{line_no}: `{cmd}` exited {r.returncode}:\n{r.stderr}")
                bad += 1
        checked += 1
        got = "".join(l + "\n" for l in norm(actual.splitlines()))
        if not pattern(expected).fullmatch(got):
            bad += 1
            print(f"{page}:{line_no}: the output of `{'; '.join(cmds)}` is not what the page quotes")
            print("  quoted:\n" + "".join("    " + l + "\n" for l in norm(expected)))
            print("  printed:\n" + "".join("    " + l + "\n" for l in got.splitlines()))
    if checked == 0:
        print(f"{page}: no ```console block to run")
        return 1
    print(f"{page}: {checked - bad} of {checked} command blocks print what they quote")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
