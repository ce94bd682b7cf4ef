"""SAXPY results (python snippets/bench/run.py saxpy): the progression, every version against the
fastest copy of its round, the copies, the size sweep, transfers and the Nsight Compute report.

Every ratio is taken against one ceiling per round: the fastest device copy measured in that
round (snippets/saxpy/benchmark.py, `of_fastest_copy`).
"""

from __future__ import annotations

import re
from pathlib import Path

from . import markdown_table, renderer, svg_figure
from bench import results

from .run_details import describe_run, label, load_results, of_group

ROUNDS = ("gpu-1", "gpu-2", "gpu-3")


def name(doc: dict, variant: str) -> str:
    return label(doc, variant)


def of_fastest_copy(doc: dict) -> dict[str, dict[str, float]]:
    return results.share_of_best(doc, "copy")


STEPS = [("one element per thread", "one"), ("grid-stride, one per trip", "grid_stride"),
         ("grid-stride, four per trip", "unrolled"), ("16-byte loads and stores", None)]


def kernel_rows(doc: dict, case: str) -> dict[str, dict]:
    return {m["variant"]: m for m in doc["measurements"]
            if m["case"] == case and m["phase"] == "kernel"}


def gbs(m: dict) -> float:
    return m["bytes"] / m["median_s"] / 1e9


def pct(x: float) -> str:
    return f"{100 * x:.1f}&nbsp;%"


def fastest_copy(doc: dict, case: str) -> dict:
    copies = [m for v, m in kernel_rows(doc, case).items() if v in of_group(doc, "copy")]
    return max(copies, key=gbs)


def how_measured(doc: dict) -> str:
    notes = "".join(f"\n- {n}" for n in doc.get("notes", []))
    body = describe_run(doc) + (f"\n\nNotes:{notes}" if notes else "")
    return '??? info "How this was measured"\n\n' + "\n".join(
        "    " + line for line in body.splitlines()) + "\n"


@renderer("saxpy_progression")
def saxpy_progression(docs_dir: Path, path: str) -> str:
    doc, _, intro = load_results(docs_dir, path)
    ratios = of_fastest_copy(doc)["gpu-1"]
    rows = kernel_rows(doc, "gpu-1")
    out = []
    for k, (step, suffix) in enumerate(STEPS, 1):
        cells = [f"{k}. {step}"]
        for toolkit, last in (("cuda_c", "float4"), ("numba", "vector")):
            v = f"{toolkit}_{suffix or last}"
            cells.append(f"{gbs(rows[v]):,.0f} GB/s ({pct(ratios[v])})" if v in rows else "–")
        out.append(cells)
    best = fastest_copy(doc, "gpu-1")
    n = rows["cuda_c_float4"]["params"]["n"]
    return (intro + markdown_table(["step", "CUDA C", "Numba"], out, "lrr")
            + f"\n\nN = 2<sup>{n.bit_length() - 1}</sup> float32, kernel time by CUDA events "
            f"(median); in brackets: of the fastest device copy of the same run, "
            f"{name(doc, best['variant'])} at {gbs(best):,.0f} GB/s.\n")


@renderer("saxpy_table")
def saxpy_table(docs_dir: Path, path: str) -> str:
    doc, _, intro = load_results(docs_dir, path)
    ratios = of_fastest_copy(doc)
    first = kernel_rows(doc, "gpu-1")
    rows = []
    for v in ("cuda_c_float4", "numba_vector", "cupy_raw", "torch_saxpy", "cupy_elementwise_256",
              "cupy_elementwise", "cupy_expression"):
        if v not in first:
            continue
        seen = [ratios[r][v] for r in ROUNDS if r in ratios and v in ratios[r]]
        spread = (f"{pct(min(seen))} – {pct(max(seen))}" if len(seen) > 1 else "one round")
        rows.append([name(doc, v), f"{gbs(first[v]):,.0f}", pct(ratios["gpu-1"][v]), spread])
    cpu = kernel_rows(doc, "cpu")
    for v in ("numba_parallel", "numpy"):
        if v in cpu:
            rows.append([name(doc, v), f"{gbs(cpu[v]):,.0f}", "–", "–"])
    if not rows:
        raise ValueError(f"{path}: no SAXPY measurements")
    n_gpu = first["cuda_c_float4"]["params"]["n"] if "cuda_c_float4" in first else 0
    n_cpu = next(iter(cpu.values()))["params"]["n"] if cpu else 0
    cpu_text = (f" The CPU rows: N = 2<sup>{n_cpu.bit_length() - 1}</sup>, on "
                f"{doc['system']['host'].get('cores', '?')} vCPUs of the virtual machine that "
                f"hosts the GPU ({doc['system']['host'].get('cpu', '?')}).") if cpu else ""
    return (intro + markdown_table(["version", "GB/s", "of fastest copy", "range, 3 rounds"],
                                   rows, "lrrr")
            + f"\n\nGPU rows: N = 2<sup>{n_gpu.bit_length() - 1}</sup> float32, round 1; the "
            "last column is the lowest and highest ratio over the rounds that measured the "
            f"version, each against its own round's fastest copy.{cpu_text}\n\n"
            + how_measured(doc) + "\n")


