#!/usr/bin/env python3
"""Checks a report page in headless Chromium, with real mouse input, over the DevTools protocol.

usage: tools/browser-check.py run DIR|FILE.html
       tools/browser-check.py sweep DIR|FILE.html
       tools/browser-check.py explore DIR
       tools/browser-check.py --help

run:   DIR holds one run's index.html (run --out DIR). Checks: no external requests and no JS
       errors; the timeline (#timeline with data-end-ns/data-from-ns/data-to-ns, an <svg> the
       page's script drew, .mark[data-tip]); hovering a mark, a .lane-label and a .band (when
       there is one) shows its data-tip in #tip; #zoom-in shrinks the window at least 1.5x, the
       wheel over the plot changes it, #zoom-reset gives [0, end] back, a drag of -200 px on the
       zoomed plot pans it (from and to move by the same amount); clicking the first
       a.witness-link (href "#t=NS") brings NS into the window and draws #tl-cursor
       (data-t-ns=NS) inside the svg; a.trace-link points at trace.jsonl, which exists.
sweep: DIR holds a sweep's index.html (or one *.index.html, e.g. results.index.html). Checks: no
       external requests and no JS errors; #counts (data-seeds = data-passed + data-failed);
       #strip with rect.seed (one per seed, .fail per failing seed) or rect.cell (data-failed
       summing to the failures), and hovering one shows its data-tip in #tip (or, with no #tip,
       it has a <title>); every svg.histogram[data-metric]: its rect.bar data-n sum to its
       data-count and a bar with data-n > 0 has a height (at least one histogram when the
       summary beside the page has metrics); with failures, each #failing > li has a
       code.reproduce "PROGRAM ... --seed N".

explore: DIR holds an explore's index.html and explore.json (explore --out DIR). Checks: no
       external requests and no JS errors; #counts' data-runs, data-corpus and data-coverage equal
       explore.json's, with one #corpus tr.entry per corpus entry; svg#coverage first, then one
       svg.chart per check that guided the search, each drawn (a path from M, at least one point,
       a size); a chart point's <title> reads "run N: value"; each failure of explore.json listed
       in #failures with an a.reproducer naming a file beside the page and a "... run FILE" line.

Prints one line per check: `ok: WHAT`, `FAIL: WHAT: WHY` or `skip: WHY`. Exits 0 when every
check passed, 1 on any failure (a missing Chromium too: tools/setup.sh installs the Debian
package `chromium`), 2 on bad usage. Chromium is $CHROMIUM, `chromium` or `chromium-browser`;
it runs with --headless=new and --remote-debugging-pipe (the protocol's JSON messages, each
ended by a NUL byte, on fds 3 and 4), a throwaway profile, and every host name mapped to
nothing (--host-resolver-rules), so no request can leave the machine. Standard library only.
"""

import fcntl
import glob
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

STEP_TIMEOUT_S = 30     # one protocol command, or one wait for the page to react
TOTAL_TIMEOUT_S = 180   # the whole check
REACT_S = 3.0           # how long a page may take to answer an input event
VIEW_W, VIEW_H = 1200, 900
LOCAL_SCHEMES = ("file", "data", "about", "blob", "chrome", "devtools", "chrome-extension")
ZOOM_FACTOR_MIN = 1.5
DRAG_PX = -200


class CheckFailed(Exception):
    pass


class Fatal(Exception):
    """Ends the whole check: no browser, or the page cannot be loaded."""


class OverallTimeout(BaseException):
    pass


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise Fatal("chromium not found (looked for $CHROMIUM, chromium, chromium-browser on PATH); "
                "tools/setup.sh installs the Debian package 'chromium'")


# ----------------------------------------------------------------------------------------------
# The DevTools protocol over --remote-debugging-pipe

