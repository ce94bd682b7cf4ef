"""Reduction results (run.py reduction): each sum against the fastest read-only kernel of its
case (group "read"), softmax and RMSNorm against the fastest copy of their case (group "copy"),
the share of it a sentence names (`{{ reduction.of_read VARIANT [CASE] }}`,
`{{ reduction.of_copy VARIANT|best CASE }}`), and Nsight Compute on the row kernels."""

from pathlib import Path

from . import load_json, markdown_table, read_csv, renderer, svg_figure, value
from .run_details import gbs, kernel_rows, label, load, of_group
from .table import cell

LAST = {"library": "6", "softmax": "6", "rmsnorm": "6", "read": "7", "copy": "7"}  # after the steps


def ceiling(doc: dict, case: str) -> dict:
    """The case's fastest read-only kernel, or else its fastest copy."""
    rows = kernel_rows(doc, case)
    for group in ("read", "copy"):
        if found := [rows[v] for v in of_group(doc, group) if v in rows]:
            return max(found, key=gbs)
    raise ValueError(f"{case}: no read-only kernel and no copy to compare with")


def ordered(doc: dict, case: str) -> list[dict]:
    """The case's kernel rows: the steps in order, then libraries, then the ceilings."""
    rows, v = kernel_rows(doc, case), doc["variants"]
    keys = [k for k in v if k in rows]  # registry order, kept among equals by the stable sort
    return [rows[k] for k in sorted(keys, key=lambda k: v[k]["step"] or LAST.get(v[k]["group"], "8"))]


def cells(doc: dict, case: str, m: dict) -> list[str]:
    """Label, µs, GB/s, share of the ceiling, |error| and its bound (none: no bound exists)."""
    b, checked = m["error"].get("bound", m.get("extra", {}).get("bound", "–")), m["error"]["metric"] != "none (reads only)"
    return [label(doc, m["variant"]), f"{m['median_s'] * 1e6:,.0f}", f"{gbs(m):,.0f}",
            f"{100 * gbs(m) / gbs(ceiling(doc, case)):.3g}&nbsp;%", f"{m['error']['value']:.2g}" if checked else "–",
            ("none" if b is None else b if isinstance(b, str) else f"{b:.2g}") if checked else "–"]


@renderer("reduction_table")
def reduction_table(docs_dir: Path, path: str, case: str = "gpu-1", predictions: str = "") -> str:
    """Every kernel of a case: µs, GB/s, share of the ceiling, |error| and its bound, and what was
    predicted (a CSV of variant,prediction: a step's number, or a variant's key off the steps)."""
    doc = load(docs_dir, path)
    said = {r["variant"]: r["prediction"] for r in read_csv(docs_dir, predictions)} if predictions else {}
    rows = [[(s := doc["variants"][m["variant"]]["step"]) or "–", *cells(doc, case, m),
             *([said.get(s or m["variant"], "–")] if said else [])] for m in ordered(doc, case)]
    head = ["step", "version", "µs", "GB/s", f"of {label(doc, ceiling(doc, case)['variant'])}", "error", "bound"]
    return markdown_table(head + ["predicted"] * bool(said), rows, "llrrrrrl"[:len(head) + bool(said)]) + "\n"


@renderer("reduction_chart")
def reduction_chart(docs_dir: Path, path: str, alt: str, case: str = "gpu-1") -> str:
    """GB/s of each step, one bar per toolkit (the label before its first comma), and the ceiling."""
    import matplotlib.pyplot as plt
    doc = load(docs_dir, path)
    steps = [m for m in ordered(doc, case) if doc["variants"][m["variant"]]["step"]]
    toolkits = list(dict.fromkeys(label(doc, m["variant"]).partition(", ")[0] for m in steps))
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, toolkit in enumerate(toolkits):
        mine = [m for m in steps if label(doc, m["variant"]).startswith(toolkit + ",")]
        ax.bar([int(doc["variants"][m["variant"]]["step"]) + (i - (len(toolkits) - 1) / 2) * 0.38 for m in mine],
               [gbs(m) for m in mine], width=0.36, label=toolkit)
    ax.axhline(gbs(ceiling(doc, case)), color="#555555", linestyle="--",
               label=label(doc, ceiling(doc, case)["variant"]).replace("`", ""))
    ax.set(yscale="log", xlabel="step", ylabel="GB/s read (CUDA events)",
           xticks=sorted({int(doc["variants"][m["variant"]]["step"]) for m in steps}))
    ax.grid(True, axis="y"), ax.legend(loc="lower right")
    return svg_figure(fig, alt=alt) + "\n"


READ = "top=case={case} phase=kernel group=read"  # a row's case's fastest read-only kernel


@value("reduction.read")
def read(docs_dir: Path, field: str, case: str = "gpu-1", *, path: str) -> str:
    """`{{ reduction.read label|gbs [CASE] }}`: the case's fastest read-only kernel, its name or GB/s."""
    show = {"label": "{top[label]}", "gbs": "{top[gbs]:,.0f}"}[field]
    return cell(docs_dir, path, show, f"case={case} phase=kernel", join=READ)


@value("reduction.of_read")
def of_read(docs_dir: Path, variant: str, case: str = "gpu-1", *, path: str) -> str:
    """A kernel's GB/s as a share of its case's fastest read-only kernel."""
    return cell(docs_dir, path, "{gbs:/{top[gbs]}:pct}", f"case={case} phase=kernel variant={variant}",
                join=READ)


def best(doc: dict, case: str) -> dict:
    """The fastest of the page's own kernels (Numba and CUDA C) of a softmax or RMSNorm case."""
    rows = kernel_rows(doc, case)
    ours = [m for k, m in rows.items() if k.startswith(("numba_", "cuda_c_"))
            and doc["variants"][k]["group"] == case]
    if not ours:
        raise ValueError(f"{case}: no Numba or CUDA C kernel measured")
    return max(ours, key=gbs)


@value("reduction.of_copy")
def of_copy(docs_dir: Path, variant: str, case: str, *, path: str) -> str:
    """A kernel's GB/s as a share of its case's fastest copy; `best`: the fastest of ours, named."""
    doc = load(docs_dir, path)
    m = best(doc, case) if variant == "best" else kernel_rows(doc, case)[variant]
    share = f"{100 * gbs(m) / gbs(ceiling(doc, case)):.3g}&nbsp;%"
    return f"{label(doc, m['variant'])}, {share}" if variant == "best" else share


@renderer("reduction_ncu")
def reduction_ncu(docs_dir: Path, path: str) -> str:
    """Nsight Compute on one launch of each row kernel (gpu/reduction.sh): DRAM bytes read and
    written, the GB/s they make in the launch's duration, and the share of the DRAM's peak."""
    rows = []
    for r in load_json(docs_dir, path)["rows"]:
        m = r["metrics"]
        moved, seconds = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"], m["gpu__time_duration.sum"]
        rows.append([f"`{r['kernel']}`", f"{m['dram__bytes_read.sum'] / 1e6:,.0f}",
                     f"{m['dram__bytes_write.sum'] / 1e6:,.0f}", f"{seconds * 1e6:,.1f}",
                     f"{moved / seconds / 1e9:,.0f}",
                     f"{m['dram__throughput.avg.pct_of_peak_sustained_elapsed']:.3g}&nbsp;%",
                     f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.3g}&nbsp;%"])
    head = ["kernel", "MB read", "MB written", "µs", "DRAM GB/s", "DRAM, of peak", "achieved occupancy"]
    return markdown_table(head, rows, "lrrrrrr") + "\n"
