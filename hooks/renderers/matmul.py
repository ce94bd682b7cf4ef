"""The matrix-multiplication pages: kernels against cuBLAS, tuning runs, ncu, intensities."""

from __future__ import annotations

import json
from pathlib import Path

from . import load_json, long_name, markdown_table, read_csv, renderer, svg_figure, value
from .run_details import label, load
from .table import pick, table

# The yardstick of each variant: cuBLAS in the same process and precision (the CUDA C binary's
# own calls, cublas_<precision>; for Numba and Triton, cuBLAS through PyTorch just before them).
SAME_PROCESS = {"numba/": ("fp32", "torch/cublas_fp32"), "triton": ("bf16", "torch/cublas_bf16")}
# The last kernel of each kind, as the share chart shows them: (variant, precision).
FINAL = [("cuda_c/warptile", "fp32"), ("numba/warptile", "fp32"), ("cuda_c/tensor_core", "bf16"),
         ("cuda_c/wgmma", "bf16"), ("triton", "bf16"), ("triton_tma", "bf16")]
# Block tile BM x BN (loads BM + BN floats a step along K for 2 BM BN FLOP) and thread tile TM x TN
# (reads TM + TN floats from shared for 2 TM TN FLOP) of the GPU builds; warptile: 128x256.
TILES = {"smem": (32, 32, 1, 1), "blocktile_1d": (64, 64, 8, 1), "blocktile_2d": (128, 128, 8, 8),
         "vectorized": (128, 128, 8, 8), "warptile": (128, 256, 8, 16)}  # naive, coalesced: none


def index(doc: dict) -> dict:
    """{(variant, case): kernel-only measurement}; failed variants are not in the file."""
    return {(m["variant"], m["case"]): m for m in doc["measurements"]
            if m["phase"] == "kernel" and m["case"] != "compile"}


def cases(doc: dict) -> dict[str, str]:
    """{case: its label}, square sizes first, smallest first: "1024³", "3001×4099×2053"."""
    params = {m["case"]: m["params"] for m in doc["measurements"]  # not a cuBLAS-only probe
              if m["case"] != "compile" and "cublas_only" not in m["params"]}
    order = sorted(params, key=lambda c: (len(set(params[c].values())) > 1, params[c]["m"]))
    return {c: (f"{params[c]['m']}³" if len(set(params[c].values())) == 1
                else "×".join(str(params[c][k]) for k in "mnk")) for c in order}


def base_of(variant: str, of: str) -> str:
    return next((b for p, (o, b) in SAME_PROCESS.items() if variant.startswith(p) and o == of),
                f"cublas_{of}")


def rate(ix: dict, variant: str, case: str, of: str = "fp32") -> tuple | None:
    """(TFLOP/s, fraction of cuBLAS in precision `of` (same process and case), seconds)."""
    if None in (m := ix.get((variant, case)), ref := ix.get((base_of(variant, of), case))):
        return None
    return m["flops"] / m["median_s"] / 1e12, ref["median_s"] / m["median_s"], m["median_s"]


def rate_of(docs_dir: Path, path: str, variant: str, of: str, size: str) -> tuple:
    if (r := rate(index(load(docs_dir, path)), variant, size, of)) is None:
        raise ValueError(f"no {variant} in case {size} of {path} (with its cuBLAS run)")
    return r


# A variant's rate in case `size` (4096, 1024, odd, ...) against cuBLAS in precision `of`, as
# {{ matmul.NAME variant [of] [size] }}: TFLOP/s, % of cuBLAS, a multiple of it, µs a call.
RATE_FIGURES = {  # NAME: (which of rate()'s answers, scale, unit after it)
    "tflops": (0, 1, ""), "share": (1, 100, " %"), "times": (1, 1, "×"), "us": (2, 1e6, "")}


def _rate_figure(which: int, scale: float, unit: str):
    def figure(docs_dir: Path, variant: str, of: str = "fp32", size: str = "4096", *, path: str,
               digits: str = "1") -> str:
        return f"{scale * rate_of(docs_dir, path, variant, of, size)[which]:.{digits}f}{unit}"
    return figure


for _name, _how in RATE_FIGURES.items():
    value(f"matmul.{_name}")(_rate_figure(*_how))


def bounded(found: list[float], bound: str) -> float:
    return {"min": min, "max": max}[bound](found)  # a bound other than min or max raises


@value("matmul.span")
def span_value(docs_dir: Path, variant: str, bound: str, *, path: str, of: str = "fp32",
               digits: str = "0") -> str:
    """`{{ matmul.span variant min|max }}`: its lowest or highest share of cuBLAS over every case."""
    ix = index(load(docs_dir, path))
    if not (found := [r[1] for (v, c) in ix if v == variant and (r := rate(ix, v, c, of))]):
        raise ValueError(f"{path} has no {variant} with its cuBLAS run")
    return f"{100 * bounded(found, bound):.{digits}f} %"