class Browser:
    """One headless Chromium, driven over fds 3 (commands to it) and 4 (replies and events)."""

    def __init__(self, chromium, deadline):
        self.deadline = deadline
        self.scratch = tempfile.mkdtemp(prefix="lic-browser-check-")
        self.proc = None
        self.cmd_w = None
        self.replies = queue.Queue()
        self.next_id = 0
        self.session = None
        self.loaded = False
        self.crashed = False
        self.requests = []        # every URL the page asked for, in order
        self.request_urls = {}    # requestId -> URL
        self.failed_loads = []    # (URL, error text)
        self.errors = []          # (text, URL of a failed load or None): JS exceptions, console and log errors
        self._start(chromium)

    def _start(self, chromium):
        profile = os.path.join(self.scratch, "profile")
        os.mkdir(profile)
        self.log_path = os.path.join(self.scratch, "chromium.log")
        cmd = [chromium, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
               "--disable-quic", "--no-first-run", "--no-default-browser-check",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-extensions", "--disable-default-apps", "--disable-dev-shm-usage",
               "--hide-scrollbars", "--mute-audio", "--host-resolver-rules=MAP * ~NOTFOUND",
               "--user-data-dir=" + profile, "--window-size=%d,%d" % (VIEW_W, VIEW_H), "about:blank"]
        to_chromium_r, to_chromium_w = os.pipe()
        from_chromium_r, from_chromium_w = os.pipe()

        def place_fds():  # in the child, before exec: its fd 3 reads commands, its fd 4 writes replies
            a = fcntl.fcntl(to_chromium_r, fcntl.F_DUPFD_CLOEXEC, 10)
            b = fcntl.fcntl(from_chromium_w, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        with open(self.log_path, "wb") as log:
            try:
                # close_fds=False: the pipes are not inheritable (os.pipe), fds 3 and 4 are.
                self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                             close_fds=False, preexec_fn=place_fds, start_new_session=True)
            finally:
                os.close(to_chromium_r)
                os.close(from_chromium_w)
        self.cmd_w = to_chromium_w
        reader = threading.Thread(target=self._read, args=(from_chromium_r,), daemon=True)
        reader.start()

    def _read(self, fd):
        buf = b""
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    try:
                        self.replies.put(json.loads(raw))
                    except ValueError:
                        pass
        except OSError:
            pass
        finally:
            self.replies.put(None)
            os.close(fd)

    def log_tail(self):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode(errors="replace").strip().splitlines()
            return " | ".join(lines[-3:])
        except OSError:
            return ""

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the browser and its helpers: the group we started
            except OSError:
                self.proc.kill()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.cmd_w is not None:
            try:
                os.close(self.cmd_w)
            except OSError:
                pass
            self.cmd_w = None
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _remaining(self, limit):
        left = min(limit, self.deadline - time.monotonic())
        if left <= 0:
            raise OverallTimeout()
        return left

    def _event(self, msg):
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            self.requests.append(url)
            self.request_urls[p.get("requestId")] = url
        elif method == "Network.loadingFailed":
            url = self.request_urls.get(p.get("requestId"), "?")
            self.failed_loads.append((url, p.get("errorText", "")))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            text = (d.get("exception") or {}).get("description") or d.get("text", "exception")
            self.errors.append(("uncaught %s (%s:%s)" % (text.splitlines()[0] if text else "exception",
                                                        d.get("url", "") or "page", d.get("lineNumber", "?")), None))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            self.errors.append(("console.%s: %s" % (p.get("type"), args), None))
        elif method == "Log.entryAdded":
            e = p.get("entry", {})
            if e.get("level") == "error":
                self.errors.append(("%s: %s%s" % (e.get("source", "log"), e.get("text", ""),
                                                  (" (%s)" % e["url"]) if e.get("url") else ""),
                                    e.get("url") if e.get("source") == "network" else None))
        elif method == "Page.loadEventFired":
            self.loaded = True
        elif method in ("Inspector.targetCrashed", "Target.targetCrashed"):
            self.crashed = True

    def pump(self, timeout):
        """Handles whatever arrives within `timeout` seconds; returns the first reply with an id, if any."""
        try:
            msg = self.replies.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        if msg is None:
            raise Fatal("chromium closed the DevTools pipe (exit %s): %s" % (self.proc.poll(), self.log_tail()))
        if "id" in msg:
            return msg
        self._event(msg)
        return None

    def call(self, method, params=None, session=True, timeout=STEP_TIMEOUT_S):
        self.next_id += 1
        mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        try:
            os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        except OSError as e:
            time.sleep(0.2)
            raise Fatal("cannot send %s to chromium (%s; chromium exited %s): %s"
                        % (method, e.strerror, self.proc.poll(), self.log_tail() or "no output"))
        end = time.monotonic() + self._remaining(timeout)
        while True:
            left = end - time.monotonic()
            if left <= 0:
                self._remaining(timeout)  # the overall deadline first, if that is what ran out
                raise CheckFailed("chromium did not answer %s within %d s" % (method, timeout))
            reply = self.pump(left)
            if reply is None:
                continue
            if reply.get("id") != mid:
                continue
            if "error" in reply:
                raise CheckFailed("%s: %s" % (method, reply["error"].get("message", reply["error"])))
            return reply.get("result", {})

    def wait(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._remaining(STEP_TIMEOUT_S)
            self.pump(end - time.monotonic())

    def open(self, url):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable", "Inspector.enable"):
            self.call(method)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": VIEW_W, "height": VIEW_H, "deviceScaleFactor": 1, "mobile": False})
        self.loaded = False
        nav = self.call("Page.navigate", {"url": url})
        if nav.get("errorText"):
            raise Fatal("cannot open %s: %s" % (url, nav["errorText"]))
        end = time.monotonic() + STEP_TIMEOUT_S
        while not self.loaded:
            if time.monotonic() > end:
                raise Fatal("%s did not finish loading within %d s" % (url, STEP_TIMEOUT_S))
            if self.crashed:
                raise Fatal("the page crashed while loading")
            self._remaining(STEP_TIMEOUT_S)
            self.pump(0.2)

    def js(self, expr):
        """The value of a JS expression (awaited), or CheckFailed with the page's exception."""
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True,
                                           "userGesture": False})
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            text = (d.get("exception") or {}).get("description") or d.get("text", "exception")
            raise CheckFailed("evaluating in the page failed: %s" % text.splitlines()[0])
        return r.get("result", {}).get("value")

    def poll(self, expr, seconds=REACT_S):
        """Evaluates `expr` until it is truthy or `seconds` pass; returns its last value."""
        end = time.monotonic() + seconds
        while True:
            value = self.js(expr)
            if value or time.monotonic() > end:
                return value
            self.wait(0.05)

    # Real input events, in CSS pixels of the viewport.
    def mouse(self, kind, x, y, button="none", buttons=0, clicks=0):
        self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                               "buttons": buttons, "clickCount": clicks})

    def move(self, x, y):
        self.mouse("mouseMoved", x, y)

    def click(self, x, y):
        self.move(x, y)
        self.mouse("mousePressed", x, y, "left", 1, 1)
        self.mouse("mouseReleased", x, y, "left", 0, 1)

    def wheel(self, x, y, dy):
        self.move(x, y)
        self.call("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": dy})

    def drag(self, x, y, dx, steps=10):
        self.move(x, y)
        self.mouse("mousePressed", x, y, "left", 1, 1)
        for i in range(1, steps + 1):
            self.mouse("mouseMoved", x + dx * i / steps, y, "left", 1)
        self.mouse("mouseReleased", x + dx, y, "left", 0, 1)


# ----------------------------------------------------------------------------------------------
# Page helpers (JS run in the page: reads the DOM and scrolls, never calls the page's functions)

JS_HELPERS = r"""
const __sel = (s) => document.querySelector(s);
const __desc = (el) => !el ? 'nothing' : '<' + el.tagName.toLowerCase() + (el.id ? ' id=' + el.id : '') +
    (el.getAttribute('class') ? ' class="' + el.getAttribute('class') + '"' : '') + '>';
const __box = (el) => { const r = el.getBoundingClientRect();
    return {x: r.x, y: r.y, w: r.width, h: r.height, cx: r.x + r.width / 2, cy: r.y + r.height / 2}; };
const __shown = (el) => { if (!el) return false; const cs = getComputedStyle(el); const r = el.getBoundingClientRect();
    return cs.display !== 'none' && cs.visibility !== 'hidden' && r.width > 0 && r.height > 0; };
const __norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
"""


