#!/usr/bin/env python3
"""Scaling model of ompdpu-train to hundreds of nodes (stdlib only).

  model.py fit RUNS.json... [--allreduce AR.json] [--params-out P.json]
  model.py project [--runs RUNS.json... | --params P.json] --nodes 1,2,4,8,64,256
                   [--link-gbps 100] [--dpu-speed 0.25] [--aug-share S]

Epoch time of one node among p (each node trains N/p images and validates
M/p, in S steps of b images: weak scaling b fixed, S = N/(b p); strong
scaling global batch G fixed, b = G/p, S = N/G):

  compute   C  = S (c_step + b c_img)
  allreduce R  = S (1 - f) [2 (p-1)/p  W / BW  +  2 (p-1) k alpha]
  aug + val A  = (N/p) a_img + (M/p) v_img                  (host's cost)
  host way        T = C + R + A
  offload / mpi   T = C + R + max(0, A / d - (C + R)) + S o_way

W: gradient bytes (4 x parameters), BW: link bandwidth, alpha: latency per
message, k: allreduce calls per step (one per layer with parameters), f:
the share of the allreduce hidden behind the backward pass, d: the DPU's
throughput on augmentation + validation relative to the host's training
cores (--dpu-speed), o_way: the host's per-step cost of a DPU way. The DPU
keeps up while A / d <= C + R, i.e. d >= A / (C + R) (break-even).

Inputs of `fit`: the trainer's own --json reports (way, ranks, batch,
train_images, test_images, epoch_records with time_s, compute_s, aug_s,
val_s, allreduce_s), optionally with "nodes", "way", "scaling" added;
"nodes" defaults to "ranks". Allreduce microbenchmark reports
(allreduce_bench.c, "kind": "allreduce") may be given among them.
"""
import argparse
import json
import math
import statistics
import sys

# Parameter counts (training/src/net.c: conv oc*c*k*k + oc, fc in*out + out)
# and allreduce calls per step (layers with parameters).
MODELS = {"cnn": {"params": 857738, "calls": 4}, "resnet": {"params": 130826, "calls": 10}}
WAYS = ("host", "offload", "mpi")

# Defaults for real hardware (README: sources and reasoning).
DEFAULTS = {
    "link_gbps": 100.0,     # ConnectX-6 Dx: 100 or 200 Gb/s per BlueField-2
    "latency_us": 2.0,      # MPI small-message latency over RDMA, per ring step
    "dpu_speed": 0.25,      # DPU aug+val throughput / host's (estimate)
    "overlap": 0.0,         # hidden share of the allreduce, when not measured
    "train_images": 60000,  # Fashion-MNIST
    "test_images": 10000,
    "batch": 64,            # per node, weak scaling
    "global_batch": 4096,   # strong scaling
}


# ---------------------------------------------------------------- the model

def ring_allreduce_s(p, nbytes, gbps, latency_us, calls=1):
    """One step's ring allreduce of nbytes among p nodes (no overlap)."""
    if p <= 1:
        return 0.0
    bw = gbps * 1e9 / 8.0
    return 2.0 * (p - 1) / p * nbytes / bw + 2.0 * (p - 1) * calls * latency_us * 1e-6


def steps_and_batch(p, kind, batch, global_batch, n_train):
    """(steps per epoch, images per node per step)."""
    if kind == "weak":
        b = float(batch)
        return n_train / (b * p), b
    b = global_batch / float(p)
    return n_train / float(global_batch), b


def epoch_time(prm, way, p, steps, b, n_train, n_test, link=None, dpu_speed=None):
    """Epoch time of one node and its parts; prm: the parameter dict.
    link: (gbps, latency_us) or None for prm's own."""
    gbps, lat = link if link else (prm["link_gbps"], prm["latency_us"])
    d = prm["dpu_speed"] if dpu_speed is None else dpu_speed
    c = steps * (prm["c_step"] + b * prm["c_img"])
    r = steps * (1.0 - prm["overlap"]) * ring_allreduce_s(
        p, prm["grad_bytes"], gbps, lat, prm["calls"])
    a = n_train / p * prm["a_img"] + n_test / p * prm["v_img"]
    if way == "host":
        exposed, over = a, 0.0
    else:
        exposed = max(0.0, a / d - (c + r)) if d > 0 else float("inf")
        over = steps * prm["o_" + way]
    return {"time": c + r + exposed + over, "compute": c, "allreduce": r, "augval_host": a,
            "augval_exposed": exposed, "overhead": over}