# Nsight Compute figures of a kernel, {{ matmul.ncu kernel NAME }}: (metric, divisor, format).
NCU = {"requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1e6, ",.0f"),
       "dram_mb": ("dram__bytes_read.sum", 1e6, ",.0f"),
       "sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1e9, ",.1f"),
       "sm_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", 1, ",.0f")}


@value("matmul.ncu")
def ncu_value(docs_dir: Path, kernel: str, figure: str, *, ncu: str) -> str:
    """A kernel's figure of NCU, or `per_request`: global-load sectors per request."""
    metrics = pick(docs_dir, ncu, f"kernel={kernel}")[0][0]["metrics"]
    if figure == "per_request":
        return f"{metrics[NCU['sectors'][0]] / metrics[NCU['requests'][0]]:,.1f}"
    metric, by, spec = NCU[figure]
    return format(metrics[metric] / by, spec)


@value("matmul.intensity")
def intensity_value(docs_dir: Path, kernel: str, memory: str = "global") -> str:
    """FLOP per byte loaded from global memory (memory=global) or read from shared (shared)."""
    if kernel not in {"naive", "coalesced", *TILES} or memory not in ("global", "shared"):
        raise ValueError(f"no kernel {kernel!r} of memory {memory!r}; kernels: naive, coalesced, "
                         f"{', '.join(TILES)}")
    bm, bn, tm, tn = TILES.get(kernel, (1, 1, 0, 0))
    return f"{bm * bn / (bm + bn) / 2:g}" if memory == "global" else \
        f"{tm * tn / (tm + tn) / 2:.2g}"


@renderer("matmul_table")
def matmul_table(docs_dir: Path, path: str, lang: str = "", variants: str = "",
                 of: str = "fp32") -> str:
    """TFLOP/s (% of cuBLAS) per case: a language's FP32 steps 1 to 7 (lang=) or listed variants."""
    ix, cs = index(doc := load(docs_dir, path)), cases(doc)
    names = variants.split(",") if not lang else [
        k for k, v in doc["variants"].items() if k.startswith(f"{lang}/")
        and v.get("step", "0").isdigit() and int(v["step"]) <= 7]
    rows = [[label(doc, b), *(f"{ix[(b, c)]['flops'] / ix[(b, c)]['median_s'] / 1e12:.1f}"
                              if (b, c) in ix else "–" for c in cs)]
            for b in dict.fromkeys(base_of(v, of) for v in names)]
    rows += [[label(doc, v).partition(", ")[2] if lang else label(doc, v),
              *(f"{r[0]:.1f} ({100 * r[1]:.0f} %)" if (r := rate(ix, v, c, of)) else "–"
                for c in cs)] for v in names]
    # the spread of what the cells show: each is a median; its slowest sample over its fastest
    shown = [(m["max_s"] / m["min_s"], v, c) for v in {*names, *(base_of(v, of) for v in names)}
             for c in cs if (m := ix.get((v, c)))]
    worst, v, c = max(shown)
    return (markdown_table(["TFLOP/s (% of cuBLAS, same process)", *cs.values()], rows,
                           "l" + "r" * len(cs))
            + f"\n\nEach cell is the median of its timed samples; the widest spread of any cell "
            f"here (slowest sample over fastest) is {100 * (worst - 1):.1f} % ({label(doc, v)}, "
            f"{cs[c]}).\n")


@renderer("matmul_share_chart")
def matmul_share_chart(docs_dir: Path, path: str, alt: str, caption: str) -> str:
    import matplotlib.pyplot as plt

    ix, cs = index(doc := load(docs_dir, path)), cases(doc)
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    for i, (variant, of) in enumerate(FINAL):
        ys = [100 * r[1] if (r := rate(ix, variant, c, of)) else float("nan") for c in cs]
        name, tag = label(doc, variant), f" ({of.upper()})"
        ax.plot(range(len(cs)), ys, marker="os^vDP"[i], linestyle="-" if of == "fp32" else "--",
                label=name if of.upper() in name else name + tag)
    ax.axhline(100, color="black", linewidth=2)
    ax.set_xticks(range(len(cs)), list(cs.values()))
    ax.set(ylim=(0, 130), ylabel="% of cuBLAS, same precision, same process")
    ax.grid(True, alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=2, frameon=False)
    return svg_figure(fig, alt=alt, caption=caption)


