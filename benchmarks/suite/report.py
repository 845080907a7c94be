"""The report directory: results.csv, results.json, the plots and summary.md,
whose prose comes from report_template.md."""
import csv
import json
import os
import re
import statistics
import string

from plots import write_plots
from summary import TITLES, fmt, ratio_rows, summarize
from tables import micro_section, secondary_table, summary_table

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report_template.md")


def load_blocks(path=TEMPLATE):
    """{name: string.Template} of the template's blocks, each one line."""
    with open(path) as f:
        parts = re.split(r"^<!-- (\S+) -->\n", f.read(), flags=re.M)
    return {name: string.Template(" ".join(body.split("\n")).strip())
            for name, body in zip(parts[1::2], parts[2::2])}


BLOCKS = load_blocks()


def text(block, /, **values):
    """The template's block, filled with values (all must be given)."""
    return BLOCKS[block].substitute(values)


def write_data(suite, summary, checks, elapsed):
    """results.csv and results.json: the records, summary and verdicts."""
    keys = []
    for r in suite.records:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(os.path.join(suite.a.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(suite.records)
    suite.meta["elapsed_s"] = round(elapsed, 1)
    suite.meta["retried"] = suite.retried
    with open(os.path.join(suite.a.out, "results.json"), "w") as f:
        json.dump({"meta": suite.meta, "summary": summary, "checks": checks,
                   "failures": suite.failures, "notes": suite.notes,
                   "records": suite.records}, f, indent=1)


def write_report(suite, elapsed):
    a = suite.a
    out = a.out
    summary, checks = summarize(suite.records, a.max_foreign)
    plots = write_plots(out, summary, suite.records)
    write_data(suite, summary, checks, elapsed)
    m = suite.meta
    lines = [text("title", date=m["date"]), "",
             text("intro", kind=text("quick" if a.quick else "full"), reps=a.reps, cpus=m["cpus"],
                  cpu_model=m["cpu_model"], mpi_pml=a.mpi_pml, elapsed=f"{elapsed:.0f}",
                  retried=suite.retried, max_foreign=f"{100 * a.max_foreign:.0f}"), ""]
    if suite.failures or any(checks.values()):
        what = ("; ".join(f"{n}: {'; '.join(c)}" for n, c in checks.items() if c)
                or text("failed-runs", count=len(suite.failures)))
        lines += [text("failed", what=what), ""]
    lines += [summary_table(summary, checks, suite.records), "", secondary_table(summary), ""]
    loads = [r.get("foreign_cpu_pct", 0.0) for r in suite.records]
    if loads:
        med_load = statistics.median(loads)
        lines += [text("load-unreliable" if med_load > 100 * a.max_foreign else "load",
                       median=f"{med_load:.0f}", max=f"{max(loads):.0f}"), ""]
    plans = m.get("core_plans", {})
    lines += [text("cores", plans="; ".join(
        text("core-plan", name=n, host=p["host_cores"], dpus="/".join(p["dpu_cores"]))
        for n, p in plans.items())), ""]
    one_core = any(len(p["host_cores"].split(",")) == 1 for p in plans.values())
    lines += [text("why-heading"), ""] + explain(summary, one_core) + [""]
    if suite.notes:
        lines += [text("notes", notes="; ".join(suite.notes)), ""]
    for p in plots:
        lines.append(f"![{p}]({p})")
    if plots:
        lines.append("")
    micro = micro_section(out)
    if micro:
        lines += [text("micro-heading"), "", micro, ""]
    lines += [text("commands-heading"), ""]
    for name, cmds in m.get("commands", {}).items():
        for way, c in cmds.items():
            lines.append(text("command", name=name, way=way, command=c))
    lines.append("")
    if suite.failures:
        lines += [text("failures-heading"), "", "```"] + [f[:3000] for f in suite.failures] + ["```", ""]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines))
    return summary, checks


def explain(summary, one_core_host):
    """Numbers-backed notes for every workload where the offload is slower
    than the MPI rank (beyond the 10% target or not)."""
    notes = []
    for name, off, label, h, o, m, rm, rh in ratio_rows(summary):
        if rm != rm or rm <= 1.0:
            continue
        ways = summary[name]
        tag = text("tag-beyond" if rm > 1.10 else "tag-within", title=TITLES.get(name, name),
                   way="" if off == "offload" else f" ({off})", ratio=fmt(rm))
        if name == "augment":
            so = ways[off]["stall_ms_per_batch"]["median"]
            sm = ways["mpi"]["stall_ms_per_batch"]["median"]
            notes.append(text("why-augment", tag=tag, stall_offload=fmt(so), stall_mpi=fmt(sm),
                              train_offload=fmt(o["median"] - so), train_mpi=fmt(m["median"] - sm)))
        elif name.startswith("halo"):
            notes.append(text("why-halo", tag=tag,
                              exchange_offload=fmt(ways[off]["exchange_ms_per_iter"]["median"]),
                              exchange_mpi=fmt(ways["mpi"]["exchange_ms_per_iter"]["median"]),
                              how=text("halo-how-" + off),
                              waited=fmt(ways[off]["waited_ms_per_iter"]["median"])))
        else:
            notes.append(text("why-conv", tag=tag, host=fmt(h["median"]),
                              cost_offload=fmt(o["median"] - h["median"]),
                              cost_mpi=fmt(m["median"] - h["median"])))
    if not notes:
        notes.append(text("why-nowhere"))
    if one_core_host:
        notes.append(text("why-one-core"))
    return notes
