"""The matrix-multiplication pages: every kernel against cuBLAS timed in the same process (results
files, labels from their `variants`), the build report, Numba's tile exploration, ncu metrics."""

from __future__ import annotations

import json
from pathlib import Path

from . import load_json, markdown_table, read_csv, renderer, svg_figure, value
from .run_details import label, load

# The yardstick of each variant: cuBLAS in the same process and precision: the CUDA C binary's
# own calls; for Numba and Triton, cuBLAS through PyTorch timed by the runner just before them.
BASE = {"fp32": "cublas_fp32", "bf16": "cublas_bf16"}
SAME_PROCESS = {"numba/": ("fp32", "torch/cublas_fp32"), "triton": ("bf16", "torch/cublas_bf16")}
# The last kernel of each kind, as the share chart shows them: (variant, precision).
FINAL = [("cuda_c/warptile", "fp32"), ("numba/warptile", "fp32"), ("cuda_c/tensor_core", "bf16"),
         ("cuda_c/wgmma", "bf16"), ("triton", "bf16"), ("triton_tma", "bf16")]

# Block tile BM x BN and per-thread tile TM x TN of the GPU builds (tests/test_matmul.py checks
# them); warptile: the 128x256 tile of the large sizes, all sub-tiles of a lane together.
TILES = {"naive": None, "coalesced": None, "smem": (32, 32, 1, 1),
         "blocktile_1d": (64, 64, 8, 1), "blocktile_2d": (128, 128, 8, 8),
         "vectorized": (128, 128, 8, 8), "warptile": (128, 256, 8, 16)}


def intensity(kernel: str) -> tuple[float, float | None]:
    """(FLOP per byte loaded from global memory, FLOP per byte read from shared): a BM x BN tile
    loads BM + BN floats per step along K for 2 BM BN FLOP; a TM x TN thread tile reads TM + TN
    floats from shared memory for 2 TM TN FLOP; untiled, each multiply-add loads two floats."""
    tiles = TILES[kernel]
    if tiles is None:
        return 2 / 8, None
    bm, bn, tm, tn = tiles
    return 2 * bm * bn / (4 * (bm + bn)), 2 * tm * tn / (4 * (tm + tn))


def steps(doc: dict, lang: str) -> list[str]:
    """The kernels of a language's numbered FP32 steps (1 to 7), in order."""
    return [k.split("/")[1] for k, v in doc["variants"].items()
            if k.startswith(f"{lang}/") and v.get("step", "0").isdigit() and int(v["step"]) <= 7]


def short(doc: dict, variant: str) -> str:
    """"1 naive" from the label "CUDA C, 1 naive"."""
    return label(doc, variant).partition(", ")[2]


def index(doc: dict) -> dict:
    """{(variant, case): kernel-only measurement}; failed variants are not in the file."""
    return {(m["variant"], m["case"]): m for m in doc["measurements"]
            if m["phase"] == "kernel" and m["case"] != "compile"}


def cases(doc: dict) -> dict[str, str]:
    """{case: its label}, square sizes first, smallest first: "1024³", "3001×4099×2053"."""
    params = {m["case"]: m["params"] for m in doc["measurements"] if m["case"] != "compile"}
    order = sorted(params, key=lambda c: (len(set(params[c].values())) > 1, params[c]["m"]))
    return {c: (f"{params[c]['m']}³" if len(set(params[c].values())) == 1
                else "×".join(str(params[c][k]) for k in "mnk")) for c in order}


def tflops(m: dict) -> float:
    return m["flops"] / m["median_s"] / 1e12


def base_of(variant: str, of: str) -> str:
    return next((b for p, (o, b) in SAME_PROCESS.items() if variant.startswith(p) and o == of),
                BASE[of])


def rate(ix: dict, variant: str, case: str, of: str = "fp32") -> tuple | None:
    """(TFLOP/s, fraction of cuBLAS in precision `of` (same process and case), seconds)."""
    m, ref = ix.get((variant, case)), ix.get((base_of(variant, of), case))
    if m is None or ref is None:
        return None
    return tflops(m), ref["median_s"] / m["median_s"], m["median_s"]


