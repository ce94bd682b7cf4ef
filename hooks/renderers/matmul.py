"""The matrix-multiplication page: every kernel against cuBLAS, from one results file and the
build report of the same run.

- `matmul_step path= kernel= [size=4096]`: one kernel's rate in CUDA C and in Numba, each as a
  fraction of cuBLAS FP32 measured in the same run, and the kernel's arithmetic intensity.
- `matmul_table path= lang=cuda_c|numba`: TFLOP/s (and % of cuBLAS FP32) per kernel and size.
- `matmul_chart path=`: rate per kernel against size, cuBLAS FP32 as the reference line.
- `matmul_library path=`: cuBLAS in FP32, TF32 and BF16 per size, their errors, and each
  error as a multiple of the FP32 error (computed here).
- `matmul_tensor path= [size=4096] kernels=tensor_core,wgmma,triton`: BF16 kernels against
  cuBLAS BF16 and FP32.
- `matmul_tuning path= build= [size=4096]`: every tuning variant of the CUDA C binary, with its
  registers and spills from the build report, its rate and its fraction of cuBLAS.
- `matmul_build build= source=`: registers, spills and shared memory of the published kernels.
- `matmul_headline path=`: the best kernel per language as a fraction of cuBLAS.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import markdown_table, renderer, svg_figure
from .run_details import load_results

KERNELS = ["naive", "coalesced", "smem", "blocktile_1d", "blocktile_2d", "vectorized", "warptile"]
LABELS = {"naive": "1 naive", "coalesced": "2 coalesced", "smem": "3 shared-memory tiles",
          "blocktile_1d": "4 1-D register tile", "blocktile_2d": "5 2-D register tile",
          "vectorized": "6 vectorised, transposed", "warptile": "7 warp tiles, double buffer",
          "tensor_core": "8 tensor cores, mma.sync (BF16)",
          "wgmma": "9 tensor cores, wgmma + TMA (BF16)", "triton": "Triton (BF16)"}
TENSOR = {"tensor_core": ("cuda_c/tensor_core", "CUDA C `mma.sync`"),
          "wgmma": ("cuda_c/wgmma", "CUDA C `wgmma` + TMA"), "triton": ("triton", "Triton")}
LANGS = {"cuda_c": "CUDA C", "numba": "Numba"}
BASE = {"fp32": "cublas_fp32", "bf16": "cublas_bf16"}

# Tile sizes of the GPU builds (kernels/*.cuh and sgemm_numba.py; tests/test_matmul.py checks that
# they match): block tile BM x BN and per-thread tile TM x TN (the warp tile: all sub-tiles of
# a lane together, WMITER * TM x WNITER * TN).
TILES = {"naive": None, "coalesced": None, "smem": (32, 32, 1, 1),
         "blocktile_1d": (64, 64, 8, 1), "blocktile_2d": (128, 128, 8, 8),
         "vectorized": (128, 128, 8, 8), "warptile": (128, 256, 8, 16)}


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
    return load_results(docs_dir, path)[0]


def size_key(m: dict) -> tuple[int, int, int]:
    p = m["params"]
    return p["m"], p["n"], p["k"]


def size_label(key: tuple[int, int, int]) -> str:
    m, n, k = key
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def index(doc: dict) -> dict:
    """{(variant, size): kernel-only measurement}; failed variants are not in the file."""
    return {(m["variant"], size_key(m)): m for m in doc["measurements"]
            if m["phase"] == "kernel" and m["case"] != "compile"}


def tflops(m: dict) -> float:
    return m["flops"] / m["median_s"] / 1e12


def sizes(doc: dict) -> list[tuple[int, int, int]]:
    keys = {size_key(m) for m in doc["measurements"] if m["case"] != "compile"}
    return sorted(keys, key=lambda s: (not s[0] == s[1] == s[2], s))


def variant_name(lang: str, kernel: str) -> str:
    return kernel if lang == "triton" else f"{lang}/{kernel}"


def rate(ix: dict, variant: str, key, precision: str = "fp32") -> tuple[float, float] | None:
    """(TFLOP/s, fraction of cuBLAS in `precision` at the same size) or None."""
    m, ref = ix.get((variant, key)), ix.get((BASE[precision], key))
    if m is None or ref is None:
        return None
    return tflops(m), ref["median_s"] / m["median_s"]


def need(r, what: str, path: str):
    if r is None:
        raise ValueError(f"{path} has no {what} (with its cuBLAS run)")
    return r


@renderer("matmul_step")
def matmul_step(docs_dir: Path, path: str, kernel: str, size: str = "4096") -> str:
    if kernel not in KERNELS:
        raise KeyError(f"unknown kernel {kernel!r}")
    doc, n = load(docs_dir, path), int(size)
    ix, key = index(doc), (n, n, n)
    parts = []
    for lang, name in LANGS.items():
        r = need(rate(ix, f"{lang}/{kernel}", key), f"{lang}/{kernel} at {n}³", path)
        parts.append(f"{name} **{r[0]:.1f} TFLOP/s** ({100 * r[1]:.1f} % of cuBLAS FP32)")
    glob, shared = intensity(kernel)
    ai = f"{glob:g} FLOP per byte loaded from global memory"
    if shared is not None:
        ai += f", {shared:.2g} FLOP per byte read from shared memory"
    return (f'!!! abstract "Measured at {n}³ on the H200"\n\n    {"; ".join(parts)}. '
            f"Arithmetic intensity: {ai}.\n")


@renderer("matmul_tensor")
def matmul_tensor(docs_dir: Path, path: str, size: str = "4096",
                  kernels: str = "tensor_core,wgmma,triton") -> str:
    """BF16 kernels (mma.sync or wgmma in CUDA C, Triton) against cuBLAS BF16 and FP32."""
    doc, n = load(docs_dir, path), int(size)
    ix, key = index(doc), (n, n, n)
    parts = []
    for variant, name in (TENSOR[k] for k in kernels.split(",")):
        r = need(rate(ix, variant, key, "bf16"), f"{variant} at {n}³", path)
        fp32 = need(rate(ix, variant, key, "fp32"), f"{variant} at {n}³", path)
        parts.append(f"{name} **{r[0]:.0f} TFLOP/s** ({100 * r[1]:.0f} % of cuBLAS BF16, "
                     f"{fp32[1]:.1f}× cuBLAS FP32)")
    base = ix[("cublas_bf16", key)]
    return (f'!!! abstract "Measured at {n}³ on the H200"\n\n    {"; ".join(parts)}. '
            f"cuBLAS BF16 with the same inputs and FP32 output: {tflops(base):.0f} TFLOP/s.\n")


@renderer("matmul_table")
def matmul_table(docs_dir: Path, path: str, lang: str) -> str:
    if lang not in LANGS:
        raise KeyError(f"lang must be one of {list(LANGS)}")
    doc = load(docs_dir, path)
    ix, keys = index(doc), sizes(doc)
    rows = [["cuBLAS FP32", *[f"{tflops(ix[('cublas_fp32', k)]):.1f}"
                              if ("cublas_fp32", k) in ix else "–" for k in keys]]]
    for kernel in KERNELS:
        cells = []
        for k in keys:
            r = rate(ix, f"{lang}/{kernel}", k)
            cells.append(f"{r[0]:.1f} ({100 * r[1]:.0f} %)" if r else "–")
        rows.append([LABELS[kernel], *cells])
    return markdown_table([f"{LANGS[lang]}: TFLOP/s (% of cuBLAS)", *map(size_label, keys)],
                          rows, "l" + "r" * len(keys))


@renderer("matmul_chart")
def matmul_chart(docs_dir: Path, path: str) -> str:
    import matplotlib.pyplot as plt

    doc = load(docs_dir, path)
    ix = index(doc)
    square = [k for k in sizes(doc) if k[0] == k[1] == k[2]]
    xs = [k[0] for k in square]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), sharey=True)
    colors = plt.get_cmap("viridis")
    for ax, (lang, name) in zip(axes, LANGS.items()):
        ref = [tflops(ix[("cublas_fp32", k)]) for k in square]
        ax.plot(xs, ref, color="black", linewidth=3, label="cuBLAS FP32")
        for i, kernel in enumerate(KERNELS):
            ys = [tflops(ix[(f"{lang}/{kernel}", k)]) if (f"{lang}/{kernel}", k) in ix
                  else float("nan") for k in square]
            ax.plot(xs, ys, marker="o", color=colors(i / (len(KERNELS) - 1)),
                    label=LABELS[kernel])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.set_xlabel("M = N = K")
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("TFLOP/s (FP32)")
    handles, labels = axes[0].get_legend_handles_labels()
    # The legend goes below both panels, where it covers no data.
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               frameon=False)
    gpu = (doc["system"].get("gpus") or [{"name": "no GPU"}])[0]["name"]
    return svg_figure(fig, alt=f"SGEMM rate per kernel against matrix size on {gpu}, CUDA C and "
                              "Numba, with cuBLAS FP32 as a black line",
                      caption=f"Rate of each kernel against size, {gpu}; black: cuBLAS FP32 "
                              "in the same run. Log scales.")


def error_ratios(doc: dict) -> dict:
    """{(variant, size): its error / cuBLAS FP32's error at the same size}."""
    ix = index(doc)
    out = {}
    for (variant, key), m in ix.items():
        fp32 = ix.get(("cublas_fp32", key))
        if fp32 is not None and fp32["error"]["value"] > 0:
            out[(variant, key)] = m["error"]["value"] / fp32["error"]["value"]
    return out


@renderer("matmul_library")
def matmul_library(docs_dir: Path, path: str) -> str:
    doc = load(docs_dir, path)
    ix, ratio = index(doc), error_ratios(doc)
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
                         f"{m['error']['value']:.1e}", f"{ratio[(m['variant'], k)]:,.0f}×"])
    if not rows:
        raise ValueError(f"{path} has no cuBLAS measurements")
    return markdown_table(["size", "cuBLAS", "TFLOP/s", "speed vs FP32", "error",
                           "error vs FP32"], rows, "llrrrr")


