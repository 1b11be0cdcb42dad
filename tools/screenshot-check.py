#!/usr/bin/env python3
"""Checks that headless Chromium draws a report directory's pages, and that none is blank.

    tools/screenshot-check.py DIR

For DIR/index.html, DIR/timeline.svg and DIR/tree.svg (when present; the other two must be),
takes a 1200x900 screenshot with headless Chromium, decodes the PNG (standard library only) and
fails a file unless at least 2 % of its pixels differ from the background (the most common
colour) and it has at least 8 distinct colours. SVG files must also be well-formed XML: a
broken one would render Chromium's error page, which is not blank. Prints one line per file:
`ok FILE (x% non-background, n colours)` or what went wrong; exits 1 on any failure (a missing
Chromium included: tools/setup.sh installs it), 2 on bad usage.
"""

import collections
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

WINDOW = "1200,900"
TIMEOUT_S = 60
NON_BACKGROUND_MIN = 0.02
COLOURS_MIN = 8


class CheckFailed(Exception):
    pass


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise CheckFailed("chromium not found on PATH (tools/setup.sh installs the Debian package 'chromium')")


def screenshot(chromium, page, png):
    profile = tempfile.mkdtemp(prefix="lic-chromium-")
    try:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + profile,
               "--window-size=" + WINDOW, "--screenshot=" + png, "file://" + os.path.abspath(page)]
        try:
            run = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise CheckFailed("chromium took longer than %d s" % TIMEOUT_S)
        if run.returncode != 0 or not os.path.exists(png):
            tail = run.stdout.decode(errors="replace").strip().splitlines()[-3:]
            raise CheckFailed("chromium exited %d without a screenshot: %s" % (run.returncode, " | ".join(tail)))
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(kind, raw, prev, bpp):
    """One scanline's bytes from its filtered bytes and the previous decoded line (PNG filters 0-4)."""
    if kind == 0:
        return raw
    if kind == 2:
        return bytearray((x + p) & 0xFF for x, p in zip(raw, prev))
    out = bytearray(raw)
    n = len(out)
    if kind == 1:
        for i in range(bpp, n):
            out[i] = (out[i] + out[i - bpp]) & 0xFF
    elif kind == 3:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + prev[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            up_left = prev[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + paeth(left, prev[i], up_left)) & 0xFF
    else:
        raise CheckFailed("PNG scanline filter %d is not one of 0-4" % kind)
    return out


def decode_png(path):
    """(width, height, bytes per pixel, scanlines) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise CheckFailed("not a PNG file")
    at, idat, header = 8, [], None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        at += 12 + length
    if header is None:
        raise CheckFailed("PNG without IHDR")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise CheckFailed("PNG is depth %d colour type %d interlace %d; expected 8-bit RGB(A), not interlaced"
                          % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    lines, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = unfilter(raw[start], raw[start + 1:start + 1 + stride], prev, bpp)
        lines.append(bytes(line))
        prev = line
    return width, height, bpp, lines


def colour_counts(bpp, lines):
    counts = collections.Counter()
    for line in lines:
        counts.update(line[i:i + 3] for i in range(0, len(line), bpp))  # RGB; alpha aside
    return counts


def check(chromium, page, scratch):
    if page.endswith(".svg"):
        try:
            ET.parse(page)
        except ET.ParseError as e:
            raise CheckFailed("not well-formed XML: %s" % e)
    png = os.path.join(scratch, os.path.basename(page) + ".png")
    screenshot(chromium, page, png)
    width, height, bpp, lines = decode_png(png)
    counts = colour_counts(bpp, lines)
    total = width * height
    background = counts.most_common(1)[0][1]
    share = 1.0 - background / total
    if share < NON_BACKGROUND_MIN or len(counts) < COLOURS_MIN:
        raise CheckFailed("looks blank: %.1f%% non-background (at least %.0f%% wanted), %d colours (at least %d)"
                          % (100 * share, 100 * NON_BACKGROUND_MIN, len(counts), COLOURS_MIN))
    return "%.1f%% non-background, %d colours" % (100 * share, len(counts))


def main(argv):
    if len(argv) != 2:
        print("usage: screenshot-check.py DIR", file=sys.stderr)
        return 2
    folder = argv[1]
    pages = [os.path.join(folder, "index.html"), os.path.join(folder, "timeline.svg")]
    if os.path.exists(os.path.join(folder, "tree.svg")):
        pages.append(os.path.join(folder, "tree.svg"))
    failures = 0
    try:
        chromium = find_chromium()
    except CheckFailed as e:
        print("FAIL %s" % e)
        return 1
    scratch = tempfile.mkdtemp(prefix="lic-screenshots-")
    try:
        for page in pages:
            try:
                if not os.path.exists(page):
                    raise CheckFailed("missing")
                print("ok %s (%s)" % (page, check(chromium, page, scratch)), flush=True)
            except CheckFailed as e:
                failures += 1
                print("FAIL %s: %s" % (page, e), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
