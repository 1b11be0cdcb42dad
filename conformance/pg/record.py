#!/usr/bin/python3
"""Records conformance/pg/cases.yaml on a real, throwaway PostgreSQL 15 cluster.

Run with Debian's interpreter (/usr/bin/python3) and Debian's python3-psycopg2 / python3-yaml:

    /usr/bin/python3 conformance/pg/record.py [--cases FILE] [--out DIR] [--port N] [--list] [CASE_ID ...]

As root, the recorder re-executes itself inside a private network namespace (`unshare -n`): the
cluster, every client and the nftables rules of `cut:` live there and vanish with it; the host's
network, firewall and sysctls are never touched. Not root: the cluster runs as the current user on
the host's loopback and the `net: true` cases are reported as not run.

Exit codes: 0 every requested case recorded; 1 a case failed (harness error); 2 bad input;
3 some cases not run (net cases without root). docs/conformance-pg.md describes it all.
"""

import argparse
import atexit
import ctypes
import datetime
import json
import multiprocessing
import os
import platform
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the machine
    yaml = None
try:
    import psycopg2
    import psycopg2.extensions
except ImportError:  # pragma: no cover
    psycopg2 = None

HERE = os.path.dirname(os.path.abspath(__file__))
PG_BIN = os.environ.get("LIC_PG_BIN", "/usr/lib/postgresql/15/bin")
NETNS_ENV = "LIC_PG_IN_NETNS"
NFT_TABLE = "lic_pg_cut"
DEFAULT_WITHIN = 10.0
STEP_KINDS = ("sql", "send", "wait", "sleep", "close", "kill", "pause", "resume", "cut", "heal",
              "terminate", "wait_free", "restart", "race", "terminate_then_try")
SESSION_KEYS = ("db", "set", "client")
CASE_KEYS = ("id", "pins", "net", "server", "sessions", "steps")
CLIENT_PARAMS = ("keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
                 "tcp_user_timeout")
SYSCTLS = {"tcp_retries2": "net.ipv4.tcp_retries2"}
# The fence of the simulated pg.server (scenarios/behaviours/pg/server.cpp, `fence: strict`) in
# SQL, for the fence cases: lic_acquire takes the advisory lock and bumps the lock's epoch (the
# fencing token), lic_fenced_write writes only with the latest token while some session holds the
# lock. Emptied before every case (CaseRun.setup).
FENCE_SQL = (
    "CREATE TABLE lic_epoch (lock bigint PRIMARY KEY, token bigint NOT NULL)",
    "CREATE TABLE lic_data (lock bigint NOT NULL, token bigint NOT NULL)",
    # An advisory lock on bigint k, as pg_locks lists it: this database, classid the high 32
    # bits, objid the low 32, objsubid 1; held by `who` (NULL: any session).
    """CREATE FUNCTION lic_held(k bigint, who int) RETURNS boolean LANGUAGE sql AS $$
       SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND classid = ((k >> 32) & 4294967295)::oid AND objid = (k & 4294967295)::oid
         AND objsubid = 1 AND (who IS NULL OR pid = who)) $$""",
    # The epoch moves on a session's first hold only (pg.server's take(): re-entrant, the same token).
    """CREATE FUNCTION lic_acquire(k bigint) RETURNS bigint LANGUAGE plpgsql AS $$
       DECLARE again boolean := lic_held(k, pg_backend_pid());
       BEGIN
         IF NOT pg_try_advisory_lock(k) THEN RETURN NULL; END IF;
         IF NOT again THEN
           INSERT INTO lic_epoch VALUES (k, 1) ON CONFLICT (lock) DO UPDATE SET token = lic_epoch.token + 1;
         END IF;
         RETURN (SELECT token FROM lic_epoch WHERE lock = k);
       END $$""",
    """CREATE FUNCTION lic_fenced_write(k bigint, t bigint) RETURNS boolean LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO lic_data SELECT k, t
           WHERE t = (SELECT token FROM lic_epoch WHERE lock = k) AND lic_held(k, NULL);
         RETURN FOUND;
       END $$""",
)


class BadInput(Exception):
    """Bad input: message printed, exit 2."""


class Interrupted(BaseException):
    """SIGINT / SIGTERM: unwinds through every finally."""


class CaseFailed(Exception):
    """The recorder could not run a case as written (a harness error, not a server answer)."""


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# cases file


def _yaml_loader():
    class Loader(yaml.SafeLoader):
        pass

    class MarkedDict(dict):
        mark = None

    def construct_mapping(loader, node, deep=False):
        d = MarkedDict(yaml.SafeLoader.construct_mapping(loader, node, deep=True))
        d.mark = node.start_mark
        return d

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return Loader


def where(path, obj):
    mark = getattr(obj, "mark", None)
    if mark is None:
        return path
    return "%s:%d:%d" % (path, mark.line + 1, mark.column + 1)


def parse_duration(text, ctx):
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s)\s*", str(text))
    if not m:
        raise BadInput("%s: bad duration '%s' (write 500ms, 2s or 1.5s)" % (ctx, text))
    value = float(m.group(1))
    return value / 1000.0 if m.group(2) == "ms" else value