def break_even(prm, p, steps, b, n_train, n_test, link=None):
    """DPU speed at which the DPU's aug+val equals the host's compute +
    exposed allreduce (what it overlaps with)."""
    t = epoch_time(prm, "host", p, steps, b, n_train, n_test, link)
    window = t["compute"] + t["allreduce"]
    return t["augval_host"] / window if window > 0 else float("inf")


# --------------------------------------------------------------- the inputs

def load(paths):
    """Training runs and allreduce measurements from JSON files."""
    runs, ars = [], []
    for path in paths:
        with open(path) as f:
            j = json.load(f)
        if j.get("kind") == "allreduce":
            j["file"] = path
            ars.append(j)
            continue
        if "epoch_records" not in j:
            sys.exit(f"{path}: neither an ompdpu-train --json report nor an allreduce measurement")
        way = j.get("way", "host")
        if way not in WAYS:
            print(f"note: {path}: way {way!r} is not modelled; skipped", file=sys.stderr)
            continue
        recs = [e for e in j["epoch_records"] if "time_s" in e]
        if not recs:
            sys.exit(f"{path}: no epoch records")
        nodes = int(j.get("nodes", j.get("ranks", 1)))
        ranks = int(j.get("ranks", nodes))
        batch = int(j["batch"])  # global batch, as the trainer takes it
        n_train, n_test = int(j["train_images"]), int(j["test_images"])
        runs.append({
            "file": path, "way": way, "nodes": nodes, "ranks": ranks,
            "model": j.get("model", "cnn"), "scaling": j.get("scaling", ""),
            "batch": batch, "local": batch / ranks, "n_train": n_train, "n_test": n_test,
            "steps": n_train // batch, "epochs": recs,
        })
    return runs, ars


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def fit(runs, ars, args):
    """Parameters from the measurements (each phase from its own field)."""
    if not runs:
        sys.exit("fit: no training runs")
    models = {r["model"] for r in runs}
    if len(models) > 1:
        sys.exit(f"fit: runs of several models {sorted(models)}: fit one model at a time")
    model = models.pop()
    m = MODELS.get(model, MODELS["cnn"])
    prm = {"model": model, "grad_bytes": 4.0 * (args.params_count or m["params"]),
           "calls": args.calls or m["calls"]}
    # Host compute: compute_s = S (c_step + b c_img), least squares over every
    # epoch of every way (the training computation is the same in all); with
    # a single local batch size c_step cannot be told apart: 0.
    # --ranks-share-cores: the multi-rank runs put their ranks on one
    # machine's cores (as on the 2-core test VM): used for the allreduce only.
    share = args.ranks_share_cores or getattr(args, "machine_cores", 0)
    own = [r for r in runs if not (share and r["ranks"] > 1)] or runs
    rows = [(r["steps"], r["steps"] * r["local"], e["compute_s"]) for r in own for e in r["epochs"]]
    locals_ = {r["local"] for r in own}
    if len(locals_) > 1 and args.c_step is None and args.fit_c_step:
        sxx = sum(a * a for a, _, _ in rows); sxy = sum(a * b for a, b, _ in rows)
        syy = sum(b * b for _, b, _ in rows)
        sxz = sum(a * z for a, _, z in rows); syz = sum(b * z for _, b, z in rows)
        det = sxx * syy - sxy * sxy
        prm["c_step"] = (syy * sxz - sxy * syz) / det
        prm["c_img"] = (sxx * syz - sxy * sxz) / det
        if prm["c_step"] < 0 or prm["c_img"] < 0:
            sys.exit("fit: compute_s = S (c_step + b c_img) gives c_step %.3g, c_img %.3g: the runs "
                     "disagree (noise, shared cores); drop --fit-c-step" % (prm["c_step"], prm["c_img"]))
    else:
        prm["c_step"] = args.c_step or 0.0
        prm["c_img"] = sum(z - a * prm["c_step"] for a, _, z in rows) / sum(b for _, b, _ in rows)
    # Augmentation and validation: the host way's own seconds per image.
    host = [(r, e) for r in own if r["way"] == "host" for e in r["epochs"]]
    if host:
        prm["a_img"] = sum(e["aug_s"] for _, e in host) / sum(r["steps"] * r["local"] for r, _ in host)
        prm["v_img"] = sum(e["val_s"] for _, e in host) / sum(r["n_test"] / r["ranks"] for r, _ in host)
    else:
        prm["a_img"], prm["v_img"] = args.a_img or 0.0, args.v_img or 0.0
    # Per-step cost of each DPU way: the host's epoch outside the training
    # computation and the allreduce (waits for batches and results, issuing).
    for way in ("offload", "mpi"):
        ep = [(r, e) for r in own if r["way"] == way for e in r["epochs"]]
        o = (sum(e["time_s"] - e["compute_s"] - e["allreduce_s"] for _, e in ep)
             / sum(r["steps"] for r, _ in ep)) if ep else 0.0
        prm["o_" + way] = max(0.0, o) if ep else None  # None: way not measured
        prm["o_%s_raw" % way] = o
    # The measurement machine's interconnect and the overlap: an allreduce
    # microbenchmark gives the unhidden step time; the runs with ranks > 1
    # the exposed part.
    multi = [(r, e) for r in runs if r["ranks"] > 1 for e in r["epochs"]]
    full_step = {}
    for n in {int(a["ranks"]) for a in ars}:  # median of the repetitions
        full_step[n] = statistics.median(a["step_s"] for a in ars if int(a["ranks"]) == n)
    prm["overlap"] = args.overlap if args.overlap is not None else DEFAULTS["overlap"]
    prm["overlap_source"] = "given" if args.overlap is not None else "default"
    fit_link = (args.fit_link_gbps, args.fit_latency_us)
    if multi and args.overlap is None:
        unhidden = 0.0
        for r, e in multi:
            t = full_step.get(r["ranks"])
            if t is None:
                t = ring_allreduce_s(r["ranks"], prm["grad_bytes"], *fit_link, prm["calls"])
            unhidden += r["steps"] * t
        exposed = sum(e["allreduce_s"] for _, e in multi)
        if unhidden > 0:
            prm["overlap"] = min(1.0, max(0.0, 1.0 - exposed / unhidden))
            prm["overlap_source"] = "measured (%d epochs with ranks > 1, %s)" % (
                len(multi), "allreduce_bench" if full_step else "ring model at --fit-link-gbps")
    # The measurement machine: its DPU (emulated: a core like the host's).
    prm["fit_dpu_speed"] = args.fit_dpu_speed
    prm["fit_link"] = fit_link
    prm["fit_full_step"] = full_step
    return prm


