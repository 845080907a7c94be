"""The report's Markdown tables."""
import json
import os

from summary import METRICS, TITLES, WAY_LABEL, cell, cell_range, fmt, kind, ratio_rows, verdict

def micro_section(out):
    md = os.path.join(out, "micro.md")
    js = os.path.join(out, "micro.json")
    if os.path.exists(md):
        with open(md) as f:
            return f.read().strip()
    if os.path.exists(js):
        with open(js) as f:
            data = json.load(f)
        rows = data.get("table", data if isinstance(data, list) else [])
        if rows and isinstance(rows[0], dict):
            keys = list(rows[0].keys())
            lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
            for r in rows:
                lines.append("| " + " | ".join(fmt(v) if isinstance(v, float) else str(v) for v in r.values()) + " |")
            return "\n".join(lines)
    return None


def summary_table(summary, checks, records):
    lines = ["| workload | metric | host only | OpenMP offload | MPI rank on DPU | offload / MPI | "
             "offload / host | outputs |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for name, off, label, h, o, m, rm, rh in ratio_rows(summary):
        title = TITLES.get(name, name) + ("" if off == "offload" else " — DPUs as one MPI job")
        isas = {r.get("isa") for r in records if r["name"] == name} - {None}
        check = ("**MISMATCH**" if checks.get(name) else
                 "bit-identical" if len(isas) <= 1 else "bit-identical per ISA, rounding across")
        lines.append(f"| {title} | {label} | {cell(h)} | {cell(o)} | {cell(m)} | "
                     f"{fmt(rm)} ({verdict(rm)}) | {fmt(rh)} | {check} |")
    return "\n".join(lines)


def secondary_table(summary):
    lines = ["| workload | metric (median, min–max) | " +
             " | ".join(WAY_LABEL[w] for w in ["host", "offload", "offload-mpi", "mpi"])
             + " |", "|---|---|---:|---:|---:|---:|"]
    for name, ways in summary.items():
        _, _, _, secondary, _ = METRICS[kind(name)]
        for metric, label, unit in secondary:
            cells = [cell_range(ways[w].get(metric), unit) if w in ways else "-"
                     for w in ["host", "offload", "offload-mpi", "mpi"]]
            lines.append(f"| {TITLES.get(name, name)} | {label}{' [' + unit + ']' if unit and unit != '%' else ''} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)