def shown(r: tuple | None, show: str, digits: str, what: str) -> str:
    """A rate as TFLOP/s (show=tflops), % of cuBLAS (pct), a multiple of cuBLAS (times) or the
    time of one call in microseconds (us)."""
    if r is None:
        raise ValueError(f"no {what} (with its cuBLAS run)")
    return {"tflops": f"{r[0]:.{digits}f}", "pct": f"{100 * r[1]:.{digits}f} %",
            "times": f"{r[1]:.{digits}f}×", "us": f"{1e6 * r[2]:.{digits}f}"}[show]


@value("matmul.rate")
def rate_value(docs_dir: Path, path: str, variant: str, show: str = "tflops", of: str = "fp32",
               digits: str = "1", size: str = "4096") -> str:
    """A variant's rate in case `size` (4096, odd, ...), against cuBLAS in precision `of`."""
    return shown(rate(index(load(docs_dir, path)), variant, size, of), show, digits,
                 f"{variant} in case {size} of {path}")


@value("matmul.span")
def span_value(docs_dir: Path, path: str, variant: str, of: str = "fp32", bound: str = "min",
               prefix: str = "", digits: str = "0") -> str:
    """The lowest (bound=min) or highest (max) share of cuBLAS of a variant over every case; with
    prefix=, over the instances whose names start with it (cuda_c/wgmma_s4_g8_f0_k1 ...) too."""
    ix = index(load(docs_dir, path))
    found = [r[1] for (v, c) in ix if (v == variant or (prefix and v.startswith(prefix)))
             and (r := rate(ix, v, c, of))]
    if not found:
        raise ValueError(f"{path} has no {variant or prefix} with its cuBLAS run")
    return f"{100 * (min if bound == 'min' else max)(found):.{digits}f} %"


@value("matmul.intensity")
def intensity_value(docs_dir: Path, kernel: str, memory: str = "global") -> str:
    """FLOP per byte loaded from global memory (memory=global) or read from shared (shared)."""
    glob, shared = intensity(kernel)
    return f"{glob:g}" if memory == "global" else f"{shared:.2g}"


@renderer("matmul_table")
def matmul_table(docs_dir: Path, path: str, lang: str = "", variants: str = "",
                 of: str = "fp32") -> str:
    """TFLOP/s (% of cuBLAS) per case: a language's FP32 steps (lang=) or listed variants."""
    doc = load(docs_dir, path)
    ix, cs = index(doc), cases(doc)
    names = [f"{lang}/{k}" for k in steps(doc, lang)] if lang else variants.split(",")
    bases = dict.fromkeys(base_of(v, of) for v in names)
    rows = [[label(doc, b), *(f"{tflops(ix[(b, c)]):.1f}" if (b, c) in ix else "–" for c in cs)]
            for b in bases]
    for v in names:
        rows.append([short(doc, v) if lang else label(doc, v),
                     *(f"{r[0]:.1f} ({100 * r[1]:.0f} %)" if (r := rate(ix, v, c, of)) else "–"
                       for c in cs)])
    return markdown_table(["TFLOP/s (% of cuBLAS, same process)", *cs.values()], rows,
                          "l" + "r" * len(cs))


@renderer("matmul_share_chart")
def matmul_share_chart(docs_dir: Path, path: str, alt: str, caption: str) -> str:
    import matplotlib.pyplot as plt

    doc = load(docs_dir, path)
    ix, cs = index(doc), cases(doc)
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    for i, (variant, of) in enumerate(FINAL):
        ys = [100 * r[1] if (r := rate(ix, variant, c, of)) else float("nan") for c in cs]
        name = label(doc, variant)
        ax.plot(range(len(cs)), ys, marker="os^vDP"[i], linestyle="-" if of == "fp32" else "--",
                label=name if of.upper() in name else f"{name} ({of.upper()})")
    ax.axhline(100, color="black", linewidth=2)
    ax.set_xticks(range(len(cs)), list(cs.values()))
    ax.set_ylim(0, 130)
    ax.set_ylabel("% of cuBLAS, same precision, same process")
    ax.grid(True, alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=2, frameon=False)
    return svg_figure(fig, alt=alt, caption=caption)