@renderer("matmul_tuning")
def matmul_tuning(docs_dir: Path, path: str, prefix: str, published: str, of: str = "fp32",
                  confirm: str = "") -> str:
    """% of cuBLAS of a tuning run's instances cuda_c/<prefix>..., the fastest of a case (the rule's
    pick) in bold; first the default launcher, last (confirm=) the confirming run's figure."""
    ix, cs = index(doc := load(docs_dir, path)), cases(doc)
    names = [published, *dict.fromkeys(v for v, _ in ix if v.startswith(f"cuda_c/{prefix}"))]
    share = {(v, c): r for v in names for c in cs if (r := rate(ix, v, c, of))}
    fast = {c: v for (v, c), r in sorted(share.items(), key=lambda x: -x[1][2]) if v != published}
    rows = [[long_name(v.split('/', 1)[1], "_") if v != published else "default launcher",
             *((f"**{100 * r[1]:.1f}**" if fast.get(c) == v else f"{100 * r[1]:.1f}")
               if (r := share.get((v, c))) else "–" for c in cs)] for v in names]
    if confirm and (cx := index(load(docs_dir, confirm))):
        rows.append(["confirming run (separate process)", *(f"{100 * r[1]:.1f}" if (
            r := rate(cx, published, c, of)) else "–" for c in cs)])
    return markdown_table(["% of cuBLAS, tuning run", *cs.values()], rows, "l" + "r" * len(cs))


def error_ratios(doc: dict) -> dict:
    """{(variant, case): its error / cuBLAS FP32's error in the same case}."""
    ix = index(doc)
    return {(v, c): m["error"]["value"] / fp32["error"]["value"] for (v, c), m in ix.items()
            if (fp32 := ix.get(("cublas_fp32", c))) and fp32["error"]["value"]}


@value("matmul.error")
def error_ratio(docs_dir: Path, variant: str, bound: str, *, path: str) -> str:
    """`{{ matmul.error variant min|max }}`: its error over FP32's, smallest or largest of all sizes."""
    if not (rs := [r for (v, _), r in error_ratios(load(docs_dir, path)).items() if v == variant]):
        raise ValueError(f"{path} has no {variant} with a cuBLAS FP32 run beside it")
    return f"{bounded(rs, bound):,.0f}"


def tuned_candidates(docs_dir: Path, path: str, key: str) -> tuple[list, list, dict]:
    """A tuning run of gpu/matmul.sh (JSON lines, one a candidate and size): (its rows, the
    sizes, squares first, {size: the row the rule picks}: launchers.best's rule, the highest
    share of cuBLAS among the rows that passed their check). Rows of a one-size run written
    before sizes were lists ("size": 4096, no "ok") read as that square, checked to 1e-5."""
    found = [json.loads(line) for line in (docs_dir / path).read_text().splitlines() if line]
    for r in found:
        r["size"] = tuple(r["size"] if isinstance(r["size"], list) else [r["size"]] * 3)
        r.setdefault("ok", "share" in r and r.get("rel_err", 1) < 1e-5)
    sizes = sorted({r["size"] for r in found}, key=lambda s: (len(set(s)) > 1, s))
    picks = {s: max(ok, key=lambda r: r["share"]) for s in sizes
             if (ok := [r for r in found if r["size"] == s and r["ok"]])}
    if not found:
        raise ValueError(f"{path} holds no candidate")
    return found, sizes, picks


def candidates_table(docs_dir: Path, path: str, key: str, head: str, describe,
                     extra: dict[str, str] | None = None) -> str:
    """One row a candidate (`describe(row[key])`), one column a size: its % of cuBLAS in the same
    process, the pick at each size in bold ("failed": no figure, or a failed check); then the
    `extra` fields ({field: column head}) of its first row that has them."""
    found, sizes, picks = tuned_candidates(docs_dir, path, key)
    extra = extra or {}
    rows = []
    for cand in dict.fromkeys(tuple(r[key]) for r in found):
        mine = {r["size"]: r for r in found if tuple(r[key]) == cand}
        cells = [("–" if (r := mine.get(s)) is None else "failed" if not r["ok"] else
                  f"**{100 * r['share']:.1f} %**" if picks.get(s) is r else
                  f"{100 * r['share']:.1f} %") for s in sizes]
        more = next((r for r in mine.values() if all(f in r for f in extra)), {})
        rows.append([describe(*cand), *cells, *(more.get(f, "") for f in extra)])
    heads = [f"{m}³" if m == n == k else f"{m}×{n}×{k}" for m, n, k in sizes]
    return markdown_table([head, *heads, *extra.values()], rows,
                          "l" + "r" * (len(sizes) + len(extra)))


