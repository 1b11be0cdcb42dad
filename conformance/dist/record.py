#!/usr/bin/python3
"""Records conformance/dist/cases.yaml on real Erlang/OTP nodes cut apart by nftables.

Run with Debian's interpreter (/usr/bin/python3) and Debian's python3-yaml, as root:

    /usr/bin/python3 conformance/dist/record.py [--cases FILE] [--out DIR] [--repeat N] [--all]
                                                [--jobs N] [--list] [CASE_ID ...]

As root, the recorder re-executes itself inside a private network namespace (`unshare -n`), and
each run of a case gets a further fresh namespace of its own (made by the thread that runs it):
its loopback, its own epmd, its nodes (NAME@127.0.0.2, 127.0.0.3, ...) and the nftables table of
its cuts live there and vanish with it. The host's network and firewall are never touched. Not
root, nothing can be cut: every case is reported as not run.

Exit codes: 0 every requested case recorded; 1 a case failed (harness error); 2 bad input;
3 not run (not root, or no network namespace can be made); 130 interrupted.
docs/conformance-dist.md describes it all.
"""

import argparse
import atexit
import ctypes
import datetime
import json
import os
import platform
import queue
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the machine
    yaml = None

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_SOURCE = os.path.join(HERE, "lic_dist_node.erl")
NETNS_ENV = "LIC_DIST_IN_NETNS"
NFT_TABLE = "lic_dist_cut"
COOKIE = "lic_dist_cookie"
CLONE_NEWNET = 0x40000000
LEAD_MS = 500            # t=0 is this long after the schedule is sent to the nodes
SETUP_TIMEOUT = 20.0     # seconds for each setup phase of a run (start, mesh, procs)
NAME_RE = re.compile(r"[a-z][a-z0-9_]*\Z")
ID_RE = re.compile(r"[a-z0-9_]+\Z")
CASE_KEYS = ("id", "pins", "ticktime", "setuptime", "nodes", "repeat", "slow", "varies", "procs",
             "steps", "end")
PROC_KEYS = ("name", "node", "server")
STEP_KINDS = ("link", "monitor", "cut", "heal", "send", "call", "register_global")
STEP_KEYS = {"link": {"to"}, "monitor": {"to"}, "cut": {"oneway"}, "heal": set(),
             "send": {"to", "every", "count"}, "call": {"to", "timeout"},
             "register_global": {"by"}}
EVENT_KINDS = ("nodedown", "nodeup", "cut", "heal", "exit", "down", "recv", "call",
               "global_register", "global", "proc_down", "send_blocked")


class BadInput(Exception):
    """Bad input: message printed, exit 2."""


class Interrupted(BaseException):
    """SIGINT / SIGTERM / SIGHUP: unwinds through every finally."""


class CaseFailed(Exception):
    """The recorder could not run a case as written (a harness error, not Erlang's answer)."""


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# cases file


def _yaml_loader():
    class Loader(yaml.SafeLoader):
        pass

    class MarkedDict(dict):
        mark = None

    class MarkedList(list):
        mark = None

    def construct_mapping(loader, node, deep=False):
        d = MarkedDict(yaml.SafeLoader.construct_mapping(loader, node, deep=True))
        d.mark = node.start_mark
        return d

    def construct_sequence(loader, node, deep=False):
        seq = MarkedList(yaml.SafeLoader.construct_sequence(loader, node, deep=True))
        seq.mark = node.start_mark
        return seq

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_sequence)
    return Loader


def where(path, obj):
    mark = getattr(obj, "mark", None)
    if mark is None:
        return path
    return "%s:%d:%d" % (path, mark.line + 1, mark.column + 1)


