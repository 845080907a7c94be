"""The training benchmark's report: training.md (tables, targets, where
they are missed and why, with numbers), training.csv (one row per run and
epoch), training.json (everything) and the plots."""
import csv
import json
import os
import statistics

WAYS = {
    "host-1t": "host only, 1 thread (augmentation and validation on the host)",
    "offload": "OpenMP offload: augmentation + validation on the DPU (target nowait)",
    "mpi": "MPI rank on the DPU (MPMD) does augmentation + validation",
    "worker": "offload, and the DPU also trains a share of each batch (split from measured speeds)",
    "host-2t": "host only, 2 threads (both cores)",
    "pytorch-1t": "PyTorch 1.13, 1 thread",
    "pytorch-2t": "PyTorch 1.13, 2 threads",
    "heavy-host-1t": "heavy configuration (ResNet, 3x32x32, --augment heavy), host only, 1 thread",
    "heavy-offload": "heavy configuration, augmentation + validation on the DPU",
    "heavy-pytorch-1t": "heavy configuration in PyTorch (the same augmentation kinds, torch ops), 1 thread",
}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def mean(v):
    return sum(v) / len(v) if v else float("nan")


def summary(res):
    """Per-run figures from its epoch records."""
    recs = res.get("report", {}).get("epoch_records", [])
    if not recs:
        return None
    n = res["report"].get("train_images", 0) // res["report"].get("batch", 64) * res["report"].get("batch", 64)
    epoch_t = mean([r["time_s"] for r in recs])
    val = mean([r.get("val_s", 0.0) for r in recs])
    aug = mean([r.get("aug_s", 0.0) for r in recs])
    train_s = mean([r.get("train_s", r["time_s"] - r.get("val_s", 0.0)) for r in recs])
    cpu = mean([r["cpu_s"] for r in recs]) if all("cpu_s" in r for r in recs) else None
    compute = mean([r["compute_s"] for r in recs]) if all("compute_s" in r for r in recs) else None
    return {"epochs": len(recs), "test_acc": recs[-1]["test_acc"], "test_loss": recs[-1]["test_loss"],
            "loss": recs[-1]["loss"], "epoch_s": epoch_t, "images_s": n / epoch_t if epoch_t else 0,
            "train_images_s": n / train_s if train_s else 0, "aug_s": aug, "val_s": val, "cpu_s": cpu,
            "compute_s": compute,
            "total_s": res["report"].get("total_s", res["wall_s"]),
            "hashes": [r.get("hash") for r in recs]}