@renderer("matmul_precision")
def matmul_precision(docs_dir: Path, path: str) -> str:
    """One sentence: the range of BF16 (and TF32) error over the FP32 error, all sizes."""
    doc = load(docs_dir, path)
    ratio = error_ratios(doc)
    parts = []
    for variant, name in (("cublas_tf32", "TF32"), ("cublas_bf16", "BF16"),
                          ("cuda_c/tensor_core", "the BF16 `mma.sync` kernel"),
                          ("cuda_c/wgmma", "the BF16 `wgmma` kernel")):
        rs = [r for (v, _), r in ratio.items() if v == variant]
        if not rs:
            raise ValueError(f"{path} has no {variant} with a cuBLAS FP32 run beside it")
        parts.append(f"{name} {min(rs):,.0f} to {max(rs):,.0f} times")
    return ("Against the float64 product, the errors are " + ", ".join(parts) +
            " the FP32 error at the same size (this run, every size).")


@renderer("matmul_headline")
def matmul_headline(docs_dir: Path, path: str, size: str = "4096") -> str:
    """The best kernel of each language at size³ as a fraction of cuBLAS (same run), the best
    tuned instance of the CUDA C templates, and the two BF16 kernels against cuBLAS BF16."""
    doc, n = load(docs_dir, path), int(size)
    ix, key = index(doc), (n, n, n)
    parts = []
    for lang, name in LANGS.items():
        found = [(r, k) for k in KERNELS if (r := rate(ix, f"{lang}/{k}", key))]
        if not found:
            raise ValueError(f"{path} has no {lang} kernel at {n}³")
        (tf, frac), kernel = max(found, key=lambda x: x[0][1])
        parts.append(f"{name}'s best, *{LABELS[kernel][2:]}*, reaches **{100 * frac:.1f} %** "
                     f"({tf:.1f} TFLOP/s)")
    wt, (wt_tf, wt_frac) = best_tuned(ix, key, "wt_", "fp32")
    tc, (tc_tf, tc_frac) = best_tuned(ix, key, "tc_", "bf16")
    wg = need(rate(ix, "cuda_c/wgmma", key, "bf16"), "cuda_c/wgmma", path)
    tr = need(rate(ix, "triton", key, "bf16"), "triton", path)
    return (f"At {n}³ on the H200, " + " and ".join(parts) + " of cuBLAS FP32 in the same run; "
            f"the best instance of the warp-tile template, `{wt}`, **{100 * wt_frac:.1f} %**. "
            f"On the tensor cores, the best `mma.sync` instance, `{tc}`, reaches "
            f"**{100 * tc_frac:.1f} %** of cuBLAS BF16 ({tc_tf:.0f} TFLOP/s), the `wgmma` "
            f"kernel fed by TMA **{100 * wg[1]:.1f} %** ({wg[0]:.0f} TFLOP/s) and Triton "
            f"**{100 * tr[1]:.1f} %** ({tr[0]:.0f} TFLOP/s).")


