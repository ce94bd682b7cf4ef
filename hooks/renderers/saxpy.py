"""SAXPY results (snippets/saxpy/measure_saxpy.py): bandwidth table, size sweep, transfers.

Each renderer takes `path=` (the GPU results file) and an optional `fallback=` (a file measured
without a GPU); when `path` does not exist yet it renders the fallback under a warning that says so.
"""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path

from . import markdown_table, renderer, svg_figure
from .run_details import describe_run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "snippets"))
from bench.results import load_results  # noqa: E402

NAMES = {
    "cuda_c": "CUDA C",
    "numba_cuda": "Numba CUDA",
    "cupy_kernel": "CuPy ElementwiseKernel",
    "cupy_expression": "CuPy expression `a * x + y`",
    "numba_parallel": "Numba parallel (all cores)",
    "numpy": "NumPy (one core)",
}
ORDER = list(NAMES)


def resolve(docs_dir: Path, path: str, fallback: str | None) -> tuple[dict, str]:
    """(results document, Markdown to put before the rendering)."""
    if (docs_dir / path).is_file():
        return load_results(docs_dir / path), ""
    if fallback and (docs_dir / fallback).is_file():
        doc = load_results(docs_dir / fallback)
        cpu = doc["system"]["host"]["cpu"]
        return doc, (f'!!! warning "No GPU results yet"\n\n    `{path}` does not exist yet: this '
                     f"shows `{fallback}`, measured without a GPU on {escape(cpu)}.\n\n")
    raise FileNotFoundError(f"neither {path} nor a fallback file exists under {docs_dir}")


def name(variant: str) -> str:
    return NAMES.get(variant, variant)


def kernel_rows(doc: dict, case: str) -> list[dict]:
    return [m for m in doc["measurements"] if m["case"] == case and m["phase"] == "kernel"]


def ceiling_bandwidth(doc: dict, ceiling: dict | None, n: int) -> float | None:
    """Bandwidth of the measurement named as a variant's ceiling (same run, same N)."""
    ceiling = ceiling or {}
    for m in kernel_rows(doc, ceiling.get("case", "")):
        if m["variant"] == ceiling.get("variant") and m["params"]["n"] == n:
            return m["bytes"] / m["median_s"]
    return None


def fmt_n(n: int) -> str:
    e = n.bit_length() - 1
    return f"2<sup>{e}</sup> = {n:,}" if n == 1 << e else f"{n:,}"


@renderer("saxpy_table")
def saxpy_table(docs_dir: Path, path: str, fallback: str | None = None) -> str:
    doc, intro = resolve(docs_dir, path, fallback)
    largest: dict = {}
    for m in kernel_rows(doc, "saxpy"):
        v = m["variant"]
        if v not in largest or m["params"]["n"] > largest[v]["params"]["n"]:
            largest[v] = m
    rows = []
    for v in sorted(largest, key=lambda v: ORDER.index(v) if v in ORDER else len(ORDER)):
        m = largest[v]
        n = m["params"]["n"]
        bw = m["bytes"] / m["median_s"]
        ceiling = ceiling_bandwidth(doc, m.get("ceiling"), n)
        frac = f"{100 * bw / ceiling:.0f}%" if ceiling else "–"
        roof = f"{ceiling / 1e9:,.1f}" if ceiling else "–"
        rows.append([name(v), m["device"].upper(), fmt_n(n), f"{m['median_s'] * 1e3:.4f}",
                     f"{bw / 1e9:,.1f}", roof, frac])
    if not rows:
        raise ValueError(f"{path}: no SAXPY measurements")
    table = markdown_table(["version", "device", "N (float32)", "time (ms)", "SAXPY GB/s",
                            "copy GB/s, same run", "of copy"], rows, "llrrrrr")
    return intro + table + "\n\n" + how_measured(doc) + "\n"


def how_measured(doc: dict) -> str:
    notes = "".join(f"\n- {escape(n)}" for n in doc.get("notes", []))
    body = describe_run(doc) + (f"\n\nNotes:{notes}" if notes else "")
    return '??? info "How this was measured"\n\n' + "\n".join(
        "    " + line for line in body.splitlines()) + "\n"


@renderer("saxpy_sweep")
def saxpy_sweep(docs_dir: Path, path: str, fallback: str | None = None) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    doc, intro = resolve(docs_dir, path, fallback)
    fig, ax = plt.subplots(figsize=(8, 4.6))
    series: dict = {}
    for m in kernel_rows(doc, "saxpy"):
        series.setdefault(name(m["variant"]).replace("`", ""), []).append(m)
    # One ceiling line per device: the GPU copy (CUDA C's when present), the CPU parallel read.
    gpu_copies = {m["variant"] for m in kernel_rows(doc, "copy") if m["device"] == "gpu"}
    shown = next((v for v in ("cuda_c", "numba_cuda", "cupy") if v in gpu_copies), None)
    for m in kernel_rows(doc, "copy") + kernel_rows(doc, "read"):
        if m["device"] == "gpu" and m["variant"] == shown:
            series.setdefault(f"device copy ({name(shown)})", []).append(m)
        elif m["device"] == "cpu" and m["case"] == "read":
            series.setdefault("CPU parallel read (sum)", []).append(m)
    for label, ms in sorted(series.items()):
        ms.sort(key=lambda m: m["params"]["n"])
        style = "--" if ("copy" in label or "read" in label) else "-"
        ax.plot([m["params"]["n"] for m in ms], [m["bytes"] / m["median_s"] / 1e9 for m in ms],
                style, marker="o", ms=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (float32 elements per array)")
    ax.set_ylabel("effective bandwidth (GB/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7)
    alt = ("SAXPY effective bandwidth against array size, one line per version, with the "
           "device copy measured in the same run")
    return intro + svg_figure(fig, alt=alt) + "\n"


@renderer("saxpy_transfers")
def saxpy_transfers(docs_dir: Path, path: str, fallback: str | None = None) -> str:
    doc, intro = resolve(docs_dir, path, fallback)
    rows = [[{"h2d": "host → device", "d2h": "device → host"}[m["case"]], m["host_memory"],
             fmt_n(m["params"]["n"]), f"{m['median_s'] * 1e3:.2f}",
             f"{m['bytes'] / m['median_s'] / 1e9:.1f}"]
            for m in doc["measurements"] if m["phase"] == "transfer"]
    first = [[name(m["variant"]), m["device"].upper(), f"{m['median_s']:.2f}"]
             for m in doc["measurements"] if m["phase"] == "compile_first"]
    out = intro
    if rows:
        out += markdown_table(["direction", "host memory", "N (float32)", "time (ms)", "GB/s"],
                              rows, "llrrr") + "\n\n"
    else:
        out += "No host↔device copies in this file: it was measured without a GPU.\n\n"
    if first:
        out += ("First call of each compiled version (compilation included, "
                "timed once):\n\n")
        out += markdown_table(["version", "device", "first call (s)"], first, "llr") + "\n"
    return out