def predict_run(prm, r, machine_cores=0):
    """Predicted mean epoch time of a measured run on its own machine. With
    machine_cores, every node's processes (host ranks, and the emulated DPUs
    doing aug+val at the host's speed) shared that many cores: the epoch
    takes at least the nodes' CPU work over those cores."""
    p = r["ranks"]
    q = dict(prm, dpu_speed=prm["fit_dpu_speed"])
    link = prm["fit_link"]
    t = epoch_time(q, r["way"], p, r["steps"], r["local"], r["steps"] * r["batch"], r["n_test"], link)
    full = prm["fit_full_step"].get(p)
    if full is not None and p > 1:  # the measured allreduce instead of the ring formula
        t["time"] += r["steps"] * (1 - prm["overlap"]) * full - t["allreduce"]
    if machine_cores:
        work = p * (t["compute"] + t["augval_host"] + t["overhead"])
        return max(t["time"], work / machine_cores)
    return t["time"]


def cmd_fit(args):
    runs, ars = load(args.runs)
    prm = fit(runs, ars, args)
    print_params(prm)
    print()
    print("%-40s %-7s %5s %7s %10s %10s %7s" % ("run", "way", "nodes", "batch", "measured", "model", "error"))
    errs = []
    checks = load(args.check)[0] if args.check else []
    shared = [r for r in runs if (args.ranks_share_cores or getattr(args, "machine_cores", 0)) and r["ranks"] > 1]
    runs = [r for r in runs if r not in shared]
    for i, r in enumerate(runs + checks + shared):
        if i == len(runs) and checks:
            print("-- not fitted, predicted only (--check):")
        if i == len(runs) + len(checks) and shared:
            print("-- ranks sharing one machine's cores (used for the allreduce only%s):"
                  % (f"; predicted as time-shared on {args.machine_cores} cores" if args.machine_cores else ""))
        meas = mean([e["time_s"] for e in r["epochs"]])
        pred = predict_run(prm, r, args.machine_cores if r in shared else 0)
        err = (pred - meas) / meas
        errs.append(abs(err))
        print("%-40s %-7s %5d %7d %9.3fs %9.3fs %+6.1f%%" % (
            r["file"][-40:], r["way"], r["nodes"], r["batch"], meas, pred, 100 * err))
    n = len(runs)
    print("\n|error|: median %.1f%%, max %.1f%% over the %d fitted runs (in-sample)"
          % (100 * statistics.median(errs[:n]), 100 * max(errs[:n]), n))
    if shared and args.machine_cores:
        sh = errs[n + len(checks):]
        print("|error|: median %.1f%%, max %.1f%% over the %d multi-node runs time-shared on %d cores "
              "(out of sample)" % (100 * statistics.median(sh), 100 * max(sh), len(sh), args.machine_cores))
    if checks:
        c = errs[n:n + len(checks)]
        print("|error|: median %.1f%%, max %.1f%% over the %d --check runs (out of sample)"
              % (100 * statistics.median(c), 100 * max(c), len(c)))
    if args.params_out:
        with open(args.params_out, "w") as f:
            json.dump({k: v for k, v in prm.items() if not k.startswith("fit_")}, f, indent=1)
    return prm


