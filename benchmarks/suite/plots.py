"""The report's plots (matplotlib; none without it)."""
import os

from runs import log
from summary import TITLES, WAY_LABEL, fmt, ratio_rows

def write_plots(out, summary, records):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (apt-get install python3-matplotlib): no plots")
        return []
    colors = {"host": "#7f7f7f", "offload": "#1f77b4", "offload-mpi": "#17becf", "mpi": "#ff7f0e"}
    files = []

    def bars(ax, name, metric, unit, title, scale=1.0):
        ways = summary[name]
        ws = [w for w in ways if metric in ways[w]]
        med = [ways[w][metric]["median"] * scale for w in ws]
        lo = [med[i] - ways[w][metric]["min"] * scale for i, w in enumerate(ws)]
        hi = [ways[w][metric]["max"] * scale - med[i] for i, w in enumerate(ws)]
        ax.bar(range(len(ws)), med, yerr=[lo, hi], capsize=4, color=[colors.get(w, "#999") for w in ws])
        ax.set_xticks(range(len(ws)))
        ax.set_xticklabels([WAY_LABEL.get(w, w).replace(", ", ",\n").replace(" to ", "\nto ")
                            for w in ws], fontsize=7)
        ax.set_ylabel(unit)
        ax.set_title(title, fontsize=9)
        for i, v in enumerate(med):
            ax.annotate(fmt(v), (i, v), ha="center", va="bottom", fontsize=7,
                        xytext=(0, 2), textcoords="offset points")

    def save(fig, name):
        fig.tight_layout()
        fig.savefig(os.path.join(out, name), dpi=110)
        plt.close(fig)
        files.append(name)

    if "augment" in summary:
        fig, ax = plt.subplots(1, 2, figsize=(9, 3.4))
        bars(ax[0], "augment", "batches_per_s", "batches/s", "Augmentation pipeline: throughput (higher is better)")
        bars(ax[1], "augment", "stall_ms_per_batch", "ms", "Host stall per batch (lower is better)")
        save(fig, "augment.png")
    halos = [n for n in summary if n.startswith("halo")]
    if halos:
        fig, ax = plt.subplots(len(halos), 2, figsize=(9, 3.4 * len(halos)), squeeze=False)
        for i, n in enumerate(halos):
            bars(ax[i][0], n, "ms_per_iter", "ms", f"{TITLES.get(n, n)}: time per iteration")
            # The exchange's cost alone against what of it shows in an
            # iteration (iteration - sweeps; 0 when fully hidden).
            ways = summary[n]
            ws = [w for w in ways if "exchange_ms_per_iter" in ways[w]]
            x = list(range(len(ws)))
            alone = [ways[w]["exchange_ms_per_iter"]["median"] for w in ws]
            shown = [max(0.0, ways[w]["exposed_ms_per_iter"]["median"]) for w in ws]
            a2 = ax[i][1]
            a2.bar([v - 0.2 for v in x], alone, 0.4, color=[colors.get(w, "#999") for w in ws], alpha=0.45,
                   hatch="//", label="exchange alone")
            a2.bar([v + 0.2 for v in x], shown, 0.4, color=[colors.get(w, "#999") for w in ws],
                   label="iteration - sweeps (exposed)")
            a2.set_xticks(x)
            a2.set_xticklabels([WAY_LABEL.get(w, w).replace(", ", ",\n").replace(" to ", "\nto ") for w in ws],
                               fontsize=7)
            a2.set_ylabel("ms")
            a2.set_title("Exchange: cost alone (hatched) and exposed per iteration", fontsize=9)
        save(fig, "halo.png")
    convs = [n for n in summary if n.startswith("conv")]
    if convs:
        fig, ax = plt.subplots(1, len(convs), figsize=(4.5 * len(convs), 3.4), squeeze=False)
        for i, n in enumerate(convs):
            bars(ax[0][i], n, "ms_per_step", "ms", f"{TITLES.get(n, n)}: time per step")
        save(fig, "conv.png")
    rows = ratio_rows(summary)
    if rows:
        fig, ax = plt.subplots(figsize=(9, 3.2))
        labels = [n if off == "offload" else f"{n} ({off})" for n, off, *_ in rows]
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], [r[6] for r in rows], 0.4, label="offload / MPI rank on DPU", color="#ff7f0e")
        ax.bar([i + 0.2 for i in x], [r[7] for r in rows], 0.4, label="offload / host only", color="#7f7f7f")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.axhline(1.1, color="red", lw=0.8, ls="--", label="target: offload within 10% of MPI")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("time ratio (lower: offload faster)")
        top = max([1.2] + [r[6] for r in rows if r[6] == r[6]] + [r[7] for r in rows if r[7] == r[7]])
        ax.set_ylim(0, top * 1.3)
        ax.legend(fontsize=7, loc="upper center", ncol=3)
        save(fig, "ratios.png")
    return files