def js_fn(body):
    return "(() => {" + JS_HELPERS + body + "})()"


def pick(b, selector, within_svg=False):
    """Scrolls to the first element matching `selector` whose centre hit-tests to it (or a child of
    it) and returns {i, cx, cy, tip, desc}; {i: -1, n, why} when none does."""
    return b.js(js_fn(r"""
const els = [...document.querySelectorAll(%s)];
let why = null;
for (let i = 0; i < els.length && i < 400; i++) {
  const el = els[i];
  let r = el.getBoundingClientRect();
  if (r.width <= 0 && r.height <= 0) { why = why || 'has an empty bounding box'; continue; }
  const cs = getComputedStyle(el);
  if (cs.visibility === 'hidden' || cs.display === 'none') { why = why || 'is hidden'; continue; }
  el.scrollIntoView({block: 'center', inline: 'nearest'});
  const b = __box(el);
  if (b.cx < 0 || b.cy < 0 || b.cx >= innerWidth || b.cy >= innerHeight) { why = why || 'is outside the viewport'; continue; }
  const hit = document.elementFromPoint(b.cx, b.cy);
  if (hit && (hit === el || el.contains(hit)))
    return {i, cx: b.cx, cy: b.cy, tip: el.getAttribute('data-tip'), desc: __desc(el), n: els.length};
  why = why || ('is covered at its centre by ' + __desc(hit));
}
return {i: -1, n: els.length, why: why || 'none found'};
""" % json.dumps(selector)))


def hover_tip(b, selector, what):
    """Moves the mouse onto the first visible `selector` and checks that #tip shows its data-tip."""
    if not b.js("document.querySelector(%s) !== null" % json.dumps(selector)):
        raise CheckFailed("no %s on the page" % selector)
    if not b.js("document.getElementById('tip') !== null"):
        raise CheckFailed("no #tip element on the page")
    b.move(1, 1)  # away first: a tip still shown from the last hover could cover the next target
    p = pick(b, selector)
    if p["i"] < 0:
        raise CheckFailed("none of the %d %s can be hovered: the first %s" % (p["n"], selector, p["why"]))
    b.move(p["cx"], p["cy"])
    want = re.sub(r"\s+", " ", p["tip"] or "").strip()
    if not want:
        raise CheckFailed("%s #%d has an empty data-tip" % (selector, p["i"]))
    got = b.poll(js_fn(r"""
const t = document.getElementById('tip');
const s = {shown: __shown(t), text: __norm(t.textContent), display: getComputedStyle(t).display,
           w: t.getBoundingClientRect().width, h: t.getBoundingClientRect().height};
s.ok = s.shown && s.text === %s;
return s;""" % json.dumps(want)))
    if not got["ok"]:
        if not got["shown"]:
            raise CheckFailed("after moving the mouse onto %s (%d, %d) #tip is not visible (display %s, %dx%d)"
                              % (p["desc"], p["cx"], p["cy"], got["display"], got["w"], got["h"]))
        raise CheckFailed("#tip shows %s where %s's data-tip is %s" % (json.dumps(got["text"][:120]), p["desc"],
                                                                      json.dumps(want[:120])))
    return "hovering %s shows its data-tip in #tip (%s)" % (what, json.dumps(want[:60] + ("..." if len(want) > 60 else "")))


def click_element(b, selector):
    p = pick(b, selector)
    if p["i"] < 0:
        if p["n"] == 0:
            raise CheckFailed("no %s on the page" % selector)
        raise CheckFailed("%s cannot be clicked: it %s" % (selector, p["why"]))
    b.click(p["cx"], p["cy"])
    return p


# ----------------------------------------------------------------------------------------------
# Checks shared by both pages

def external_in_dom(b):
    return b.js(js_fn(r"""
const bad = [];
const local = /^(file|data|about|blob|javascript|chrome|devtools):/i;
const scheme = /^\s*([a-z][a-z0-9+.-]*):/i;
const check = (el, attr, v) => {
  if (v === null || v === undefined) return;
  for (const part of (attr === 'srcset' ? v.split(',').map(s => s.trim().split(/\s+/)[0]) : [v.trim()])) {
    if (part.startsWith('//') || (scheme.test(part) && !local.test(part)))
      bad.push('<' + el.tagName.toLowerCase() + ' ' + attr + '="' + part + '">');
  }
};
const sel = 'script, link, img, iframe, frame, source, object, embed, use, image, video, audio, track, input, feImage';
for (const el of document.querySelectorAll(sel)) {
  for (const attr of ['src', 'href', 'srcset', 'data', 'poster', 'xlink:href'])
    check(el, attr, el.getAttribute(attr));
  check(el, 'xlink:href', el.getAttributeNS('http://www.w3.org/1999/xlink', 'href'));
}
// CSS that would fetch: url(...) and @import in <style> elements and style attributes.
const css = /(?:url\(\s*['"]?|@import\s+['"])([^'")\s]+)/gi;
const scan = (where, text) => { for (const m of (text || '').matchAll(css)) {
  const u = m[1];
  if (u.startsWith('//') || (scheme.test(u) && !local.test(u))) bad.push(where + ' url(' + u + ')'); } };
for (const st of document.querySelectorAll('style')) scan('<style>', st.textContent);
for (const el of document.querySelectorAll('[style]')) scan('<' + el.tagName.toLowerCase() + ' style>', el.getAttribute('style'));
return [...new Set(bad)];
"""))


def is_external(url):
    """Whether loading `url` would leave the machine: a scheme other than the local ones, or a file
    URL naming a host (file://host/share is a network share on some systems)."""
    m = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):", url)
    if not m or m.group(1).lower() not in LOCAL_SCHEMES:
        return True
    if m.group(1).lower() == "file":
        host = re.match(r"file://([^/]*)", url)
        return bool(host and host.group(1) not in ("", "localhost"))
    return False


def check_no_external(b, dom_bad):
    external = []
    for url in b.requests:
        if is_external(url) and url not in external:
            external.append(url)
    why = []
    if external:
        why.append("requested %s" % ", ".join(external[:5]) + (" and %d more" % (len(external) - 5) if len(external) > 5 else ""))
    if dom_bad:
        why.append("the DOM points outside: %s" % ", ".join(dom_bad[:5]))
    if why:
        raise CheckFailed("; ".join(why))
    return ("no external requests (%d requests, all local; no script/link/img/iframe/source/object/embed/use or CSS url() "
            "pointing outside)" % len(b.requests))


