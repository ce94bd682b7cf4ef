"""The attention page: TFLOP/s of every row per case, each against the fastest SDPA backend of the
same case and process, the naive version's memory as N grows, and the correctness errors."""

from __future__ import annotations

import re
from pathlib import Path

from . import markdown_table, renderer, svg_figure, value
from .run_details import label, load, of_group

HEADLINE = "d128-n4096"  # the case the bar names: N = 4096, d = 128, non-causal


def kernels(doc: dict) -> dict:
    """{(variant, case): kernel-only measurement}."""
    return {(m["variant"], m["case"]): m for m in doc["measurements"] if m["phase"] == "kernel"}


def tflops(m: dict) -> float:
    return m["flops"] / m["median_s"] / 1e12


def fastest_library(doc: dict, case: str) -> str:
    """The SDPA backend with the smallest kernel time in `case`."""
    ix = kernels(doc)
    timed = [(ix[(v, case)]["median_s"], v) for v in of_group(doc, "library") if (v, case) in ix]
    if not timed:
        raise ValueError(f"attention: no SDPA backend was measured in case {case}")
    return min(timed)[1]


def measured(doc: dict, variant: str, case: str) -> dict:
    """A row's kernel-only measurement in `case`; variant "fastest": the fastest SDPA backend."""
    variant = fastest_library(doc, case) if variant == "fastest" else variant
    if (m := kernels(doc).get((variant, case))) is None:
        raise ValueError(f"attention: no {variant} in case {case}")
    return m


def cases(doc: dict, d: int, causal: bool) -> list[str]:
    """The cases of one head dim and mask, smallest N first."""
    params = {m["case"]: m["params"] for m in doc["measurements"]}
    return sorted((c for c, p in params.items() if p["d"] == d and p["causal"] == causal),
                  key=lambda c: params[c]["n"])


def refused(doc: dict, case: str) -> dict[str, str]:
    """{variant: why} of the SDPA backends the case's note says refused its inputs."""
    note = next((n for n in doc["notes"] if n.startswith(f"{case}: ")), "")
    return dict(re.findall(r"(sdpa/\w+) unavailable: (.*?)(?=; sdpa/|$)", note))


@value("attention.tflops")
def tflops_value(docs_dir: Path, variant: str, case: str = HEADLINE, *, path: str,
                 digits: str = "0") -> str:
    return f"{tflops(measured(load(docs_dir, path), variant, case)):.{digits}f}"


@value("attention.share")
def share_value(docs_dir: Path, variant: str, case: str = HEADLINE, *, path: str,
                digits: str = "0") -> str:
    """A row's speed as a % of the fastest SDPA backend of the same case."""
    doc = load(docs_dir, path)
    best = measured(doc, fastest_library(doc, case), case)
    return f"{100 * best['median_s'] / measured(doc, variant, case)['median_s']:.{digits}f} %"


@value("attention.fastest")
def fastest_value(docs_dir: Path, case: str = HEADLINE, *, path: str) -> str:
    doc = load(docs_dir, path)
    return label(doc, fastest_library(doc, case))


def naive_memory(doc: dict) -> list[tuple[int, int | str]]:
    """(N, bytes the naive call needed beyond its inputs, or the out-of-memory message) at
    d = 128, non-causal: the cases, then the sweep past the largest one."""
    rows = [(measured(doc, "naive", c)["params"]["n"], measured(doc, "naive", c)["extra"]["peak_bytes"])
            for c in cases(doc, 128, False)]
    beyond = measured(doc, "naive", cases(doc, 128, False)[-1])["extra"].get("beyond", [])
    return rows + [(n, peak) for n, peak in beyond]


@value("attention.oom")
def oom_value(docs_dir: Path, *, path: str) -> str:
    """The first N at which the naive version ran out of GPU memory."""
    found = [n for n, peak in naive_memory(load(docs_dir, path)) if isinstance(peak, str)]
    if not found:
        raise ValueError("attention: the naive version never ran out of memory in this file")
    return f"{found[0]:,}"


