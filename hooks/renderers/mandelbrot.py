"""Mandelbrot page: the summary, chart, compile and ceiling tables from a results file written
by bench/run.py, and the figures its sentences name (`{{ mandelbrot.NAME ... }}`). Labels
come from the file."""

from __future__ import annotations

from html import escape
from pathlib import Path

from . import load_json, markdown_table, renderer, svg_figure, value
from .run_details import load
from .table import SPECS, cell, pick, table

BAR_PIXEL_ITERATIONS = 1.5e12  # the bar for the tuned float64 kernel on the large case (issue 15)
BAR_VARIANT = "cuda_f64_fast"
GPU_COLOUR, CPU_COLOUR = "#3f51b5", "#9e9e9e"


fmt_time, fmt_rate = SPECS["time"], SPECS["sig"]


@renderer("mandelbrot_chart")
def chart(docs_dir: Path, path: str, case: str, alt: str) -> str:
    """Time per run and speed-up over the best CPU variant; `alt` (the page's words) is followed
    by each bar's time."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows = pick(docs_dir, path, f"case={case} phase=kernel,end_to_end", "-median_s")[0]
    best = min((m for m in rows if m["device"] == "cpu" and m["phase"] == "kernel"),
               key=lambda m: m["median_s"])
    size = "{width} x {height} pixels, {iterations} iterations".format(**rows[0]["params"])
    names = [m["label"] + (" (end to end)" if m["phase"] == "end_to_end" else "") for m in rows]
    colours = [GPU_COLOUR if m["device"] == "gpu" else CPU_COLOUR for m in rows]
    fig, (times, speedups) = plt.subplots(2, 1, figsize=(8, 2 * (0.42 * len(rows) + 1.3) + 0.9))
    errors = [[m["median_s"] - m["min_s"] for m in rows], [m["max_s"] - m["median_s"] for m in rows]]
    times.barh(names, [m["median_s"] for m in rows], xerr=errors, color=colours, zorder=2)
    times.set_xlabel("time per run, seconds (log scale; whiskers: min and max)")
    speedups.barh(names, [best["median_s"] / m["median_s"] for m in rows], color=colours, zorder=2)
    speedups.axvline(1.0, color="#000000", linewidth=0.8, zorder=3)
    speedups.set_xlabel(f"speed-up over {best['label']} (log scale)")
    for ax in (times, speedups):
        ax.set_xscale("log")
        ax.set_axisbelow(True)
        ax.grid(axis="x", which="major", zorder=0)
    fig.legend(handles=[Patch(color=GPU_COLOUR, label="GPU"), Patch(color=CPU_COLOUR, label="CPU")],
               loc="upper right", ncols=2, frameon=False)
    fig.suptitle(size, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    each = "; ".join(f"{n}: {fmt_time(m['median_s'])}" for n, m in zip(names, rows))
    return svg_figure(fig, alt=f"{alt} {size}: {each}")


@renderer("mandelbrot_case")
def case_table(docs_dir: Path, case: str, *, path: str) -> str:
    """Every timing of a case, CPU then GPU, slowest first (the table each case's section shows)."""
    return table(docs_dir, path, where=f"case={case}", sort="device -phase -s", align="lrrrrr",
                 cols="Variant={label}, {what};Median time={s:time};Spread={spread:.2f};Pixel-iterations per second={per_s[pixel_iterations]:sig};Speed-up over best CPU={over_cpu:ratio};Pixels differing={error[value]:.2%}")


def spec_row(docs_dir: Path, specs: str, doc: dict) -> dict | None:
    gpus = doc["system"].get("gpus") or []
    return next((row for row in load_json(docs_dir, specs)["rows"]
                 if gpus and row.get("match") and row["match"] in gpus[0]["name"]), None)


@renderer("mandelbrot_fp64_ceiling")
def fp64_ceiling(docs_dir: Path, path: str, specs: str, loops: str) -> str:
    """Each kernel of the large case against its ceiling: the datasheet's rate of its precision
    over the float instructions per iteration counted in its SASS (`loops`: the JSON that
    tools/structure_logs.py wrote from the SASS dump)."""
    rows, doc = pick(docs_dir, path, "case=large phase=kernel")
    row = spec_row(docs_dir, specs, doc)
    loops = load_json(docs_dir, loops)["loops"]
    out = []
    for m in (m for m in rows if m["variant"] in loops):
        loop, rate, work = loops[m["variant"]], m["per_s"]["pixel_iterations"], m["work"]
        lanes = (f"{work['pixel_iterations'] / work['warp_iterations']:.1%}"
                 if work.get("warp_iterations") else "")
        top = row[f"{loop['precision'].lower()}_tflops"] * 1e12 / 2 / loop["float"] if row else None
        out.append([m["label"], loop["iterations_per_trip"],
                    " + ".join(f"{n} {op}" for op, n in loop["float_ops"].items()),
                    f"{loop['float']:g} {loop['precision']}", f"{loop['other']:g}",
                    fmt_rate(top) if top else "", fmt_rate(rate), f"{rate / top:.0%}" if top else "",
                    lanes])
    if not out:
        raise ValueError(f"{path}: no kernel of the large case has its loop in the SASS")
    return "\n" + markdown_table(
        ["Kernel", "Iterations per trip", "Float instructions per trip", "Float / iteration",
         "Other / iteration", "Ceiling", "Measured", "Of ceiling", "Lanes busy"],
        out, "lrlrrrrrr") + "\n"


# --- One figure each, for the page's sentences: {{ mandelbrot.NAME ... }} ----------------------
@renderer("mandelbrot_summary")
def summary_table(docs_dir: Path, *, path: str) -> str:
    """Case by case, the tuned float64 kernel against the fastest CPU variant, kernel only and
    end to end."""
    return table(docs_dir, path, "Case=`{case}`;Size={width} x {height} pixels, {iterations} "
                 "iterations;Fastest CPU variant={cpu[label]}: {cpu[s]:time};GPU kernel={s:time};"
                 "Speed-up={over_cpu:ratio};GPU end to end={e2e[s]:time};"
                 "Speed-up={e2e[over_cpu]:ratio};"
                 "GPU pixel-iterations per second={per_s[pixel_iterations]:sig}", "lllrrrrr",
                 where="variant=cuda_f64_fast phase=kernel", join="cpu=case={case} phase=kernel "
                 "device=cpu;e2e=case={case} phase=end_to_end variant={variant}")


SIZE = "{width} x {height} pixels, {iterations} iterations"


@value("mandelbrot.size")
def size(docs_dir: Path, case: str, *, path: str) -> str:
    return cell(docs_dir, path, SIZE, f"case={case}")


@value("mandelbrot.best_cpu")
def best_cpu(docs_dir: Path, case: str, *, path: str) -> str:
    """The label of the case's fastest CPU kernel."""
    return cell(docs_dir, path, "{label}", f"case={case} phase=kernel device=cpu", "s")


@value("mandelbrot.time")
def time(docs_dir: Path, variant: str, case: str, *, path: str) -> str:
    return cell(docs_dir, path, "{s:time}", f"case={case} phase=kernel variant={variant}")


@value("mandelbrot.rate")
def rate(docs_dir: Path, variant: str, case: str, *, path: str) -> str:
    """Pixel-iterations per second of a kernel."""
    return cell(docs_dir, path, "{per_s[pixel_iterations]:sig}",
                f"case={case} phase=kernel variant={variant}")


@value("mandelbrot.over_python")
def over_python(docs_dir: Path, variant: str, case: str, *, path: str) -> str:
    """How many times faster than pure Python a kernel is."""
    return cell(docs_dir, path, "{base[s]:/{s}:ratio}", f"case={case} phase=kernel variant={variant}",
                join="base=case={case} phase={phase} variant=python")


@value("mandelbrot.bar")
def bar(docs_dir: Path) -> str:
    return fmt_rate(BAR_PIXEL_ITERATIONS)


@value("mandelbrot.of_bar")
def of_bar(docs_dir: Path, *, path: str) -> str:
    """The tuned kernel's throughput on the large case, as a share of the bar."""
    m = pick(docs_dir, path, f"case=large variant={BAR_VARIANT} phase=kernel")[0][0]
    return f"{m['per_s']['pixel_iterations'] / BAR_PIXEL_ITERATIONS:.0%}"


@value("mandelbrot.spec")
def spec(docs_dir: Path, field: str, *, path: str, specs: str) -> str:
    """A datasheet figure (`fp64_tflops`, `gpu`, ...) of the GPU that measured `path`."""
    row = spec_row(docs_dir, specs, load(docs_dir, path))
    if row is None:
        raise ValueError(f"{specs} has no row for the GPU of {path}")
    v = row[field]
    return escape(f"{v:g}" if isinstance(v, (int, float)) else str(v))


GPU_TIMINGS = "device=gpu phase=kernel,end_to_end"


@value("mandelbrot.spread_count")
def spread_count(docs_dir: Path, above: str, *, path: str) -> str:
    """How many GPU timings have a spread of `above` or more, "N of M"."""
    timed = pick(docs_dir, path, GPU_TIMINGS)[0]
    return f"{sum(m['spread'] >= float(above) for m in timed)} of {len(timed)}"


@value("mandelbrot.widest_spread")
def widest_spread(docs_dir: Path, *, path: str) -> str:
    return cell(docs_dir, path, "{spread:.2f} ({case}, {label}, {what})", GPU_TIMINGS, "-spread")