def validate_step(path, step, sessions):
    ctx = where(path, step)
    if not isinstance(step, dict):
        raise BadInput("%s: a step is a map with one kind key" % ctx)
    kinds = [k for k in step if k in STEP_KINDS]
    if len(kinds) != 1:
        raise BadInput("%s: a step needs exactly one of %s" % (ctx, ", ".join(STEP_KINDS)))
    kind = kinds[0]
    allowed = {"sql": {"s", "within", "timed"}, "send": {"s"}, "wait": {"within", "timed"},
               "sleep": set(), "close": set(), "kill": set(), "pause": set(), "resume": set(),
               "cut": set(), "heal": set(), "terminate": {"timeout_ms", "timed"},
               "wait_free": {"by", "within", "every", "timed"}, "restart": set(),
               "race": {"lock", "rounds"}, "terminate_then_try": {"rounds", "share_within"}}[kind]
    extra = set(step) - allowed - {kind}
    if extra:
        raise BadInput("%s: %s step: unknown key(s) %s" % (ctx, kind, ", ".join(sorted(extra))))
    named = []
    if kind in ("sql", "send"):
        if "s" not in step:
            raise BadInput("%s: %s step needs s: SESSION" % (ctx, kind))
        named.append(step["s"])
        if not isinstance(step[kind], str):
            raise BadInput("%s: %s step: the SQL must be a string" % (ctx, kind))
    elif kind in ("wait", "close", "kill", "pause", "resume", "cut", "heal", "terminate"):
        named.append(step[kind])
    elif kind == "wait_free":
        if "by" not in step or "within" not in step or "every" not in step:
            raise BadInput("%s: wait_free needs by:, within: and every:" % ctx)
        named.append(step["by"])
    elif kind == "race":
        if not isinstance(step["race"], list) or not step["race"] or "lock" not in step:
            raise BadInput("%s: race needs a list of sessions and lock:" % ctx)
        named.extend(step["race"])
    elif kind == "terminate_then_try":
        if not isinstance(step[kind], int) or not isinstance(step.get("rounds"), int) or step["rounds"] < 1:
            raise BadInput("%s: terminate_then_try takes a lock number and rounds: N (at least 1)" % ctx)
        if not isinstance(step.get("share_within"), (int, float)) or not 0 <= step["share_within"] <= 1:
            raise BadInput("%s: terminate_then_try needs share_within: a share from 0 to 1" % ctx)
    elif kind == "restart" and step["restart"] not in ("fast", "immediate"):
        raise BadInput("%s: restart takes fast or immediate" % ctx)
    for s in named:
        if s not in sessions:
            raise BadInput("%s: %s step names unknown session '%s'" % (ctx, kind, s))
    for key in ("within", "every"):
        if key in step:
            parse_duration(step[key], ctx)
    if kind == "sleep":
        parse_duration(step["sleep"], ctx)


def load_cases(path):
    if yaml is None:
        raise BadInput("python3-yaml is missing: run with Debian's /usr/bin/python3 "
                       "(tools/setup.sh --pg installs it)")
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
    seen = set()
    for case in doc["cases"]:
        ctx = where(path, case)
        if not isinstance(case, dict) or not isinstance(case.get("id"), str):
            raise BadInput("%s: a case needs an id" % ctx)
        extra = set(case) - set(CASE_KEYS)
        if extra:
            raise BadInput("%s: case %s: unknown key(s) %s" % (ctx, case["id"], ", ".join(sorted(extra))))
        if case["id"] in seen:
            raise BadInput("%s: duplicate case id '%s'" % (ctx, case["id"]))
        seen.add(case["id"])
        sessions = case.get("sessions") or {}
        if not isinstance(sessions, dict):
            raise BadInput("%s: case %s: sessions must be a map" % (ctx, case["id"]))
        for name, opts in sessions.items():
            if not isinstance(opts, dict) or set(opts) - set(SESSION_KEYS):
                raise BadInput("%s: case %s: session %s: options are %s" %
                               (where(path, opts), case["id"], name, ", ".join(SESSION_KEYS)))
            for p in (opts.get("client") or {}):
                if p not in CLIENT_PARAMS:
                    raise BadInput("%s: session %s: unknown client parameter '%s'" %
                                   (where(path, opts), name, p))
        if not isinstance(case.get("steps"), list) or not case["steps"]:
            raise BadInput("%s: case %s needs steps" % (ctx, case["id"]))
        for step in case["steps"]:
            validate_step(path, step, sessions)
    return doc["cases"]


# ---------------------------------------------------------------------------------------------
# one client session = one OS process, driven over a pipe


def _raw_casts(conn):
    # Text as the server sends it (t/f, digits), never Python's True/1.
    oids = (16, 20, 21, 23, 25, 26, 700, 701, 1043, 1700, 2278, 1082, 1114, 1184, 19, 18)
    raw = psycopg2.extensions.new_type(oids, "LIC_RAW", lambda value, cur: value)
    psycopg2.extensions.register_type(raw, conn)