def plain(obj):
    """The parsed YAML without its marks: dicts and lists as JSON writes them."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def step_kind(step):
    return next(k for k in step if k in STEP_KINDS)


def validate_case(path, case, seen):
    ctx = where(path, case)
    if not isinstance(case, dict):
        raise BadInput("%s: a case is a map" % ctx)
    cid = case.get("id")
    if not isinstance(cid, str) or not ID_RE.match(cid):
        raise BadInput("%s: a case needs an id of [a-z0-9_]+" % ctx)
    extra = set(case) - set(CASE_KEYS)
    if extra:
        raise BadInput("%s: case %s: unknown key(s) %s" % (ctx, cid, ", ".join(sorted(extra))))
    if cid in seen:
        raise BadInput("%s: duplicate case id '%s'" % (ctx, cid))
    seen.add(cid)
    if not isinstance(case.get("pins"), str) or not case["pins"].strip() or "\n" in case["pins"]:
        raise BadInput("%s: case %s: pins must be one line of text" % (ctx, cid))
    for key, low in (("ticktime", 1), ("setuptime", 1), ("repeat", 1), ("end", 1)):
        if key in case and (not is_int(case[key]) or case[key] < low):
            raise BadInput("%s: case %s: %s must be an integer >= %d" % (ctx, cid, key, low))
    for key in ("repeat", "end"):
        if key not in case:
            raise BadInput("%s: case %s needs %s" % (ctx, cid, key))
    for key in ("slow", "varies"):
        if key in case and not isinstance(case[key], bool):
            raise BadInput("%s: case %s: %s is true or false" % (ctx, cid, key))
    nodes = case.get("nodes")
    if not isinstance(nodes, list) or len(nodes) < 2 or len(nodes) > 200:
        raise BadInput("%s: case %s: nodes must be a list of 2 or more short names" % (ctx, cid))
    for n in nodes:
        if not isinstance(n, str) or not NAME_RE.match(n):
            raise BadInput("%s: case %s: bad node name %r ([a-z][a-z0-9_]*)" % (where(path, nodes), cid, n))
    if len(set(nodes)) != len(nodes):
        raise BadInput("%s: case %s: a node is listed twice" % (where(path, nodes), cid))
    procs = case.get("procs") or []
    if not isinstance(procs, list):
        raise BadInput("%s: case %s: procs must be a list" % (ctx, cid))
    names = {}
    for p in procs:
        pctx = where(path, p)
        if not isinstance(p, dict):
            raise BadInput("%s: case %s: a proc is a map {name, node[, server]}" % (pctx, cid))
        extra = set(p) - set(PROC_KEYS)
        if extra:
            raise BadInput("%s: proc: unknown key(s) %s" % (pctx, ", ".join(sorted(extra))))
        name = p.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise BadInput("%s: proc: bad or missing name %r ([a-z][a-z0-9_]*)" % (pctx, name))
        if name in names or name.startswith("lic_"):
            raise BadInput("%s: proc %s: duplicate or reserved name" % (pctx, name))
        if p.get("node") not in nodes:
            raise BadInput("%s: proc %s: node %r is not one of the case's nodes" % (pctx, name, p.get("node")))
        if "server" in p and not isinstance(p["server"], bool):
            raise BadInput("%s: proc %s: server is true or false" % (pctx, name))
        names[name] = p
    steps = case.get("steps")
    if not isinstance(steps, list) or not steps:
        raise BadInput("%s: case %s needs steps" % (ctx, cid))
    last_at = 0
    cut = {}
    for step in steps:
        sctx = where(path, step)
        if not isinstance(step, dict):
            raise BadInput("%s: a step is a map with `at` and one kind key" % sctx)
        kinds = [k for k in step if k in STEP_KINDS]
        if len(kinds) != 1:
            raise BadInput("%s: a step needs exactly one of %s" % (sctx, ", ".join(STEP_KINDS)))
        kind = kinds[0]
        extra = set(step) - STEP_KEYS[kind] - {kind, "at"}
        if extra:
            raise BadInput("%s: %s step: unknown key(s) %s" % (sctx, kind, ", ".join(sorted(extra))))
        at = step.get("at")
        if not is_int(at) or at < 0:
            raise BadInput("%s: %s step: `at` must be an integer >= 0 (ms after t=0)" % (sctx, kind))
        if at < last_at:
            raise BadInput("%s: %s step: at %d is before the previous step's %d (keep them in order)"
                           % (sctx, kind, at, last_at))
        if at >= case["end"]:
            raise BadInput("%s: %s step: at %d is not before end %d" % (sctx, kind, at, case["end"]))
        last_at = at

        def proc(key, server=False):
            v = step.get(key)
            if v not in names:
                raise BadInput("%s: %s step: %s %r is not a proc of the case" % (sctx, kind, key, v))
            if server and not names[v].get("server"):
                raise BadInput("%s: %s step: %s %r is not a server (server: true)" % (sctx, kind, key, v))
            return v

        if kind in ("link", "monitor"):
            proc(kind)
            proc("to")
            if step[kind] == step["to"]:
                raise BadInput("%s: %s step: a proc cannot %s itself" % (sctx, kind, kind))
        elif kind in ("cut", "heal"):
            pair = step[kind]
            if (not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]
                    or any(n not in nodes for n in pair)):
                raise BadInput("%s: %s step: a pair of two different nodes of the case, [X, Y]" % (sctx, kind))
            if "oneway" in step and (kind != "cut" or not isinstance(step["oneway"], bool)):
                raise BadInput("%s: %s step: oneway is true or false, on a cut" % (sctx, kind))
            key = frozenset(pair)
            if kind == "cut":
                if key in cut:
                    raise BadInput("%s: cut step: %s-%s is already cut (heal it first)" % (sctx, pair[0], pair[1]))
                cut[key] = True
            else:
                if key not in cut:
                    raise BadInput("%s: heal step: %s-%s is not cut" % (sctx, pair[0], pair[1]))
                del cut[key]
        elif kind == "send":
            proc("send")
            proc("to")
            count = step.get("count")
            if not is_int(count) or count < 1:
                raise BadInput("%s: send step needs count: N >= 1" % sctx)
            every = step.get("every")
            if count > 1 and (not is_int(every) or every < 1):
                raise BadInput("%s: send step: every: MS >= 1 is needed when count > 1" % sctx)
            if every is not None and (not is_int(every) or every < 1):
                raise BadInput("%s: send step: every must be an integer >= 1" % sctx)
        elif kind == "call":
            proc("call")
            proc("to", server=True)
            t = step.get("timeout")
            if not (t == "infinity" or (is_int(t) and t >= 0)):
                raise BadInput("%s: call step needs timeout: MS or infinity" % sctx)
        elif kind == "register_global":
            name = step["register_global"]
            if not isinstance(name, str) or not NAME_RE.match(name):
                raise BadInput("%s: register_global step: bad name %r ([a-z][a-z0-9_]*)" % (sctx, name))
            proc("by")


def load_cases(path):
    if yaml is None:
        raise BadInput("python3-yaml is missing: run with Debian's /usr/bin/python3 (apt-get install python3-yaml)")
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=_yaml_loader())
    except OSError as e:
        raise BadInput("%s: cannot read: %s" % (path, e.strerror))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        pos = "%s:%d:%d" % (path, mark.line + 1, mark.column + 1) if mark else path
        raise BadInput("%s: malformed YAML: %s" % (pos, getattr(e, "problem", e)))
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise BadInput("%s: expected a map with a 'cases' list" % path)
    extra = set(doc) - {"cases"}
    if extra:
        raise BadInput("%s: unknown top-level key(s) %s" % (where(path, doc), ", ".join(sorted(extra))))
    seen = set()
    for case in doc["cases"]:
        validate_case(path, case, seen)
    return doc["cases"]


def node_addr(case, node):
    return "127.0.0.%d" % (2 + case["nodes"].index(node))


def full_name(case, node):
    return "%s@%s" % (node, node_addr(case, node))


def proc_node(case, name):
    return next(p["node"] for p in case.get("procs") or [] if p["name"] == name)


def global_names(case):
    return sorted({s["register_global"] for s in case["steps"] if "register_global" in s})


# ---------------------------------------------------------------------------------------------
# Erlang terms for the nodes' commands


class Atom(str):
    pass


def erl(v):
    if isinstance(v, Atom):
        return "'%s'" % v.replace("\\", "\\\\").replace("'", "\\'")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return "<<\"%s\">>" % v.replace("\\", "\\\\").replace('"', '\\"')
    if isinstance(v, tuple):
        return "{%s}" % ",".join(erl(x) for x in v)
    if isinstance(v, list):
        return "[%s]" % ",".join(erl(x) for x in v)
    raise TypeError(v)


def node_step(case, i, step):
    """(acting node, Erlang step term) of a step the nodes run; None for cut/heal."""
    kind = step_kind(step)
    A = Atom
    if kind in ("link", "monitor"):
        return proc_node(case, step[kind]), (A(kind), A(step[kind]), A(step["to"]))
    if kind == "send":
        to = step["to"]
        return proc_node(case, step["send"]), (A("send"), A(step["send"]), A(to),
                                               A(full_name(case, proc_node(case, to))),
                                               int(step.get("every") or 0), int(step["count"]))
    if kind == "call":
        to = step["to"]
        t = A("infinity") if step["timeout"] == "infinity" else int(step["timeout"])
        return proc_node(case, step["call"]), (A("call"), A(step["call"]), A(to),
                                               A(full_name(case, proc_node(case, to))), t)
    if kind == "register_global":
        return proc_node(case, step["by"]), (A("register_global"), A(step["register_global"]),
                                             A(step["by"]))
    return None


# ---------------------------------------------------------------------------------------------
# processes: every one the recorder starts is registered here, and killed on every exit path


_live = {}
_live_lock = threading.Lock()
STOP = threading.Event()


def spawn(argv, **kw):
    """Starts argv in a new session (its own process group), dying with the thread that started
    it (setpriv --pdeathsig KILL: also when the recorder is SIGKILLed)."""
    p = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", "--"] + argv, start_new_session=True,
                         close_fds=True, **kw)
    with _live_lock:
        _live[p.pid] = p
    return p


def kill(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        pass
    with _live_lock:
        _live.pop(p.pid, None)


def kill_all():
    with _live_lock:
        procs = list(_live.values())
    for p in procs:
        kill(p)


def now_us():
    return time.time_ns() // 1000


def sleep_until(t_us):
    """Sleeps until the wall clock reaches t_us (the last 2 ms spinning); stops on STOP."""
    while True:
        d = t_us - now_us()
        if d <= 0:
            return
        if STOP.is_set():
            raise CaseFailed("interrupted")
        if d > 2500:
            time.sleep(min((d - 2000) / 1e6, 0.05))
        else:
            time.sleep(0)


# ---------------------------------------------------------------------------------------------
# network namespaces


def netns_inode(path="/proc/self/ns/net"):
    return str(os.stat(path).st_ino)


def in_private_netns():
    """True only after enter_netns: the namespace differs from the one the recorder started in."""
    host, _, pid = os.environ.get(NETNS_ENV, "").partition(":")
    return host.isdigit() and pid == str(os.getpid()) and host != netns_inode()


def host_netns():
    return os.environ.get(NETNS_ENV, "").partition(":")[0]


def enter_run_netns():
    """Moves the calling thread (only it) into a new, empty network namespace; the processes it
    starts from then on live there. Refuses unless that namespace is neither the host's nor the
    recorder's and holds only lo."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        raise CaseFailed("unshare(CLONE_NEWNET) failed: %s" % os.strerror(ctypes.get_errno()))
    mine = netns_inode("/proc/thread-self/ns/net")
    if mine in (host_netns(), netns_inode()):
        raise CaseFailed("refusing: the run's network namespace is not a new one")
    links = subprocess.run(["ip", "-o", "link", "show"], stdout=subprocess.PIPE, text=True).stdout
    names = [ln.split(":")[1].strip() for ln in links.splitlines() if ":" in ln]
    if names != ["lo"]:
        raise CaseFailed("refusing: the run's namespace has interfaces %s, not only lo" % ", ".join(names))
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    return mine