# --- the build report (nvcc -Xptxas -v) -------------------------------------------------------

ENTRY = re.compile(r"Compiling entry function '(?P<name>\w+)'")
SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?(?:,|$)")
TEMPLATE = re.compile(r'\{"(?P<name>\w+)",\s*(?:nullptr,\s*)?launch_(?P<kind>warptile|tc|wgmma)'
                      r"<(?P<args>[\d,\s]+)>")
WGMMA_STAGE_BYTES = (128 + 256) * 64 * 2  # hopper::A_BYTES + B_BYTES in kernels/09_wgmma.cuh


def template_name(kind: str, args: list[int]) -> str:
    """The binary's name for a template instance (see the KERNELS table of kernels.cuh)."""
    if kind == "wgmma":
        stages, group, in_flight = (args + [1, 1][len(args) - 1:])[:3]
        return f"wgmma_s{stages}_g{group}_f{in_flight}"
    if kind == "tc":
        bm, bn, bk, wm, wn, stages, *rest = args
        group = rest[0] if rest else 1
        return f"tc_{bm}x{bn}x{bk}_{wm}x{wn}_s{stages}" + (f"_g{group}" if group > 1 else "")
    bm, bn, bk, wm, wn, wmi, wni, tm, tn, threads, *rest = args
    minb, group = (rest + [2, 1][len(rest):])[:2]
    return (f"wt_{bm}x{bn}x{bk}_{wm}x{wn}_{wmi}x{wni}_{tm}x{tn}_{threads}_{minb}"
            + (f"_g{group}" if group > 1 else ""))


