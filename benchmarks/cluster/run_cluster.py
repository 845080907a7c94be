#!/usr/bin/python3
"""Training and the halo exchange (halo_cluster.py) across the nodes of
`ompdpu testbed`. Training three ways: host only
(one rank per node), OpenMP offload to each node's DPU (the rank's DPU from
the testbed's cluster map, by its node and local rank), and an MPI rank on
each node's DPU (MPMD). Weak scaling (a fixed batch and data per node) and
strong scaling (a fixed global batch and data). The three ways must train
the same network bit for bit at every node count; each DPU server's log must
show that only its own node's host used it. Writes cluster.md and
cluster.json (and runs/*.json, the trainer's own) into --out.

  /usr/bin/python3 benchmarks/cluster/run_cluster.py --build build --nodes 1,2 [--quick]

The testbed is brought up for the largest node count (and down at the end)
unless --keep-testbed. This machine's cores are shared by every namespace:
counts above one node oversubscribe them; the report says how many
processes each core had, and the ways are compared at equal
oversubscription, in paired rounds.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import halo_cluster  # noqa: E402
WAYS = ("host", "offload", "mpi")


def log(msg):
    print(f"[cluster] {msg}", flush=True)


class Testbed:
    """`ompdpu testbed` through the build's ompdpu front door."""

    def __init__(self, build):
        self.ompdpu = os.path.join(build, "bin", "ompdpu")

    def run(self, *args, check=True, capture=False, timeout=None, env=None):
        r = subprocess.run([self.ompdpu, "testbed", *args], capture_output=capture, text=True,
                           timeout=timeout, env=env)
        if args[0] == "up" and r.returncode == 77:
            sys.exit(77)  # no namespaces here: the testbed says why
        if check and r.returncode != 0:
            raise SystemExit(f"run_cluster: ompdpu testbed {' '.join(args[:2])} failed "
                             f"(exit status {r.returncode}){': ' + r.stderr.strip() if capture else ''}")
        return r

    def state(self):
        with open("/run/ompdpu-testbed/state.json") as f:
            return json.load(f)


def figures(text):
    """What must not depend on the way: each epoch's losses, accuracies and
    weight hash, and the final line's accuracy and hash."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^(epoch *\d+/\d+  loss \S+  train \S+  test \S+ \(loss [^)]*\)).* hash (\S+)$", line)
        if m:
            out.append(m.group(1) + " " + m.group(2))
        m = re.match(r"^final: (.*), [0-9.]+ s$", line)
        if m:
            out.append(m.group(1))
    return out


def commands(a, p, scaling, way, json_path):
    """mpirun's arguments for p nodes, one rank per node."""
    train = os.path.join(a.build, "bin", "ompdpu-train")
    hosts = ",".join(f"n{k}" for k in range(1, p + 1))
    dpus = ",".join(f"n{k}-dpu" for k in range(1, p + 1))
    per_node_batch = a.batch
    batch = per_node_batch * p if scaling == "weak" else per_node_batch
    limit = a.train_limit * p if scaling == "weak" else a.train_limit
    args = ["--epochs", str(a.epochs), "--batch", str(batch), "--train-limit", str(limit),
            "--test-limit", str(a.test_limit), "--val-chunk", str(a.val_chunk), "--quiet"]
    env = ["-x", "OMP_NUM_THREADS=1", "-x", "OMPDPU_SPIN_US=0"]
    if way == "host":
        return env + ["-H", hosts, "-np", str(p), train, "--way", "host", *args, "--json", json_path]
    if way == "offload":
        return env + ["-x", "OMP_TARGET_OFFLOAD=mandatory", "-H", hosts, "-np", str(p),
                      os.path.join(a.build, "bin", "ompdpu"), "run", "--",
                      train, "--way", "offload", *args, "--json", json_path]
    return env + ["-H", hosts, "-np", str(p), train, "--way", "mpi", *args, "--json", json_path,
                  ":", "-H", dpus, "-np", str(p), train, "--way", "mpi", "--role", "dpu", *args]


def server_logs(tb, p):
    """The first p nodes' DPU server logs: {host: path}."""
    return {nd["peer"]: os.path.join(nd["dir"], "server.log") for nd in tb.state()["nodes"]
            if nd["kind"] == "dpu" and nd["index"] <= p}


