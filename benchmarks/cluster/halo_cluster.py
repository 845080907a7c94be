"""The halo exchange (benchmarks/suite's 2D Jacobi) across the testbed's
nodes, one host rank per node, three ways:
  host         the host ranks exchange their borders among themselves;
  offload-mpi  each host rank offloads its sweep and exchange to its own
               node's DPU (an `ompdpu-server --mpi` job over the DPUs, whose
               kernels exchange among themselves with MPI);
  mpi          each host rank sends its borders to an MPI rank on its own
               node's DPU; the DPU ranks exchange (MPMD).
All three must end with the same grid (grid_hash)."""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "suite"))
from runs import parse_results  # noqa: E402  (the suite's RESULT lines)

WAYS = ("host", "offload-mpi", "mpi")
SERVER_PORT = 18600  # the --mpi servers' first port: rank r listens on +r


def grid(scaling, p):
    """(ny, nx, iterations): weak scaling 1024 rows per node, strong 2048."""
    return (1024 * p if scaling == "weak" else 2048), 2048, 60


def start_servers(tb, a, p, devices_file):
    """An `ompdpu-server --mpi` job over the first p DPUs and a devices file
    mapping each host to its own DPU's rank; waits until all answer."""
    st = tb.state()
    dpus = [n for n in st["nodes"] if n["kind"] == "dpu" and n["index"] <= p]
    with open(devices_file, "w") as f:
        for n in sorted(dpus, key=lambda n: n["index"]):
            f.write(f"{n['peer']} = {n['ip']}:{SERVER_PORT + n['index'] - 1}\n")
    hosts = ",".join(f"n{k}-dpu" for k in range(1, p + 1))
    log = open(os.path.join(a.out, f"halo-servers-{p}n.log"), "ab")
    proc = subprocess.Popen([tb.ompdpu, "testbed", "mpirun", "--bind-to", "none", "-H", hosts,
                             "-np", str(p), os.path.join(a.build, "bin", "ompdpu-server"), "--mpi",
                             "--listen", f"0.0.0.0:{SERVER_PORT}", "--munge", "--root-sessions",
                             "--shared-cores", "--verbose"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    while True:
        r = tb.run("exec", "n1", "--", "env", f"OMPDPU_CONFIG={devices_file}", "OMPDPU_CONNECT_TIMEOUT=2",
                   os.path.join(a.build, "bin", "ompdpu"), "info", "--cluster",
                   check=False, capture=True, timeout=30)
        if r.returncode == 0:
            return proc
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_servers(proc)
            raise SystemExit(f"run_cluster: halo: the --mpi servers on {hosts} did not all answer:\n"
                             f"{r.stdout[-1500:]}")
        time.sleep(0.5)


def stop_servers(proc):
    try:
        os.killpg(proc.pid, 15)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()


def one_round(a, tb, p, scaling, rep, devices_file):
    """The three ways once each, in a rotated order: {way: result}."""
    ny, nx, iters = grid(scaling, p)
    args = ["--ny", str(ny), "--nx", str(nx), "--ranks", str(p), "--iters", str(iters),
            "--probe", "10"]
    hosts = ",".join(f"n{k}" for k in range(1, p + 1))
    dpus = ",".join(f"n{k}-dpu" for k in range(1, p + 1))
    exe = lambda name: os.path.join(a.build, "bin", name)  # noqa: E731
    env = ["-x", "OMP_NUM_THREADS=1", "--mca", "mpi_yield_when_idle", "1"]
    cmds = {
        "host": env + ["-H", hosts, "-np", str(p), exe("suite-halo-mpi-host"), "--way", "host", *args],
        "offload-mpi": env + ["-x", f"OMPDPU_CONFIG={devices_file}", "-x", "OMP_TARGET_OFFLOAD=mandatory",
                              "-x", "LIBOMP_USE_HIDDEN_HELPER_TASK=0", "-x", "OMPDPU_YIELD=1",
                              "-H", hosts, "-np", str(p), exe("ompdpu"), "run", "--",
                              exe("suite-halo-offload-mpi"), *args],
        "mpi": env + ["-H", hosts, "-np", str(p), exe("suite-halo-mpi-host"), "--way", "dpu", *args,
                      ":", "-H", dpus, "-np", str(p), exe("suite-halo-mpi-dpu"), *args],
    }
    order = WAYS[rep % 3:] + WAYS[:rep % 3]
    out = {}
    for way in order:
        r = tb.run("mpirun", *cmds[way], check=False, capture=True, timeout=a.timeout)
        res = (parse_results(r.stdout) or [None])[0]
        if r.returncode != 0 or not res:
            raise SystemExit(f"run_cluster: halo {scaling} {p} nodes {way}: exit status {r.returncode}\n"
                             f"{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
        out[way] = dict(res, nodes=p, scaling=scaling, rep=rep, cluster_way=way)
    return out


def run(a, tb, counts, scalings):
    """Every node count (2 and more: one rank has no one to exchange with) x
    scaling x round; returns (results, problems)."""
    results, problems = [], []
    devices_file = os.path.join(a.out, "halo-devices")
    for p in [c for c in counts if c >= 2]:
        servers = start_servers(tb, a, p, devices_file)
        try:
            for scaling in scalings:
                for rep in range(a.reps):
                    out = one_round(a, tb, p, scaling, rep, devices_file)
                    for way in WAYS:
                        print(f"[cluster] halo {scaling} {p} nodes {way:11s} "
                              f"{out[way]['ms_per_iter']:.3f} ms/iter  grid {out[way]['grid_hash']}",
                              flush=True)
                        results.append(out[way])
                    if len({out[w]["grid_hash"] for w in WAYS}) != 1:
                        problems.append(f"halo {scaling} {p} nodes: the ways' grids differ: "
                                        + ", ".join(f"{w} {out[w]['grid_hash']}" for w in WAYS))
        finally:
            stop_servers(servers)
    return results, problems


def report_lines(results, counts, scalings, cores):
    lines = []
    by = {}
    for r in results:
        by.setdefault((r["scaling"], r["nodes"], r["cluster_way"]), []).append(r)
    for scaling in scalings:
        rows = [p for p in counts if all(by.get((scaling, p, w)) for w in WAYS)]
        if not rows:
            continue
        lines += [f"## Halo exchange, {scaling} scaling (2D Jacobi, one rank per node; "
                  f"{'1024 rows per node' if scaling == 'weak' else '2048 x 2048 in all'})", "",
                  "| nodes | processes/core | host (ms/iter) | offload-mpi (ms/iter) | mpi (ms/iter) | "
                  "offload-mpi / mpi | same grid |", "|---:|---:|---:|---:|---:|---:|---|"]
        for p in rows:
            m = {w: statistics.median(x["ms_per_iter"] for x in by[(scaling, p, w)]) for w in WAYS}
            pairs = [o["ms_per_iter"] / x["ms_per_iter"]
                     for o, x in zip(by[(scaling, p, "offload-mpi")], by[(scaling, p, "mpi")])]
            same = all(len({by[(scaling, p, w)][k]["grid_hash"] for w in WAYS}) == 1
                       for k in range(len(by[(scaling, p, "host")])))
            lines.append(f"| {p} | {2 * p / cores:.1f} | {m['host']:.3f} | {m['offload-mpi']:.3f} | "
                         f"{m['mpi']:.3f} | {statistics.median(pairs):.3f} | {'yes' if same else 'NO'} |")
        lines.append("")
    return lines