def parse_build(text: str) -> dict:
    """{kernel or template instance name: {"registers", "spill_stores", "smem", "dynamic_smem"}}
    from ptxas's -v report; template instances get the binary's names (tc_..., wt_...)."""
    out: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if m := ENTRY.search(line):
            mangled = m["name"]
            args = [int(a) for a in re.findall(r"Li(\d+)E", mangled)]
            if "sgemm_warptile" in mangled:
                current = template_name("warptile", args)
            elif "gemm_bf16_tc" in mangled:
                current = template_name("tc", args)
            elif "gemm_bf16_wgmma" in mangled:
                current = template_name("wgmma", args)
            elif found := re.match(r"_Z(\d+)", mangled):  # _Z<length><name><arguments>
                current = mangled[found.end():found.end() + int(found[1])]
            else:
                current = mangled
            out[current] = {}
        elif current and (m := SPILL.search(line)):
            out[current]["spill_stores"] = int(m[1])
        elif current and "Used" in line and (m := re.search(r"Used (\d+) registers", line)):
            smem = re.search(r"(\d+) bytes smem", line)
            out[current]["registers"] = int(m[1])
            out[current]["smem"] = int(smem[1]) if smem else 0
            if current.startswith("tc_"):  # the pipeline's buffers are dynamic shared memory
                bm, bn, bk = map(int, re.findall(r"\d+", current)[:3])
                stages = int(re.search(r"_s(\d+)", current)[1])
                out[current]["dynamic_smem"] = stages * (bm * bk + bk * bn) * 2
            elif current.startswith("wgmma_"):  # stages of A and B^T tiles, + 1 KiB to align
                stages = int(re.search(r"_s(\d+)", current)[1])
                out[current]["dynamic_smem"] = stages * WGMMA_STAGE_BYTES + 1024
    return out


def published_names(source: str) -> dict[str, str]:
    """{published kernel: its template instance name} from the KERNELS table of kernels.cuh."""
    out = {}
    for m in TEMPLATE.finditer(source):
        args = [int(a) for a in m["args"].replace(" ", "").split(",")]
        out[m["name"]] = template_name(m["kind"], args)
    return out