@value("attention.peak")
def peak_value(docs_dir: Path, n: str, *, path: str, digits: str = "1") -> str:
    """GiB the naive version needed beyond its inputs at sequence length n (d = 128)."""
    peak = dict(naive_memory(load(docs_dir, path))).get(int(n))
    if not isinstance(peak, int):
        raise ValueError(f"attention: no naive memory figure at N = {n}")
    return f"{peak / 2**30:.{digits}f}"


@value("attention.error")
def error_value(docs_dir: Path, bound: str = "max", *, path: str) -> str:
    """The largest (or smallest) relative error of any row in any case."""
    found = [m["error"]["value"] for m in kernels(load(docs_dir, path)).values()]
    return f"{ {'min': min, 'max': max}[bound](found):.1e}"


@renderer("attention_table")
def attention_table(docs_dir: Path, path: str, d: str = "128", causal: str = "no") -> str:
    """TFLOP/s of every row at each N, one head dim and mask; ours also as a % of the fastest
    SDPA backend of the case; a backend that refused the inputs: "refused"."""
    doc = load(docs_dir, path)
    ix, cs = kernels(doc), cases(doc, int(d), causal == "yes")
    variants = [v for v in doc["variants"] if any((v, c) in ix for c in cs)]
    rows = []
    for c in cs:
        cells = [f"{tflops(ix[(v, c)]):.0f}" if (v, c) in ix else
                 "refused" if v in refused(doc, c) else "–" for v in variants]
        ours = f"{100 * measured(doc, fastest_library(doc, c), c)['median_s'] / ix[('triton', c)]['median_s']:.0f} %" \
            if ("triton", c) in ix else "–"
        rows.append([f"{ix[next(k for k in ix if k[1] == c)]['params']['n']:,}", *cells, ours])
    return markdown_table(["N", *(label(doc, v) for v in variants), "ours / fastest SDPA"], rows,
                          "r" * (len(variants) + 2))


@renderer("attention_memory")
def attention_memory(docs_dir: Path, path: str) -> str:
    """The naive version's memory beyond its inputs at each N (d = 128, non-causal, B N = 16384
    up to the largest case, batch 1 beyond it), with the N x N BF16 score matrix for scale."""
    doc = load(docs_dir, path)
    heads = measured(doc, "naive", cases(doc, 128, False)[-1])["params"]["heads"]
    rows = []
    for n, peak in naive_memory(doc):
        batch = max(1, 16384 // n)
        rows.append([f"{n:,}", f"{batch * heads * n * n * 2 / 2**30:.2f}",
                     f"{peak / 2**30:.2f}" if isinstance(peak, int) else "out of memory"])
    return markdown_table(["N", "one N×N BF16 score matrix, all heads (GiB)",
                           "naive: peak beyond its inputs (GiB)"], rows, "rrr")


@renderer("attention_chart")
def attention_chart(docs_dir: Path, path: str, alt: str, caption: str) -> str:
    """TFLOP/s against N, one panel per head dim and mask."""
    import matplotlib.pyplot as plt

    doc = load(docs_dir, path)
    ix = kernels(doc)
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4), sharex=True, sharey=True)
    for ax, (d, causal) in zip(axes.flat, [(128, False), (128, True), (64, False), (64, True)]):
        cs = cases(doc, d, causal)
        ns = [ix[next(k for k in ix if k[1] == c)]["params"]["n"] for c in cs]
        for i, v in enumerate(doc["variants"]):
            ys = [tflops(ix[(v, c)]) if (v, c) in ix else float("nan") for c in cs]
            ax.plot(ns, ys, marker="os^vDP*"[i % 7], label=label(doc, v),
                    linewidth=2.5 if v == "triton" else 1.2)
        ax.set(xscale="log", title=f"d = {d}, {'causal' if causal else 'non-causal'}")
        ax.set_xticks(ns, [f"{n // 1024}k" for n in ns])
        ax.grid(True, alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("TFLOP/s")
    for ax in axes[1]:
        ax.set_xlabel("sequence length N")
    fig.legend(*axes.flat[0].get_legend_handles_labels(), loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=3, frameon=False)
    return svg_figure(fig, alt=alt, caption=caption)