def check_no_errors(b):
    # A failed request is reported once: as an external request (check_no_external) or here from
    # Network.loadingFailed, not again from the console's "Failed to load resource" line.
    requested = set(b.requests)
    problems = [text for text, url in b.errors if url not in requested]
    for url, err in b.failed_loads:
        if not is_external(url):
            problems.append("failed to load %s (%s)" % (url, err))
    problems = list(dict.fromkeys(problems))
    if b.crashed:
        problems.insert(0, "the page crashed")
    if problems:
        raise CheckFailed("%d: %s" % (len(problems), "; ".join(p[:200] for p in problems[:5])))
    return "no JS errors and no failed loads (during load and every interaction)"


# ----------------------------------------------------------------------------------------------
# The run page

def window(b):
    w = b.js(js_fn(r"""
const t = document.getElementById('timeline');
if (!t) return null;
const l = document.getElementById('tl-window');
return {end: t.getAttribute('data-end-ns'), from: t.getAttribute('data-from-ns'), to: t.getAttribute('data-to-ns'),
        label: l ? l.textContent : null};
"""))
    if w is None:
        raise CheckFailed("no #timeline")
    out = {"label": w["label"]}
    for k in ("end", "from", "to"):
        v = w[k]
        if v is None or not re.fullmatch(r"-?\d+", v.strip()):
            raise CheckFailed("#timeline's data-%s-ns is %s, not an integer" % (k, json.dumps(v)))
        out[k] = int(v)
    return out


def fmt_w(w):
    return "[%d, %d] of %d" % (w["from"], w["to"], w["end"])


def inside(w):
    return 0 <= w["from"] < w["to"] <= w["end"]


def wait_window_change(b, before, seconds=REACT_S):
    end = time.monotonic() + seconds
    while True:
        w = window(b)
        if (w["from"], w["to"]) != (before["from"], before["to"]) or time.monotonic() > end:
            return w
        b.wait(0.05)


def plot_point(b):
    """The centre of the visible part of the timeline's plot (#timeline svg .plot, else the svg)."""
    r = b.js(js_fn(r"""
const svg = document.querySelector('#timeline svg');
if (!svg) return null;
const plot = svg.querySelector('.plot') || svg;
plot.scrollIntoView({block: 'center', inline: 'nearest'});
const b = __box(plot);
const x0 = Math.max(b.x, 0), x1 = Math.min(b.x + b.w, innerWidth);
const y0 = Math.max(b.y, 0), y1 = Math.min(b.y + b.h, innerHeight);
return {x: (x0 + x1) / 2, y: (y0 + y1) / 2, w: x1 - x0, h: y1 - y0, desc: __desc(plot)};
"""))
    if r is None:
        raise CheckFailed("no <svg> in #timeline")
    if r["w"] <= 0 or r["h"] <= 0:
        raise CheckFailed("the plot %s has no visible area" % r["desc"])
    return r


def check_timeline(b):
    w = window(b)
    ready = b.poll("document.querySelector('#timeline svg') !== null", 5.0)
    if not ready:
        raise CheckFailed("#timeline holds no <svg> (the page's script should draw one)")
    info = b.js(js_fn(r"""
const svg = document.querySelector('#timeline svg');
return {marks: document.querySelectorAll('.mark[data-tip]').length, box: __box(svg),
        labels: document.querySelectorAll('.lane-label[data-tip]').length,
        bands: document.querySelectorAll('.band[data-tip]').length, window: document.getElementById('tl-window') !== null};
"""))
    if w["end"] <= 0:
        raise CheckFailed("data-end-ns is %d" % w["end"])
    if not inside(w):
        raise CheckFailed("the window %s is not inside [0, end]" % fmt_w(w))
    if info["box"]["w"] <= 0 or info["box"]["h"] <= 0:
        raise CheckFailed("the timeline's svg has no size (%dx%d)" % (info["box"]["w"], info["box"]["h"]))
    if info["marks"] == 0:
        raise CheckFailed("no .mark[data-tip] element")
    return ("timeline: window %s ns, svg %dx%d, %d marks, %d lane labels, %d bands with data-tip"
            % (fmt_w(w), info["box"]["w"], info["box"]["h"], info["marks"], info["labels"], info["bands"]))


