"""The records of a run, summarized: per workload and way, medians and
spreads of every metric, and the checksum verdicts (all ways must agree)."""
import statistics

WAY_LABEL = {"host": "host only", "offload": "OpenMP offload to DPU",
             "offload-mpi": "OpenMP offload, DPUs as MPI job",
             "mpi": "MPI rank on DPU"}

# Per workload: the primary metric (time, lower is better) and the others
# shown in the secondary table; the checksums that must agree.
METRICS = {
    "augment": ("ms_per_batch", "time per batch", "ms",
                [("batches_per_s", "batches/s", ""), ("stall_ms_per_batch", "host stall/batch", "ms")],
                ["batches_hash", "weights_hash"]),
    "halo": ("ms_per_iter", "time per iteration", "ms",
             [("exchange_ms_per_iter", "exchange alone", "ms"), ("compute_ms_per_iter", "sweeps alone", "ms"),
              ("exposed_ms_per_iter", "iteration - sweeps", "ms"), ("overlap", "overlap", "%"),
              ("waited_ms_per_iter", "rank 0 starting + waiting for the exchange", "ms")],
             ["grid_hash"]),
    "conv": ("ms_per_step", "time per step incl. transfers", "ms",
             [("gflops", "GFLOP/s", "")],
             ["outputs_hash"]),
}


def kind(name):
    for k in ("conv", "halo", "augment"):
        if name.startswith(k):
            return k
    return name


def stats(xs):
    xs = sorted(xs)
    med = statistics.median(xs)
    return {"median": med, "min": xs[0], "max": xs[-1], "n": len(xs),
            "spread_pct": 100.0 * (xs[-1] - xs[0]) / med if med else 0.0}


def clean_runs(wr, max_foreign):
    """The runs other processes did not disturb, when there are enough."""
    clean = [r for r in wr if r.get("foreign_cpu_pct", 0.0) <= 100 * max_foreign]
    return clean if len(clean) >= max(2, (len(wr) + 1) // 2) else wr


def summarize(records, max_foreign=1.0):
    """{name: {way: {metric: stats}}} and the checksum verdicts."""
    out, checks = {}, {}
    names = []
    for r in records:
        if r["name"] not in names:
            names.append(r["name"])
    for name in names:
        rs = [r for r in records if r["name"] == name]
        primary, _, _, secondary, hashes = METRICS[kind(name)]
        out[name] = {}
        for way in sorted({r["way"] for r in rs}, key=lambda w: (w != "host", w != "offload", w)):
            wr = clean_runs([r for r in rs if r["way"] == way], max_foreign)
            out[name][way] = {m: stats([r[m] for r in wr]) for m in [primary] + [s[0] for s in secondary]}
        bad = []
        # Bit-identical within a group of ways that compute on the same ISA
        # (all of them, except conv on a real DPU: x86 host against Arm DPU).
        groups = {}
        for r in rs:
            groups.setdefault(r.get("isa", "same"), []).append(r)
        for isa, grs in groups.items():
            for h in hashes:
                vals = {}
                for r in grs:
                    vals.setdefault(r[h], []).append(f"{r['way']}#{r['rep']}")
                if len(vals) > 1:
                    bad.append(f"{h} differs{'' if isa == 'same' else ' on ' + isa}: " +
                               "; ".join(f"{v} from {', '.join(ws)}" for v, ws in vals.items()))
        if len(groups) > 1 and all("outputs_l2" in r for r in rs):
            ref = [g[0]["outputs_l2"] for g in groups.values()]
            rel = (max(ref) - min(ref)) / max(abs(max(ref)), 1e-30)
            if rel > 1e-4:
                bad.append(f"outputs differ across ISAs beyond rounding: sum of squares {ref} (rel. {rel:.1e})")
        checks[name] = bad
    return out, checks


def fmt(x, unit=""):
    if unit == "%":
        return f"{100 * x:.0f}%"
    if x != x:
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}" if abs(x) >= 1 else f"{x:.3f}"


def cell(s, unit=""):
    if s is None:
        return "-"
    return f"{fmt(s['median'], unit)} (±{s['spread_pct'] / 2:.0f}%)"


def cell_range(s, unit=""):
    if s is None:
        return "-"
    return f"{fmt(s['median'], unit)} ({fmt(s['min'], unit)}–{fmt(s['max'], unit)})"


TITLES = {"augment": "augmentation pipeline", "halo": "halo exchange (Jacobi)",
          "halo2k": "halo exchange, Jacobi 2048² grid", "halo4k": "halo exchange, Jacobi 4096² grid",
          "conv3x3": "conv layer 3x3 fwd+bwd", "conv1x1": "conv layer 1x1 fwd+bwd"}


def ratio_rows(summary):
    """(name, offload way, metric label, host, offload, mpi, off/mpi, off/host)."""
    rows = []
    for name, ways in summary.items():
        primary, label, unit, _, _ = METRICS[kind(name)]
        for off in [w for w in ways if w.startswith("offload")]:
            h = ways.get("host", {}).get(primary)
            o = ways[off][primary]
            m = ways.get("mpi", {}).get(primary)
            rows.append((name, off, f"{label} [{unit}]", h, o, m,
                         o["median"] / m["median"] if m else float("nan"),
                         o["median"] / h["median"] if h else float("nan")))
    return rows


def verdict(r):
    if r != r:
        return "-"
    if r <= 1.0:
        return "**faster**"
    return "within 10%" if r <= 1.10 else "**slower**"
