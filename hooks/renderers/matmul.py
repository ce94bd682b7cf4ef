"""The matrix-multiplication page: every kernel against cuBLAS, from one results file (labels
from its `variants`), the build report of the same run and the raw logs of the tuning calls."""

from __future__ import annotations

import re
from pathlib import Path

from . import markdown_table, read_csv, renderer, svg_figure, value
from .run_details import label, load

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


def steps(doc: dict, lang: str) -> list[str]:
    """The kernels of a language's steps, in order; `fp32` for the steps both languages have."""
    keys = [k for k, v in doc["variants"].items() if v.get("step") and "/" in k]
    if lang == "fp32":
        return [k.split("/")[1] for k in keys if k.startswith("numba/")]
    return [k.split("/")[1] for k in keys if k.startswith(f"{lang}/")]


def short(doc: dict, variant: str) -> tuple[str, str]:
    """("CUDA C", "1 naive") from the label "CUDA C, 1 naive"."""
    lang, _, name = label(doc, variant).partition(", ")
    return lang, name


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


def rate(ix: dict, variant: str, key, precision: str = "fp32") -> tuple[float, float] | None:
    """(TFLOP/s, fraction of cuBLAS in `precision` at the same size) or None."""
    m, ref = ix.get((variant, key)), ix.get((BASE[precision], key))
    if m is None or ref is None:
        return None
    return tflops(m), ref["median_s"] / m["median_s"]


def shown(r: tuple[float, float] | None, show: str, digits: str, what: str) -> str:
    """A rate as TFLOP/s (show=tflops), % of cuBLAS (pct) or a multiple of cuBLAS (times)."""
    if r is None:
        raise ValueError(f"no {what} (with its cuBLAS run)")
    return {"tflops": f"{r[0]:.{digits}f}", "pct": f"{100 * r[1]:.{digits}f} %",
            "times": f"{r[1]:.{digits}f}×"}[show]


@value("matmul.rate")
def rate_value(docs_dir: Path, path: str, variant: str, show: str = "tflops", of: str = "fp32",
               digits: str = "1", size: str = "4096") -> str:
    """A variant's rate at size³, against cuBLAS in precision `of` measured in the same run."""
    n = int(size)
    return shown(rate(index(load(docs_dir, path)), variant, (n, n, n), of), show, digits,
                 f"{variant} at {n}³ in {path}")


@value("matmul.intensity")
def intensity_value(docs_dir: Path, kernel: str, memory: str = "global") -> str:
    """FLOP per byte loaded from global memory (memory=global) or read from shared (shared)."""
    glob, shared = intensity(kernel)
    return f"{glob:g}" if memory == "global" else f"{shared:.2g}"


@value("matmul.best")
def best_value(docs_dir: Path, path: str, lang: str = "cuda_c", prefix: str = "", of: str = "fp32",
               show: str = "pct", digits: str = "1", size: str = "4096") -> str:
    """The fastest at size³ of a language's FP32 steps or, with prefix=, of the instances of a
    template (cuda_c/<prefix>...): its name (the step's or the instance's), pct or tflops."""
    doc, key = load(docs_dir, path), (int(size),) * 3
    ix = index(doc)
    among = ([v for (v, k) in ix if k == key and v.startswith(f"{lang}/{prefix}")] if prefix
             else [f"{lang}/{k}" for k in steps(doc, "fp32")])
    found = [(r, v) for v in among if (r := rate(ix, v, key, of))]
    if not found:
        raise ValueError(f"{path} has no {lang}/{prefix}* kernel at {size}³")
    r, best = max(found, key=lambda x: x[0][1])
    if show != "name":
        return shown(r, show, digits, best)
    return best.split("/", 1)[1] if prefix else short(doc, best)[1].partition(" ")[2]


@renderer("matmul_table")
def matmul_table(docs_dir: Path, path: str, lang: str) -> str:
    doc = load(docs_dir, path)
    ix, keys = index(doc), sizes(doc)
    rows = [["cuBLAS FP32", *[f"{tflops(ix[('cublas_fp32', k)]):.1f}"
                              if ("cublas_fp32", k) in ix else "–" for k in keys]]]
    for kernel in steps(doc, "fp32"):
        cells = [f"{r[0]:.1f} ({100 * r[1]:.0f} %)" if (r := rate(ix, f"{lang}/{kernel}", k))
                 else "–" for k in keys]
        rows.append([short(doc, f"{lang}/{kernel}")[1], *cells])
    return markdown_table([f"{short(doc, f'{lang}/naive')[0]}: TFLOP/s (% of cuBLAS)",
                           *map(size_label, keys)], rows, "l" + "r" * len(keys))