def print_params(prm):
    print("parameters (%s, fitted):" % prm["model"])
    print("  c_img    %.4e s   host compute per training image" % prm["c_img"])
    print("  c_step   %.4e s   host compute per step (SGD, fixed costs)" % prm["c_step"])
    print("  a_img    %.4e s   host augmentation per training image" % prm["a_img"])
    print("  v_img    %.4e s   host validation per test image" % prm["v_img"])
    for w, what in (("offload", "offload way"), ("mpi", "MPI rank on the DPU")):
        if prm["o_" + w] is None:
            print("  o_%-7s (not measured) host cost per step, %s" % (w, what))
        else:
            print("  o_%-7s %.4e s  host cost per step, %s (raw %.2e)" % (w, prm["o_" + w], what, prm["o_%s_raw" % w]))
    print("  overlap  %.3f       hidden share of the allreduce (%s)" % (prm["overlap"], prm["overlap_source"]))
    print("  W        %.0f bytes of gradient per step, %d allreduce calls" % (prm["grad_bytes"], prm["calls"]))


# ---------------------------------------------------------------- projection

def with_aug_share(prm, share, n_train, n_test, batch):
    """prm with a_img, v_img scaled so that aug+val take `share` of a 1-node
    host-way epoch (weak batch)."""
    steps = n_train / batch
    c = steps * (prm["c_step"] + batch * prm["c_img"])
    a = n_train * prm["a_img"] + n_test * prm["v_img"]
    want = share * c / (1.0 - share)
    q = dict(prm)
    if a > 0:
        q["a_img"], q["v_img"] = prm["a_img"] * want / a, prm["v_img"] * want / a
    else:
        q["a_img"], q["v_img"] = want / n_train, 0.0
    return q


def saving(prm, way, p, kind, args):
    steps, b = steps_and_batch(p, kind, args.batch, args.global_batch, args.train_images)
    h = epoch_time(prm, "host", p, steps, b, args.train_images, args.test_images)["time"]
    o = epoch_time(prm, way, p, steps, b, args.train_images, args.test_images)["time"]
    return (h - o) / h


