#!/usr/bin/python3
"""ompdpu benchmark suite: OpenMP offload to the DPU against an MPI rank on
the DPU and against the host alone, workload by workload.

Workloads (benchmarks/suite/*.c), each run three ways -- host, offload
(OpenMP target regions on the DPU through ompdpu), mpi (an MPI rank on the
DPU, launched MPMD with the host ranks):
  augment   augmentation pipeline: batches/s and host stall per batch
  halo      2D Jacobi with halo exchange over K host ranks: time/iteration,
            overlap achieved (offload also as offload-mpi: DPU servers as one
            MPI job, MPI called inside target regions, when available)
  conv3x3   forward + backward of a ResNet 3x3 layer, time per step
  conv1x1   the same for a 1x1 layer

Emulated DPUs are ompdpu-server processes on loopback, started by `ompdpu
emulate N --pin`, which also splits the cores: each emulated DPU gets its own
cores from the top (with fewer cores than DPUs + 1, all DPUs share the top
half), the host side the others. The MPI baseline's DPU ranks are pinned to
the very same cores as the servers, its host ranks to the host's cores, so
both sides of every comparison have the same resources. Repetitions are interleaved (rep 1 of every way, then
rep 2, ...) so that drift of a shared machine hits all ways alike.

Correctness first: every way of a workload prints checksums (augmented
batches, trained weights, grids, layer outputs) and the suite fails, loudly,
when any differs between ways or repetitions.

Writes to --out (default report/): summary.md, results.csv, results.json,
plots (*.png, matplotlib), and the micro-benchmark table when
benchmarks/micro/run_micro.py exists (or report/micro.json is present).
The modules beside this script: runs (one run and its outside load),
servers, ways (the commands of each way, a workload's runs), summary,
tables, plots, report (its prose is report_template.md).
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import runs  # noqa: E402
from report import write_report  # noqa: E402
from runs import SuiteError, log  # noqa: E402
from tables import summary_table  # noqa: E402
from ways import Suite  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ------------------------------------------------------------------ main --

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "report"))
    ap.add_argument("--quick", action="store_true", help="short runs, 5 repetitions (CI, < 3 min)")
    ap.add_argument("--reps", type=int, default=0, help="repetitions per way (default 5 quick, 11 full)")
    ap.add_argument("--only", default="", help="comma list of augment,halo2k,halo4k,conv3x3,conv1x1")
    ap.add_argument("--ranks", type=int, default=2, help="host ranks (and DPUs) of the halo workload")
    ap.add_argument("--cores-per-dpu", type=int, default=0)
    ap.add_argument("--mpi-pml", choices=["ob1", "ucx"], default="ob1")
    ap.add_argument("--no-micro", action="store_true", help="do not run benchmarks/micro")
    ap.add_argument("--no-mpi-servers", action="store_true", help="skip the halo offload-mpi way")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--max-foreign", type=float, default=0.10,
                    help="repeat a run when more than this share of the CPU went to other processes")
    ap.add_argument("--retries", type=int, default=-1,
                    help="repeats of a disturbed run (default 1 quick, 3 full)")
    ap.add_argument("--retry-budget", type=float, default=0,
                    help="no more repeats after this many seconds (default 60 quick, 900 full)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite summary.md and the plots from OUT/results.json, run nothing")
    real = ap.add_argument_group("real BlueField DPUs (instead of emulated ones)")
    real.add_argument("--devices", default="", help="ompdpu-server addresses on the DPUs, host:port,...")
    real.add_argument("--mpi-server-devices", default="",
                      help="addresses of an `ompdpu-server --mpi` job on the DPUs (halo offload-mpi way)")
    real.add_argument("--dpu-hosts", default="", help="MPI host names of the DPUs' Arm side, for the MPI ranks")
    real.add_argument("--dpu-bin", default="", help="directory on the DPUs holding the suite's *-mpi-dpu programs "
                      "(benchmarks/suite/build-dpu-ranks.sh builds them there)")
    real.add_argument("--host-name", default=socket.gethostname(), help="MPI host name of this host")
    real.add_argument("--host-threads", type=int, default=0, help="OpenMP threads on the host side")
    real.add_argument("--dpu-threads", type=int, default=0, help="OpenMP threads of the MPI ranks on the DPUs")
    a = ap.parse_args()
    a.devices = [d for d in a.devices.split(",") if d]
    a.mpi_server_devices = [d for d in a.mpi_server_devices.split(",") if d]
    a.dpu_hosts = [d for d in a.dpu_hosts.split(",") if d]
    if a.devices:
        if not a.dpu_hosts or not a.dpu_bin:
            ap.error("--devices (real DPUs) needs --dpu-hosts and --dpu-bin for the MPI baseline")
        a.dpu_threads = a.dpu_threads or 8
    a.out = os.path.abspath(a.out)
    if a.report_only:
        with open(os.path.join(a.out, "results.json")) as f:
            data = json.load(f)
        suite = Suite(a)
        suite.records, suite.meta = data["records"], data["meta"]
        suite.failures, suite.notes = data.get("failures", []), data.get("notes", [])
        suite.retried = suite.meta.get("retried", 0)
        a.quick, a.reps = suite.meta.get("quick", False), suite.meta.get("reps", 0)
        a.mpi_pml = suite.meta.get("mpi_pml", a.mpi_pml)
        summary, checks = write_report(suite, suite.meta.get("elapsed_s", 0.0))
        print(summary_table(summary, checks, suite.records))
        return 1 if any(checks.values()) or suite.failures else 0
    if not a.reps:
        a.reps = 5 if a.quick else 11
    if a.retries < 0:
        a.retries = 1 if a.quick else 3
    if not a.retry_budget:
        a.retry_budget = 60 if a.quick else 900
    os.makedirs(a.out, exist_ok=True)
    for f in os.listdir(a.out):
        if f.endswith(".png") or f in ("summary.md", "results.csv", "results.json", "mpi-servers.log"):
            os.remove(os.path.join(a.out, f))

    q = a.quick
    workloads = [
        ("augment", "augment", ["--batch", "128", "--channels", "8", "--kernel", "1", "--stride", "2",
                                "--batches", "150" if q else "500", "--warmup", "5"], 1),
        ("halo2k", "halo", ["--ny", "2048", "--nx", "2048", "--ranks", str(a.ranks),
                            "--iters", "100" if q else "500", "--probe", "15" if q else "40"], a.ranks),
        ("halo4k", "halo", ["--ny", "4096", "--nx", "4096", "--ranks", str(a.ranks),
                            "--iters", "40" if q else "150", "--probe", "10" if q else "30"], a.ranks),
        ("conv3x3", "conv", ["--layer", "3x3", "--batch", "4", "--steps", "15" if q else "60"], 1),
        ("conv1x1", "conv", ["--layer", "1x1", "--batch", "4", "--steps", "20" if q else "80"], 1),
    ]
    if a.only:
        keep = a.only.split(",")
        workloads = [w for w in workloads if w[0] in keep]

    suite = Suite(a)
    cpu_model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
            cpu_model = m.group(1).strip() if m else "?"
    except OSError:
        pass
    suite.meta.update({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                       "cpus": len(os.sched_getaffinity(0)), "cpu_model": cpu_model,
                       "machine": os.uname().machine, "quick": q, "reps": a.reps,
                       "mpi_pml": a.mpi_pml, "workloads": {w[0]: w[2] for w in workloads}})
    ways_per = {"halo": 4}  # with the offload-mpi way
    total = sum(a.reps * ways_per.get(w[1], 3) for w in workloads)
    progress = [0, total]
    log(f"{'quick' if q else 'full'} run: {len(workloads)} workloads x 3 ways x {a.reps} reps "
        f"(~{total} runs), report in {a.out}")
    try:
        for name, wl, args, ndpus in workloads:
            suite.workload(name, wl, args, ndpus, a.reps, progress)
    except SuiteError as e:
        suite.failures.append(str(e))
        print(str(e), file=sys.stderr)
    except KeyboardInterrupt:
        suite.failures.append("interrupted")

    micro = os.path.join(ROOT, "benchmarks", "micro", "run_micro.py")
    if not a.no_micro and os.path.exists(micro) and os.path.exists(os.path.join(a.build, "bin", "ompdpu-offload-micro")):
        log("micro-benchmarks (benchmarks/micro/run_micro.py)")
        cmd = [sys.executable, micro, "--build", a.build, "--out", a.out] + (["--quick", "--reps", "3"] if q else [])
        if a.devices:
            # Real DPUs: the same servers, ucx_perftest and the ping-pong's
            # second rank on the first DPU's Arm side.
            cmd += ["--devices", ",".join(a.devices), "--dpu-host", a.dpu_hosts[0], "--dpu-bin", a.dpu_bin]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            suite.notes.append(f"micro-benchmarks failed (exit {p.returncode}); see micro.log")
            with open(os.path.join(a.out, "micro.log"), "w") as f:
                f.write(p.stdout + p.stderr)
            log("micro-benchmarks failed; continuing")

    elapsed = time.monotonic() - runs.T_START
    summary, checks = write_report(suite, elapsed)
    print(summary_table(summary, checks, suite.records))
    bad = {n: c for n, c in checks.items() if c}
    for n, c in bad.items():
        log(f"CHECK FAILED: {n}: " + "; ".join(c))
    if suite.failures:
        log(f"{len(suite.failures)} run(s) FAILED")
    log(f"report: {os.path.join(a.out, 'summary.md')} ({elapsed:.0f} s)")
    return 1 if bad or suite.failures else 0


if __name__ == "__main__":
    sys.exit(main())