@renderer("matmul_chart")
def matmul_chart(docs_dir: Path, path: str) -> str:
    import matplotlib.pyplot as plt

    doc = load(docs_dir, path)
    ix, kernels = index(doc), steps(doc, "fp32")
    square = [k for k in sizes(doc) if k[0] == k[1] == k[2]]
    xs = [k[0] for k in square]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), sharey=True)
    colors = plt.get_cmap("viridis")
    for ax, lang in zip(axes, ("cuda_c", "numba")):
        ref = [tflops(ix[("cublas_fp32", k)]) for k in square]
        ax.plot(xs, ref, color="black", linewidth=3, label="cuBLAS FP32")
        for i, kernel in enumerate(kernels):
            ys = [tflops(ix[(f"{lang}/{kernel}", k)]) if (f"{lang}/{kernel}", k) in ix
                  else float("nan") for k in square]
            ax.plot(xs, ys, marker="o", color=colors(i / (len(kernels) - 1)),
                    label=short(doc, f"cuda_c/{kernel}")[1])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.set_xlabel("M = N = K")
        ax.set_title(short(doc, f"{lang}/naive")[0])
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
        for m in (ix.get((f"cublas_{p}", k)) for p in ("fp32", "tf32", "bf16")) if fp32 else ():
            if m is not None:
                rows.append([size_label(k), label(doc, m["variant"]).removeprefix("cuBLAS "),
                             f"{tflops(m):.1f}", f"{fp32['median_s'] / m['median_s']:.1f}×",
                             f"{m['error']['value']:.1e}", f"{ratio[(m['variant'], k)]:,.0f}×"])
    if not rows:
        raise ValueError(f"{path} has no cuBLAS measurements")
    return markdown_table(["size", "cuBLAS", "TFLOP/s", "speed vs FP32", "error",
                           "error vs FP32"], rows, "llrrrr")


@value("matmul.error_ratio")
def error_ratio(docs_dir: Path, path: str, variant: str, bound: str) -> str:
    """The smallest (bound=min) or largest (max) error of a variant over the FP32 error, all sizes."""
    rs = [r for (v, _), r in error_ratios(load(docs_dir, path)).items() if v == variant]
    if not rs:
        raise ValueError(f"{path} has no {variant} with a cuBLAS FP32 run beside it")
    return f"{(min if bound == 'min' else max)(rs):,.0f}"


# --- the build report (nvcc -Xptxas -v) -------------------------------------------------------

ENTRY = re.compile(r"Compiling entry function '(?P<name>\w+)'")
SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
TEMPLATE = re.compile(r'\{"(?P<name>\w+)",\s*(?:nullptr,\s*)?launch_(?P<kind>warptile|tc|wgmma)'
                      r"<(?P<args>[\d,\s]+)>")
TEMPLATES = {"sgemm_warptile": "warptile", "gemm_bf16_tc": "tc", "gemm_bf16_wgmma": "wgmma"}
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
            kind = next((k for k in TEMPLATES if k in mangled), None)
            if kind:
                current = template_name(TEMPLATES[kind], args)
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
    return facts | {name.removeprefix("sgemm_"): f for name, f in facts.items()
                    if name.startswith("sgemm_")}


def smem_cell(f: dict) -> str:
    total = f.get("smem", 0) + f.get("dynamic_smem", 0)
    return f"{total / 1024:.1f} KiB" + (" (dynamic)" if f.get("dynamic_smem") else "")


@renderer("matmul_build")
def matmul_build(docs_dir: Path, path: str, build: str,
                 source: str = "snippets/matmul/kernels.cuh") -> str:
    doc, facts = load(docs_dir, path), build_facts(docs_dir, build, source)
    rows = []
    for kernel in steps(doc, "cuda_c"):
        f = facts.get(kernel)
        if not f:
            raise ValueError(f"{build} has no entry for {kernel}")
        rows.append([short(doc, f"cuda_c/{kernel}")[1], f["registers"], f["spill_stores"],
                     smem_cell(f)])
    return markdown_table(["CUDA C kernel", "registers per thread", "spilled bytes",
                           "shared memory per block"], rows, "lrrr")


def read_predictions(docs_dir: Path, path: str) -> dict[str, str]:
    """{variant: what was expected of it} from the predictions file (its header says when)."""
    return {r["variant"]: r["prediction"] for r in read_csv(docs_dir, path)}