def _poll(conn, deadline):
    """Drives an async psycopg2 connection to POLL_OK; False when the deadline passed first."""
    while True:
        state = conn.poll()
        if state == psycopg2.extensions.POLL_OK:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        fd = conn.fileno()
        if state == psycopg2.extensions.POLL_READ:
            select.select([fd], [], [], remaining)
        elif state == psycopg2.extensions.POLL_WRITE:
            select.select([], [fd], [], remaining)


def _error_result(e):
    text = (getattr(e, "pgerror", None) or str(e) or type(e).__name__).strip()
    first = text.splitlines()[0].strip() if text else ""
    first = re.sub(r"^(FATAL|ERROR|PANIC):\s+", "", first)
    pgcode = getattr(e, "pgcode", None)
    if pgcode:
        return {"error_class": pgcode, "error": first}
    if isinstance(e, (psycopg2.OperationalError, psycopg2.InterfaceError, psycopg2.DatabaseError)):
        return {"error_class": "connection_lost", "error": first}
    return {"error_class": "client_error", "error": first}


class _Worker:
    def __init__(self, pipe):
        self.pipe = pipe
        self.conn = None
        self.cur = None
        self.sent_at = None

    def notices(self):
        if self.conn is None:
            return []
        out = [n.strip().splitlines()[0] for n in self.conn.notices if n.strip()]
        del self.conn.notices[:]
        return out

    def connect(self, dsn, within):
        try:
            self.conn = psycopg2.connect(dsn, async_=1)
            if not _poll(self.conn, time.monotonic() + within):
                return {"error_class": "connect_failed", "error": "no answer within %.1fs" % within}
        except psycopg2.Error as e:
            return {"error_class": "connect_failed", "error": _error_result(e)["error"]}
        _raw_casts(self.conn)
        s = socket.fromfd(self.conn.fileno(), socket.AF_INET, socket.SOCK_STREAM)
        port = s.getsockname()[1]
        s.close()
        return {"ok": True, "backend_pid": self.conn.get_backend_pid(), "port": port}

    def send(self, sql):
        self.sent_at = time.monotonic()
        try:
            if self.conn.closed:
                raise psycopg2.InterfaceError("connection already closed")
            self.cur = self.conn.cursor()
            self.cur.execute(sql)
        except psycopg2.Error as e:
            self.cur = None
            return dict(_error_result(e), notices=self.notices())
        return {"ok": True}

    def wait(self, within):
        if self.sent_at is None:
            return {"error_class": "client_error", "error": "nothing pending"}
        deadline = time.monotonic() + within
        try:
            if self.cur is None:
                raise psycopg2.InterfaceError("connection already closed")
            if not _poll(self.conn, deadline):
                return {"error_class": "no_answer", "error": "no answer within %gs" % within,
                        "notices": self.notices(), "pending": True}
            value = None
            if self.cur.description is not None:
                row = self.cur.fetchone()
                value = None if row is None else row[0]
            result = {"value": value}
        except psycopg2.Error as e:
            result = _error_result(e)
        result["elapsed_ms"] = round((time.monotonic() - self.sent_at) * 1000.0, 1)
        result["notices"] = self.notices()
        self.sent_at = None
        self.cur = None
        return result

    def close(self):
        if self.conn is not None and not self.conn.closed:
            self.conn.close()  # PQfinish: Terminate message, then FIN
        return {"ok": True}

    def serve(self):
        while True:
            try:
                seq, *cmd = self.pipe.recv()
            except EOFError:
                return
            op = cmd[0]
            if op == "connect":
                reply = self.connect(cmd[1], cmd[2])
            elif op == "send":
                reply = self.send(cmd[1])
            elif op == "wait":
                reply = self.wait(cmd[1])
            elif op == "sql":
                reply = self.send(cmd[1])
                if "error_class" not in reply:
                    reply = self.wait(cmd[2])
            elif op == "close":
                self.pipe.send(dict(self.close(), seq=seq))
                return
            else:
                reply = {"error_class": "client_error", "error": "unknown op %s" % op}
            self.pipe.send(dict(reply, seq=seq))


def _worker_main(pipe):
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the recorder handles Ctrl-C and kills us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:  # die with the recorder, even if it is SIGKILLed
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    _Worker(pipe).serve()