def share_for(prm, target, p, kind, args):
    """Smallest aug+val share of a host epoch at which offloading saves
    `target`, or None (bisection on the rising branch)."""
    def s(share):
        return saving(with_aug_share(prm, share, args.train_images, args.test_images, args.batch),
                      "offload", p, kind, args)
    grid = [i / 1000.0 for i in range(1, 999)]
    vals = [s(x) for x in grid]
    best = max(range(len(grid)), key=lambda i: vals[i])
    if vals[best] < target:
        return None, vals[best]
    lo, hi = 0.0, grid[best]
    for _ in range(60):
        mid = (lo + hi) / 2
        if s(mid) < target:
            lo = mid
        else:
            hi = mid
    return hi, vals[best]


def cmd_project(args):
    if args.params:
        with open(args.params) as f:
            prm = json.load(f)
    elif args.runs:
        runs, ars = load(args.runs)
        prm = fit(runs, ars, args)
    else:
        sys.exit("project: give --runs RUNS.json... or --params P.json")
    if prm.get("o_offload") is None:
        prm["o_offload"] = 0.0
    for k in ("c_img", "c_step", "a_img", "v_img", "o_offload", "o_mpi"):
        v = getattr(args, k, None)
        if v is not None:
            prm[k] = v
    if args.overlap is not None:
        prm["overlap"] = args.overlap
    if args.params_count:
        prm["grad_bytes"] = 4.0 * args.params_count
    prm.update(link_gbps=args.link_gbps, latency_us=args.latency_us, dpu_speed=args.dpu_speed)
    base_share = None
    steps1 = args.train_images / args.batch
    c1 = steps1 * (prm["c_step"] + args.batch * prm["c_img"])
    a1 = args.train_images * prm["a_img"] + args.test_images * prm["v_img"]
    base_share = a1 / (c1 + a1)
    if args.aug_share is not None:
        prm = with_aug_share(prm, args.aug_share, args.train_images, args.test_images, args.batch)
    share = args.aug_share if args.aug_share is not None else base_share
    nodes = [int(x) for x in args.nodes.split(",")]
    print("projection: %d training / %d test images per epoch, link %g Gb/s, latency %g us, "
          "dpu-speed %g, overlap %.2f, aug+val share of a 1-node host epoch %.1f%%%s"
          % (args.train_images, args.test_images, args.link_gbps, args.latency_us, args.dpu_speed,
             prm["overlap"], 100 * share, "" if args.aug_share is not None else " (measured)"))
    for kind in ("weak", "strong"):
        print()
        print("%s scaling (%s):" % (kind, "batch %d per node" % args.batch if kind == "weak"
                                    else "global batch %d" % args.global_batch))
        print("| nodes | host [s] | offload [s] | mpi [s] | offload saves | mpi saves | allreduce share | break-even dpu-speed |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for p in nodes:
            steps, b = steps_and_batch(p, kind, args.batch, args.global_batch, args.train_images)
            if b < 1:
                print("| %d | (global batch %d < nodes) |" % (p, args.global_batch))
                continue
            t = {w: epoch_time(prm, w, p, steps, b, args.train_images, args.test_images)
                 for w in WAYS if w == "host" or prm.get("o_" + w) is not None}
            h = t["host"]["time"]
            be = break_even(prm, p, steps, b, args.train_images, args.test_images)
            cell = lambda w, f: f(t[w]["time"]) if w in t else "-"  # noqa: E731
            print("| %d | %.4g | %s | %s | %s | %s | %.1f%% | %.3f |" % (
                p, h, cell("offload", lambda x: "%.4g" % x), cell("mpi", lambda x: "%.4g" % x),
                cell("offload", lambda x: "%.1f%%" % (100 * (h - x) / h)),
                cell("mpi", lambda x: "%.1f%%" % (100 * (h - x) / h)), 100 * t["host"]["allreduce"] / h, be))
    print()
    print("Jain et al. (HotI'21: 15%, IEEE Micro'22: 17.5% less training time): the saving is bounded by")
    print("the aug+val share of a host epoch (here %.1f%%); at dpu-speed %g the offload way reaches"
          % (100 * share, args.dpu_speed))
    for target in (0.15, 0.175):
        for p, kind in ((1, "weak"), (max(nodes), "weak"), (max(nodes), "strong")):
            sh, best = share_for(prm, target, p, kind, args)
            where = "%d node%s %s" % (p, "s" if p > 1 else "", kind if p > 1 else "")
            if sh is None:
                print("  %4.1f%% at %-16s: never (at most %.1f%%: the DPU stops keeping up first)"
                      % (100 * target, where, 100 * best))
            else:
                print("  %4.1f%% at %-16s: with aug+val %.1f%% of the host epoch" % (100 * target, where, 100 * sh))
        # With the DPU just keeping up (A = d C) and no overhead, saving = d/(1+d).
        print("  (%.1f%% needs dpu-speed >= %.3f even with no overhead: saving <= d/(1+d))"
              % (100 * target, target / (1 - target)))
    return prm


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(s):
        s.add_argument("--allreduce", action="append", default=[],
                       help="allreduce_bench JSON (may also be given among the runs)")
        s.add_argument("--overlap", type=float, help="hidden share of the allreduce (default: measured, else 0)")
        s.add_argument("--fit-link-gbps", type=float, default=25.0,
                       help="the measurement machine's interconnect, when no allreduce_bench JSON (25)")
        s.add_argument("--fit-latency-us", type=float, default=1.0)
        s.add_argument("--fit-dpu-speed", type=float, default=1.0,
                       help="the measured DPU's speed relative to the host (emulated: 1)")
        s.add_argument("--params-count", type=int, help="model parameters (gradient = 4 x)")
        s.add_argument("--calls", type=int, help="allreduce calls per step (default: layers with parameters)")
        s.add_argument("--c-step", type=float, help="host compute per step (default 0)")
        s.add_argument("--fit-c-step", action="store_true",
                       help="fit c_step too (needs runs with several images per node per step)")
        s.add_argument("--ranks-share-cores", action="store_true",
                       help="multi-rank runs shared one machine: use them for the allreduce only")
        s.add_argument("--machine-cores", type=int, default=0,
                       help="multi-node runs of a testbed whose nodes shared this many cores: fit on "
                            "1-node runs, predict the others as time-shared")
        s.add_argument("--a-img", type=float)
        s.add_argument("--v-img", type=float)

    f = sub.add_parser("fit", help="fit the parameters to measured runs; prediction error per run")
    f.add_argument("runs", nargs="+")
    f.add_argument("--params-out")
    f.add_argument("--check", nargs="+", default=[], help="runs to predict with the fitted parameters, not fitted")
    common(f)
    p = sub.add_parser("project", help="epoch time per way on many nodes, savings, break-even")
    p.add_argument("--runs", nargs="+")
    p.add_argument("--params", help="a fit's --params-out")
    p.add_argument("--nodes", default="1,2,4,8,64,256")
    p.add_argument("--link-gbps", type=float, default=DEFAULTS["link_gbps"])
    p.add_argument("--latency-us", type=float, default=DEFAULTS["latency_us"])
    p.add_argument("--dpu-speed", type=float, default=DEFAULTS["dpu_speed"])
    p.add_argument("--aug-share", type=float, help="aug+val share of a 1-node host epoch (0-1)")
    p.add_argument("--train-images", type=int, default=DEFAULTS["train_images"])
    p.add_argument("--test-images", type=int, default=DEFAULTS["test_images"])
    p.add_argument("--batch", type=int, default=DEFAULTS["batch"], help="weak scaling: per node")
    p.add_argument("--global-batch", type=int, default=DEFAULTS["global_batch"], help="strong scaling")
    p.add_argument("--c-img", type=float)
    p.add_argument("--o-offload", type=float)
    p.add_argument("--o-mpi", type=float)
    common(p)
    args = ap.parse_args(argv)
    if args.cmd == "fit":
        args.runs = args.runs + args.allreduce
        cmd_fit(args)
    else:
        if args.runs:
            args.runs = args.runs + args.allreduce
        if args.aug_share is not None and not 0 <= args.aug_share < 1:
            ap.error("--aug-share must be in [0, 1)")
        if args.dpu_speed <= 0:
            ap.error("--dpu-speed must be positive")
        cmd_project(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
