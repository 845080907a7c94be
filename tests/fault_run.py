#!/usr/bin/env python3
"""Run a host program against a server of its own and inject a fault while it runs: the
harness of the fault tests, the same for both targets (lit substitution `%fault`).

usage: fault_run.py --ompdpu PATH [common options] -- CMD...
       fault_run.py --ompdpu-vm PATH --name VM [--private-vm SUFFIX [--netem SPEC]]
                    [--in-guest] [--server-env "VAR=VALUE..."] [common options] -- CMD...
common options: [--fresh-server] [--server-args ARGS] [--when REGEX] [--delay S]
                [--action none|kill-server|kill-server-tree|freeze-server|kill-qemu|panic]
                [--limit S] [--check-server]

With --ompdpu (tests/lit, emulated DPUs): the server is an emulated DPU of this run alone
(`ompdpu emulate 1 [--server-args]`, e.g. --memory 64M), and CMD runs under
`ompdpu run --devices ADDR`.

With --ompdpu-vm (tests/lit-arm, the arm64 VM): the VM is the suite's (--name VM), or with
--private-vm a VM of its own (VM-SUFFIX, 1 core, 1 GiB, one server), started here and always
stopped at the end: faults that take the whole guest down (kill-qemu: the DPU dies; panic:
the guest kernel crashes) must not hit the VM the other tests share; so must a link model
(--netem, `ompdpu-vm start --netem`). --fresh-server starts one more server in the guest on
a free port (`ompdpu-start-server 0`) for this run alone, and stops it at the end, so that
killing it spares the shared servers. CMD runs on the host side, inside the VM's namespace
(`ompdpu-vm run --ports PORT`, so OMPDPU_DEVICES is GUEST:PORT and the aarch64 plugin is on
LD_LIBRARY_PATH). With --in-guest (the RDMA testbed, `ompdpu-vm start --rdma`) CMD, an
arm64 program, runs in the guest beside the server instead (`ompdpu-vm guest-run`), and
--server-env sets variables for the fresh server (e.g. UCX_TLS=tcp UCX_NET_DEVICES=eth0).

`{addr}`, `{port}` and `{guest}` in CMD are replaced. Its stdout and stderr are merged into
this script's stdout, line by line. The first line matching --when (default: at once) arms
the --action, carried out --delay seconds later:
  kill-server       SIGKILL the server's supervisor (with the VM: needs --fresh-server)
  kill-server-tree  SIGKILL the supervisor and every process under it (its sessions)
  freeze-server     SIGSTOP the supervisor and every process under it: a peer gone silent
                    whose connections stay up (killed at the end)
  kill-qemu         SIGKILL qemu (`ompdpu-vm kill`): the DPU dies, the link stays (VM)
  panic             crash the guest kernel (echo c > /proc/sysrq-trigger) (VM)
and a line `action: ACTION done` is printed. When CMD ends (or --limit S passes: then it
is killed) these lines follow:
    limit: within S s            (or: limit: EXCEEDED S s, killed)
    elapsed: T s
    server alive: 0|1            (--check-server: is the run's own server still running?)
    guest console: Kernel panic - ...   (--private-vm: a panic on the guest's console)
    exit-status: N               (128+signal if CMD died of a signal)
and the script exits with N (124 when the limit was exceeded).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "runtime", "tools"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from ompdpu_emulate import Emulation, NotStarted  # noqa: E402
import ompdpu_ready  # noqa: E402

out_lock = threading.Lock()


def say(line):
    with out_lock:
        sys.stdout.write(line if line.endswith("\n") else line + "\n")
        sys.stdout.flush()


class Interrupted(Exception):
    pass


class Failed(Exception):
    """The target could not be set up: the message says why."""


def on_signal(signum, _frame):
    raise Interrupted()


class LocalTarget:
    """An emulated DPU of this run alone (`ompdpu emulate 1`)."""

    actions = ("kill-server", "kill-server-tree", "freeze-server")

    def __init__(self, a):
        self.a, self.ompdpu, self.emulation = a, a.ompdpu, None
        self.errors = tempfile.TemporaryFile(mode="w+")

    def start(self):
        try:
            self.emulation = Emulation(self.ompdpu, [1] + self.a.server_args.split(),
                                       stderr=self.errors)
        except NotStarted as e:
            self.errors.seek(0)
            raise Failed("cannot start an emulated DPU (%s):\n%s" % (e, self.errors.read()))
        self.addr, self.pid = self.emulation.devices[0], self.emulation.server_pids[0]
        self.subst = {"{addr}": self.addr, "{port}": self.addr.rsplit(":", 1)[1],
                      "{guest}": self.addr.rsplit(":", 1)[0]}

    def command(self, cmd):
        return [self.ompdpu, "run", "--devices", self.addr, "--"] + cmd

    def act(self, action):
        pids = [self.pid] + (descendants(self.pid) if action != "kill-server" else [])
        for p in pids:
            try:
                os.kill(p, signal.SIGSTOP if action == "freeze-server" else signal.SIGKILL)
            except ProcessLookupError:
                pass
        return 0, ""

    def server_alive(self):
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        with open("/proc/%d/stat" % self.pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"

    def report(self):
        pass

    def stop(self):
        if self.emulation:
            for p in [self.pid] + descendants(self.pid):   # frozen ones stop too
                try:
                    os.kill(p, signal.SIGCONT)
                except ProcessLookupError:
                    pass
            self.emulation.stop()
        self.errors.close()


def descendants(pid):
    """Every process under pid (from /proc)."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = [], list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