def check_zoom(b):
    w0 = window(b)
    if not b.js("document.getElementById('tl-window') !== null"):
        raise CheckFailed("no #tl-window element (the window's text)")
    click_element(b, "#zoom-in")
    w1 = wait_window_change(b, w0)
    span0, span1 = w0["to"] - w0["from"], w1["to"] - w1["from"]
    if (w1["from"], w1["to"]) == (w0["from"], w0["to"]):
        raise CheckFailed("clicking #zoom-in left the window at %s" % fmt_w(w0))
    if span1 <= 0 or span0 / span1 < ZOOM_FACTOR_MIN:
        raise CheckFailed("clicking #zoom-in took the window from %s to %s: a factor of %.2f, not at least %.1f"
                          % (fmt_w(w0), fmt_w(w1), span0 / span1 if span1 > 0 else 0, ZOOM_FACTOR_MIN))
    if not inside(w1):
        raise CheckFailed("after #zoom-in the window %s is not inside [0, end]" % fmt_w(w1))
    if w1["label"] == w0["label"]:
        raise CheckFailed("#zoom-in changed the window to %s but #tl-window still says %s"
                          % (fmt_w(w1), json.dumps(w1["label"])))
    out = ["#zoom-in %.1fx" % (span0 / span1)]

    p = plot_point(b)
    w1 = window(b)
    b.wheel(p["x"], p["y"], -240)
    w2 = wait_window_change(b, w1)
    if (w2["from"], w2["to"]) == (w1["from"], w1["to"]):
        raise CheckFailed("a wheel event (deltaY -240) at (%d, %d) over %s left the window at %s"
                          % (p["x"], p["y"], p["desc"], fmt_w(w1)))
    if not inside(w2):
        raise CheckFailed("after the wheel the window %s is not inside [0, end]" % fmt_w(w2))
    out.append("wheel %s -> %s" % (fmt_w(w1).split(" of")[0], fmt_w(w2).split(" of")[0]))

    click_element(b, "#zoom-reset")
    end = time.monotonic() + REACT_S
    while True:
        w3 = window(b)
        if (w3["from"], w3["to"]) == (0, w3["end"]) or time.monotonic() > end:
            break
        b.wait(0.05)
    if (w3["from"], w3["to"]) != (0, w3["end"]):
        raise CheckFailed("after clicking #zoom-reset the window is %s, not [0, end]" % fmt_w(w3))
    out.append("#zoom-reset [0, end]")

    click_element(b, "#zoom-in")
    w4 = wait_window_change(b, w3)
    if w4["to"] - w4["from"] >= w3["to"] - w3["from"]:
        raise CheckFailed("a second click on #zoom-in (to test the drag) left the window at %s" % fmt_w(w4))
    p = plot_point(b)
    tried = []
    for dx in (DRAG_PX, -DRAG_PX):  # the other way only when the first hit the window's edge
        w4 = window(b)
        b.drag(p["x"], p["y"], dx)
        w5 = wait_window_change(b, w4)
        tried.append("%+d px: %s -> %s" % (dx, fmt_w(w4), fmt_w(w5)))
        moved = (w5["from"], w5["to"]) != (w4["from"], w4["to"])
        if moved or not (w4["from"] == 0 or w4["to"] == w4["end"]):
            break
    if not moved:
        raise CheckFailed("a drag on the zoomed plot %s did not pan the window (%s)" % (p["desc"], "; ".join(tried)))
    d_from, d_to = w5["from"] - w4["from"], w5["to"] - w4["to"]
    if abs(d_from - d_to) > 0.01 * max(abs(d_from), abs(d_to)) + 1:
        raise CheckFailed("a drag of %+d px moved from by %d ns and to by %d ns (a pan moves both alike): %s"
                          % (dx, d_from, d_to, tried[-1]))
    if not inside(w5):
        raise CheckFailed("after the drag the window %s is not inside [0, end]" % fmt_w(w5))
    out.append("drag %+d px pans by %d ns" % (dx, d_from))
    return "zoom: " + ", ".join(out)


def check_witness(b, folder):
    links = b.js("[...document.querySelectorAll('a.witness-link')].map(a => a.getAttribute('href'))")
    summary = read_json(os.path.join(folder, "summary.json")) if folder else None
    expect = None
    if isinstance(summary, dict):
        expect = [c.get("name") for c in summary.get("checks", []) if not c.get("passed") and c.get("witness")]
    if not links:
        if expect:
            raise CheckFailed("summary.json has failing checks with a witness (%s) but the page has no a.witness-link"
                              % ", ".join(map(str, expect[:3])))
        return None
    href = links[0]
    m = re.fullmatch(r"#t=(\d+)", href or "")
    if not m:
        raise CheckFailed("the first a.witness-link's href is %s, not #t=NS" % json.dumps(href))
    ns = int(m.group(1))
    w0 = window(b)
    if not 0 <= ns <= w0["end"]:
        raise CheckFailed("a.witness-link points at t=%d ns, outside [0, %d]" % (ns, w0["end"]))
    click_element(b, "a.witness-link")
    end = time.monotonic() + REACT_S
    while True:
        w = window(b)
        cur = b.js(js_fn(r"""
const c = document.getElementById('tl-cursor'), svg = document.querySelector('#timeline svg');
if (!c) return null;
return {t: c.getAttribute('data-t-ns'), box: __box(c), svg: svg ? __box(svg) : null};
"""))
        good = w["from"] <= ns <= w["to"] and cur is not None and cur["t"] == str(ns)
        if good or time.monotonic() > end:
            break
        b.wait(0.05)
    if not w["from"] <= ns <= w["to"]:
        raise CheckFailed("after clicking a.witness-link (href %s) the window is %s, which does not hold %d"
                          % (href, fmt_w(w), ns))
    if cur is None:
        raise CheckFailed("after clicking a.witness-link (href %s) there is no #tl-cursor" % href)
    if cur["t"] != str(ns):
        raise CheckFailed("#tl-cursor's data-t-ns is %s, not %d" % (json.dumps(cur["t"]), ns))
    box, svg = cur["box"], cur["svg"]
    if box["h"] <= 0:
        raise CheckFailed("#tl-cursor has no height (%s)" % box)
    if svg is None or not svg["x"] - 0.5 <= box["cx"] <= svg["x"] + svg["w"] + 0.5:
        raise CheckFailed("#tl-cursor at x=%.0f is outside the svg (x %.0f..%.0f)"
                          % (box["cx"], svg["x"] if svg else 0, svg["x"] + svg["w"] if svg else 0))
    return ("clicking a.witness-link (%s, %d on the page) shows t=%d ns in the window %s with #tl-cursor"
            % (href, len(links), ns, fmt_w(w)))


def check_trace_link(b, folder):
    hrefs = b.js("[...document.querySelectorAll('a.trace-link')].map(a => a.getAttribute('href'))")
    if not hrefs:
        return None
    bad = [h for h in hrefs if h != "trace.jsonl"]
    if bad:
        raise CheckFailed("a.trace-link's href is %s, not trace.jsonl" % json.dumps(bad[0]))
    if not os.path.isfile(os.path.join(folder, "trace.jsonl")):
        raise CheckFailed("a.trace-link points at trace.jsonl, which is not in %s" % folder)
    return "a.trace-link points at trace.jsonl, which exists (%d links)" % len(hrefs)


