#!/usr/bin/env python3
"""Kill `ompdpu run --emulate 1 -- PROGRAM` and check that no server it
started survives it.

usage: kill_run.py [WRAPPER...] OMPDPU PROGRAM   (lit's %ompdpu: a `timeout`
before it is dropped, since the signals must reach ompdpu itself, not a
parent; `env VAR=...`, which execs it, stays)

1. SIGKILL once the program runs (it prints "running" first): nothing can
   clean up after that, so the servers must stop by themselves.
2. SIGTERM at 0-50 ms, while the servers or the program start: `ompdpu run`
   stops the servers, and the program if it started.
Servers are recognised by the run's key file, under a TMPDIR of this
script's own; the run's key directory must be gone too. Prints two lines
per case.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time


def processes(tmpdir, program):
    """The servers of runs under tmpdir, and the program's processes."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if ("ompdpu-server" in cmd and tmpdir in cmd) or cmd.startswith(program + "\0"):
            pids.append(int(pid))
    return pids


def gone_within(tmpdir, program, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not processes(tmpdir, program):
            return True
        time.sleep(0.05)
    left = processes(tmpdir, program)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return False


def keys_left(tmpdir, seconds):
    """The run key directories still under tmpdir after up to seconds."""
    deadline = time.time() + seconds
    while True:
        left = [d for d in os.listdir(tmpdir) if d.startswith("ompdpu-run-key.")]
        if not left or time.time() > deadline:
            return len(left)
        time.sleep(0.05)


def main():
    ompdpu, program = sys.argv[1:-1], sys.argv[-1]
    if os.path.basename(ompdpu[0]) == "timeout":
        i = 1
        while ompdpu[i].startswith("-"):
            i += 2 if ompdpu[i] in ("-k", "-s") else 1
        ompdpu = ompdpu[i + 1:]
    with tempfile.TemporaryDirectory(prefix="kill-run-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        run = subprocess.Popen(ompdpu + ["run", "--emulate", "1", "--", program],
                               stdout=subprocess.PIPE, env=env)
        line = run.stdout.readline().decode().split()
        if line[:1] != ["running"]:
            print("program did not start: %s" % line)
            return 1
        run.send_signal(signal.SIGKILL)
        run.wait()
        os.kill(int(line[1]), signal.SIGKILL)  # the orphaned program
        print("after SIGKILL, servers gone: %d" % gone_within(tmp, program, 5))
        print("after SIGKILL, run key directories left: %d" % keys_left(tmp, 5))
        survived = 0
        for k in range(10):
            run = subprocess.Popen(ompdpu + ["run", "--emulate", "1", "--", program],
                                   stdout=subprocess.DEVNULL, env=env)
            time.sleep(0.005 * k)
            run.send_signal(signal.SIGTERM)
            run.wait()
            survived += not gone_within(tmp, program, 5)
        print("after SIGTERM while starting, runs that left a server or the "
              "program: %d" % survived)
        print("after SIGTERM, run key directories left: %d" % keys_left(tmp, 5))
    return 0


if __name__ == "__main__":
    sys.exit(main())