@renderer("saxpy_copies")
def saxpy_copies(docs_dir: Path, path: str) -> str:
    doc, _, intro = load_results(docs_dir, path)
    rows = kernel_rows(doc, "gpu-1")
    copies = sorted((m for v, m in rows.items() if v in of_group(doc, "copy")), key=gbs,
                    reverse=True)
    best = gbs(copies[0])
    table = [[name(doc, m["variant"]), f"{gbs(m):,.0f}", pct(gbs(m) / best)]
             for m in copies]
    return intro + markdown_table(["copy", "GB/s", "of the fastest"], table, "lrr") + "\n"


@renderer("saxpy_sweep")
def saxpy_sweep(docs_dir: Path, path: str) -> str:
    import matplotlib.pyplot as plt

    doc, _, intro = load_results(docs_dir, path)
    series: dict[str, list[tuple[int, float]]] = {}
    for m in doc["measurements"]:
        if m["phase"] != "kernel" or not (m["case"].startswith("small-") or m["case"] == "gpu-1"):
            continue
        if m["variant"] in ("cuda_c_float4", "numba_vector", "cuda_c_copy_float4"):
            series.setdefault(name(doc, m["variant"]).replace("`", ""), []).append(
                (m["params"]["n"], gbs(m)))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (label, pts), marker in zip(sorted(series.items()), "osD"):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, ms=5, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (float32 elements per array)")
    ax.set_ylabel("GB/s (CUDA events)")
    ax.grid(True, which="major")
    ax.legend(loc="lower right")
    alt = ("Effective bandwidth of the CUDA C float4 SAXPY, the Numba vector SAXPY and the float4 "
           "copy kernel against array size: flat at small sizes, where a launch's fixed cost "
           "dominates, rising to the memory's rate at the largest size")
    return intro + svg_figure(fig, alt=alt) + "\n"


@renderer("saxpy_compile")
def saxpy_compile(docs_dir: Path, path: str) -> str:
    doc, _, intro = load_results(docs_dir, path)
    rows = [[name(doc, m["variant"]), m["phase"].replace("_", " "), f"{m['median_s']:.2f}"]
            for m in doc["measurements"] if m["case"] == "compile"]
    return intro + markdown_table(["what", "phase", "seconds"], rows, "llr") + (
        "\n\nEach a first call in a fresh process: with an empty on-disk cache "
        "(compile first), then with the cache that run left (compile cached).\n")


@renderer("saxpy_transfers")
def saxpy_transfers(docs_dir: Path, path: str) -> str:
    doc, _, intro = load_results(docs_dir, path)
    names = {"h2d": "host → device", "d2h": "device → host"}
    rows = [[names[m["variant"][:3]], m["variant"][4:], f"{m['median_s'] * 1e3:.1f}",
             f"{m['bytes'] / m['median_s'] / 1e9:.1f}"]
            for m in doc["measurements"] if m["case"] == "pcie" and m["phase"] == "kernel"]
    if not rows:
        return intro + "No host↔device copies in this file.\n"
    n = next(m["params"]["n"] for m in doc["measurements"] if m["case"] == "pcie")
    return (intro + markdown_table(["direction", "host memory", "ms", "GB/s"], rows, "llrr")
            + f"\n\n2<sup>{n.bit_length() - 1}</sup> float32 (one array) through PyTorch, from "
            "the machine measurement of the [CPU vs GPU](../why/cpu-vs-gpu.md) page.\n")


NCU_KERNEL = re.compile(r"^  (\w+)[^()]*(?:\([^)]*\))? \((\d+), 1, 1\)x\((\d+), 1, 1\)")
NCU_METRICS = {"Duration": "duration (µs)", "DRAM Throughput": "DRAM, of peak",
               "Achieved Occupancy": "achieved occupancy", "Registers Per Thread": "registers"}


def parse_ncu(text: str) -> list[dict]:
    """Every profiled kernel of an `ncu` text report: name, grid, block and the metrics above."""
    found: list[dict] = []
    for line in text.splitlines():
        m = NCU_KERNEL.match(line)
        if m:
            found.append({"kernel": m[1], "grid": int(m[2]), "block": int(m[3])})
            continue
        parts = line.split()
        for key in NCU_METRICS:
            if found and line.strip().startswith(key + " ") and key not in found[-1]:
                found[-1][key] = parts[-1]
    return found


@renderer("saxpy_ncu")
def saxpy_ncu(docs_dir: Path, log: str) -> str:
    file = (docs_dir / log).resolve()
    kernels = parse_ncu(file.read_text())
    seen, rows = set(), []
    for k in kernels:
        if k["kernel"] in seen:
            continue
        seen.add(k["kernel"])
        rows.append([f"`{k['kernel']}`", f"{k['block']}", f"{k['grid']:,}"]
                    + [k.get(key, "–") + ("&nbsp;%" if key != "Duration" else "") for key in
                       ("Achieved Occupancy", "DRAM Throughput", "Duration")])
    if not rows:
        raise ValueError(f"{log}: no kernels found in the ncu report")
    root = Path(docs_dir).resolve().parent
    rel = file.relative_to(root) if root in file.parents else log
    return (markdown_table(["kernel", "block", "grid", "achieved occupancy", "DRAM, of peak",
                            "µs"], rows, "lrrrrr")
            + f"\n\nFrom Nsight Compute (`ncu --clock-control none`), first profiled launch of "
            f"each kernel; raw report: `{rel}`.\n")