def build_facts(docs_dir: Path, build: str, source: str) -> dict:
    text = (docs_dir / build).read_text()
    src = (docs_dir.parent / source).read_text()
    facts = parse_build(text)
    for name, instance in published_names(src).items():
        if not name.startswith(("tc_", "wt_", "wgmma_")) and instance in facts:
            facts[name] = facts[instance]
    for name in ("naive", "coalesced", "smem", "blocktile_1d", "blocktile_2d", "vectorized"):
        if f"sgemm_{name}" in facts:
            facts[name] = facts[f"sgemm_{name}"]
    return facts


def smem_cell(f: dict) -> str:
    total = f.get("smem", 0) + f.get("dynamic_smem", 0)
    return f"{total / 1024:.1f} KiB" + (" (dynamic)" if f.get("dynamic_smem") else "")


@renderer("matmul_build")
def matmul_build(docs_dir: Path, build: str, source: str = "snippets/matmul/kernels.cuh") -> str:
    facts = build_facts(docs_dir, build, source)
    rows = []
    for kernel in [*KERNELS, "tensor_core", "wgmma"]:
        f = facts.get(kernel)
        if not f:
            raise ValueError(f"{build} has no entry for {kernel}")
        rows.append([LABELS[kernel], f["registers"], f["spill_stores"], smem_cell(f)])
    return markdown_table(["CUDA C kernel", "registers per thread", "spilled bytes",
                           "shared memory per block"], rows, "lrrr")


# What was expected of each tuning variant. Runs 1 and 2: written in the commit before the run
# (7d29d4e, 4ab8544). Run 3: the predictions marked "blind" were written before the first
# exploratory run of that kernel (its log is gpu/logs/h200-2026-12-01b/); the others after it,
# so they are not blind. Run 4, the final run: warptile's interior loads, predicted in the
# script of the exploratory call (gpu/explore/matmul-warptile-inner-loads.sh).
# Variants of earlier runs were measured again in each later run.
PREDICTIONS = {
    "warptile": "published (run 4): run 3's 128×256, BK 16, four 8×4 sub-tiles, now with plain loads for interior tiles; blind: +1–3 %, since the guards are about 5 % of the instructions and the kernel is latency-bound",
    "wt_128x128x16_64x32_2x2_4x4_256_2": "the first published kernel: about 85 %",
    "wt_128x128x16_64x32_2x2_4x4_256_1": "no register cap: fewer instructions, one block per SM",
    "wt_128x128x8_64x32_2x2_4x4_256_2": "half the shared memory: no gain",
    "wt_128x128x16_32x64_2x2_4x4_256_2": "warps 32×64 instead of 64×32: about the same",
    "wt_128x128x16_64x32_1x2_8x4_256_2": "8×4 per sub-tile: fewer A loads per FMA",
    "wt_128x128x16_64x32_2x1_4x8_256_2": "4×8 per sub-tile: fewer B loads per FMA",
    "wt_128x128x16_64x64_1x4_8x4_128_2": "Boehm's best shape, 128 results per thread: the best, 88–92 %",
    "wt_128x128x16_64x64_2x2_8x4_128_2": "as above with 2×2 sub-tiles",
    "wt_128x256x8_64x64_2x2_8x4_256_1": "larger block tile, one block per SM (run 2's published kernel)",
    "wt_256x128x8_64x64_2x2_8x4_256_1": "same, transposed shape",
    "wt_64x128x16_32x64_2x2_4x4_128_3": "small blocks, three per SM: less reuse, slower",
    "wt_128x64x16_64x32_2x2_4x4_128_3": "same, transposed shape",
    "wt_128x256x8_64x64_1x2_8x8_256_1": "run 2: 8×8 per sub-tile on the 128×256 tile, 88–91 %",
    "wt_128x256x8_64x64_2x2_4x8_256_1": "run 2: 4×8 per sub-tile, 88–91 %",
    "wt_128x256x8_64x64_1x4_8x4_256_1": "run 2: four 8×4 sub-tiles along N, 88–91 %",
    "wt_128x256x16_64x64_2x2_8x4_256_1": "run 3, blind: run 2's kernel with BK 16, +1–2 %",
    "wt_128x256x16_64x64_1x2_8x8_256_1": "run 3: 8×8 sub-tiles with BK 16, as the published kernel",
    "wt_256x128x16_64x64_1x4_8x4_256_1": "run 3: the published kernel's transposed shape, about the same",
    "wt_128x256x8_64x64_2x2_8x4_256_1_g8": "run 2: grouped block order, better L2 reuse: 90 %",
    "wt_256x128x8_64x64_2x2_8x4_256_1_g8": "run 2: same, transposed shape",
    "tensor_core": "published since run 3: 128×128×32, 4 stages, grouped order; B now N×K: about run 2's 47 %",
    "tc_128x128x32_64x64_s3": "the first design: 55–65 % (run 2 adds early fragment loads)",
    "tc_128x128x32_64x64_s4": "one more stage in flight: a few points more",
    "tc_128x128x32_64x32_s3": "8 warps of 64×32: more warps, fewer results each",
    "tc_128x128x32_64x32_s4": "same with 4 stages",
    "tc_128x256x32_64x64_s3": "128×256 block tile: more reuse, the best",
    "tc_256x128x32_64x64_s3": "same, transposed shape",
    "tc_128x128x64_64x64_s3": "BK 64: half the barriers",
    "tc_128x256x64_64x64_s3": "128×256×64: the largest tile",
    "tc_128x256x32_64x64_s4": "128×256 with 4 stages",
    "tc_128x128x32_64x64_s3_g8": "run 2's published kernel: 3 stages and grouped order",
    "tc_128x128x64_64x64_s3_g8": "run 2: BK 64 and grouped order",
    "tc_128x256x32_64x64_s3_g8": "run 2: 128×256 and grouped order",
    "tc_128x128x32_64x64_s3_g16": "run 2: groups of 16 tile rows",
    "wgmma": "published since run 3, blind: TMA + wgmma, 128×256×64, warp-specialised, 4 stages: 72–85 %",
    "wgmma_s4_g8_f0": "run 3, blind: waiting for each wgmma group before the next: 2–5 % slower",
    "wgmma_s3_g8_f1": "run 3: 3 stages in flight: a few per cent slower",
    "wgmma_s4_g1_f1": "run 3: blocks in launch order: within the run's drift",
    "wgmma_s4_g16_f1": "run 3: groups of 16 tile rows: within the run's drift",
}