@renderer("matmul_tuning")
def matmul_tuning(docs_dir: Path, path: str, build: str, predictions: str, size: str = "4096",
                  source: str = "snippets/matmul/kernels.cuh") -> str:
    ix, n = index(load(docs_dir, path)), int(size)
    facts = build_facts(docs_dir, build, source)
    rows = []
    for name, prediction in read_predictions(docs_dir, predictions).items():
        if ":" in name:  # numba:..., triton:...: matmul_python_tuning's rows
            continue
        precision = "bf16" if name.startswith(("tc_", "wgmma")) or name == "tensor_core" else "fp32"
        r = rate(ix, f"cuda_c/{name}", (n, n, n), precision)
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


@renderer("matmul_python_tuning")
def matmul_python_tuning(docs_dir: Path, log: str, predictions: str) -> str:
    """Numba variants and Triton tile configurations from the raw log of the tuning run."""
    expected = read_predictions(docs_dir, predictions)
    rows = []
    for line in (docs_dir / log).read_text().splitlines():
        if m := NUMBA_LINE.match(line):
            rows.append([f"Numba `{m['label']}`", expected.get(f"numba:{m['label']}", "–"),
                         f"{float(m['tf']):.1f} TFLOP/s, **{float(m['pct']):.1f} %** of FP32, "
                         f"{m['regs']} registers"])
        elif m := TRITON_LINE.match(line):
            first = not any(r[0].startswith("Triton") for r in rows)
            rows.append([f"Triton `{m['cfg']}`", expected["triton:first"] if first else "–",
                         f"{float(m['tf']):.0f} TFLOP/s, **{float(m['pct']):.1f} %** of BF16"])
    if not rows:
        raise ValueError(f"{log} has no Numba or Triton tuning lines")
    return markdown_table(["variant", "prediction", "outcome (% of cuBLAS, same process)"],
                          rows, "lll") + "\n"


# --- Nsight Compute: the naive and coalesced kernels, the two warptile builds ------------------

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


@value("matmul.ncu")
def ncu_value(docs_dir: Path, path: str, kernel: str, metric: str, per: str = "",
              scale: str = "1", digits: str = "0") -> str:
    """A counter of a kernel's last profiled launch (over another counter of it: per=), / scale."""
    # {kernel without its sgemm_ prefix: {metric: value}} of the last launch of each kernel
    prof = {name.removeprefix("sgemm_"): m for name, m in ncu_profiles((docs_dir / path).read_text())}
    try:
        v = prof[kernel][metric] / (prof[kernel][per] if per else 1)
    except KeyError as exc:
        raise ValueError(f"{path} lacks {exc} (ncu failed?)") from None
    return f"{v / float(scale):,.{digits}f}"


# The two warptile builds timed in alternation (raw logs):
# The lines read: a round's header and its two table rows.
ROUND = re.compile(r"^## round (\d+): (old|new) build")
TABLE_LINE = re.compile(r"^\d+x\d+x\d+\s+(cublas_fp32|warptile)\s+[\d.]+\s+([\d.]+)\s")


def stall_metric(key: str) -> str:
    """The ncu metric behind a row of the stalls file."""
    return ("smsp__issue_active.avg.per_cycle_active" if key == "issue_active"
            else f"smsp__average_warps_issue_stalled_{key}_per_issue_active.ratio")


@renderer("matmul_loads")
def matmul_loads(docs_dir: Path, log: str, ncu: str, stalls: str, new: str, old: str) -> str:
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
    rows = [[name, *(f"{tf:.1f} TFLOP/s, **{100 * frac:.1f} %**" for tf, frac in rates[b])]
            for b, name in (("new", new), ("old", old))]
    timing = markdown_table(["warptile build", *(f"round {i + 1}" for i in range(len(rates["old"])))],
                            rows, "l" + "r" * len(rates["old"]))
    profiles = [metrics for _, metrics in ncu_profiles((docs_dir / ncu).read_text())]
    if len(profiles) < 3:
        raise ValueError(f"{ncu}: expected the new warptile, the old one and cuBLAS FP32")
    rows = [[f"`{k}`", what, *(f"{p[stall_metric(k)]:.2f}" if stall_metric(k) in p else "–"
                                 for p in profiles[:3])]
            for k, what in ((r["stall"], r["meaning"]) for r in read_csv(docs_dir, stalls))]
    stalls = markdown_table(["Nsight Compute", "meaning (stalls: cycles per issued instruction)",
                             "plain loads", "guarded loads", "cuBLAS FP32"], rows, "llrrr")
    return f"{timing}\n\n{stalls}\n"