def median_run(rs):
    """The repetition of median mean epoch time (the lower one of an even
    count); a failed run only when none succeeded."""
    ok = sorted((r for r in rs if "error" not in r and summary(r)), key=lambda r: summary(r)["epoch_s"])
    return ok[(len(ok) - 1) // 2] if ok else rs[-1]


def by_repetition(runs):
    """{repetition: {name: summary}} of host-1t, offload and mpi."""
    byrep = {}
    for name in ("host-1t", "offload", "mpi"):
        for r in runs.get(name, []) if runs else []:
            x = summary(r) if "error" not in r else None
            if x:
                byrep.setdefault(r["rep"], {})[name] = x
    return byrep


def saved_share(h, o):
    """The share of the host's augmentation + validation time that offload
    saved (the target: at least 0.8)."""
    av = h["aug_s"] + h["val_s"]
    return (h["epoch_s"] - o["epoch_s"]) / av if av else 0.0


def per_repetition(runs, a, b, f):
    """f(a's summary, b's summary) of each repetition that has both (they
    run back to back)."""
    return [f(v[a], v[b]) for _, v in sorted(by_repetition(runs).items()) if a in v and b in v]


def paired_shares(runs):
    """saved_share of each repetition's host-1t and offload runs."""
    return per_repetition(runs, "host-1t", "offload", saved_share)


def paired_ratios(runs):
    """offload / mpi epoch time of each repetition."""
    return per_repetition(runs, "offload", "mpi", lambda o, m: o["epoch_s"] / m["epoch_s"])


def paired(runs):
    """The offload targets per repetition: host-only, offload and MPI runs
    of the same repetition (host-only and offload back to back)."""
    out = []
    byrep = by_repetition(runs)
    met = 0
    for rep in sorted(byrep):
        h, o, m = (byrep[rep].get(k) for k in ("host-1t", "offload", "mpi"))
        if not (h and o):
            continue
        bound = h["epoch_s"] - 0.8 * (h["aug_s"] + h["val_s"])
        met += o["epoch_s"] <= bound
        line = (f"| {rep} | {h['epoch_s']:.2f} | {h['aug_s'] + h['val_s']:.2f} | {bound:.2f} | {o['epoch_s']:.2f} | "
                f"{'met' if o['epoch_s'] <= bound else 'missed'} | ")
        line += f"{o['epoch_s'] / m['epoch_s']:.3f} |" if m else "– |"
        out.append(line)
    if not out:
        return []
    return ([f"Offload against host-only, each repetition on its own (met in {met} of {len(out)}):", "",
             "| repetition | host-only epoch [s] | host aug + val [s] | limit [s] | offload epoch [s] | "
             "offload target | offload / MPI |", "|---:|---:|---:|---:|---:|---|---:|"] + out + [""])


def pair_note(meta):
    n = meta.get("pair_reps", 0)
    return f" and {n} more of host-1t, offload and mpi alone" if n else ""


def accounting(runs):
    """Lines on where the epochs of host-1t, offload and mpi went, from each
    repetition's own records: the training computation (the same work in
    every way) and the rest (host-only: its augmentation and validation;
    the others: waiting for batches and results, issuing the work)."""
    byrep = by_repetition(runs)
    reps = [v for _, v in sorted(byrep.items())
            if all(k in v and v[k]["compute_s"] is not None for k in ("host-1t", "offload", "mpi"))]
    if len(reps) < 3:
        return []
    med = statistics.median
    rest = {k: med([v[k]["epoch_s"] - v[k]["compute_s"] for v in reps]) for k in ("host-1t", "offload", "mpi")}
    av = med([v["host-1t"]["aug_s"] + v["host-1t"]["val_s"] for v in reps])
    took = {k: (rest["host-1t"] - rest[k]) / av for k in ("offload", "mpi")}
    ratio = {k: [v[k]["compute_s"] / v["host-1t"]["compute_s"] for v in reps] for k in ("offload", "mpi")}
    return [
        "Where the epochs went (medians over the {} repetitions with all three ways): beside the training "
        "computation (forward, backward and update: the same work every way), host-only spent {:.3f} s per "
        "epoch (its augmentation and validation: {:.3f} s), offload {:.3f} s and mpi {:.3f} s (waiting for "
        "batches and validation results, issuing the work). By this account offload took {:.0f}% of the "
        "augmentation and validation off the host, mpi {:.0f}%. The training computation itself took, against "
        "host-only's in the same repetition, {:.3f}x with offload ({}) and {:.3f}x with mpi ({}): the epoch "
        "times' ratios vary with it.".format(
            len(reps), rest["host-1t"], av, rest["offload"], rest["mpi"], 100 * took["offload"],
            100 * took["mpi"], med(ratio["offload"]), ", ".join(f"{x:.3f}" for x in ratio["offload"]),
            med(ratio["mpi"]), ", ".join(f"{x:.3f}" for x in ratio["mpi"])), ""]


def share_and_saving(runs, host, off):
    """Each repetition's (host aug + val share of the host epoch, saved share
    of the host epoch, saved share of the host's aug + val) for the host-only
    and offload runs named, run back to back."""
    byrep = {}
    for name in (host, off):
        for r in runs.get(name, []) if runs else []:
            x = summary(r) if "error" not in r else None
            if x:
                byrep.setdefault(r["rep"], {})[name] = x
    out = []
    for _, v in sorted(byrep.items()):
        if host in v and off in v:
            h, o = v[host], v[off]
            av = h["aug_s"] + h["val_s"]
            cpu = (h["cpu_s"] - o["cpu_s"]) / h["cpu_s"] if h["cpu_s"] and o["cpu_s"] else None
            out.append((av / h["epoch_s"], (h["epoch_s"] - o["epoch_s"]) / h["epoch_s"], saved_share(h, o), h, o,
                        cpu))
    return out


def heavy(runs, meta, s):
    """Lines on the heavy configuration beside today's: the share of a
    host-only epoch that augmentation + validation take, and what offload
    saved, paired medians."""
    hv = share_and_saving(runs, "heavy-host-1t", "heavy-offload")
    if not hv:
        return []
    lt = share_and_saving(runs, "host-1t", "offload")
    med = statistics.median
    lines = ["## Heavy augmentation: the share the DPU can take, and what it saves", "",
             f"The ResNet (`dnnt_small_resnet`) on Fashion-MNIST upscaled to 3x32x32, `--augment heavy` (random "
             f"resized crop scale 0.35-1, aspect 3/4-4/3; rotation ±15°; flip; gain per channel ±0.2, contrast "
             f"±0.2, saturation ±0.4, brightness ±0.2), 1 epoch of "
             f"{meta.get('heavy_train_images', 0):,} training / {meta.get('heavy_test_images', 0):,} test images, "
             f"host-only and offload back to back, each first in turn ({len(hv)} repetition(s)).", "",
             "| configuration | repetitions | host epoch [s] | host aug [s] | host val [s] | aug + val share | "
             "offload epoch [s] | saved (share of the epoch) | saved (share of aug + val) | "
             "training thread CPU saved |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, v in (("today's (CNN, 28x28, light)", lt), ("heavy (ResNet, 3x32x32, heavy)", hv)):
        if not v:
            continue
        lines.append(f"| {label} | {len(v)} | {med([x[3]['epoch_s'] for x in v]):.2f} | "
                     f"{med([x[3]['aug_s'] for x in v]):.3f} | {med([x[3]['val_s'] for x in v]):.3f} | "
                     f"{100 * med([x[0] for x in v]):.1f}% | {med([x[4]['epoch_s'] for x in v]):.2f} | "
                     f"{100 * med([x[1] for x in v]):.1f}% | {100 * med([x[2] for x in v]):.0f}% | "
                     + (f"{100 * med([x[5] for x in v if x[5] is not None]):.1f}% |"
                        if any(x[5] is not None for x in v) else "– |"))
    lines += ["", "Medians over the repetitions, each column on its own; the saved shares are paired (each "
              "repetition's host-only and offload runs). 'training thread CPU saved': the CPU seconds of the "
              "training thread that offload saved, as a share of host-only's (a measure that other processes' "
              "load sways less than wall time). Per repetition (heavy): "
              + ", ".join(f"share {100 * x[0]:.1f}% saved {100 * x[1]:.1f}%" for x in hv) + "; (today's): "
              + ", ".join(f"share {100 * x[0]:.1f}% saved {100 * x[1]:.1f}%" for x in lt) + ".", ""]
    pt = s.get("heavy-pytorch-1t")
    if pt:
        lines += [f"PyTorch on the heavy configuration (1 thread): epoch {pt['epoch_s']:.2f} s, augmentation "
                  f"{pt['aug_s']:.2f} s + validation {pt['val_s']:.2f} s = "
                  f"{100 * (pt['aug_s'] + pt['val_s']) / pt['epoch_s']:.1f}% of the epoch.", ""]
    return lines


def fmt(x, d=1):
    return "–" if x is None else f"{x:,.{d}f}"


def targets(s, full, load, shares=None, ratios=None):
    """Lines on each target, met or missed, with numbers;
    shares and ratios: each repetition's paired saved_share and offload /
    mpi ratio (with at least 3, their medians decide the offload targets)."""
    out, missed = [], []
    h, o, m = s.get("host-1t"), s.get("offload"), s.get("mpi")
    if h and o:
        av = h["aug_s"] + h["val_s"]
        bound = h["epoch_s"] - 0.8 * av
        ok = o["epoch_s"] <= bound
        line = (f"- Offload epoch time {o['epoch_s']:.2f} s against host-only {h['epoch_s']:.2f} s minus 80% of "
                f"the host's augmentation + validation ({h['aug_s']:.2f} + {h['val_s']:.2f} s) = {bound:.2f} s "
                f"(saved {h['epoch_s'] - o['epoch_s']:.2f} s of {av:.2f} s offloadable, "
                f"{100 * saved_share(h, o):.0f}%)")
        if shares and len(shares) >= 3:
            med = statistics.median_low(shares)
            ok = med >= 0.8
            line += (f"; paired, each repetition's host-only and offload runs back to back: median saved "
                     f"{100 * med:.0f}% ({', '.join(f'{100 * x:.0f}%' for x in shares)})")
        out.append(line + f": **{'met' if ok else 'missed'}**.")
        if not ok:
            missed.append(
                f"Offload saves {h['epoch_s'] - o['epoch_s']:.2f} s per epoch of the {av:.2f} s the host spends on "
                f"augmentation and validation: the host still waits {o['aug_s']:.2f} s per epoch for batches and "
                f"{o['val_s']:.2f} s for validation results, and its training step runs "
                f"{o['epoch_s'] - o['aug_s'] - o['val_s'] - (h['epoch_s'] - av):+.2f} s longer than host-only's "
                f"(outside load {100 * load.get('offload', 0):.0f}% against {100 * load.get('host-1t', 0):.0f}% "
                f"during host-only; the hidden helper threads that ship the regions also run on the host core).")
    if o and m:
        r = o["epoch_s"] / m["epoch_s"]
        line = f"- Offload / MPI-rank-on-DPU epoch time: {r:.3f} (target at most 1.0)"
        if ratios and len(ratios) >= 3:
            r = statistics.median_low(ratios)
            line += (f"; paired, each repetition's offload and MPI runs back to back: median {r:.3f} "
                     f"({', '.join(f'{x:.3f}' for x in ratios)})")
        out.append(line + f": **{'met' if r <= 1.0 else 'missed'}**.")
        if r > 1.0:
            missed.append(f"Offload / MPI {r:.3f}; medians: offload epoch {o['epoch_s']:.2f} s against the MPI "
                          f"rank's {m['epoch_s']:.2f} s: the "
                          f"host waited {o['aug_s']:.2f} s per epoch for offloaded batches against "
                          f"{m['aug_s']:.2f} s for the MPI rank's (outside load {100 * load.get('offload', 0):.0f}% "
                          f"against {100 * load.get('mpi', 0):.0f}%).")
    for t in ("1t", "2t"):
        ours, pt = s.get(f"host-{t}"), s.get(f"pytorch-{t}")
        if ours and pt:
            r = ours["train_images_s"] / pt["train_images_s"]
            out.append(f"- Host-only training throughput with {t[0]} thread(s): {ours['train_images_s']:.0f} "
                       f"images/s against PyTorch's {pt['train_images_s']:.0f}: ratio {r:.2f} (target at least "
                       f"1.0): **{'met' if r >= 1.0 else 'missed'}**.")
            if r < 1.0:
                missed.append(f"Host-only with {t[0]} thread(s) trains at {r:.2f}x PyTorch's speed (outside load "
                              f"{100 * load.get('host-' + t, 0):.0f}% against {100 * load.get('pytorch-' + t, 0):.0f}%): "
                              f"dnnk's convolutions against PyTorch's oneDNN kernels (compare their passes with "
                              f"dnnk-bench --only conv).")
    if full:
        recs = full.get("epoch_records", [])
        best = [r for r in recs[:15] if r["test_acc"] >= 0.91]
        acc = max([r["test_acc"] for r in recs[:15]] or [0])
        out.append(f"- Full run ({full.get('way')} way, {len(recs)} epochs of 60,000 images): best test accuracy "
                   f"within 15 epochs {100 * acc:.2f}% (target 91%): **{'met' if best else 'missed'}**"
                   + (f", first reached after epoch {best[0]['epoch']}." if best else "."))
    return out, missed


def plots(out, results, full):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    styles = [("-", "o", 9), ("--", "s", 7), (":", "^", 5), ("-.", "x", 7), ("-", "d", 6), ("--", "v", 6)]
    for i, r in enumerate(results):
        recs = r.get("report", {}).get("epoch_records", [])
        if recs:
            # Distinct line styles and marker sizes: the ways that train the
            # same network draw on top of each other.
            ls, mk, ms = styles[i % len(styles)]
            e = [x["epoch"] for x in recs]
            ax[0].plot(e, [100 * x["test_acc"] for x in recs], ls=ls, marker=mk, ms=ms, label=r["name"])
            ax[1].plot(e, [x["loss"] for x in recs], ls=ls, marker=mk, ms=ms, label=r["name"])
    if full:
        recs = full.get("epoch_records", [])
        e = [x["epoch"] for x in recs]
        ax[0].plot(e, [100 * x["test_acc"] for x in recs], marker=".", label="full run (test)")
        ax[1].plot(e, [x["loss"] for x in recs], marker=".", label="full run (train loss)")
        ax[0].axhline(91, color="grey", ls="--", lw=0.8)
    ax[0].set(xlabel="epoch", ylabel="test accuracy [%]", title="Accuracy per epoch")
    ax[1].set(xlabel="epoch", ylabel="training loss", title="Loss per epoch")
    for a in ax:
        a.legend(fontsize=7)
        a.xaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "training_accuracy.png"), dpi=110)
    made.append("training_accuracy.png")
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    names = [r["name"] for r in results if r.get("summary")]
    ax[0].bar(names, [r["summary"]["epoch_s"] for r in results if r.get("summary")], color="tab:blue")
    ax[0].set(ylabel="seconds", title="Time per epoch (mean)")
    ax[1].bar(names, [r["summary"]["train_images_s"] for r in results if r.get("summary")], color="tab:green")
    ax[1].set(ylabel="images/s", title="Training throughput (without validation)")
    for a in ax:
        a.tick_params(axis="x", rotation=30, labelsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "training_speed.png"), dpi=110)
    made.append("training_speed.png")
    plt.close("all")
    return made