def check_history_band(b, folder):
    """A failing `linearizable` (summary.json) shows on the timeline as a .band.history over the
    operation that fits nowhere, once the witness link has centred the window on it."""
    summary = read_json(os.path.join(folder, "summary.json")) if folder else None
    if not isinstance(summary, dict) or not any(c.get("kind") == "not_linearizable" for c in summary.get("checks", [])):
        return None
    tips = b.js("[...document.querySelectorAll('.band.history')].map(e => e.getAttribute('data-tip') || '')")
    if not tips:
        raise CheckFailed("summary.json has a not_linearizable check but the timeline draws no .band.history")
    if not any("linearizable" in t for t in tips):
        raise CheckFailed("the .band.history tooltips do not name the check: %s" % json.dumps(tips[:2]))
    related = [c["witness"].get("related", []) for c in summary["checks"]
               if c.get("kind") == "not_linearizable" and isinstance(c.get("witness"), dict)]
    if not any(related):
        return "the timeline draws the operation that fits nowhere as a history band (%s)" % tips[0][:80]
    marks = b.js("[...document.querySelectorAll('.mark.operation')].map(e => e.getAttribute('data-tip') || '')")
    if not marks:
        raise CheckFailed("the witness names %d other operations (related) but the timeline draws no .mark.operation"
                          % len(related[0]))
    if not any("linearizable: " in t for t in marks):  # marks closer than a pixel merge: "2 x operation"
        raise CheckFailed("a .mark.operation tooltip does not name the check and the operation: %s" % json.dumps(marks[:2]))
    return ("the timeline draws the operation that fits nowhere as a history band (%s) and the %d operations its "
            "witness names as marks (%s)" % (tips[0][:60], len(marks), marks[0][:60]))


def run_page_checks(b, folder, report):
    report("timeline present", lambda: check_timeline(b))
    report("hover a mark", lambda: hover_tip(b, ".mark[data-tip]", "a .mark"))
    report("hover a lane label", lambda: hover_tip(b, ".lane-label[data-tip]", "a .lane-label"))
    if b.js("document.querySelector('.band[data-tip]') !== null"):
        report("hover a band", lambda: hover_tip(b, ".band[data-tip]", "a .band"))
    else:
        report("hover a band", lambda: None, skip="no .band[data-tip] on this page")
    b.move(1, 1)
    report("zoom", lambda: check_zoom(b))
    report("witness link", lambda: check_witness(b, folder), skip="no failing check with a witness on this page")
    report("history band", lambda: check_history_band(b, folder), skip="no not_linearizable check on this page")
    report("trace link", lambda: check_trace_link(b, folder), skip="no a.trace-link on this page")


# ----------------------------------------------------------------------------------------------
# The sweep page

def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def check_counts(b):
    c = b.js(js_fn(r"""
const c = document.getElementById('counts');
if (!c) return null;
return {seeds: c.getAttribute('data-seeds'), passed: c.getAttribute('data-passed'), failed: c.getAttribute('data-failed')};
"""))
    if c is None:
        raise CheckFailed("no #counts element")
    out = {}
    for k in ("seeds", "passed", "failed"):
        if c[k] is None or not re.fullmatch(r"\d+", c[k].strip()):
            raise CheckFailed("#counts' data-%s is %s, not an integer" % (k, json.dumps(c[k])))
        out[k] = int(c[k])
    if out["passed"] + out["failed"] != out["seeds"]:
        raise CheckFailed("data-passed %d + data-failed %d != data-seeds %d" % (out["passed"], out["failed"], out["seeds"]))
    return out


def check_strip(b, counts):
    s = b.js(js_fn(r"""
const strip = document.getElementById('strip');
if (!strip) return null;
const seeds = strip.querySelectorAll('rect.seed'), cells = strip.querySelectorAll('rect.cell');
const bad = [...cells].filter(c => !/^\d+$/.test((c.getAttribute('data-failed') || '').trim())).length;
return {seeds: seeds.length, fails: strip.querySelectorAll('rect.seed.fail').length, cells: cells.length,
        cell_failed: [...cells].reduce((s, c) => s + (parseInt(c.getAttribute('data-failed'), 10) || 0), 0), bad_cells: bad};
"""))
    if s is None:
        raise CheckFailed("no #strip element")
    if s["seeds"]:
        if s["seeds"] != counts["seeds"]:
            raise CheckFailed("#strip has %d rect.seed, #counts says %d seeds" % (s["seeds"], counts["seeds"]))
        if s["fails"] != counts["failed"]:
            raise CheckFailed("#strip has %d rect.seed.fail, #counts says %d failed" % (s["fails"], counts["failed"]))
        return "strip: %d rect.seed, %d of them .fail" % (s["seeds"], s["fails"])
    if s["cells"]:
        if s["bad_cells"]:
            raise CheckFailed("%d rect.cell have no integer data-failed" % s["bad_cells"])
        if s["cell_failed"] != counts["failed"]:
            raise CheckFailed("the rect.cell data-failed sum to %d, #counts says %d failed" % (s["cell_failed"], counts["failed"]))
        return "strip: %d rect.cell, their data-failed sum to %d" % (s["cells"], s["cell_failed"])
    raise CheckFailed("#strip holds neither rect.seed nor rect.cell")


def check_strip_hover(b):
    sel = "#strip rect.seed, #strip rect.cell"
    if not b.js("document.querySelector(%s) !== null" % json.dumps(sel)):
        raise CheckFailed("no #strip rect.seed or rect.cell to hover")
    if b.js("document.getElementById('tip') !== null"):
        return hover_tip(b, sel, "a strip rect")
    p = pick(b, sel)
    if p["i"] < 0 and p["n"] == 0:
        raise CheckFailed("no #strip rect.seed or rect.cell to hover")
    if p["i"] < 0:
        raise CheckFailed("none of the %d strip rects can be hovered: the first %s" % (p["n"], p["why"]))
    b.move(p["cx"], p["cy"])
    title = b.js("(() => { const r = document.querySelectorAll(%s)[%d]; const t = [...r.children].find(c => "
                 "c.tagName.toLowerCase() === 'title'); return t ? t.textContent.trim() : null; })()"
                 % (json.dumps(sel), p["i"]))
    if not title:
        raise CheckFailed("the page has no #tip and %s has no <title> child with text" % p["desc"])
    return "no #tip; the hovered strip rect has a <title> (%s)" % json.dumps(title[:60])


