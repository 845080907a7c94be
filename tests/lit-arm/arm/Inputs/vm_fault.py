#!/usr/bin/env python3
"""Run a host program against a server in the arm64 VM and inject a fault while it runs.

usage: vm_fault.py --ompdpu-vm PATH --name VM [--private-vm SUFFIX [--netem SPEC]] [--fresh-server]
                   [--server-args ARGS] [--when REGEX] [--delay S]
                   [--action none|kill-server|kill-server-tree|kill-qemu|panic]
                   [--limit S] [--check-server] -- CMD...

The VM is the suite's (--name VM), or with --private-vm a VM of its own (VM-SUFFIX, 1 core,
1 GiB, one server), started here and always stopped at the end: faults that take the
whole guest down (kill-qemu: the DPU dies; panic: the guest kernel crashes) must not hit
the VM the other tests share; so must a link model (--netem, `ompdpu-vm start --netem`). --fresh-server starts one more server in the guest on a
free port (`ompdpu-start-server 0`) for this run alone, and stops it at the end, so that
killing it spares the shared servers.

CMD runs on the host side, inside the VM's namespace (`ompdpu-vm run --ports PORT`, so
OMPDPU_DEVICES is GUEST:PORT and the aarch64 plugin is on LD_LIBRARY_PATH); `{addr}`,
`{port}` and `{guest}` in CMD are replaced. Its stdout and stderr are merged into this
script's stdout, line by line. The first line matching --when (default: at once) arms the
--action, carried out --delay seconds later:
  kill-server       SIGKILL the server's supervisor in the guest (needs --fresh-server)
  kill-server-tree  SIGKILL the supervisor and every process under it (its sessions)
  kill-qemu         SIGKILL qemu (`ompdpu-vm kill`): the DPU dies, the link stays
  panic             crash the guest kernel (echo c > /proc/sysrq-trigger)
and a line `action: ACTION done` is printed. When CMD ends (or --limit S passes: then it
is killed) these lines follow, as in tests/lit/fault/Inputs/limit.py:
    limit: within S s            (or: limit: EXCEEDED S s, killed)
    elapsed: T s
    server alive: 0|1            (--check-server: is the fresh server still running?)
    guest console: Kernel panic - ...   (--private-vm: a panic on the guest's console)
    exit-status: N               (128+signal if CMD died of a signal)
and the script exits with N (124 when the limit was exceeded).
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time

out_lock = threading.Lock()


def say(line):
    with out_lock:
        sys.stdout.write(line if line.endswith("\n") else line + "\n")
        sys.stdout.flush()


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    raise Interrupted()


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--ompdpu-vm", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--private-vm")
    ap.add_argument("--netem", default="", help="link model of the private VM")
    ap.add_argument("--fresh-server", action="store_true")
    ap.add_argument("--server-args", default="")
    ap.add_argument("--when", default="")
    ap.add_argument("--delay", type=float, default=0.3)
    ap.add_argument("--action", default="none",
                    choices=["none", "kill-server", "kill-server-tree", "kill-qemu", "panic"])
    ap.add_argument("--limit", type=float, default=60)
    ap.add_argument("--check-server", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no command")
    if a.action in ("kill-server", "kill-server-tree") and not a.fresh_server:
        ap.error("--action %s needs --fresh-server" % a.action)
    vmtool = [sys.executable, a.ompdpu_vm]
    vm = a.name + ("-" + a.private_vm if a.private_vm else "")

    def vmcmd(*args, **kw):
        return subprocess.run(vmtool + ["--name", vm] + list(args), **kw)

    def guest(script, timeout=30, wait=True):
        extra = ["--no-wait"] if not wait else []
        r = vmcmd("guest", "--timeout", str(timeout), *extra, "--", script,
                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return r.returncode, r.stdout

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    started_vm = False
    server_pid = None
    proc = None
    status = 1
    try:
        if a.private_vm:
            r = vmcmd("start", "--smp", "1", "-m", "1024", "--servers", "1", "--no-build",
                      "--netem", a.netem,
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            started_vm = True
            if r.returncode != 0:
                say("vm_fault: cannot start private VM %s (%d):\n%s" % (vm, r.returncode,
                                                                       r.stdout))
                return 1
            say("vm_fault: private VM %s up" % vm)
        st = vm_state(vm)
        port = st["ports"][0] if st["ports"] else 18515
        if a.fresh_server:
            rc, text = guest("ompdpu-start-server 0 " + a.server_args)
            m = re.search(r"LISTENING \S+:(\d+) pid (\d+)", text)
            if rc != 0 or not m:
                say("vm_fault: cannot start a server in the guest (%s):\n%s" % (rc, text))
                return 1
            port, server_pid = int(m.group(1)), int(m.group(2))
        subst = {"{addr}": "%s:%d" % (st["guest_ip"], port), "{port}": str(port),
                 "{guest}": st["guest_ip"]}
        cmd = [sub_all(c, subst) for c in cmd]

        def act():
            if a.action in ("kill-server", "kill-server-tree"):
                tree = a.action == "kill-server-tree"
                say("action: killing server%s" % (" and its session processes" if tree else ""))
                script = ("kill -9 %d" % server_pid) if not tree else KILL_TREE % server_pid
                rc, text = guest(script)
            elif a.action == "kill-qemu":
                say("action: killing qemu (the DPU dies)")
                r = vmcmd("kill", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                rc, text = r.returncode, r.stdout
            else:
                say("action: crashing the guest kernel (sysrq c)")
                rc, text = guest("echo c > /proc/sysrq-trigger", wait=False)
            say("action: %s %s" % (a.action, "done" if rc == 0 else
                                   "FAILED (%s): %s" % (rc, text.strip())))

        sys.stdout.flush()
        t0 = time.monotonic()
        proc = subprocess.Popen(vmtool + ["--name", vm, "run", "--ports", str(port), "--"] + cmd,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
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
        elapsed = time.monotonic() - t0
        if status < 0:
            status = 128 - status
        say("limit: EXCEEDED %g s, killed" % a.limit if exceeded else "limit: within %g s" % a.limit)
        say("elapsed: %.2f s" % elapsed)
        if a.check_server:
            rc, _ = guest("kill -0 %d" % server_pid)
            say("server alive: %d" % (rc == 0))
        if a.private_vm:
            console = os.path.join("/run/ompdpu-vm", vm, "console.log")
            text = open(console, errors="replace").read() if os.path.exists(console) else ""
            for line in text.splitlines():
                if "Kernel panic" in line:
                    say("guest console: " + line.split("] ", 1)[-1].strip())
        say("exit-status: %d" % status)
        return status
    except Interrupted:
        say("vm_fault: interrupted")
        return 130
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if proc and proc.poll() is None:
            kill_group(proc)
        if started_vm:
            vmcmd("stop", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elif server_pid:
            guest(KILL_TREE % server_pid)


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
    import json
    with open(os.path.join("/run/ompdpu-vm", vm, "state.json")) as f:
        return json.load(f)


if __name__ == "__main__":
    sys.exit(main())