def log_sizes(logs):
    return {h: os.path.getsize(f) if os.path.exists(f) else 0 for h, f in logs.items()}


def clients_since(logs, sizes):
    """For each host, the hosts its DPU server's log names as clients since
    sizes ("client 3 ('n1 pid 4242', ...) connected")."""
    seen = {}
    for host, path in logs.items():
        with open(path, errors="replace") as f:
            f.seek(sizes.get(host, 0))
            seen[host] = set(re.findall(r"client \d+ \('(\S+) pid \d+'", f.read()))
    return seen


def one_run(a, tb, p, scaling, way, rep):
    path = os.path.join(a.out, "runs", f"{scaling}-{p}n-{way}-{rep}.json")
    logs = server_logs(tb, p)
    sizes = log_sizes(logs)
    t0 = time.monotonic()
    r = tb.run("mpirun", *commands(a, p, scaling, way, path), check=False, capture=True,
               timeout=a.timeout)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"run_cluster: {scaling} {p} nodes {way}: exit status {r.returncode}\n"
                         f"{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    with open(path) as f:
        rec = json.load(f)
    ep = rec["epoch_records"]
    return {"nodes": p, "scaling": scaling, "way": way, "rep": rep, "wall_s": wall,
            "epoch_s": statistics.median(e["time_s"] for e in ep),
            "compute_s": statistics.median(e["compute_s"] for e in ep),
            "aug_s": statistics.median(e["aug_s"] for e in ep),
            "val_s": statistics.median(e["val_s"] for e in ep),
            "allreduce_s": statistics.median(e["allreduce_s"] for e in ep),
            "test_acc": ep[-1]["test_acc"], "final_hash": rec["final_hash"],
            "batch": rec["batch"], "train_images": rec["train_images"], "ranks": rec["ranks"],
            "figures": figures(r.stdout), "json": path,
            "dpu_clients": {h: sorted(c) for h, c in clients_since(logs, sizes).items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "report", "cluster"))
    ap.add_argument("--nodes", default="1,2", help="node counts (1-8), e.g. 1,2,4")
    ap.add_argument("--scaling", default="weak,strong")
    ap.add_argument("--reps", type=int, default=3, help="paired rounds of the three ways")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64, help="per node (weak) or global (strong)")
    ap.add_argument("--train-limit", type=int, default=1280, help="per node (weak) or in all (strong)")
    ap.add_argument("--test-limit", type=int, default=1000)
    ap.add_argument("--val-chunk", type=int, default=250)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--workloads", default="training,halo", help="training and/or halo")
    ap.add_argument("--quick", action="store_true", help="1 round, smaller data (CI)")
    ap.add_argument("--keep-testbed", action="store_true", help="use a testbed that is up; leave it up")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.out = os.path.abspath(a.out)
    if a.quick:
        a.reps, a.train_limit, a.test_limit = 1, 640, 500
    counts = sorted({int(x) for x in a.nodes.split(",")})
    if not counts or counts[0] < 1 or counts[-1] > 8:
        raise SystemExit("run_cluster: --nodes takes counts from 1 to 8")
    scalings = [s for s in a.scaling.split(",") if s]
    if any(s not in ("weak", "strong") for s in scalings):
        raise SystemExit("run_cluster: --scaling takes weak and/or strong")
    workloads = [w for w in a.workloads.split(",") if w]
    if not workloads or any(w not in ("training", "halo") for w in workloads):
        raise SystemExit("run_cluster: --workloads takes training and/or halo")
    os.makedirs(os.path.join(a.out, "runs"), exist_ok=True)
    tb = Testbed(a.build)
    if not a.keep_testbed:
        tb.run("up", "--nodes", str(counts[-1]), "--force")
    try:
        results, problems = [], []
        for scaling in (scalings if "training" in workloads else []):
            for p in counts:
                for rep in range(a.reps):
                    # The ways in a rotated order each round: drift on this
                    # machine falls on each way alike.
                    order = WAYS[rep % 3:] + WAYS[:rep % 3]
                    runs = {w: one_run(a, tb, p, scaling, w, rep) for w in order}
                    for w in order:
                        r = runs[w]
                        log(f"{scaling} {p} node(s) {w:8s} epoch {r['epoch_s']:.2f} s  "
                            f"aug {r['aug_s']:.2f} s  val {r['val_s']:.2f} s  hash {r['final_hash']}")
                        results.append(r)
                    for w in ("offload", "mpi"):
                        if runs[w]["figures"] != runs["host"]["figures"] or not runs[w]["figures"]:
                            problems.append(f"{scaling} {p} nodes: {w} trained another network than host")
                    # Each rank used its own node's DPU, and only it did.
                    for host, clients in sorted(runs["offload"]["dpu_clients"].items()):
                        if host not in clients:
                            problems.append(f"{scaling} {p} nodes: {host}-dpu's server log names "
                                            f"no client of {host}")
                        if set(clients) - {host}:
                            problems.append(f"{scaling} {p} nodes: {host}-dpu served other nodes: "
                                            f"{sorted(set(clients) - {host})}")
        halo = []
        if "halo" in workloads:
            halo, halo_problems = halo_cluster.run(a, tb, counts, scalings)
            problems += halo_problems
        write_report(a, counts, scalings, results, problems, halo)
        for msg in problems:
            log("FAIL: " + msg)
        return 1 if problems else 0
    finally:
        if not a.keep_testbed:
            tb.run("down", check=False)