@renderer("matmul_tuning")
def matmul_tuning(docs_dir: Path, path: str, prefix: str, published: str, of: str = "fp32") -> str:
    """Every instance of a template (cuda_c/<prefix>...) per case, % of cuBLAS; the fastest of a
    case in bold; first row: the published kernel of the same run."""
    doc = load(docs_dir, path)
    ix, cs = index(doc), cases(doc)
    names = [published, *dict.fromkeys(v for v, _ in ix if v.startswith(f"cuda_c/{prefix}"))]
    share = {(v, c): r[1] for v in names for c in cs if (r := rate(ix, v, c, of))}
    best = {c: max((s for (v, cc), s in share.items() if cc == c and v != published), default=0)
            for c in cs}
    rows = [[f"**{short(doc, v)}** (published)" if v == published else f"`{v.split('/', 1)[1]}`",
             *((f"**{100 * s:.1f}**" if s == best[c] else f"{100 * s:.1f}")
               if (s := share.get((v, c))) else "–" for c in cs)] for v in names]
    return markdown_table(["% of cuBLAS, tuning run", *cs.values()], rows, "l" + "r" * len(cs))


def error_ratios(doc: dict) -> dict:
    """{(variant, case): its error / cuBLAS FP32's error in the same case}."""
    ix = index(doc)
    return {(v, c): m["error"]["value"] / fp32["error"]["value"] for (v, c), m in ix.items()
            if (fp32 := ix.get(("cublas_fp32", c))) is not None and fp32["error"]["value"] > 0}


@value("matmul.error_ratio")
def error_ratio(docs_dir: Path, path: str, variant: str, bound: str) -> str:
    """The smallest (bound=min) or largest (max) error of a variant over FP32's, all sizes."""
    rs = [r for (v, _), r in error_ratios(load(docs_dir, path)).items() if v == variant]
    if not rs:
        raise ValueError(f"{path} has no {variant} with a cuBLAS FP32 run beside it")
    return f"{(min if bound == 'min' else max)(rs):,.0f}"


# --- the Numba tile exploration and Nsight Compute ---------------------------------------------

@renderer("matmul_numba_tiles")
def matmul_numba_tiles(docs_dir: Path, path: str) -> str:
    """One row per candidate of gpu/explore/matmul-numba-tiles.py (JSON lines)."""
    rows = []
    for r in map(json.loads, (docs_dir / path).read_text().splitlines()):
        bm, bn, bk, wm, wn, wmi, wni, tm, tn, per_sm = r["tiles"]
        tiles = f"{bm}×{bn}×{bk}, warps {wm}×{wn}, {wmi * tm}×{wni * tn} a lane, {per_sm} a SM"
        rows.append([tiles, "failed: " + r["failed"].splitlines()[-1][:80]] if "failed" in r else
                    [tiles, f"**{100 * r['share']:.1f} %**", r["regs"], r["local_bytes"]])
    if not rows:
        raise ValueError(f"{path} holds no candidates")
    return markdown_table(["Numba warp tile", "% of cuBLAS FP32", "registers", "local bytes"],
                          [row + [""] * (4 - len(row)) for row in rows], "lrrr")


STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"


@renderer("matmul_stalls")
def matmul_stalls(docs_dir: Path, ncu: str, stalls: str, names: str) -> str:
    """The issue and stall metrics of the profiled launches of `ncu`, one column each (names:
    the columns' headings, ;-separated), rows from the stalls file (metric key, meaning)."""
    profiles = [p["metrics"] for p in load_json(docs_dir, ncu)["rows"]]
    heads = names.split(";")
    if len(profiles) < len(heads):
        raise ValueError(f"{ncu}: {len(profiles)} profiled launches, {len(heads)} named")
    rows = []
    for row in read_csv(docs_dir, stalls):
        key = row["stall"]
        metric = key if "__" in key else STALL.format(key)
        cells = [p.get(metric) for p in profiles[:len(heads)]]
        if any(c is not None for c in cells):
            rows.append([f"`{key.split('__')[-1] if '__' in key else key}`", row["meaning"],
                         *(f"{c:,.2f}" if c is not None else "–" for c in cells)])
    return markdown_table(["Nsight Compute", "meaning", *heads], rows, "ll" + "r" * len(heads))