def best_tuned(ix: dict, key, prefix: str, precision: str) -> tuple[str, tuple[float, float]]:
    """The fastest measured instance of a template (names starting with prefix) at key."""
    found = [(r, v.split("/", 1)[1]) for (v, k) in ix if k == key
             and v.startswith(f"cuda_c/{prefix}") and (r := rate(ix, v, key, precision))]
    if not found:
        raise ValueError(f"no cuda_c/{prefix}* measurement at {size_label(key)}")
    r, name = max(found, key=lambda x: x[0][1])
    return name, r


@renderer("matmul_tuning")
def matmul_tuning(docs_dir: Path, path: str, build: str, size: str = "4096",
                  source: str = "snippets/matmul/kernels.cuh") -> str:
    doc, n = load(docs_dir, path), int(size)
    ix, key = index(doc), (n, n, n)
    facts = build_facts(docs_dir, build, source)
    rows = []
    for name, prediction in PREDICTIONS.items():
        precision = "bf16" if name.startswith(("tc_", "wgmma")) or name == "tensor_core" else "fp32"
        r = rate(ix, f"cuda_c/{name}", key, precision)
        f = facts.get(name, {})
        outcome = (f"{r[0]:.1f} TFLOP/s, **{100 * r[1]:.1f} %**" if r else "failed its check")
        rows.append([f"`{name}`", prediction, outcome,
                     f"{f.get('registers', '–')} / {f.get('spill_stores', '–')}"])
    return markdown_table(["variant", "prediction", "outcome (% of cuBLAS FP32 or BF16)",
                           "registers / spilled bytes"], rows, "lllr")


# --- the Numba and Triton variants of the first tuning run (raw log) --------------------------