class Session:
    """The recorder's handle on one client process."""

    def __init__(self, name, opts):
        self.name = name
        self.opts = opts
        ctx = multiprocessing.get_context("fork")
        self.pipe, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.backend_pid = None
        self.port = None
        self.dead = False
        self.paused = False
        self.pending = False
        self.seq = 0

    def post(self, cmd):
        self.seq += 1
        self.pipe.send((self.seq,) + tuple(cmd))

    def reply(self, within):
        """The reply to the last command posted; late replies to earlier ones are dropped."""
        deadline = time.monotonic() + within + 1.0
        try:
            while True:
                if not self.pipe.poll(max(deadline - time.monotonic(), 0)):
                    return {"error_class": "no_answer", "notices": [],
                            "error": "client process gave no answer within %gs" % within}
                r = self.pipe.recv()
                if r.pop("seq", None) == self.seq:
                    return r
        except (EOFError, BrokenPipeError, ConnectionResetError):
            return {"error_class": "connection_lost", "error": "client process is gone"}

    def call(self, cmd, within):
        """Sends a command; no reply within `within` (+1 s margin) is no_answer."""
        if self.dead:
            return {"error_class": "connection_lost", "error": "client process was killed"}
        try:
            self.post(cmd)
        except (BrokenPipeError, ConnectionResetError):
            return {"error_class": "connection_lost", "error": "client process is gone"}
        return self.reply(within)

    def kill(self):
        if self.proc.is_alive():
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.join(5)
        self.dead = True

    def signal(self, sig):
        os.kill(self.proc.pid, sig)

    def finish(self):
        if self.dead:
            return
        if self.paused:
            self.signal(signal.SIGCONT)
            self.paused = False
        self.call(("close",), 3.0)
        self.kill()