def summary_metrics(page):
    """The metric names with values in a summary beside the page, or None when there is no summary."""
    folder, name = os.path.split(page)
    candidates = []
    if name.endswith(".index.html"):
        candidates.append(os.path.join(folder, name[:-len(".index.html")] + ".summary.json"))
    candidates += [os.path.join(folder, "summary.json"), os.path.join(folder, "results.summary.json")]
    candidates += sorted(glob.glob(os.path.join(folder, "*.summary.json")))
    for path in candidates:
        j = read_json(path)
        if isinstance(j, dict) and j.get("kind") == "letitcrash_sweep_summary":
            metrics = j.get("metrics") or {}
            return [k for k, v in metrics.items() if isinstance(v, dict) and (v.get("runs") or 0) > 0
                    and v.get("p50") is not None], os.path.basename(path)
    return None, None


def check_histograms(b, page):
    hs = b.js(js_fn(r"""
return [...document.querySelectorAll('svg.histogram[data-metric]')].map(h => {
  const bars = [...h.querySelectorAll('rect.bar')].map(r => ({n: r.getAttribute('data-n'),
      h: r.height && r.height.baseVal ? r.height.baseVal.value : parseFloat(r.getAttribute('height') || '0')}));
  return {metric: h.getAttribute('data-metric'), count: h.getAttribute('data-count'), bars};
});
"""))
    wanted, source = summary_metrics(page)
    if not hs:
        if wanted:
            raise CheckFailed("no svg.histogram[data-metric], while %s has metrics with values: %s"
                              % (source, ", ".join(wanted[:5])))
        return None
    for h in hs:
        name = h["metric"]
        if not re.fullmatch(r"\d+", (h["count"] or "").strip()):
            raise CheckFailed("histogram %s: data-count is %s, not an integer" % (name, json.dumps(h["count"])))
        if not h["bars"] and int(h["count"]) == 0:
            continue  # a metric no run gave a value: nothing to draw, and the page says so
        if not h["bars"]:
            raise CheckFailed("histogram %s has no rect.bar" % name)
        total = 0
        for i, bar in enumerate(h["bars"]):
            if not re.fullmatch(r"\d+", (bar["n"] or "").strip()):
                raise CheckFailed("histogram %s: bar %d's data-n is %s, not an integer" % (name, i, json.dumps(bar["n"])))
            n = int(bar["n"])
            total += n
            if n > 0 and not bar["h"] > 0:
                raise CheckFailed("histogram %s: bar %d has data-n %d but height %s" % (name, i, n, bar["h"]))
        if total != int(h["count"]):
            raise CheckFailed("histogram %s: its bars' data-n sum to %d, its data-count is %s" % (name, total, h["count"]))
    missing = [m for m in (wanted or []) if m not in {h["metric"] for h in hs}]
    note = "" if not wanted else "; %s lists %d metrics with values" % (source, len(wanted))
    if missing:
        note += " (no histogram for %s)" % ", ".join(missing[:5])
    return "%d histograms checked (%s): bars sum to data-count, non-empty bars have a height%s" % (
        len(hs), ", ".join(h["metric"] for h in hs[:6]) + (", ..." if len(hs) > 6 else ""), note)


def check_failing(b, counts):
    if counts["failed"] == 0:
        return None
    items = b.js(js_fn(r"""
return [...document.querySelectorAll('#failing > li')].map(li => {
  const c = li.querySelector('code.reproduce');
  return c ? c.textContent : null;
});
"""))
    if not items:
        raise CheckFailed("%d seeds failed but there is no #failing li" % counts["failed"])
    for i, text in enumerate(items):
        if text is None:
            raise CheckFailed("#failing li %d has no code.reproduce" % (i + 1))
        t = text.strip()
        if not re.match(r"[^\s-]\S*\s", t) or not re.search(r"(^|\s)--seed(\s|=)", t):
            raise CheckFailed("#failing li %d's code.reproduce is %s: not 'PROGRAM ... --seed N'" % (i + 1, json.dumps(t[:120])))
    return "%d failing seeds listed, each with a reproduce line (%s)" % (len(items), json.dumps(items[0].strip()[:80]))


def sweep_page_checks(b, page, report):
    holder = {}

    def counts():
        holder["c"] = check_counts(b)
        c = holder["c"]
        return "#counts: %d seeds, %d passed, %d failed" % (c["seeds"], c["passed"], c["failed"])
    report("counts", counts)
    if "c" in holder:
        report("strip", lambda: check_strip(b, holder["c"]))
    else:
        report("strip", lambda: (_ for _ in ()).throw(CheckFailed("no usable #counts to compare with")))
    report("hover the strip", lambda: check_strip_hover(b))
    report("histograms", lambda: check_histograms(b, page), skip="no histograms, and no summary with metrics beside the page")
    if "c" in holder:
        report("failing seeds", lambda: check_failing(b, holder["c"]), skip="no failing seeds")


# ----------------------------------------------------------------------------------------------
# The explore page