def write_report(a, counts, scalings, results, problems, halo):
    cores = os.cpu_count() or 1
    med = {}
    for r in results:
        med.setdefault((r["scaling"], r["nodes"], r["way"]), []).append(r)
    lines = ["# Training across nodes (ompdpu testbed)", "",
             f"{cores} cores shared by every node; each node runs one host rank and one DPU "
             "(server or MPI rank): processes per core = 2 x nodes / cores. "
             f"{a.reps} paired round(s), medians; epoch time from the trainer's own records.", ""]
    for scaling in (scalings if results else []):
        lines += [f"## Training, {scaling} scaling", "",
                  "| nodes | processes/core | host (s) | offload (s) | mpi (s) | offload / mpi | "
                  "offload / host | aug+val on host (s) | same weights |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for p in counts:
            rs = {w: med.get((scaling, p, w), []) for w in WAYS}
            if not all(rs.values()):
                continue
            e = {w: statistics.median(x["epoch_s"] for x in rs[w]) for w in WAYS}
            pairs = [o["epoch_s"] / m["epoch_s"] for o, m in zip(rs["offload"], rs["mpi"])]
            hv = statistics.median(x["aug_s"] + x["val_s"] for x in rs["host"])
            same = all(x["figures"] == h["figures"] for w in ("offload", "mpi")
                       for x, h in zip(rs[w], rs["host"]))
            lines.append(f"| {p} | {2 * p / cores:.1f} | {e['host']:.2f} | {e['offload']:.2f} | "
                         f"{e['mpi']:.2f} | {statistics.median(pairs):.3f} | "
                         f"{e['offload'] / e['host']:.3f} | {hv:.2f} | {'yes' if same else 'NO'} |")
        lines.append("")
    if results:
        lines += ["![epoch time per way and node count](cluster.png)", ""]
    lines += halo_cluster.report_lines(halo, counts, scalings, cores)
    if problems:
        lines += ["## Problems", ""] + [f"- {m}" for m in problems] + [""]
    with open(os.path.join(a.out, "cluster.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(a.out, "cluster.json"), "w") as f:
        json.dump({"cores": cores, "counts": counts, "scalings": scalings, "runs": results,
                   "halo": halo, "problems": problems}, f, indent=1)
    if results:
        plot(a, counts, scalings, med)
    log(f"wrote {os.path.join(a.out, 'cluster.md')}")


def plot(a, counts, scalings, med):
    """Epoch time per way against node count, one panel per scaling."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("no matplotlib: no plot")
        return
    fig, axes = plt.subplots(1, len(scalings), figsize=(5 * len(scalings), 3.6), squeeze=False)
    for ax, scaling in zip(axes[0], scalings):
        for w in WAYS:
            xs = [p for p in counts if med.get((scaling, p, w))]
            ys = [statistics.median(r["epoch_s"] for r in med[(scaling, p, w)]) for p in xs]
            ax.plot(xs, ys, marker="o", label=w)
        ax.set_title(f"{scaling} scaling (cores shared by all nodes)")
        ax.set_xlabel("nodes")
        ax.set_ylabel("epoch time (s)")
        ax.set_xticks(counts)
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "cluster.png"), dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
