"""One run of a benchmark program: its RESULT records, wall time, and how much
of the machine other processes took meanwhile (this machine may be shared;
a run that others disturbed is repeated by the caller)."""
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import time

T_START = time.monotonic()
CLK = os.sysconf("SC_CLK_TCK")


def log(msg):
    el = time.monotonic() - T_START
    print(f"[suite {int(el) // 60:02d}:{int(el) % 60:02d}] {msg}", file=sys.stderr, flush=True)


class SuiteError(Exception):
    pass


def parse_results(stdout):
    out = []
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            out.append(json.loads(line[7:]))
    return out


def busy_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)


def tree_jiffies(roots):
    """CPU time (own + reaped children) of the processes under roots."""
    kids, times = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        f2 = st[st.rfind(")") + 2:].split()
        pid, ppid = int(d), int(f2[1])
        kids.setdefault(ppid, []).append(pid)
        times[pid] = sum(int(x) for x in f2[11:15])
    total, todo, seen = 0, list(roots), set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += times.get(p, 0)
        todo += kids.get(p, [])
    return total


def run(cmd, env, timeout, what, server_roots=()):
    """Runs cmd; returns (records, wall seconds, foreign CPU fraction): the
    share of the machine's CPU time in the run that neither the program,
    its children nor the emulated DPUs used."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    b0, s0 = busy_jiffies(), tree_jiffies(server_roots)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise SuiteError(f"{what}: timed out after {timeout} s\n  {shlex.join(cmd)}\n{err[-2000:]}")
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    time.sleep(0.03)  # let the servers reap the client's session
    b1, s1 = busy_jiffies(), tree_jiffies(server_roots)
    mine = (ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime) * CLK + (s1 - s0)
    foreign = max(0.0, (b1 - b0) - mine) / max(1.0, wall * CLK * len(os.sched_getaffinity(0)))
    res = parse_results(out)
    if p.returncode != 0 or not res:
        raise SuiteError(f"{what}: exit status {p.returncode}\n  {shlex.join(cmd)}\n"
                         f"--- stdout\n{out[-2000:]}\n--- stderr\n{err[-3000:]}")
    return res, wall, foreign