class VmTarget:
    """A server in the arm64 VM (scripts/ompdpu-vm)."""

    actions = ("kill-server", "kill-server-tree", "freeze-server", "kill-qemu", "panic")

    def __init__(self, a):
        self.a = a
        self.vmtool = [sys.executable, a.ompdpu_vm]
        self.vm = a.name + ("-" + a.private_vm if a.private_vm else "")
        self.started_vm = False
        self.server_pid = None

    def start(self):
        a = self.a
        if a.private_vm:
            r = self.vmcmd("start", "--smp", "1", "-m", "1024", "--servers", "1", "--no-build",
                           "--netem", a.netem,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.started_vm = True
            if r.returncode != 0:
                raise Failed("cannot start private VM %s (%d):\n%s"
                             % (self.vm, r.returncode, r.stdout))
            say("fault_run: private VM %s up" % self.vm)
        st = vm_state(self.vm)
        self.port = st["ports"][0] if st["ports"] else 18515
        if a.fresh_server:
            rc, text = self.guest(a.server_env + " ompdpu-start-server 0 " + a.server_args)
            ready = ompdpu_ready.find(text)
            if rc != 0 or not ready:
                raise Failed("cannot start a server in the guest (%s):\n%s" % (rc, text))
            self.port, self.server_pid = ready.port, ready.pid
        self.subst = {"{addr}": "%s:%d" % (st["guest_ip"], self.port), "{port}": str(self.port),
                      "{guest}": st["guest_ip"]}

    def vmcmd(self, *args, **kw):
        return subprocess.run(self.vmtool + ["--name", self.vm] + list(args), **kw)

    def guest(self, script, timeout=30, wait=True):
        extra = ["--no-wait"] if not wait else []
        r = self.vmcmd("guest", "--timeout", str(timeout), *extra, "--", script,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return r.returncode, r.stdout

    def command(self, cmd):
        how = "guest-run" if self.a.in_guest else "run"
        return self.vmtool + ["--name", self.vm, how, "--ports", str(self.port), "--"] + cmd

    def act(self, action):
        if action == "kill-server":
            return self.guest("kill -9 %d" % self.server_pid)
        if action == "kill-server-tree":
            return self.guest(KILL_TREE % self.server_pid)
        if action == "freeze-server":
            return self.guest(KILL_TREE.replace("-9", "-STOP") % self.server_pid)
        if action == "kill-qemu":
            r = self.vmcmd("kill", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            return r.returncode, r.stdout
        return self.guest("echo c > /proc/sysrq-trigger", wait=False)

    def server_alive(self):
        return self.guest("kill -0 %d" % self.server_pid)[0] == 0

    def report(self):
        if self.a.private_vm:
            console = os.path.join("/run/ompdpu-vm", self.vm, "console.log")
            text = open(console, errors="replace").read() if os.path.exists(console) else ""
            for line in text.splitlines():
                if "Kernel panic" in line:
                    say("guest console: " + line.split("] ", 1)[-1].strip())

    def stop(self):
        if self.started_vm:
            self.vmcmd("stop", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elif self.server_pid:
            self.guest(KILL_TREE % self.server_pid)


ACTION_SAYS = {"kill-server": "killing server",
               "kill-server-tree": "killing server and its session processes",
               "freeze-server": "freezing server and its session processes (SIGSTOP)",
               "kill-qemu": "killing qemu (the DPU dies)",
               "panic": "crashing the guest kernel (sysrq c)"}


def run_with_fault(a, target, cmd):
    """Run cmd against target, the action armed by --when; its exit status."""
    cmd = [sub_all(c, target.subst) for c in cmd]

    def act():
        say("action: " + ACTION_SAYS[a.action])
        rc, text = target.act(a.action)
        say("action: %s %s" % (a.action, "done" if rc == 0 else
                               "FAILED (%s): %s" % (rc, text.strip())))

    sys.stdout.flush()
    t0 = time.monotonic()
    proc = subprocess.Popen(target.command(cmd), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        timer = None
        armed = a.action == "none"
        if not armed and not a.when:
            timer = threading.Timer(a.delay, act)
            timer.start()
            armed = True
        when = re.compile(a.when) if a.when else None
        reader_done = threading.Event()

        def relay():
            nonlocal timer, armed
            for raw in iter(proc.stdout.readline, b""):
                line = raw.decode(errors="replace")
                say(line)
                if not armed and when.search(line):
                    armed = True
                    timer = threading.Timer(a.delay, act)
                    timer.start()
            reader_done.set()

        threading.Thread(target=relay, daemon=True).start()
        try:
            status = proc.wait(timeout=a.limit)
            exceeded = False
        except subprocess.TimeoutExpired:
            exceeded = True
            kill_group(proc)
            status = 124
        reader_done.wait(5)
        if timer:
            timer.join()
    finally:
        if proc.poll() is None:
            kill_group(proc)
    elapsed = time.monotonic() - t0
    if status < 0:
        status = 128 - status
    say("limit: EXCEEDED %g s, killed" % a.limit if exceeded else "limit: within %g s" % a.limit)
    say("elapsed: %.2f s" % elapsed)
    if a.check_server:
        say("server alive: %d" % target.server_alive())
    target.report()
    say("exit-status: %d" % status)
    return status


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--ompdpu", help="the ompdpu tool: an emulated DPU on this machine")
    where.add_argument("--ompdpu-vm", help="scripts/ompdpu-vm: a server in the arm64 VM")
    ap.add_argument("--name", help="the VM (with --ompdpu-vm)")
    ap.add_argument("--private-vm")
    ap.add_argument("--netem", default="", help="link model of the private VM")
    ap.add_argument("--fresh-server", action="store_true")
    ap.add_argument("--in-guest", action="store_true",
                    help="run CMD in the guest (the RDMA testbed)")
    ap.add_argument("--server-env", default="", help="VAR=VALUE... for the fresh server")
    ap.add_argument("--server-args", default="")
    ap.add_argument("--when", default="")
    ap.add_argument("--delay", type=float, default=0.3)
    ap.add_argument("--action", default="none", choices=["none"] + list(ACTION_SAYS))
    ap.add_argument("--limit", type=float, default=60)
    ap.add_argument("--check-server", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no command")
    kind = VmTarget if a.ompdpu_vm else LocalTarget
    if a.ompdpu_vm and not a.name:
        ap.error("--ompdpu-vm needs --name")
    if a.action != "none" and a.action not in kind.actions:
        ap.error("--action %s needs the arm64 VM" % a.action)
    if a.ompdpu_vm and a.action in ("kill-server", "kill-server-tree", "freeze-server") \
            and not a.fresh_server:
        ap.error("--action %s needs --fresh-server" % a.action)
    if a.ompdpu_vm and a.check_server and not a.fresh_server:
        ap.error("--check-server needs --fresh-server")

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    target = None
    try:
        target = kind(a)
        target.start()
        return run_with_fault(a, target, cmd)
    except Failed as e:
        say("fault_run: %s" % e)
        return 1
    except Interrupted:
        say("fault_run: interrupted")
        return 130
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if target:
            target.stop()


# Kill a process and all its descendants in the guest (busybox sh, /proc).
KILL_TREE = r"""
tree() { echo $1; for s in /proc/[0-9]*/stat; do
  set -- $1 $(cat $s 2>/dev/null); [ "$5" = "$1" ] && tree $2; done; }
kill -9 $(tree %d) 2>/dev/null; true
"""


def kill_group(proc):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            pass


def sub_all(text, subst):
    for k, v in subst.items():
        text = text.replace(k, v)
    return text


def vm_state(vm):
    with open(os.path.join("/run/ompdpu-vm", vm, "state.json")) as f:
        return json.load(f)


if __name__ == "__main__":
    sys.exit(main())