NUMBA_LINE = re.compile(r"^numba (?P<label>\S+)\s+regs \{.*: (?P<regs>\d+)\} (?P<ms>[\d.]+) ms "
                        r"(?P<tf>[\d.]+) TFLOP/s (?P<pct>[\d.]+)% of cuBLAS fp32, err (?P<err>\S+),")
TRITON_LINE = re.compile(r"^triton (?P<cfg>\([\d, ]+\)) (?P<ms>[\d.]+) ms (?P<tf>[\d.]+) TFLOP/s "
                         r"(?P<pct>[\d.]+)% of torch bf16, err (?P<err>[^,]+),")
PY_PREDICTIONS = {
    "vectorized": "16-byte loads through @intrinsic: 50–55 %",
    "warptile_lb2": "warp tile, BK 16, capped at 128 registers: 60–75 %",
    "warptile_nolb": "same without the cap",
    "warptile_bk8": "BK 8: half the staging registers",
    "warptile_bk8_nolb": "BK 8 without the cap",
    "warptile_32x64": "warps of 32×64",
}


@renderer("matmul_python_tuning")
def matmul_python_tuning(docs_dir: Path, log: str) -> str:
    """Numba variants and Triton tile configurations from the raw log of the tuning run."""
    text = (docs_dir / log).read_text()
    rows = []
    for line in text.splitlines():
        if m := NUMBA_LINE.match(line):
            rows.append([f"Numba `{m['label']}`", PY_PREDICTIONS.get(m["label"], "–"),
                         f"{float(m['tf']):.1f} TFLOP/s, **{float(m['pct']):.1f} %** of FP32, "
                         f"{m['regs']} registers"])
        elif m := TRITON_LINE.match(line):
            rows.append([f"Triton `{m['cfg']}`", "85–100 % of cuBLAS BF16 (the first: the "
                         "tutorial's shape)" if not any(r[0].startswith("Triton") for r in rows)
                         else "–", f"{float(m['tf']):.0f} TFLOP/s, **{float(m['pct']):.1f} %** "
                         "of BF16"])
    if not rows:
        raise ValueError(f"{log} has no Numba or Triton tuning lines")
    return (markdown_table(["variant", "prediction", "outcome (% of cuBLAS, same process)"],
                           rows, "lll") + "\n\nTriton configurations are (BLOCK_M, BLOCK_N, "
            "BLOCK_K, GROUP_M, warps, stages); their cuBLAS BF16 yardstick writes BF16 output.\n")


# --- the Nsight Compute profile of the naive and coalesced kernels -----------------------------

NCU_KERNEL = re.compile(r"^  (?:void )?(\w+).*, Context \d+")  # a profiled launch's header
NCU_METRIC = re.compile(r"^\s+([a-z0-9_]+__[\w.]+)\s+(\S+)?\s+([\d,.]+)\s*$")
NCU_SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ms": 1e-3, "us": 1e-6}


def ncu_profiles(text: str) -> list[tuple[str, dict[str, float]]]:
    """[(kernel, {metric: value in base units})], one per profiled launch in order, from
    `ncu --metrics` output (or several such outputs appended)."""
    out: list[tuple[str, dict[str, float]]] = []
    for line in text.splitlines():
        if m := NCU_KERNEL.match(line):
            out.append((m[1], {}))
        elif out and (m := NCU_METRIC.match(line)):
            unit = m[2] if m[2] in NCU_SCALE else None
            out[-1][1][m[1]] = float(m[3].replace(",", "")) * (NCU_SCALE[unit] if unit else 1)
    return out


def parse_ncu(text: str) -> dict[str, dict[str, float]]:
    """{kernel without its sgemm_ prefix: {metric: value}}, the last launch of each kernel."""
    return {name.removeprefix("sgemm_"): metrics for name, metrics in ncu_profiles(text)}


