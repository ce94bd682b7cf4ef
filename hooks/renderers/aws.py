"""AWS instance tables for the "GPUs on AWS" page, rendered from docs/data/aws-*.csv.

The chooser (snippets/aws/choose_instance.py) reads the same instance file; the tests check that
its loader accepts every row, so the page and the chooser read the same file under the same rules.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from html import escape
from pathlib import Path

from . import markdown_table, read_csv, renderer, value

UNCONFIRMED = "†"
FLAGGED = {"specs": {"accelerators", "vcpus"}, "status": {"status"},
           "spec date": {"sources"}, "price": {"price"}}


def accelerators(row: dict) -> str:
    """"8 × H100 80 GiB": count, model without the vendor, memory each."""
    count = float(row["accelerator_count"])
    name = row["accelerator"].removeprefix("NVIDIA ").removeprefix("AWS ")
    size = f"{float(row['accelerator_memory_gib']):g} GiB"
    if count < 1:
        return f"{count:g} of 1 {name} ({size})"
    return f"{count:g} × {name} {size}"


def table_for(rows: list[dict], sources: dict[str, int], usual: set[int]) -> str:
    """Seven narrow columns; what is unusual about a row (status, other sources, unconfirmed
    fields) goes into its notes cell, the rest under the table."""
    header = ["instance", "accelerators", "vCPUs", "$/hour", "$/GPU-hour", "BF16 / FP8", "notes"]
    body = []
    for r in sorted(rows, key=lambda r: (r["family"], float(r["on_demand_usd_per_hour"]))):
        lp = set(r["low_precision"].split(";"))
        refs = sorted({sources[(r[f"{k}_source"], r[f"{k}_as_of"])] for k in ("price", "spec")} - usual)
        notes = [r["status"]] if r["status"] != "current" else []
        notes += [f"[{n}]" for n in refs]
        flagged = {f.strip() for f in r.get("unconfirmed", "").split(";") if f.strip()}
        if flagged:
            notes.append(f"{UNCONFIRMED} {', '.join(sorted(flagged))}")
        # the unconfirmed mark on each field the row's `unconfirmed` column covers
        mark = {field: f" {UNCONFIRMED}" for f in flagged for field in FLAGGED.get(f, {f})}
        body.append([
            f"`{r['instance_type']}`", accelerators(r) + mark.get("accelerators", ""),
            r["vcpus"] + mark.get("vcpus", ""),
            f"{float(r['on_demand_usd_per_hour']):.4f}" + mark.get("price", ""),
            f"{float(r['usd_per_accelerator_hour']):.4f}",
            f"{'yes' if 'bf16' in lp else 'no'} / {'yes' if 'fp8' in lp else 'no'}",
            "; ".join(notes)])
    return markdown_table(header, body, "llrrrll")


def linked(text: str) -> str:
    """Escape a source line and make each URL in it a link."""
    return " ".join(f"<{word}>" if word.startswith("https://") else escape(word)
                    for word in text.split(" "))


def numbered_sources(rows: list[dict]) -> tuple[dict, set[int]]:
    """({(source, as of): its number}, the numbers of the price and spec sources most rows share:
    those are named once, under the table)."""
    keys = sorted({(r["price_source"], r["price_as_of"]) for r in rows}
                  | {(r["spec_source"], r["spec_as_of"]) for r in rows})
    sources = {k: n for n, k in enumerate(keys, start=1)}
    usual = {Counter(sources[(r[f"{kind}_source"], r[f"{kind}_as_of"])] for r in rows).most_common(1)[0][0]
             for kind in ("price", "spec")}
    return sources, usual


@value("aws.usual_sources")
def usual_sources(docs_dir: Path, path: str) -> str:
    return " and ".join(f"[{n}]" for n in sorted(numbered_sources(read_csv(docs_dir, path))[1]))


@renderer("aws_instances")
def aws_instances(docs_dir: Path, path: str) -> str:
    """One tab per role (and the retired types), a table each."""
    rows = read_csv(docs_dir, path)
    sources, usual = numbered_sources(rows)
    tabs = {role.title(): [r for r in rows if r["role"] == role and r["status"] != "retired"]
            for role in ("training", "inference", "graphics")}
    tabs["Retired"] = [r for r in rows if r["status"] == "retired"]
    return "\n".join(f'=== "{title} ({len(tab)})"\n\n{textwrap.indent(table_for(tab, sources, usual), "    ")}\n'
                     for title, tab in tabs.items())


@renderer("aws_notes")
def aws_notes(docs_dir: Path, path: str) -> str:
    """The rows' notes (one per family where all its rows share it) and the numbered sources."""
    rows = read_csv(docs_dir, path)
    sources = numbered_sources(rows)[0]
    family: dict[str, list] = {}
    for r in rows:
        family.setdefault(r["instance_type"].split(".")[0], []).append(r.get("notes", ""))
    shared = {f: n[0] for f, n in family.items() if len(n) > 1 and len(set(n)) == 1 and n[0]}
    notes = [f"- `{r['instance_type']}`: {escape(r['notes'])}" for r in rows
             if r.get("notes") and r["instance_type"].split(".")[0] not in shared]
    notes += [f"- `{f}.*`: {escape(note)}" for f, note in shared.items()]
    listing = "\n".join(f"[{n}] {linked(src)}, as of {date}" for (src, date), n in sources.items())
    return ("Notes:\n\n" + "\n".join(notes)
            + "\n\nSources:\n\n" + "\n".join(f"- {line}" for line in listing.splitlines()) + "\n")


@renderer("aws_cost_per_job")
def aws_cost_per_job(docs_dir: Path, path: str, reference: str, hours: str, tflops: str) -> str:
    """What one compute-bound job costs on several instances, scaled by dense BF16 TFLOPS.

    tflops: "instance:TFLOPS per accelerator,..." (sourced on the page); the job takes `hours`
    on `reference`, and on another instance hours x (reference's total / its total TFLOPS)."""
    rows = {r["instance_type"]: r for r in read_csv(docs_dir, path)}
    total = {k: float(v) * float(rows[k]["accelerator_count"])
             for k, v in (item.split(":") for item in tflops.split(","))}
    price = {k: float(rows[k]["on_demand_usd_per_hour"]) for k in total}
    took = {k: float(hours) * total[reference] / t for k, t in total.items()}
    body = [[f"`{k}`", f"{rows[k]['accelerator_count']} × {rows[k]['accelerator']}", f"{total[k]:,.0f}",
             f"{price[k]:.4f}", f"{took[k]:.1f}", f"{took[k] * price[k]:,.2f}"]
            for k in sorted(total, key=lambda k: took[k] * price[k])]
    return markdown_table(["instance", "accelerators", "dense BF16 TFLOPS", "$/hour", "hours",
                           "job $"], body, "llrrrr") + "\n"