def nft(script):
    p = subprocess.run(["nft", "-f", "-"], input=script, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise CaseFailed("nft failed: %s" % p.stdout.strip())


# ---------------------------------------------------------------------------------------------
# one run of a case


class Node:
    """One Erlang node: its process, and a thread reading its output. Replies to commands (and
    errors, and the end of its output) go to `ctl`; everything else to the run's inbox."""

    CONTROL = ("ready", "reply", "error", "eof")

    def __init__(self, run, short, proc):
        self.run = run
        self.short = short
        self.proc = proc
        self.ctl = queue.Queue()
        self.other = []  # stdout lines that are not LIC lines (there should be none)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.startswith("LIC "):
                try:
                    obj = json.loads(line[4:])
                except ValueError:
                    self.other.append(line)
                    continue
                if obj.get("ev") in self.CONTROL:
                    self.ctl.put(obj)
                else:
                    self.run.inbox.put((self.short, obj))
            elif line:
                self.other.append(line)
        self.ctl.put({"ev": "eof"})

    def send(self, term_text):
        try:
            self.proc.stdin.write((term_text + ".\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise CaseFailed("node %s: its input is closed (the node is gone)" % self.short)


class Run:
    def __init__(self, case, index, beam_dir, tmp):
        self.case = case
        self.index = index
        self.beam_dir = beam_dir
        self.tmp = tmp
        self.inbox = queue.Queue()
        self.nodes = {}
        self.epmd = None
        self.raw_events = []
        self.step_times = {}
        self.info = {}
        self.step_sent = {}
        self.ready_us = {}
        # Pauses drawn from a generator seeded by the case and run: a fresh recording's runs
        # start their nodes at the same tick phases as the committed runs (up to jitter).
        self.rng = random.Random("%s/%d" % (case["id"], index))
        self.tick_us = case.get("ticktime", 60) * 1_000_000 / 4

    # -- setup --------------------------------------------------------------------------------

    def start_epmd(self):
        self.epmd = spawn(["epmd"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, env=self.env())
        deadline = time.monotonic() + 5
        while True:
            with socket.socket() as s:
                try:
                    s.connect(("127.0.0.1", 4369))
                    return
                except OSError:
                    pass
            if time.monotonic() > deadline or self.epmd.poll() is not None:
                raise CaseFailed("epmd did not start listening on 4369")
            time.sleep(0.02)

    @staticmethod
    def env():
        keep = ("PATH", "HOME", "LANG", "TMPDIR")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        env.setdefault("HOME", "/root")
        return env

    def erl_argv(self, short):
        case = self.case
        addr = node_addr(case, short)
        tup = "{%s}" % addr.replace(".", ",")
        argv = ["erl", "-noshell", "-name", full_name(case, short), "-setcookie", COOKIE,
                "-start_epmd", "false",
                "-kernel", "inet_dist_use_interface", tup,
                "-kernel", "inet_dist_connect_options", "[{ip,%s}]" % tup,
                "-kernel", "net_ticktime", str(case.get("ticktime", 60)),
                "-kernel", "logger", "[{handler,default,logger_std_h,#{config=>#{type=>standard_error},"
                "formatter=>{logger_formatter,#{single_line=>true}}}}]",
                "+sbwt", "none", "+sbwtdcpu", "none", "+sbwtdio", "none",
                "-pa", self.beam_dir, "-eval", "lic_dist_node:start()"]
        if "setuptime" in case:
            argv[argv.index("-pa"):argv.index("-pa")] = ["-kernel", "net_setuptime", str(case["setuptime"])]
        return argv

    def start_nodes(self):
        """Starts the nodes one after another, each after a random pause of up to one tick
        interval (ticktime/4): each node's net_kernel ticker starts with the node, so the nodes'
        tick phases differ, as they do between machines started at different times."""
        for short in self.case["nodes"]:
            self.pause(self.rng.uniform(0, self.tick_us))
            err = open(os.path.join(self.tmp, "%s.run%d.%s.stderr" % (self.case["id"], self.index, short)), "wb")
            try:
                p = spawn(self.erl_argv(short), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=err, env=self.env(), cwd=self.tmp)
            finally:
                err.close()
            self.nodes[short] = Node(self, short, p)
        for short in self.case["nodes"]:
            ready = self.wait_for(short, lambda o: o.get("ev") == "ready", "start")
            self.info = {"otp_release": ready.get("otp_release"), "otp_version": ready.get("otp_version"),
                         "erts": ready.get("erts")}
            self.ready_us[short] = ready["t_us"]

    def pause(self, us):
        sleep_until(now_us() + int(us))

    def wait_for(self, short, pred, what, timeout=SETUP_TIMEOUT):
        """The next control line of node `short`; it must match pred."""
        deadline = time.monotonic() + timeout
        node = self.nodes[short]
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or STOP.is_set():
                raise CaseFailed("node %s: no answer to %s within %.0fs%s"
                                 % (short, what, timeout, self.stderr_tail(short)))
            try:
                obj = node.ctl.get(timeout=min(left, 0.2))
            except queue.Empty:
                continue
            if obj.get("ev") == "error":
                raise CaseFailed("node %s: %s %s" % (short, obj.get("what"), obj.get("raw")))
            if obj.get("ev") == "eof":
                raise CaseFailed("node %s ended%s" % (short, self.stderr_tail(short)))
            if pred(obj):
                return obj
            raise CaseFailed("node %s: expected the answer to %s, got %s" % (short, what, obj))

    def stderr_tail(self, short):
        path = os.path.join(self.tmp, "%s.run%d.%s.stderr" % (self.case["id"], self.index, short))
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return (": " + text[-600:]) if text else ""

    def command(self, short, term_text, cmd, timeout=SETUP_TIMEOUT):
        self.nodes[short].send(term_text)
        r = self.wait_for(short, lambda o: o.get("ev") == "reply" and o.get("cmd") == cmd, cmd, timeout)
        if not r.get("ok"):
            raise CaseFailed("node %s: %s failed: %s" % (short, cmd, r.get("raw")))
        return r

    def all_nodes(self, term_text, cmd, timeout=SETUP_TIMEOUT):
        for short in self.nodes:
            self.nodes[short].send(term_text)
        return {short: self.command_reply(short, cmd, timeout) for short in self.nodes}

    def command_reply(self, short, cmd, timeout):
        r = self.wait_for(short, lambda o: o.get("ev") == "reply" and o.get("cmd") == cmd, cmd, timeout)
        if not r.get("ok"):
            raise CaseFailed("node %s: %s failed: %s" % (short, cmd, r.get("raw")))
        return r

    def setup(self):
        case = self.case
        nft("add table inet %s\n"
            "add chain inet %s input { type filter hook input priority 0; policy accept; }"
            % (NFT_TABLE, NFT_TABLE))
        self.start_epmd()
        self.start_nodes()
        names = [(Atom(full_name(case, n)), n) for n in case["nodes"]]
        self.all_nodes("{names,%s}" % erl(names), "names")
        for short in case["nodes"]:
            others = [Atom(full_name(case, n)) for n in case["nodes"] if n != short]
            self.command(short, "{connect,%s}" % erl(others), "connect")
        for short in case["nodes"]:
            self.nodes[short].send("{wait_mesh,%s,10000}" % erl(
                [Atom(full_name(case, n)) for n in case["nodes"] if n != short]))
        for short in case["nodes"]:
            self.command_reply(short, "wait_mesh", SETUP_TIMEOUT)
        procs = case.get("procs") or []
        for short in case["nodes"]:
            mine = [(Atom(p["name"]), Atom("server" if p.get("server") else "proc"))
                    for p in procs if p["node"] == short]
            self.command(short, "{procs,%s}" % erl(mine), "procs")
        every = [(Atom(p["name"]), Atom(full_name(case, p["node"]))) for p in procs]
        self.all_nodes("{resolve,%s}" % erl(every), "resolve")

    # -- the case ----------------------------------------------------------------------------

    def net_step(self, i, step, t0):
        """A cut or heal at its time. Rules are only ever inserted at the top of the chain, where
        the first match decides: a cut inserts drop rules, a heal accept rules for both directions
        (removing nftables rules makes nft return some 7 ms later than adding them). nft is
        started 100 ms early and waits on its input; at the step's time the rules are written
        (one transaction) and its input closed. The step's time `t` is when nft has returned (the
        rules applied), `sent` when they were written."""
        kind = step_kind(step)
        x, y = step[kind]
        ax, ay = node_addr(self.case, x), node_addr(self.case, y)
        oneway = bool(step.get("oneway"))
        verdict = "drop" if kind == "cut" else "accept"
        pairs = [(ax, ay)] if oneway else [(ax, ay), (ay, ax)]
        script = "".join("insert rule inet %s input ip saddr %s ip daddr %s %s\n"
                         % (NFT_TABLE, src, dst, verdict) for src, dst in pairs).encode()
        sleep_until(t0 + step["at"] * 1000 - 100_000)
        p = spawn(["nft", "-f", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                  stderr=subprocess.STDOUT)
        try:
            sleep_until(t0 + step["at"] * 1000)
            sent = now_us()
            out, _ = p.communicate(script, timeout=10)
        except subprocess.TimeoutExpired:
            raise CaseFailed("nft did not return within 10 s")
        finally:
            kill(p)
        t = now_us()
        if p.returncode != 0:
            raise CaseFailed("nft failed: %s" % out.decode("utf-8", "replace").strip())
        self.step_times[i] = t
        self.step_sent[i] = sent
        self.raw_events.append((None, {"t_us": t, "ev": kind, "nodes": [x, y], "oneway": oneway}))

    def execute(self):
        case = self.case
        self.setup()
        per_node = {n: [] for n in case["nodes"]}
        net_steps = []
        for i, step in enumerate(case["steps"]):
            ns = node_step(case, i, step)
            if ns is None:
                net_steps.append((i, step))
            else:
                per_node[ns[0]].append((i, step["at"], ns[1]))
        # t=0 two tick intervals after the last setup traffic (by then each side has ticked: a
        # node that wrote data skips its next tick, so a younger connection's last read can be a
        # tick interval older than in the steady state), plus a random part of one tick interval:
        # the tick phases against the steps.
        t0 = now_us() + max(LEAD_MS * 1000, int(2 * self.tick_us)) + int(self.rng.uniform(0, self.tick_us))
        for short, steps in per_node.items():
            self.nodes[short].send("{schedule,%d,%s}" % (t0, erl(steps)))
        for short in per_node:
            r = self.command_reply(short, "schedule", SETUP_TIMEOUT)
            if r.get("lead_us", 0) < 50_000:
                raise CaseFailed("node %s got its schedule only %d us before t=0" % (short, r.get("lead_us", 0)))
        for i, step in net_steps:
            self.net_step(i, step, t0)
        sleep_until(t0 + case["end"] * 1000)
        names = erl([Atom(n) for n in global_names(case)])
        for short in self.nodes:
            self.nodes[short].send("{finish,%s}" % names)
        for short in self.nodes:
            self.command_reply(short, "finish", 10.0)
        # Everything the nodes wrote before their answer to finish.
        while True:
            try:
                self.raw_events.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        return self.result(t0)

    def result(self, t0):
        case = self.case
        end_ms = case["end"]
        events = []
        for node, obj in self.raw_events:
            ev = obj.get("ev")
            if ev == "error":
                raise CaseFailed("node %s: %s %s" % (node, obj.get("what"), obj.get("raw")))
            if ev == "step":
                self.step_times[obj["i"]] = obj["t_us"]
                continue
            if ev == "other_msg":
                raise CaseFailed("proc %s received an unexpected message %s" % (obj.get("p"), obj.get("raw")))
            if ev not in EVENT_KINDS:
                continue
            t = round((obj["t_us"] - t0) / 1000.0, 1)
            if t < 0 or (t >= end_ms and ev != "global"):
                continue
            e = {"t": t, "ev": ev}
            for k, v in obj.items():
                if k in ("t_us", "ev"):
                    continue
                if k == "elapsed_us":
                    e["elapsed"] = round(v / 1000.0, 1)
                else:
                    e[k] = v
            events.append(e)
        order = {k: n for n, k in enumerate(EVENT_KINDS)}
        events.sort(key=lambda e: (e["t"], order[e["ev"]]))
        steps = []
        worst = 0.0
        for i, step in enumerate(case["steps"]):
            if i not in self.step_times:
                raise CaseFailed("step %d (%s at %d) never fired" % (i, step_kind(step), step["at"]))
            t = round((self.step_times[i] - t0) / 1000.0, 1)
            entry = {"i": i, "at": step["at"], "t": t}
            if i in self.step_sent:
                entry["sent"] = round((self.step_sent[i] - t0) / 1000.0, 1)
            steps.append(entry)
            worst = max(worst, t - step["at"])
        for short, n in self.nodes.items():
            while not n.ctl.empty():
                obj = n.ctl.get_nowait()
                raise CaseFailed("node %s: unexpected %s" % (short, obj))
            if n.other:
                raise CaseFailed("node %s wrote unexpected output: %s" % (short, n.other[:3]))
        ready = {n: round((t - t0) / 1000.0, 1) for n, t in self.ready_us.items()}
        return {"ready": ready, "steps": steps, "max_step_late_ms": round(worst, 1), "events": events}

    def stop(self):
        for n in self.nodes.values():
            try:
                n.proc.stdin.write(b"halt.\n")
                n.proc.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
        deadline = time.monotonic() + 2
        for n in self.nodes.values():
            try:
                n.proc.wait(max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                pass
            kill(n.proc)  # the node's group: erl_child_setup and anything else it started
        if self.epmd is not None:
            kill(self.epmd)


def run_once(case, index, beam_dir, tmp, logs):
    """One run in the calling thread: a fresh namespace, epmd and nodes; always cleaned up."""
    enter_run_netns()
    run = Run(case, index, beam_dir, tmp)
    try:
        return run.execute(), run.info
    finally:
        run.stop()
        if logs:
            for short in run.nodes:
                name = "%s.run%d.%s" % (case["id"], index + 1, short)
                src = os.path.join(tmp, "%s.run%d.%s.stderr" % (case["id"], index, short))
                if os.path.exists(src):
                    shutil.copyfile(src, os.path.join(logs, name + ".log"))


# ---------------------------------------------------------------------------------------------
# main


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="record.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.yaml"))
    ap.add_argument("--out", default=os.path.join(HERE, "recordings"))
    ap.add_argument("--list", action="store_true", help="list the case ids and exit")
    ap.add_argument("--repeat", type=int, default=None, help="runs per case (default: the case's repeat)")
    ap.add_argument("--all", action="store_true", help="also the cases marked slow: true")
    ap.add_argument("--jobs", type=int, default=3,
                    help="runs at once, each in its own namespace (default 3)")
    ap.add_argument("--logs", default=None, metavar="DIR",
                    help="keep each node's standard error (its logger) as DIR/<id>.run<k>.<node>.log")
    ap.add_argument("ids", nargs="*", metavar="CASE_ID")

    def error(message):
        raise BadInput("record.py: %s (see --help)" % message)

    ap.error = error
    return ap.parse_intermixed_args(argv)


def check_environment(args, cases):
    ids = [c["id"] for c in cases]
    unknown = [i for i in args.ids if i not in ids]
    if unknown:
        raise BadInput("unknown case id(s): %s (record.py --list shows them)" % ", ".join(unknown))
    if args.repeat is not None and args.repeat < 1:
        raise BadInput("--repeat %d: at least 1" % args.repeat)
    if not 1 <= args.jobs <= 16:
        raise BadInput("--jobs %d: 1 to 16" % args.jobs)
    for tool in ("erl", "erlc", "epmd"):
        if shutil.which(tool) is None:
            raise BadInput("no Erlang found: '%s' is missing (apt-get install erlang-base)" % tool)
    if args.ids:
        chosen = [c for c in cases if c["id"] in args.ids]
    else:
        chosen = [c for c in cases if args.all or not c.get("slow")]
    if os.geteuid() == 0:
        for tool in ("unshare", "nft", "ip", "setpriv"):
            if shutil.which(tool) is None:
                raise BadInput("root run needs '%s' (util-linux, nftables, iproute2)" % tool)
    return chosen


def netns_problem():
    """None when the cases can run (root, and a network namespace can be made), else why not."""
    if os.geteuid() != 0:
        return "needs root for a private network namespace"
    p = subprocess.run(["unshare", "-n", "--", "true"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        return "cannot create a private network namespace (unshare -n: %s)" % p.stdout.strip()
    return None


def enter_netns(argv):
    """As root and not yet inside: re-exec in a private network namespace (same pid)."""
    env = dict(os.environ, **{NETNS_ENV: "%s:%d" % (netns_inode(), os.getpid())})
    os.execve(shutil.which("unshare"), ["unshare", "-n", "--", "/usr/bin/python3",
                                        os.path.abspath(__file__)] + argv, env)


def write_recording(out, case, runs, info):
    rec = {"id": case["id"], "otp_release": info.get("otp_release"),
           "otp_version": info.get("otp_version"), "erts": info.get("erts"),
           "kernel": platform.release(), "ticktime": case.get("ticktime", 60),
           "setuptime": case.get("setuptime"),
           "recorded_at": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
           "nodes": {n: full_name(case, n) for n in case["nodes"]},
           "case": plain(case),
           "max_step_late_ms": max(r["max_step_late_ms"] for r in runs)}
    lines = ["{"]
    for k, v in rec.items():
        lines.append("  %s: %s," % (json.dumps(k), json.dumps(v)))
    lines.append('  "runs": [')
    for n, r in enumerate(runs):
        lines.append('    {"ready": %s, "max_step_late_ms": %s,' % (json.dumps(r["ready"]), json.dumps(r["max_step_late_ms"])))
        lines.append('     "steps": %s, "events": [' % json.dumps(r["steps"]))
        ev = r["events"]
        for m, e in enumerate(ev):
            lines.append("      %s%s" % (json.dumps(e), "," if m + 1 < len(ev) else ""))
        lines.append("    ]}%s" % ("," if n + 1 < len(runs) else ""))
    lines.append("  ]")
    lines.append("}")
    path = os.path.join(out, case["id"] + ".json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def summary_of(case, runs):
    """One line: every event key but recv with its times over the runs; recv counts."""
    keys = {}
    recv = {}
    for r in runs:
        for e in r["events"]:
            if e["ev"] == "recv":
                recv.setdefault((e["p"], e["from"]), []).append(1)
                continue
            if e["ev"] in ("cut", "heal"):
                continue
            label = {"nodedown": lambda: "nodedown %s/%s %s" % (e["node"], e["peer"], e["reason"]),
                     "nodeup": lambda: "nodeup %s/%s" % (e["node"], e["peer"]),
                     "exit": lambda: "exit %s<-%s %s" % (e["p"], e["from"], e["reason"]),
                     "down": lambda: "down %s(%s) %s" % (e["p"], e["of"], e["reason"]),
                     "call": lambda: "call %s->%s %s" % (e["p"], e["to"], e["result"]),
                     "global_register": lambda: "register %s %s %s" % (e["p"], e["name"], e["result"]),
                     "global": lambda: "global %s:%s=%s" % (e["node"], e["name"], e["owner"]),
                     "proc_down": lambda: "proc_down %s %s" % (e["p"], e["reason"]),
                     "send_blocked": lambda: "send_blocked %s" % e["p"]}[e["ev"]]()
            keys.setdefault(label, []).append(e["t"])
    parts = []
    for label, ts in keys.items():
        parts.append("%s %s@%.0f..%.0f" % (label, "x%d " % len(ts) if len(ts) != len(runs) else "",
                                           min(ts), max(ts)))
    for (p, f), n in recv.items():
        parts.append("recv %s<-%s %d/run" % (p, f, len(n) // max(len(runs), 1)))
    return "; ".join(parts)


def spawn_watchdog(tmp):
    """A process that removes the temporary folder if the recorder dies without doing it
    (SIGKILL): it waits on a pipe whose only write end the recorder holds. (The nodes, epmd and
    nft die with the recorder by themselves: setpriv --pdeathsig KILL.) Forked before any thread
    starts. Returns the write end: write b"x" and close it when the folder is removed."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        try:
            if not os.read(r, 1):
                shutil.rmtree(tmp, ignore_errors=True)
        finally:
            os._exit(0)
    os.close(r)
    os.set_inheritable(w, False)
    return pid, w


def record_all(args, chosen):
    tmp = tempfile.mkdtemp(prefix="lic-dist-")
    watchdog = [spawn_watchdog(tmp)]

    def cleanup():
        kill_all()
        shutil.rmtree(tmp, ignore_errors=True)
        if watchdog:
            pid, w = watchdog.pop()
            try:
                os.write(w, b"x")
                os.close(w)
                os.waitpid(pid, 0)
            except OSError:
                pass

    atexit.register(cleanup)
    beam_dir = os.path.join(tmp, "ebin")
    os.makedirs(beam_dir)
    p = subprocess.run(["erlc", "-o", beam_dir, NODE_SOURCE], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise BadInput("erlc %s failed: %s" % (NODE_SOURCE, p.stdout.strip()))
    os.makedirs(args.out, exist_ok=True)
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)
    log("record.py: %d case(s), %d run(s) at once, each run in its own network namespace -> %s"
        % (len(chosen), args.jobs, args.out))
    jobs = queue.Queue()
    results = {c["id"]: {} for c in chosen}
    failed = {}
    lock = threading.Lock()
    done_cases = []
    started = time.monotonic()
    case_start = {}
    for c in chosen:
        for k in range(args.repeat or c["repeat"]):
            jobs.put((c, k))
    totals = {c["id"]: args.repeat or c["repeat"] for c in chosen}

    def finish_case(case):
        cid = case["id"]
        runs = [results[cid][k] for k in sorted(results[cid])]
        info = runs[0][1]
        runs = [r for r, _ in runs]
        write_recording(args.out, case, runs, info)
        done_cases.append(cid)
        log("[%d/%d] %s: %d run(s), %.1fs: %s; worst step lateness %.1f ms"
            % (len(done_cases) + len(failed), len(chosen), cid, len(runs),
               time.monotonic() - case_start[cid], summary_of(case, runs),
               max(r["max_step_late_ms"] for r in runs)))

    def worker():
        while not STOP.is_set():
            try:
                case, k = jobs.get_nowait()
            except queue.Empty:
                return
            cid = case["id"]
            with lock:
                if cid in failed:
                    continue
                case_start.setdefault(cid, time.monotonic())
            try:
                r = run_once(case, k, beam_dir, tmp, args.logs)
            except CaseFailed as e:
                with lock:
                    if cid not in failed and not STOP.is_set():
                        failed[cid] = str(e)
                        log("[%d/%d] %s: FAILED (run %d): %s"
                            % (len(done_cases) + len(failed), len(chosen), cid, k + 1, e))
                continue
            except Exception as e:  # noqa: BLE001 - a bug of the recorder: report it as a failure
                with lock:
                    failed.setdefault(cid, "%s: %s" % (type(e).__name__, e))
                    log("%s: FAILED (run %d): %s: %s" % (cid, k + 1, type(e).__name__, e))
                continue
            with lock:
                results[cid][k] = r
                if len(results[cid]) == totals[cid]:
                    finish_case(case)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.jobs)]
    try:
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(0.2)
    finally:
        STOP.set()
        kill_all()
        for t in threads:
            t.join(10)
        cleanup()
    log("record.py: %d recorded, %d failed in %.0fs -> %s"
        % (len(done_cases), len(failed), time.monotonic() - started, args.out))
    return 1 if failed else 0


def main(argv):
    def on_signal(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Interrupted(signal.Signals(signum).name)

    try:
        args = parse_args(argv)
        cases = load_cases(args.cases)
        if args.list:
            for c in cases:
                print("%s%s" % (c["id"], "  (slow)" if c.get("slow") else ""))
            return 0
        chosen = check_environment(args, cases)
        problem = netns_problem()
        if problem is not None:
            for c in chosen:
                log("%s: not run: %s" % (c["id"], problem))
            log("record.py: %d case(s) not run" % len(chosen))
            return 3
        if NETNS_ENV not in os.environ:
            enter_netns(argv)
        if not in_private_netns():
            raise BadInput("%s is set but this is not the private network namespace record.py "
                           "made: refusing (unset it)" % NETNS_ENV)
        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGHUP, on_signal)
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        return record_all(args, chosen)
    except BadInput as e:
        print("record.py: %s" % e if not str(e).startswith("record.py") else str(e), file=sys.stderr)
        return 2
    except Interrupted as e:
        STOP.set()
        kill_all()
        print("record.py: interrupted (%s): every node and epmd stopped" % e, file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