@renderer("matmul_numba_tiles")
def matmul_numba_tiles(docs_dir: Path, path: str) -> str:
    """The Numba tuning run (gpu/explore/matmul-numba-tiles.py): % of cuBLAS FP32 of each warp
    tile at each size, the picked in bold, with its registers and local memory."""
    return candidates_table(
        docs_dir, path, "tiles", "Numba warp tile",
        lambda bm, bn, bk, wm, wn, wmi, wni, tm, tn, per_sm:
        f"{bm}×{bn}×{bk}, warps {wm}×{wn}, {wmi * tm}×{wni * tn} a lane, {per_sm} a SM",
        {"regs": "registers", "local_bytes": "local bytes"})


@renderer("matmul_triton_configs")
def matmul_triton_configs(docs_dir: Path, path: str) -> str:
    """The Triton tuning run (gpu/explore/matmul-triton-configs.py): % of cuBLAS BF16 of each
    config of the persistent TMA kernel at each size of its class, the picked in bold."""
    return candidates_table(
        docs_dir, path, "config", "Triton config",
        lambda bm, bn, bk, group, warps, stages:
        f"{bm}×{bn}×{bk}, groups of {group}, {warps} warps, {stages} stages")


@renderer("matmul_stalls")
def matmul_stalls(docs_dir: Path, ncu: str, stalls: str, names: str) -> str:
    """Metrics (rows: the stalls file) of the launches profiled in `ncu` (columns: names)."""
    heads = names.split(";")
    if len(profiles := [p["metrics"] for p in load_json(docs_dir, ncu)["rows"]]) < len(heads):
        raise ValueError(f"{ncu}: {len(profiles)} profiled launches, {len(heads)} named")
    rows = [[long_name(row["name"], "."), row["meaning"], *(f"{c:,.2f}" if c is not None else "–"
                                                    for c in cells)]
            for row in read_csv(docs_dir, stalls)
            if (cells := [p.get(row["metric"]) for p in profiles[:len(heads)]]) != [None] * len(
                heads)]
    return markdown_table(["Nsight Compute", "meaning", *heads], rows, "ll" + "r" * len(heads))


BUILD_COLUMNS = ("CUDA C kernel={what};registers per thread={registers};spilled bytes={spill_stores};"
                 "shared memory per block={shared_kib:.1f} KiB{dynamic: (?)}")


def tile_name(instance: str, step: str) -> tuple[int, str]:
    """(-block tile area, its row name) of a warp-tile instance, wt_<BM>x<BN>x<BK>_<WM>x<WN>_
    <WMITER>x<WNITER>_<TM>x<TN>_<threads>_<blocks a SM>_g<group>: "7 warp tiles, 128×256"."""
    parts = instance.split("_")
    bm, bn = (int(x) for x in parts[1].split("x")[:2])
    return -bm * bn, f"{step}, {bm}×{bn}" + (", two per SM" if parts[6] == "2" else "")


@renderer("matmul_build")
def matmul_build(docs_dir: Path, *, path: str, build: str) -> str:
    """Registers, spills and shared memory (the `build` report) of each FP32 CUDA C step of the
    results file `path`; a step that ran several tile instances (7) gets a row per tile it ran,
    the largest block tile first."""
    ix, names = index(doc := load(docs_dir, path)), {}
    for v, spec in doc["variants"].items():
        if not (v.startswith("cuda_c/") and spec["step"].isdigit() and int(spec["step"]) <= 7):
            continue
        words = label(doc, v).partition(", ")[2]
        ran = {m["extra"]["instance"].rsplit("_k", 1)[0] for (w, _), m in ix.items()
               if w == v and m["extra"].get("instance")}
        tiles = sorted((*tile_name(t, words.split(",")[0]), t) for t in ran)
        names.update({t: name for _, name, t in tiles} if ran else {v.split("/", 1)[1]: words})
    return table(docs_dir, build, BUILD_COLUMNS, "lrrr", where="kernel=" + ",".join(names),
                 names=";".join(f"{k}={n}" for k, n in names.items()))


@renderer("matmul_precisions")
def matmul_precisions(docs_dir: Path, *, path: str) -> str:
    """cuBLAS in FP32, TF32 and BF16 at every size: speed and error, each against FP32's."""
    return table(docs_dir, path, "size={params:dims};cuBLAS={what};TFLOP/s={tflops:.1f};"
                 "speed vs FP32={fp32[s]:/{s}:.1f}×;error={error[value]:.1e};"
                 "error vs FP32={error[value]:/{fp32[error][value]}:,.0f}×", "llrrrr",
                 where="variant=cublas_fp32,cublas_tf32,cublas_bf16 phase=kernel case=[0-9]*,odd",
                 sort="case", names="cublas_fp32=FP32;cublas_tf32=TF32;cublas_bf16=BF16",
                 join="fp32=variant=cublas_fp32 case={case} phase=kernel")