def explore_page_checks(b, folder, report):
    state = read_json(os.path.join(folder, "explore.json"))

    def counts():
        c = b.js(js_fn(r"""
const c = document.getElementById('counts');
if (!c) return null;
return {runs: c.getAttribute('data-runs'), corpus: c.getAttribute('data-corpus'), coverage: c.getAttribute('data-coverage'),
        failures: c.getAttribute('data-failures')};
"""))
        if c is None:
            raise CheckFailed("no #counts element")
        for k in ("runs", "corpus", "coverage", "failures"):
            if c[k] is None or not re.fullmatch(r"\d+", c[k]):
                raise CheckFailed("#counts' data-%s is %s, not an integer" % (k, json.dumps(c[k])))
        if state is None:
            raise CheckFailed("no readable explore.json beside the page")
        for k in ("runs", "corpus", "coverage"):
            if int(c[k]) != state[k]:
                raise CheckFailed("#counts' data-%s %s != explore.json's %s" % (k, c[k], state[k]))
        rows = b.js(js_fn("return document.querySelectorAll('#corpus tr.entry').length;"))
        if rows != int(c["corpus"]):
            raise CheckFailed("%d corpus rows, data-corpus %s" % (rows, c["corpus"]))
        return "#counts: %s runs, corpus %s (as many rows), coverage %s, as explore.json says" % (c["runs"], c["corpus"], c["coverage"])
    report("counts", counts)

    def charts():
        cs = b.js(js_fn(r"""
return [...document.querySelectorAll('svg.chart')].map(svg => {
  const r = svg.getBoundingClientRect(), p = svg.querySelector('path');
  return {id: svg.id, w: r.width, h: r.height, d: p ? p.getAttribute('d') : null, points: svg.querySelectorAll('circle').length};
});
"""))
        if not cs or cs[0]["id"] != "coverage":
            raise CheckFailed("no coverage chart (svg#coverage) first")
        guided = [c for c in (state or {}).get("checks", []) if c.get("guided")]
        if len(cs) != 1 + len(guided):
            raise CheckFailed("%d charts, expected the coverage chart and one per guided check (%d)" % (len(cs), len(guided)))
        for c in cs:
            if c["w"] < 100 or c["h"] < 50 or not c["d"] or not c["d"].startswith("M") or c["points"] < 1:
                raise CheckFailed("chart %s is not drawn: %s" % (c["id"], json.dumps(c)))
        return "%d charts drawn (coverage and %d guided checks' margins)" % (len(cs), len(guided))
    report("charts", charts)

    def hover():
        return hover_tip_title(b)
    report("hover a point", hover)

    def failures():
        if state is None or not state.get("failures"):
            return None
        items = b.js(js_fn(r"""
return [...document.querySelectorAll('#failures > li')].map(li => {
  const a = li.querySelector('a.reproducer'), c = li.querySelector('code.reproduce');
  return {href: a ? a.getAttribute('href') : null, code: c ? c.textContent : null};
});
"""))
        if len(items) != len(state["failures"]):
            raise CheckFailed("%d failures listed, explore.json has %d" % (len(items), len(state["failures"])))
        for i, it in enumerate(items):
            if not it["href"] or not os.path.isfile(os.path.join(folder, it["href"])):
                raise CheckFailed("failure %d's reproducer link %s names no file beside the page" % (i + 1, it["href"]))
            if not it["code"] or " run " not in it["code"]:
                raise CheckFailed("failure %d has no 'letitcrash run FILE' line" % (i + 1))
        return "%d failure(s), each linking its reproducer file (%s) and its run line" % (len(items), items[0]["href"])
    report("failures", failures, skip="no failure found")


def hover_tip_title(b):
    """A chart point carries a <title> (the browser's own tooltip): its text names the run."""
    t = b.js(js_fn(r"""
const c = document.querySelector('svg.chart circle title');
return c ? c.textContent : null;
"""))
    if not t or not re.match(r"run \d+: ", t):
        raise CheckFailed("a chart point's <title> is %s, not 'run N: value'" % json.dumps(t))
    return "chart points carry their run and value (%s)" % json.dumps(t)


# ----------------------------------------------------------------------------------------------

def resolve_page(kind, arg):
    if os.path.isfile(arg):
        return os.path.abspath(arg)
    if not os.path.isdir(arg):
        raise Fatal("%s is neither a directory nor a file" % arg)
    index = os.path.join(arg, "index.html")
    if os.path.isfile(index):
        return os.path.abspath(index)
    if kind == "sweep":
        found = sorted(glob.glob(os.path.join(arg, "*.index.html")))
        if len(found) == 1:
            return os.path.abspath(found[0])
        if found:
            raise Fatal("%s has no index.html and several *.index.html (%s): name the file" % (arg, ", ".join(found)))
    raise Fatal("%s has no index.html" % arg)


def file_url(path):
    from urllib.request import pathname2url
    return "file://" + pathname2url(path)


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) != 3 or argv[1] not in ("run", "sweep", "explore"):
        print("usage: browser-check.py run DIR|FILE.html | sweep DIR|FILE.html | explore DIR   (--help for more)", file=sys.stderr)
        return 2
    kind, arg = argv[1], argv[2]
    failures = 0

    checks = 0

    def report(what, fn, skip=None):
        nonlocal failures, checks
        checks += 1
        try:
            msg = fn()
        except CheckFailed as e:
            failures += 1
            print("FAIL: %s: %s" % (what, e), flush=True)
            return
        if msg is None:
            print("skip: %s" % (skip or what), flush=True)
        else:
            print("ok: %s" % msg, flush=True)

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    def on_alarm(_signum, _frame):
        raise OverallTimeout()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TOTAL_TIMEOUT_S + 15)  # a backstop: the protocol calls watch the deadline themselves
    started = time.monotonic()
    browser = None
    try:
        page = resolve_page(kind, arg)
        folder = os.path.dirname(page)
        chromium = find_chromium()
        browser = Browser(chromium, started + TOTAL_TIMEOUT_S)
        try:
            browser.open(file_url(page))
        except CheckFailed as e:
            raise Fatal("cannot open %s in chromium: %s" % (page, e))
        dom_bad = []
        try:
            dom_bad = external_in_dom(browser)
        except CheckFailed as e:
            dom_bad = ["(the DOM could not be scanned: %s)" % e]
        if kind == "run":
            run_page_checks(browser, folder, report)
        elif kind == "explore":
            explore_page_checks(browser, folder, report)
        else:
            sweep_page_checks(browser, page, report)
        browser.move(1, 1)
        browser.wait(0.2)  # let late events (errors, requests) arrive
        report("no external requests", lambda: check_no_external(browser, dom_bad))
        report("no JS errors", lambda: check_no_errors(browser))
    except Fatal as e:
        failures += 1
        print("FAIL: %s" % e, flush=True)
    except OverallTimeout:
        failures += 1
        print("FAIL: the check took longer than %d s in all; stopped" % TOTAL_TIMEOUT_S, flush=True)
    except BrokenPipeError:  # our stdout closed (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as e:  # a bug here, not in the page: still a failure, still cleaned up
        failures += 1
        print("FAIL: browser-check.py itself failed: %s: %s" % (type(e).__name__, e), flush=True)
    finally:
        signal.alarm(0)
        if browser is not None:
            browser.close()
    took = time.monotonic() - started
    if failures:
        print("FAIL: %s %s: %d of %d checks failed (%.1f s)" % (kind, arg, failures, max(checks, failures), took))
    else:
        print("ok: %s %s: all %d checks passed (%.1f s)" % (kind, arg, checks, took))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