def write(out, meta, results, full, runs=None):
    """Writes the report; returns True if a run failed or the ways differ."""
    s = {}
    for r in results:
        r["summary"] = summary(r)
        if r["summary"]:
            s[r["name"]] = r["summary"]
    failed = any("error" in r for r in results)
    same = None
    if all(k in s for k in ("host-1t", "offload", "mpi")):
        same = s["host-1t"]["hashes"] == s["offload"]["hashes"] == s["mpi"]["hashes"]
        failed |= not same
    same_heavy = None
    if all(k in s for k in ("heavy-host-1t", "heavy-offload")):
        same_heavy = s["heavy-host-1t"]["hashes"] == s["heavy-offload"]["hashes"]
        failed |= not same_heavy
    lines = [f"# Training: ompdpu-train three ways, and PyTorch", "",
             f"{meta['date']}, {meta['host']}: {meta['cpus']} CPUs ({meta['cpu_model']}); emulated DPU "
             f"(ompdpu-server on loopback) on core 1, the host side on core 0 (host-only and PyTorch with 2 "
             f"threads: both cores). Reference CNN, Fashion-MNIST, batch 64, SGD momentum 0.9, lr 0.02 "
             f"(cosine), weight decay 5e-4; {meta['epochs']} epoch(s) of {meta['train_images']:,} training "
             f"images, validation on {meta['test_images']:,} test images after each epoch"
             f"{' (quick mode)' if meta['quick'] else ''}; {meta.get('reps', 1)} repetition(s) in rotated order"
             f"{pair_note(meta)}, "
             f"of each configuration the run of median epoch time kept. Whole benchmark: {meta['total_s']:.0f} s. 'outside load': CPU time other processes took "
             f"during the run, as a share of the machine.", ""]
    for n in meta["notes"]:
        lines += [f"Note: {n}", ""]
    lines += ["| run | what | final test acc | epoch [s] | images/s (epoch) | images/s (training) | "
              "host aug [s/epoch] | host val [s/epoch] | training thread CPU [s/epoch] | whole run [s] | "
              "outside load |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        x = r.get("summary")
        if not x:
            lines.append(f"| {r['name']} | {WAYS.get(r['name'], '')} | failed: {r.get('error', '?')} ||||||||||")
            continue
        lines.append(f"| {r['name']} | {WAYS.get(r['name'], '')} | {100 * x['test_acc']:.2f}% | {x['epoch_s']:.2f} | "
                     f"{x['images_s']:.0f} | {x['train_images_s']:.0f} | {x['aug_s']:.2f} | {x['val_s']:.2f} | "
                     f"{fmt(x['cpu_s'], 2)} | "
                     f"{x['total_s']:.1f} | {100 * r['foreign_cpu']:.0f}% (load {r['loadavg']:.1f}) |")
    lines += ["", "For the offload and MPI ways, 'host aug' and 'host val' are the time the host waited for "
              "batches and for validation results. 'images/s (training)' leaves validation out. 'training thread "
              "CPU': the CPU time of the thread that trains (not of OpenMP's other threads, libomp's helpers or "
              "an MPI rank's progress threads).", ""]
    if same is not None:
        lines += [f"Same network three ways: the weight hash after every epoch is "
                  f"{'identical' if same else 'DIFFERENT'} for host-1t, offload and mpi "
                  f"({', '.join(h or '?' for h in s['host-1t']['hashes'])}). host-2t differs in rounding "
                  f"only: dnnk's GEMM splits its depth over the threads when the result has few tiles.", ""]
    if same_heavy is not None:
        lines += [f"Same network both ways in the heavy configuration: the weight hash after every epoch is "
                  f"{'identical' if same_heavy else 'DIFFERENT'} for heavy-host-1t and heavy-offload.", ""]
    load = {r["name"]: r["foreign_cpu"] for r in results}
    tl, missed = targets(s, full, load, paired_shares(runs), paired_ratios(runs))
    lines += ["## Targets", ""] + tl + [""]
    if runs and meta.get("reps", 1) + meta.get("pair_reps", 0) > 1:
        lines += paired(runs) + accounting(runs)
    lines += heavy(runs, meta, s)
    if missed:
        lines += ["## Where a target is missed, and what limits it", ""] + [f"- {m}" for m in missed] + [""]
    lines += ["## Per epoch", "", "| run | epoch | loss | train acc | test acc | test loss | time [s] | images/s |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    rows = []
    for r in results + ([{"name": "full run", "report": full}] if full else []):
        for e in r.get("report", {}).get("epoch_records", []) if r.get("report") else []:
            lines.append(f"| {r['name']} | {e['epoch']} | {e['loss']:.4f} | {100 * e['train_acc']:.2f}% | "
                         f"{100 * e['test_acc']:.2f}% | {e['test_loss']:.4f} | {e['time_s']:.2f} | "
                         f"{e['images_s']:.0f} |")
            rows.append(dict(run=r["name"], **{k: v for k, v in e.items()}))
    made = plots(out, results, full)
    lines += [""] + [f"![{m}]({m})" for m in made] + [""]
    with open(os.path.join(out, "training.md"), "w") as f:
        f.write("\n".join(lines))
    keys = sorted({k for row in rows for k in row}, key=lambda k: (k != "run", k != "epoch", k))
    with open(os.path.join(out, "training.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "training.json"), "w") as f:
        json.dump({"meta": meta, "runs": results, "repetitions": runs, "full_run": full, "same_network": same,
                   "same_network_heavy": same_heavy, "targets": tl, "missed": missed,
                   "heavy": [{"share": x[0], "saved_of_epoch": x[1], "saved_of_aug_val": x[2], "cpu_saved": x[5]}
                             for x in share_and_saving(runs, "heavy-host-1t", "heavy-offload")],
                   "light": [{"share": x[0], "saved_of_epoch": x[1], "saved_of_aug_val": x[2], "cpu_saved": x[5]}
                             for x in share_and_saving(runs, "host-1t", "offload")]},
                  f, indent=1, default=str)
    return failed
