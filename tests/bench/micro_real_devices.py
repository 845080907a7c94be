#!/usr/bin/env python3
"""benchmarks/micro/run_micro.py against DPUs it did not start (--devices), as
on a real BlueField: two servers started here by `ompdpu emulate 2` stand in
for the DPUs, and --dpu-host localhost runs ucx_perftest's server side and the
MPI ping-pong here. Checks that the run succeeds, that every target gets a
verdict, that the rows only an emulated run can have are left out, and that
device to device ran between the two servers.

  micro_real_devices.py BUILD_DIR WORK_DIR
"""
import os
import subprocess
import sys

build, work = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "runtime", "tools"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from ompdpu_emulate import Emulation, NotStarted  # noqa: E402
os.makedirs(work, exist_ok=True)


def fail(msg):
    sys.exit(f"micro_real_devices: FAIL: {msg}")


try:
    servers = Emulation(os.path.join(build, "bin", "ompdpu"), [2])
except NotStarted as e:
    fail(f"`ompdpu emulate 2` did not start the servers ({e})")
try:
    addrs = servers.devices
    out = os.path.join(work, "report")
    p = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "micro", "run_micro.py"),
                        "--build", build, "--out", out, "--quick", "--reps", "1",
                        "--devices", ",".join(addrs), "--dpu-host", "localhost"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail(f"run_micro.py exited {p.returncode}:\n{p.stderr[-3000:]}")
    table = p.stdout
    with open(os.path.join(out, "micro.md")) as f:
        head = f.readline()
    checks = [
        (f"DPUs at {addrs[0]}, {addrs[1]}" in head, "micro.md names the devices"),
        ("<= 1.5x: met" in table or "<= 1.5x: NOT met" in table,
         "the launch target has a verdict (ucx_perftest ran)"),
        (">= 0.85x: met" in table or ">= 0.85x: NOT met" in table, "the bandwidth targets have verdicts"),
        ("zero copy: met" in table, "bulk data zero copy (cma on one machine)"),
        ("Targets met in this run:" in table, "the line counting the targets"),
        ("device->device omp_target_memcpy 1 MiB" in table, "device to device between the two servers"),
        ("our transport alone" not in table, "no transport-alone row (emulated runs only)"),
        ("TCP loopback" not in table, "no TCP-loopback rows (emulated runs only)"),
        ("MPI ping-pong RTT, 8 B | -" not in table, "the MPI ping-pong ran"),
    ]
    bad = [what for ok, what in checks if not ok]
    if bad:
        fail("; ".join(bad) + "\n" + table)
    print(f"micro_real_devices: PASS ({len(checks)} checks, devices {', '.join(addrs)})")
finally:
    servers.stop()
