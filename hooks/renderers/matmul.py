"""The matrix-multiplication page: SGEMM kernels against cuBLAS, from one results file.

- `matmul_step path= kernel= [size=4096]`: one kernel's rate in CUDA C and in Numba, each as a
  fraction of cuBLAS FP32 measured in the same run, and the kernel's arithmetic intensity.
- `matmul_table path= lang=cuda_c|numba`: TFLOP/s (and % of cuBLAS FP32) per kernel and size.
- `matmul_chart path=`: rate per kernel against size, cuBLAS FP32 as the reference line.
- `matmul_library path=`: cuBLAS in FP32, TF32 and BF16 per size, with their errors.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import markdown_table, renderer, svg_figure

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "snippets"))
from bench.results import load_results  # noqa: E402

KERNELS = ["naive", "coalesced", "smem", "blocktile_1d", "blocktile_2d", "vectorized", "warptile"]
LABELS = {"naive": "1 naive", "coalesced": "2 coalesced", "smem": "3 shared-memory tiles",
          "blocktile_1d": "4 1-D register tile", "blocktile_2d": "5 2-D register tile",
          "vectorized": "6 vectorised, transposed", "warptile": "7 warp tiles, double buffer"}
LANGS = {"cuda_c": "CUDA C", "numba": "Numba"}

# Tile sizes of the GPU builds (sgemm.cu and sgemm_numba.py; tests/test_matmul.py checks that
# they match): block tile BM x BN and per-thread tile TM x TN.
TILES = {"naive": None, "coalesced": None, "smem": (32, 32, 1, 1),
         "blocktile_1d": (64, 64, 8, 1), "blocktile_2d": (128, 128, 8, 8),
         "vectorized": (128, 128, 8, 8), "warptile": (128, 128, 8, 8)}


def intensity(kernel: str) -> tuple[float, float | None]:
    """(FLOP per byte the kernel loads from global memory, FLOP per byte read from shared).

    A BM x BN block tile loads (BM + BN) floats per step along K for 2 * BM * BN FLOP; a
    TM x TN thread tile reads TM + TN floats from shared memory for 2 * TM * TN FLOP. Without
    tiles, each multiply-add loads two floats.
    """
    tiles = TILES[kernel]
    if tiles is None:
        return 2 / 8, None
    bm, bn, tm, tn = tiles
    return 2 * bm * bn / (4 * (bm + bn)), 2 * tm * tn / (4 * (tm + tn))


def load(docs_dir: Path, path: str) -> dict:
    file = docs_dir / path
    if not file.is_file():
        raise FileNotFoundError(f"results file {path} not found under {docs_dir}")
    return load_results(file)


def size_key(m: dict) -> tuple[int, int, int]:
    p = m["params"]
    return p["m"], p["n"], p["k"]


def size_label(key: tuple[int, int, int]) -> str:
    m, n, k = key
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def index(doc: dict) -> dict:
    """{(variant, size): measurement} for the kernels that passed their check."""
    return {(m["variant"], size_key(m)): m for m in doc["measurements"]
            if m["phase"] == "kernel" and m["error"]["passed"]}


def tflops(m: dict) -> float:
    return m["flops"] / m["median_s"] / 1e12


def baseline(lang: str) -> str:
    """The cuBLAS FP32 measurement each language is compared with (same process, same run)."""
    return "cuda_c/cublas_fp32" if lang == "cuda_c" else "cublas_fp32"


def sizes(doc: dict) -> list[tuple[int, int, int]]:
    keys = sorted({size_key(m) for m in doc["measurements"]}, key=lambda s: (s[0] != s[1] or s[1] != s[2], s))
    return keys


def rate(ix: dict, lang: str, kernel: str, key) -> tuple[float, float] | None:
    m, ref = ix.get((f"{lang}/{kernel}", key)), ix.get((baseline(lang), key))
    if m is None or ref is None:
        return None
    return tflops(m), ref["median_s"] / m["median_s"]


@renderer("matmul_step")
def matmul_step(docs_dir: Path, path: str, kernel: str, size: str = "4096") -> str:
    if kernel not in KERNELS:
        raise KeyError(f"unknown kernel {kernel!r}")
    doc, n = load(docs_dir, path), int(size)
    ix, key = index(doc), (n, n, n)
    parts = []
    for lang, name in LANGS.items():
        r = rate(ix, lang, kernel, key)
        if r is None:
            raise ValueError(f"{path} has no passing {lang}/{kernel} at {n}³ with its cuBLAS run")
        parts.append(f"{name} **{r[0]:.1f} TFLOP/s** ({100 * r[1]:.1f} % of cuBLAS FP32)")
    glob, shared = intensity(kernel)
    ai = f"{glob:g} FLOP per byte loaded from global memory"
    if shared is not None:
        ai += f", {shared:.2g} FLOP per byte read from shared memory"
    return (f'!!! abstract "Measured at {n}³ on the H200"\n\n    {"; ".join(parts)}. '
            f"Arithmetic intensity: {ai}.\n")


@renderer("matmul_table")
def matmul_table(docs_dir: Path, path: str, lang: str) -> str:
    if lang not in LANGS:
        raise KeyError(f"lang must be one of {list(LANGS)}")
    doc = load(docs_dir, path)
    ix, keys = index(doc), sizes(doc)
    rows = [["cuBLAS FP32", *[f"{tflops(ix[(baseline(lang), k)]):.1f}"
                              if (baseline(lang), k) in ix else "–" for k in keys]]]
    for kernel in KERNELS:
        cells = []
        for k in keys:
            r = rate(ix, lang, kernel, k)
            cells.append(f"{r[0]:.1f} ({100 * r[1]:.0f} %)" if r else "–")
        rows.append([LABELS[kernel], *cells])
    return markdown_table([f"{LANGS[lang]}: TFLOP/s (% of cuBLAS)", *map(size_label, keys)],
                          rows, "l" + "r" * len(keys))


@renderer("matmul_chart")
def matmul_chart(docs_dir: Path, path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    doc = load(docs_dir, path)
    ix = index(doc)
    square = [k for k in sizes(doc) if k[0] == k[1] == k[2]]
    xs = [k[0] for k in square]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    colors = plt.get_cmap("viridis")
    for ax, (lang, name) in zip(axes, LANGS.items()):
        ref = [tflops(ix[(baseline(lang), k)]) for k in square]
        ax.plot(xs, ref, color="black", linewidth=3, label="cuBLAS FP32")
        for i, kernel in enumerate(KERNELS):
            ys = [tflops(ix[(f"{lang}/{kernel}", k)]) if (f"{lang}/{kernel}", k) in ix
                  else float("nan") for k in square]
            ax.plot(xs, ys, marker="o", color=colors(i / (len(KERNELS) - 1)), label=LABELS[kernel])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.set_xlabel("M = N = K")
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("TFLOP/s (FP32)")
    axes[1].legend(loc="lower right", fontsize=8)
    gpu = (doc["system"].get("gpus") or [{"name": "no GPU"}])[0]["name"]
    return svg_figure(fig, alt=f"SGEMM rate per kernel against matrix size on {gpu}, CUDA C and "
                              "Numba, with cuBLAS FP32 as a black line",
                      caption=f"Rate of each kernel against size, {gpu}; black: cuBLAS FP32 "
                              "in the same run. Log scales.")


@renderer("matmul_library")
def matmul_library(docs_dir: Path, path: str) -> str:
    doc = load(docs_dir, path)
    ix = index(doc)
    rows = []
    for k in sizes(doc):
        fp32 = ix.get(("cublas_fp32", k))
        if fp32 is None:
            continue
        for prec in ("fp32", "tf32", "bf16"):
            m = ix.get((f"cublas_{prec}", k))
            if m is None:
                continue
            rows.append([size_label(k), prec.upper(), f"{tflops(m):.1f}",
                         f"{fp32['median_s'] / m['median_s']:.1f}×",
                         f"{m['error']['value']:.1e}"])
    if not rows:
        raise ValueError(f"{path} has no cuBLAS measurements")
    return markdown_table(["size", "cuBLAS mode", "TFLOP/s", "vs FP32", "relative error"],
                          rows, "llrrr")


@renderer("matmul_headline")
def matmul_headline(docs_dir: Path, path: str, size: str = "4096") -> str:
    """The best kernel of each language at size³, as a fraction of cuBLAS FP32 (same run)."""
    doc, n = load(docs_dir, path), int(size)
    ix, key = index(doc), (n, n, n)
    parts = []
    for lang, name in LANGS.items():
        best = max((rate(ix, lang, k, key) or (0.0, 0.0), k) for k in KERNELS)
        (tf, frac), kernel = best
        parts.append(f"{name}'s best, *{LABELS[kernel][2:]}*, reaches **{100 * frac:.0f} %** "
                     f"({tf:.1f} TFLOP/s)")
    return f"At {n}³ on the H200, " + " and ".join(parts) + " of cuBLAS FP32 in the same run."