# ---------------------------------------------------------------------------------------------
# the throwaway cluster


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_taken(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


class Cluster:
    def __init__(self, port):
        self.port = port
        self.root = None
        self.started = False
        self.as_root = os.geteuid() == 0
        self.watchdog = None  # (pid, write end of its pipe)

    @property
    def data(self):
        return os.path.join(self.root, "data")

    @property
    def logfile(self):
        return os.path.join(self.root, "server.log")

    def run_pg(self, args, check=True, timeout=120):
        cmd = [os.path.join(PG_BIN, args[0])] + args[1:]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, cwd=self.root, start_new_session=True)
        if check and p.returncode != 0:
            raise CaseFailed("%s failed (exit %d): %s" % (args[0], p.returncode, p.stdout.strip()[-800:]))
        return p

    def start(self):
        self.root = tempfile.mkdtemp(prefix="lic-pg-")
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        self._spawn_watchdog()
        self.run_pg(["initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                     "--locale=C", "--no-sync"])
        conf = {
            "listen_addresses": "'127.0.0.1'", "port": str(self.port),
            "unix_socket_directories": "'%s'" % self.root, "logging_collector": "off",
            "log_line_prefix": "'%m [%p] %a: '", "log_connections": "on",
            "log_disconnections": "on", "lc_messages": "'C'", "fsync": "off",
            "synchronous_commit": "off", "full_page_writes": "off", "max_connections": "40",
            "shared_buffers": "16MB", "log_timezone": "'UTC'",
        }
        with open(os.path.join(self.data, "postgresql.conf"), "a", encoding="utf-8") as f:
            f.write("\n# letitcrash conformance/pg/record.py\n")
            for k, v in conf.items():
                f.write("%s = %s\n" % (k, v))
        self.started = True  # from here on, clean-up stops the server
        self.run_pg(["pg_ctl", "-D", self.data, "-l", self.logfile, "-w", "-t", "60", "start"])
        ctl = self.control()
        ctl.autocommit = True
        with ctl.cursor() as c:
            c.execute("CREATE DATABASE d1")
            c.execute("CREATE DATABASE d2")
            for sql in FENCE_SQL:
                c.execute(sql)
            c.execute("SHOW server_version")
            self.version = c.fetchone()[0]
        ctl.close()

    def _spawn_watchdog(self):
        """A process that stops and removes the cluster if the recorder dies without doing it
        (SIGKILL): it waits on a pipe whose only write end the recorder holds."""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(w)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            try:
                told = os.read(r, 1)
                if not told:  # the recorder is gone and did not say it cleaned up
                    self.started = True
                    self.watchdog = None
                    self.stop()
            finally:
                os._exit(0)
        os.close(r)
        os.set_inheritable(w, False)
        self.watchdog = (pid, w)

    def restart(self, mode):
        self.run_pg(["pg_ctl", "-D", self.data, "-l", self.logfile, "-m", mode, "-w", "-t", "60",
                     "restart"])

    def control(self):
        return psycopg2.connect(host=self.root, port=self.port, user="postgres", dbname="postgres",
                                application_name="ctl", connect_timeout=10,
                                options="-c statement_timeout=30s")

    def dsn(self, opts, name):
        params = {"host": "127.0.0.1", "port": str(self.port), "user": "postgres",
                  "dbname": str(opts.get("db", "postgres")), "application_name": name,
                  "connect_timeout": "10"}
        for k, v in (opts.get("client") or {}).items():
            params[k] = str(v)
        sets = opts.get("set") or {}
        if sets:
            params["options"] = " ".join("-c %s=%s" % (k, v) for k, v in sets.items())
        return " ".join("%s='%s'" % (k, v.replace("\\", "\\\\").replace("'", "\\'"))
                        for k, v in params.items())

    def log_size(self):
        try:
            return os.path.getsize(self.logfile)
        except OSError:
            return 0

    def log_since(self, offset):
        try:
            with open(self.logfile, "rb") as f:
                f.seek(offset)
                raw = f.read().decode("utf-8", "replace")
        except OSError:
            return []
        lines = []
        for line in raw.splitlines():
            # "2026-11-26 04:01:06.123 UTC [1234] a: LOG:  ..." -> "a: LOG:  ..."
            line = re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \w+ \[\d+\] ", "", line)
            # What differs between runs and says nothing: the folder, ports and pids.
            line = re.sub(r"\b%d\b" % self.port, "<port>", line.replace(self.root, "<tmp>"))
            line = re.sub(r"port=\d+", "port=<client>", line)
            line = re.sub(r"\bPID \d+", "PID <n>", line)
            lines.append(line)
        return lines

    def stop(self):
        """Stops and removes the cluster; safe to call more than once, on any path."""
        if self.started:
            self.started = False
            try:
                self.run_pg(["pg_ctl", "-D", self.data, "-m", "immediate", "-w", "-t", "30", "stop"],
                            check=False, timeout=60)
            except Exception:  # noqa: BLE001 - fall through to the hard kill
                pass
            self._kill_leftovers()
        if self.root and os.path.isdir(self.root):
            shutil.rmtree(self.root, ignore_errors=True)
        self.root = None
        if self.watchdog is not None:
            pid, w = self.watchdog
            self.watchdog = None
            os.write(w, b"x")
            os.close(w)
            os.waitpid(pid, 0)

    def _kill_leftovers(self):
        pidfile = os.path.join(self.data, "postmaster.pid")
        try:
            with open(pidfile, encoding="utf-8") as f:
                pid = int(f.readline().strip())
        except (OSError, ValueError):
            return
        for p in [pid] + children_of(pid):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass


def children_of(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return out


# ---------------------------------------------------------------------------------------------
# network namespace: cuts and sysctls


def netns_inode():
    return str(os.stat("/proc/self/ns/net").st_ino)


def in_private_netns():
    """True only after enter_netns: the namespace differs from the one the recorder started in."""
    # Set by enter_netns to "<inode of the recorder's first namespace>:<its pid>"; unshare keeps
    # the pid, so a value copied from elsewhere (another pid) never counts.
    host, _, pid = os.environ.get(NETNS_ENV, "").partition(":")
    return host.isdigit() and pid == str(os.getpid()) and host != netns_inode()


class Net:
    """nftables drop rules and sysctls, only ever inside the private namespace."""

    def __init__(self):
        self.enabled = in_private_netns()
        self.cut_ports = set()
        self.sysctl_saved = {}
        if self.enabled:
            # Second guard: the namespace unshare made holds a loopback interface and nothing else.
            links = subprocess.run(["ip", "-o", "link", "show"], stdout=subprocess.PIPE, text=True).stdout
            names = [ln.split(":")[1].strip() for ln in links.splitlines() if ":" in ln]
            if names != ["lo"]:
                raise BadInput("refusing to add nftables rules: this network namespace has "
                               "interfaces %s, not only lo" % ", ".join(names))
            self.nft("add table inet %s\n"
                     "add chain inet %s out { type filter hook output priority 0; policy accept; }"
                     % (NFT_TABLE, NFT_TABLE))

    @staticmethod
    def nft(script):
        p = subprocess.run(["nft", "-f", "-"], input=script, text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise CaseFailed("nft failed: %s" % p.stdout.strip())

    def _apply(self):
        lines = ["flush chain inet %s out" % NFT_TABLE]
        for port in sorted(self.cut_ports):
            lines.append("add rule inet %s out tcp sport %d drop" % (NFT_TABLE, port))
            lines.append("add rule inet %s out tcp dport %d drop" % (NFT_TABLE, port))
        self.nft("\n".join(lines))

    def cut(self, port):
        self.require()
        self.cut_ports.add(port)
        self._apply()

    def heal(self, port):
        self.require()
        self.cut_ports.discard(port)
        self._apply()

    def heal_all(self):
        if self.enabled and self.cut_ports:
            self.cut_ports.clear()
            self._apply()

    def require(self):
        if not self.enabled:
            raise CaseFailed("cut/heal/sysctl need the private network namespace (root)")

    def set_sysctl(self, name, value):
        self.require()
        key = SYSCTLS[name]
        path = "/proc/sys/" + key.replace(".", "/")
        with open(path, encoding="utf-8") as f:
            self.sysctl_saved.setdefault(path, f.read().strip())
        with open(path, "w", encoding="utf-8") as f:
            f.write(str(value))

    def restore_sysctls(self):
        for path, value in self.sysctl_saved.items():
            with open(path, "w", encoding="utf-8") as f:
                f.write(value)
        self.sysctl_saved.clear()


# ---------------------------------------------------------------------------------------------
# running one case


def _line(i, kind, t_ms, **kw):
    rec = {"i": i, "step": kind, "s": None, "sql": None, "value": None, "error_class": None,
           "error": None, "notices": [], "elapsed_ms": None, "t_ms": t_ms, "winners": None}
    if kind == "terminate_then_try":
        rec.update({"held": None, "rounds": None, "free_ms": None})
    for k, v in kw.items():
        if k in rec:
            rec[k] = v
    return rec


class CaseRun:
    def __init__(self, case, cluster, net):
        self.case = case
        self.cluster = cluster
        self.net = net
        self.sessions = {}
        self.ctl = None
        self.t0 = None

    def now_ms(self):
        return round((time.monotonic() - self.t0) * 1000.0, 1)

    def control(self):
        if self.ctl is None or self.ctl.closed:
            self.ctl = self.cluster.control()
            self.ctl.autocommit = True
        return self.ctl

    def ctl_query(self, sql, args=None):
        """The first row, or None for a statement that returns none (ALTER SYSTEM)."""
        try:
            with self.control().cursor() as c:
                c.execute(sql, args)
                return c.fetchone() if c.description else None
        except psycopg2.OperationalError:
            self.ctl = None  # e.g. after a restart: reconnect once
            with self.control().cursor() as c:
                c.execute(sql, args)
                return c.fetchone() if c.description else None

    def setup(self):
        self.ctl_query("TRUNCATE lic_epoch, lic_data")  # every case's fence starts at no token
        server = self.case.get("server") or {}
        for k, v in server.items():
            if k in SYSCTLS:
                self.net.set_sysctl(k, v)
            else:
                self.ctl_query("ALTER SYSTEM SET %s = %%s" % k, (str(v),))
                self.ctl_query("SELECT pg_reload_conf()")
        self.t0 = time.monotonic()
        for name, opts in (self.case.get("sessions") or {}).items():
            sess = Session(name, opts)
            self.sessions[name] = sess
            reply = sess.call(("connect", self.cluster.dsn(opts, name), 10.0), 10.0)
            if not reply.get("ok"):
                raise CaseFailed("session %s could not connect: %s" % (name, reply.get("error")))
            sess.backend_pid = reply["backend_pid"]
            sess.port = reply["port"]

    def teardown(self):
        self.net.heal_all()
        for sess in self.sessions.values():
            try:
                sess.finish()
            except OSError:
                pass
        server = self.case.get("server") or {}
        try:
            if any(k not in SYSCTLS for k in server):
                self.ctl_query("ALTER SYSTEM RESET ALL")
                self.ctl_query("SELECT pg_reload_conf()")
            # No session of this case may outlive it (a cut one the server has not yet noticed).
            self.ctl_query("SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
                           "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
        finally:
            self.net.restore_sysctls()
            if self.ctl is not None:
                self.ctl.close()
                self.ctl = None

    def step_sql(self, i, step, t):
        s = self.sessions[step["s"]]
        within = parse_duration(step.get("within", DEFAULT_WITHIN), "within")
        r = s.call(("sql", step["sql"], within), within)
        s.pending = bool(r.get("pending"))
        return _line(i, "sql", t, s=step["s"], sql=step["sql"], **r)

    def step_send(self, i, step, t):
        s = self.sessions[step["s"]]
        r = s.call(("send", step["send"]), 5.0)
        s.pending = "error_class" not in r
        return _line(i, "send", t, s=step["s"], sql=step["send"], **r)

    def step_wait(self, i, step, t):
        s = self.sessions[step["wait"]]
        within = parse_duration(step["within"], "within")
        r = s.call(("wait", within), within)
        s.pending = bool(r.get("pending"))
        return _line(i, "wait", t, s=step["wait"], **r)

    def step_wait_free(self, i, step, t):
        s = self.sessions[step["by"]]
        within = parse_duration(step["within"], "within")
        every = parse_duration(step["every"], "every")
        start = time.monotonic()
        deadline = start + within
        sql = "SELECT pg_try_advisory_lock(%s)" % step["wait_free"]
        notices = []
        while True:
            left = max(deadline - time.monotonic(), 0.05)
            r = s.call(("sql", sql, left), left)
            notices += r.get("notices") or []
            if r.get("value") == "t":
                return _line(i, "wait_free", t, s=step["by"], sql=sql, value="t", notices=notices,
                             elapsed_ms=round((time.monotonic() - start) * 1000.0, 1))
            if r.get("error_class") and r["error_class"] != "no_answer":
                return _line(i, "wait_free", t, s=step["by"], sql=sql, notices=notices,
                             error_class=r["error_class"], error=r.get("error"),
                             elapsed_ms=round((time.monotonic() - start) * 1000.0, 1))
            if time.monotonic() + every > deadline:
                return _line(i, "wait_free", t, s=step["by"], sql=sql, notices=notices,
                             error_class="not_free",
                             error="lock %s not free within %gs" % (step["wait_free"], within))
            time.sleep(every)

    def step_terminate(self, i, step, t):
        s = self.sessions[step["terminate"]]
        start = time.monotonic()
        if "timeout_ms" in step:
            sql = "SELECT pg_terminate_backend(%d, %d)" % (s.backend_pid, int(step["timeout_ms"]))
        else:
            sql = "SELECT pg_terminate_backend(%d)" % s.backend_pid
        try:
            row = self.ctl_query(sql)
            value = row[0]
            value = {True: "t", False: "f"}.get(value, value)
            extra = {"value": value}
        except psycopg2.Error as e:
            extra = _error_result(e)
        shown = re.sub(r"\(\d+", "(<pid of %s>" % step["terminate"], sql)
        return _line(i, "terminate", t, s=step["terminate"], sql=shown,
                     elapsed_ms=round((time.monotonic() - start) * 1000.0, 1), **extra)

    def step_race(self, i, step, t):
        names = step["race"]
        lock = step["lock"]
        winners = []
        for _ in range(int(step.get("rounds", 1))):
            for n in names:
                self.sessions[n].post(("sql", "SELECT pg_try_advisory_lock(%s)" % lock, 10.0))
            won = []
            for n in names:
                r = self.sessions[n].reply(10.0)
                if r.get("error_class"):
                    raise CaseFailed("race: session %s: %s" % (n, r.get("error")))
                if r.get("value") == "t":
                    won.append(n)
            for n in won:
                r = self.sessions[n].call(("sql", "SELECT pg_advisory_unlock(%s)" % lock, 10.0), 10.0)
                if r.get("value") != "t":
                    raise CaseFailed("race: %s could not unlock: %s" % (n, r))
            winners.append(len(won))
        return _line(i, "race", t, winners=winners)

    def step_terminate_then_try(self, i, step, t):
        lock = int(step["terminate_then_try"])
        rounds = int(step["rounds"])
        try_sql = "SELECT pg_try_advisory_lock(%d)" % lock
        prober = psycopg2.connect(self.cluster.dsn({}, "prober"))
        prober.autocommit = True
        held = 0
        free = []
        try:
            for _ in range(rounds):
                victim = psycopg2.connect(self.cluster.dsn({}, "victim"))
                victim.autocommit = True
                try:
                    with victim.cursor() as c:
                        c.execute("SELECT pg_backend_pid()")
                        pid = c.fetchone()[0]
                        c.execute(try_sql)
                        if not c.fetchone()[0]:
                            raise CaseFailed("terminate_then_try: the victim could not take lock %d" % lock)
                    self.ctl_query("SELECT pg_terminate_backend(%d)" % pid)
                    start = time.monotonic()
                    tries = 0
                    with prober.cursor() as c:
                        while True:
                            c.execute(try_sql)
                            tries += 1
                            if c.fetchone()[0]:
                                break
                            if time.monotonic() - start > 5.0:
                                raise CaseFailed("terminate_then_try: lock %d not free 5 s after the answer" % lock)
                        free.append((time.monotonic() - start) * 1000.0)
                        held += 1 if tries > 1 else 0
                        c.execute("SELECT pg_advisory_unlock(%d)" % lock)
                finally:
                    try:
                        victim.close()
                    except psycopg2.Error:
                        pass
        finally:
            prober.close()
        free.sort()
        at = lambda p: round(free[int(p * (len(free) - 1))], 3)
        return _line(i, "terminate_then_try", t,
                     sql="SELECT pg_terminate_backend(<pid of victim>); " + try_sql,
                     held=held, rounds=rounds, free_ms=[at(0.1), at(0.5), at(0.9), at(1.0)])

    def run_step(self, i, step):
        kind = next(k for k in step if k in STEP_KINDS)
        t = self.now_ms()
        handler = getattr(self, "step_" + kind, None)  # sql, send, wait, wait_free, terminate, race, terminate_then_try
        if handler is not None:
            return handler(i, step, t)
        if kind == "sleep":
            time.sleep(parse_duration(step["sleep"], "sleep"))
            return _line(i, "sleep", t)
        if kind == "restart":
            start = time.monotonic()
            self.cluster.restart(step["restart"])
            self.ctl = None
            return _line(i, "restart", t, elapsed_ms=round((time.monotonic() - start) * 1000.0, 1))
        name = step[kind]
        sess = self.sessions[name]
        if kind == "close":
            sess.call(("close",), 5.0)  # also with a query pending: PQfinish does not wait for it
            sess.kill()
        elif kind == "kill":
            sess.kill()
        elif kind == "pause":
            sess.signal(signal.SIGSTOP)
            sess.paused = True
        elif kind == "resume":
            sess.signal(signal.SIGCONT)
            sess.paused = False
        elif kind == "cut":
            self.net.cut(sess.port)
        elif kind == "heal":
            self.net.heal(sess.port)
        return _line(i, kind, t, s=name)

    def run(self):
        offset = self.cluster.log_size()
        lines = []
        try:
            self.setup()
            for i, step in enumerate(self.case["steps"]):
                lines.append(self.run_step(i, step))
        finally:
            self.teardown()
        time.sleep(0.2)  # let the last disconnection lines reach the log
        return lines, self.cluster.log_since(offset)


# ---------------------------------------------------------------------------------------------
# main


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="record.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.yaml"))
    ap.add_argument("--out", default=os.path.join(HERE, "recordings"))
    ap.add_argument("--port", type=int, default=None, help="the server's TCP port (default: a free one)")
    ap.add_argument("--list", action="store_true", help="list the case ids and exit")
    ap.add_argument("ids", nargs="*", metavar="CASE_ID")

    def error(message):
        raise BadInput("record.py: %s (see --help)" % message)

    ap.error = error
    return ap.parse_intermixed_args(argv)


def check_environment(args, cases):
    if psycopg2 is None:
        raise BadInput("psycopg2 is missing: run with Debian's /usr/bin/python3 and install "
                       "python3-psycopg2 (tools/setup.sh --pg)")
    for tool in ("initdb", "pg_ctl", "postgres"):
        if not os.access(os.path.join(PG_BIN, tool), os.X_OK):
            raise BadInput("no PostgreSQL found: %s/%s is missing (install postgresql-15: "
                           "tools/setup.sh --pg)" % (PG_BIN, tool))
    ids = [c["id"] for c in cases]
    unknown = [i for i in args.ids if i not in ids]
    if unknown:
        raise BadInput("unknown case id(s): %s (record.py --list shows them)" % ", ".join(unknown))
    if args.port is not None:
        if not 1 <= args.port <= 65535:
            raise BadInput("--port %d: not a TCP port" % args.port)
        if port_taken(args.port):
            raise BadInput("--port %d: already taken on 127.0.0.1" % args.port)
    chosen = [c for c in cases if not args.ids or c["id"] in args.ids]
    if os.geteuid() == 0:
        for tool in ("unshare", "nft", "ip", "runuser"):
            if shutil.which(tool) is None:
                raise BadInput("root run needs '%s' (util-linux, nftables, iproute2)" % tool)
    args.netns_problem = netns_problem()
    explicit = [c["id"] for c in chosen if c.get("net") and c["id"] in args.ids]
    if args.netns_problem and explicit:
        raise BadInput("case(s) %s cannot run: %s" % (", ".join(explicit), args.netns_problem))
    return chosen


def netns_problem():
    """None when the net cases can run (root, and a network namespace can be made), else why not."""
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


def write_recording(out, case, cluster, lines, server_log):
    header = {"case": case["id"], "pg_version": cluster.version, "kernel": platform.release(),
              "recorded_at": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
              "server": case.get("server") or {}}
    path = os.path.join(out, case["id"] + ".jsonl")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(header) + "\n")
        for line in lines:
            f.write(json.dumps(line) + "\n")
        f.write(json.dumps({"server_log": server_log}) + "\n")
    os.replace(tmp, path)


def summary_of(lines):
    parts = []
    for ln in lines:
        if ln["winners"] is not None:
            parts.append("winners=%s" % ",".join(sorted(set(map(str, ln["winners"])))))
        elif ln["error_class"]:
            parts.append(ln["error_class"])
        elif ln["value"] is not None:
            parts.append(repr(ln["value"]) if ln["value"] == "" else ln["value"])
        elif ln["step"] in ("sql", "wait"):
            parts.append("-")
        if ln["elapsed_ms"] is not None and ln["step"] in ("wait", "wait_free"):
            parts[-1] += "@%.0fms" % ln["elapsed_ms"]
    return " ".join(parts)


def record_all(args, chosen):
    cluster = Cluster(args.port or free_port())
    state = {"cluster": cluster}
    atexit.register(cluster.stop)
    net = None
    failed, not_run = [], []
    try:
        if in_private_netns():
            subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        net = Net()
        log("record.py: PostgreSQL cluster in a temporary folder, port %d, %s" %
            (cluster.port, "private network namespace" if net.enabled else "host loopback (not root)"))
        cluster.start()
        log("record.py: %s" % cluster.version)
        os.makedirs(args.out, exist_ok=True)
        for n, case in enumerate(chosen, 1):
            head = "[%d/%d] %s:" % (n, len(chosen), case["id"])
            if case.get("net") and not net.enabled:
                not_run.append(case["id"])
                log("%s not run: %s" % (head, args.netns_problem or "no private network namespace"))
                continue
            start = time.monotonic()
            try:
                lines, server_log = CaseRun(case, cluster, net).run()
            except CaseFailed as e:
                failed.append(case["id"])
                log("%s FAILED: %s" % (head, e))
                continue
            write_recording(args.out, case, cluster, lines, server_log)
            log("%s recorded in %.1fs: %s" % (head, time.monotonic() - start, summary_of(lines)))
    finally:
        if net is not None:
            net.heal_all()
            net.restore_sysctls()
        state["cluster"].stop()
    recorded = len(chosen) - len(failed) - len(not_run)
    log("record.py: %d recorded, %d failed, %d not run -> %s" % (recorded, len(failed), len(not_run), args.out))
    if failed:
        return 1
    return 3 if not_run else 0


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
                print("%s%s" % (c["id"], "  (net)" if c.get("net") else ""))
            return 0
        chosen = check_environment(args, cases)
        if args.netns_problem is None and NETNS_ENV not in os.environ:
            enter_netns(argv)
        if NETNS_ENV in os.environ and not in_private_netns():
            raise BadInput("%s is set but this is not the private network namespace record.py "
                           "made: refusing (unset it)" % NETNS_ENV)
        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGHUP, on_signal)
        return record_all(args, chosen)
    except BadInput as e:
        print("record.py: %s" % e if not str(e).startswith("record.py") else str(e), file=sys.stderr)
        return 2
    except Interrupted as e:
        print("record.py: interrupted (%s): cluster stopped and removed" % e, file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