@renderer("matmul_ncu")
def matmul_ncu(docs_dir: Path, path: str) -> str:
    """The paragraph that reads the naive and coalesced kernels' counters."""
    prof = parse_ncu((docs_dir / path).read_text())
    try:
        nv, co = prof["naive"], prof["coalesced"]
        req = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
        sec = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
        dram, sm = "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"
        parts = (nv[req], nv["dram__bytes_read.sum"], co[dram], nv[sec], co[sec], nv[sm], co[sm])
    except KeyError as exc:
        raise ValueError(f"{path} lacks {exc} (ncu failed?)") from None
    n_req, n_dram, c_dram, n_sec, c_sec, n_sm, c_sm = parts
    same = "the same" if n_req == co[req] else "nearly the same"
    reads = (f"both read only {n_dram / 1e6:.0f} MB" if round(n_dram / 1e6) == round(c_dram / 1e6)
             else f"they read only {n_dram / 1e6:.0f} and {c_dram / 1e6:.0f} MB")
    return (f"Both kernels issue {same} {n_req / 1e6:,.0f} million load requests, and {reads} "
            f"from DRAM: the inputs stay in L2. "
            f"The difference is in the L1: the naive kernel needs {n_sec / 1e9:.1f} billion "
            f"32-byte sectors, {n_sec / n_req:.1f} per request, where the coalesced one needs "
            f"{c_sec / 1e9:.1f} billion, {c_sec / co[req]:.1f} per request. Its SM throughput "
            f"goes from {n_sm:.0f} % to {c_sm:.0f} % of peak, and its duration drops accordingly.")


# --- plain loads for interior tiles: the A/B call and its stall breakdown (raw logs) -----------

BUILDS = {"new": "plain loads inside (published)", "old": "load4 guards on every load"}
# The stalls shown, in this order, with what each means.
STALLS = {"issue_active": "share of cycles a scheduler issues an instruction",
          "no_instruction": "stalled: no instruction fetched yet",
          "short_scoreboard": "stalled: waiting for a shared-memory load",
          "dispatch_stall": "stalled: the dispatch unit could not take the instruction",
          "wait": "stalled: a fixed-latency dependency",
          "barrier": "stalled: at `__syncthreads`"}
# The lines read: a round's header and its two table rows.
ROUND = re.compile(r"^## round (\d+): (old|new) build")
TABLE_LINE = re.compile(r"^\d+x\d+x\d+\s+(cublas_fp32|warptile)\s+[\d.]+\s+([\d.]+)\s")


def stall_metric(key: str) -> str:
    """The ncu metric behind a row of STALLS."""
    return ("smsp__issue_active.avg.per_cycle_active" if key == "issue_active"
            else f"smsp__average_warps_issue_stalled_{key}_per_issue_active.ratio")


@renderer("matmul_loads")
def matmul_loads(docs_dir: Path, log: str, ncu: str) -> str:
    """The two builds of warptile timed in alternation (log: rounds of `sgemm --kernel
    cublas_fp32,warptile 4096`, old build then new), and the stall breakdown of the ncu file
    written by the same script: new warptile, old warptile, cuBLAS FP32, in that order."""
    rates: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    build, base = None, None
    for line in (docs_dir / log).read_text().splitlines():
        if m := ROUND.match(line):
            build, base = m[2], None
        elif build and (m := TABLE_LINE.match(line)):
            if m[1] == "cublas_fp32":
                base = float(m[2])
            elif base:
                rates[build].append((float(m[2]), float(m[2]) / base))
                build = None
    if not rates["old"] or len(rates["old"]) != len(rates["new"]):
        raise ValueError(f"{log}: expected as many rounds of the old build as of the new")
    rows = [[BUILDS[b], *(f"{tf:.1f} TFLOP/s, **{100 * frac:.1f} %**" for tf, frac in rates[b])]
            for b in ("new", "old")]
    timing = markdown_table(["warptile build", *(f"round {i + 1}" for i in range(len(rates["old"])))],
                            rows, "l" + "r" * len(rates["old"]))
    profiles = [metrics for _, metrics in ncu_profiles((docs_dir / ncu).read_text())]
    if len(profiles) < 3:
        raise ValueError(f"{ncu}: expected the new warptile, the old one and cuBLAS FP32")
    rows = [[f"`{k}`", what, *(f"{p[stall_metric(k)]:.2f}" if stall_metric(k) in p else "–"
                                 for p in profiles[:3])]
            for k, what in STALLS.items()]
    stalls = markdown_table(["Nsight Compute", "meaning (stalls: cycles per issued instruction)",
                             "plain loads", "guarded loads", "cuBLAS FP32"], rows, "llrrr")
    return f"{timing}\n\n{stalls}\n"
