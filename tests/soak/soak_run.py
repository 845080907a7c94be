#!/usr/bin/env python3
"""Soak test: one emulated DPU (`ompdpu emulate 1`), N clients for D seconds;
random clients and sessions are killed (SIGKILL), the server is frozen once
(SIGSTOP, then SIGCONT) for less than OMPDPU_TIMEOUT; killed clients are
restarted. Checks and figures: tests/soak/README.md.

usage: soak_run.py --ompdpu PATH --client PATH [--clients N] [--seconds D]
                   [--threads T] [--max-bytes B] [--kills K] [--freeze S]
                   [--rss-bound MIB] [--seed S]
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "runtime", "tools"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from ompdpu_emulate import Emulation  # noqa: E402

TIMEOUT = 10  # OMPDPU_TIMEOUT given to clients, seconds


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def children(pid):
    """Direct children of pid (the supervisor's sessions), from /proc."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def state(pid):
    """The process state letter from /proc (R, S, T, Z...), "" once gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def signal_and_wait(pids, sig, stopped):
    """Send sig to each pid, then wait until each is (not) stopped."""
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if all(state(p) in ("", "Z") or (state(p) in ("T", "t")) == stopped
               for p in pids):
            return
        time.sleep(0.01)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Client:
    """One client process (`ompdpu run --devices ADDR -- soak-client ...`)."""

    def __init__(self, a, env, addr, seconds, seed):
        self.seed, self.seconds = seed, seconds
        self.out = tempfile.TemporaryFile(mode="w+")
        cmd = [a.ompdpu, "run", "--devices", addr, "--", a.client, "%.1f" % seconds,
               str(seed), str(a.threads), str(a.max_bytes)]
        # Own process group: SIGKILL reaches `ompdpu run` and the program.
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.started = time.monotonic()
        self.killed = self.session_killed = self.hung = False
        self.status = self.result = None
        self.session = None

    def session_pid(self):
        if self.session is None:
            self.out.seek(0)
            for line in self.out.read().splitlines():
                if line.startswith("session-pid: "):
                    self.session = int(line.split()[1])
        return self.session

    def kill(self):
        self.killed = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def poll(self, bound):
        """True once ended; a client past its bound is killed as hung."""
        if self.status is not None:
            return True
        if self.proc.poll() is None:
            if time.monotonic() - self.started > self.seconds + bound:
                self.hung = True
                self.kill()
            return False
        self.status = self.proc.returncode
        self.out.seek(0)
        self.text = self.out.read()
        for line in self.text.splitlines():
            if line.startswith("{\"ops\""):
                self.result = json.loads(line)
        return True


def client_env(emulation):
    """The environment `ompdpu emulate` gives clients, plus the test's own."""
    env = dict(os.environ)
    env.update(getattr(emulation, "env", {}) or {})
    env["OMP_TARGET_OFFLOAD"] = "mandatory"
    env["OMPDPU_TIMEOUT"] = str(TIMEOUT)
    return env


class Soak:
    def __init__(self, a):
        self.a, self.rng = a, random.Random(a.seed)
        self.clients, self.done = [], []
        self.restarted = 0
        self.events = []
        self.bound = TIMEOUT + 20  # seconds a client may run past its duration

    def start(self):
        self.emu = Emulation(self.a.ompdpu, [1])
        self.addr, self.server = self.emu.devices[0], self.emu.server_pids[0]
        self.env = client_env(self.emu)
        self.rss_before = vm_rss_kib(self.server)

    def spawn(self, seconds):
        c = Client(self.a, self.env, self.addr, seconds, self.rng.randrange(1 << 30))
        self.clients.append(c)

    def schedule(self):
        """Times (s from start) of the kills and the freeze, seeded."""
        d, k = self.a.seconds, self.a.kills
        ev = [(self.rng.uniform(0.2 * d, 0.9 * d), "kill-client") for _ in range(k)]
        ev += [(self.rng.uniform(0.2 * d, 0.9 * d), "kill-session") for _ in range(k)]
        ev.append((0.5 * d, "freeze"))
        return sorted(ev)

    def kill_client(self):
        live = [c for c in self.clients if c.status is None and not c.killed]
        if live:
            self.rng.choice(live).kill()

    def kill_session(self):
        """SIGKILL the session of a running client whose session is known."""
        sessions = set(children(self.server))
        live = [c for c in self.clients if c.status is None and not c.killed
                and not c.session_killed and c.session_pid() in sessions]
        if live:
            c = self.rng.choice(live)
            c.session_killed = True
            os.kill(c.session, signal.SIGKILL)

    def freeze(self):
        """Stop supervisor and sessions together for --freeze s, then thaw.

        Like a paused machine: the supervisor never sees a session stopped
        (it ends stopped sessions), so it is stopped first and thawed last.
        """
        signal_and_wait([self.server], signal.SIGSTOP, True)
        sessions = children(self.server)
        signal_and_wait(sessions, signal.SIGSTOP, True)
        time.sleep(self.a.freeze)
        signal_and_wait(sessions, signal.SIGCONT, False)
        signal_and_wait([self.server], signal.SIGCONT, False)

    def reap(self, t_end):
        """Move ended clients to done; restart killed ones while time is left."""
        for c in list(self.clients):
            if c.poll(self.bound):
                self.clients.remove(c)
                self.done.append(c)
                left = t_end - time.monotonic()
                if c.killed and not c.hung and left > 3:
                    self.restarted += 1
                    self.spawn(left)

    def run(self):
        t0 = time.monotonic()
        t_end = t0 + self.a.seconds
        for _ in range(self.a.clients):
            self.spawn(self.a.seconds)
        for at, what in self.schedule():
            while time.monotonic() - t0 < at:
                self.reap(t_end)
                time.sleep(0.1)
            say("soak: %5.1f s %s" % (time.monotonic() - t0, what))
            getattr(self, what.replace("-", "_"))()
        while self.clients:
            self.reap(t_end)
            time.sleep(0.1)

    def fresh_client(self):
        c = Client(self.a, self.env, self.addr, 1.0, 7)
        while not c.poll(self.bound):
            time.sleep(0.1)
        return c


def percentiles(done):
    """Per kind: max over clients of their p50 and p99 (a client's own)."""
    out = {}
    for c in done:
        for kind, v in (c.result or {}).get("latency_us", {}).items():
            p = out.setdefault(kind, [0, 0, 0])
            p[0] += v["n"]
            p[1], p[2] = max(p[1], v["p50"]), max(p[2], v["p99"])
    return out


def verdicts(s, fresh, rss_after):
    """(check, passed) for every check of the README."""
    plain = [c for c in s.done if not c.killed and not c.session_killed]
    hit = [c for c in s.done if c.session_killed and not c.killed]
    res = [c.result for c in s.done if c.result]
    growth = (rss_after - s.rss_before) / 1024.0
    return [
        ("corrupt bytes == 0", sum(r["corrupt"] for r in res) == 0),
        ("lost == 0 where the session lived", all((c.result or {}).get("lost", 1) == 0
                                                  for c in plain)),
        ("surviving clients ended with status 0", all(c.status == 0 for c in plain)),
        ("session-killed clients: ompdpu error, non-zero", all(
            c.status != 0 and "ompdpu error" in c.text for c in hit)),
        ("no client hung (each within D + %d s)" % s.bound, not any(c.hung for c in s.done)),
        ("server alive", alive(s.server)),
        ("a fresh client after the run succeeds", fresh.status == 0),
        ("server RSS growth %.1f MiB < %d MiB" % (growth, s.a.rss_bound),
         growth < s.a.rss_bound),
    ]


def figures(s, rss_after):
    res = [c.result for c in s.done if c.result]
    say("figures:")
    say("  operations            %d" % sum(r["ops"] for r in res))
    say("  bytes moved           %.1f MiB" % (sum(r["bytes"] for r in res) / 2**20))
    say("  lost / corrupt        %d / %d" % (sum(r["lost"] for r in res),
                                             sum(r["corrupt"] for r in res)))
    say("  server RSS            %.1f -> %.1f MiB" % (s.rss_before / 1024, rss_after / 1024))
    say("  clients finished      %d (status 0: %d)" % (
        len([c for c in s.done if not c.killed]),
        len([c for c in s.done if c.status == 0])))
    say("  clients killed        %d, sessions killed %d, restarted %d" % (
        len([c for c in s.done if c.killed and not c.hung]),
        len([c for c in s.done if c.session_killed]), s.restarted))
    say("  latency (us)          kind      n      p50 (worst client)  p99 (worst client)")
    for kind, (n, p50, p99) in sorted(percentiles(s.done).items()):
        say("                        %-8s %6d %10.0f %18.0f" % (kind, n, p50, p99))


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--ompdpu", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--max-bytes", type=int, default=16 << 20)
    ap.add_argument("--kills", type=int, default=2, help="clients and sessions killed, each")
    ap.add_argument("--freeze", type=float, default=3.0)
    ap.add_argument("--rss-bound", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    s = Soak(a)
    s.start()
    try:
        s.run()
        fresh = s.fresh_client()
        rss_after = vm_rss_kib(s.server) if alive(s.server) else 0
        figures(s, rss_after)
        checks = verdicts(s, fresh, rss_after)
        for name, ok in checks:
            say("%s %s" % ("PASS" if ok else "FAIL", name))
        for c in s.done + [fresh]:
            if c.hung or (c.status != 0 and not c.killed and not c.session_killed):
                say("--- client seed %d status %s:\n%s" % (c.seed, c.status, c.text[-2000:]))
        return 0 if all(ok for _, ok in checks) else 1
    finally:
        for c in s.clients:
            c.kill()
        s.emu.stop()


if __name__ == "__main__":
    sys.exit(main())
