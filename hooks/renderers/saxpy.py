"""SAXPY results (run.py saxpy): the progression, every version against the fastest copy of its
round and the size sweep. Rows come from the results file (its `variants`: label, step,
group); ratios from share_of_best. The copies, compile times, transfers and the ncu report are
`table`s.
"""

from __future__ import annotations

from pathlib import Path

from bench import results

from . import markdown_table, renderer, svg_figure
from .run_details import gbs, kernel_rows, label, load
from .table import SPECS

pct = SPECS["pct"]


def steps(doc: dict) -> dict[str, list[str]]:
    """{step: its variants, in registry order}, steps in the page's order."""
    found: dict[str, list[str]] = {}
    for key, v in doc["variants"].items():
        if v.get("step"):
            found.setdefault(v["step"], []).append(key)
    return dict(sorted(found.items()))


@renderer("saxpy_progression")
def saxpy_progression(docs_dir: Path, path: str, case: str = "gpu-1") -> str:
    """One row per step, one column per toolkit (the label before its first comma)."""
    doc = load(docs_dir, path)
    ratios, rows = results.share_of_best(doc, "copy")[case], kernel_rows(doc, case)
    toolkit = {k: label(doc, k).partition(", ")[0] for keys in steps(doc).values() for k in keys}
    toolkits = list(dict.fromkeys(toolkit.values()))
    out = []
    for step, keys in steps(doc).items():
        cells = {toolkit[k]: f"{gbs(rows[k]):,.0f} GB/s ({pct(ratios[k])})" for k in keys if k in rows}
        out.append([f"{step}. {label(doc, keys[0]).partition(', ')[2]}",
                    *(cells.get(t, "–") for t in toolkits)])
    return markdown_table(["step", *toolkits], out, "l" + "r" * len(toolkits)) + "\n"


@renderer("saxpy_table")
def saxpy_table(docs_dir: Path, path: str, case: str = "gpu-1") -> str:
    """Every version outside the progression or at its last step, GPU then CPU, fastest first;
    copies are left out (they are the ceiling)."""
    doc = load(docs_dir, path)
    ratios = results.share_of_best(doc, "copy")
    rounds = [c for c in ratios if c.startswith(case.rpartition("-")[0] + "-")]
    last_step = max(steps(doc), default="")
    rows = []
    for device, where in (("gpu", case), ("cpu", "cpu")):
        measured = kernel_rows(doc, where)
        shown = [k for k, v in doc["variants"].items() if k in measured and v["device"] == device
                 and not v.get("group") and v.get("step", "") in ("", last_step)]
        for k in sorted(shown, key=lambda k: gbs(measured[k]), reverse=True):
            if device == "cpu":
                rows.append([label(doc, k), f"{gbs(measured[k]):,.0f}", "–", "–"])
                continue
            seen = [ratios[r][k] for r in rounds if k in ratios[r]]
            spread = f"{pct(min(seen))} – {pct(max(seen))}" if len(seen) > 1 else "one round"
            rows.append([label(doc, k), f"{gbs(measured[k]):,.0f}", pct(ratios[case][k]), spread])
    if not rows:
        raise ValueError(f"{path}: no SAXPY measurements")
    return markdown_table(["version", "GB/s", "of fastest copy",
                                   f"range, {len(rounds)} rounds"], rows, "lrrr") + "\n"


@renderer("saxpy_sweep")
def saxpy_sweep(docs_dir: Path, path: str, variants: str, alt: str) -> str:
    """Bandwidth against N for the variants named (comma-separated), over the small-* cases and
    gpu-1."""
    import matplotlib.pyplot as plt

    doc = load(docs_dir, path)
    wanted = variants.split(",")
    series: dict[str, list[tuple[int, float]]] = {label(doc, v).replace("`", ""): [] for v in wanted}
    for m in doc["measurements"]:
        if m["phase"] == "kernel" and m["variant"] in wanted and (
                m["case"].startswith("small-") or m["case"] == "gpu-1"):
            series[label(doc, m["variant"]).replace("`", "")].append((m["params"]["n"], gbs(m)))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (name, pts), marker in zip(sorted(series.items()), "osD^v"):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, ms=5, label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (float32 elements per array)")
    ax.set_ylabel("GB/s (CUDA events)")
    ax.grid(True, which="major")
    ax.legend(loc="lower right")
    return svg_figure(fig, alt=alt) + "\n"
