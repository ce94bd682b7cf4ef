"""Mandelbrot page: the summary, chart, compile and ceiling tables from a results file written
by bench/run.py, and the figures its sentences name (`{{ mandelbrot.NAME ... }}`). Labels
come from the file."""

from __future__ import annotations

from html import escape
from pathlib import Path

from . import load_json, markdown_table, read_csv, renderer, svg_figure, value
from .run_details import load
from .table import SPECS, cell, pick, table

BAR_PIXEL_ITERATIONS = 2.1e12  # the bar for the best float64 kernel on the large case (issue 48)
BAR_VARIANT = "cuda_f64_chunk"
GPU_COLOUR, CPU_COLOUR = "#3f51b5", "#9e9e9e"


fmt_time, fmt_rate = SPECS["time"], SPECS["sig"]


@renderer("mandelbrot_chart")
def chart(docs_dir: Path, path: str, case: str, alt: str, without: str = "") -> str:
    """Time per run and speed-up over the best CPU variant, less the variants `without` names
    (comma-separated); `alt` (the page's words) is followed by each bar's time."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    left_out = set(filter(None, without.split(",")))
    rows = [m for m in pick(docs_dir, path, f"case={case} phase=kernel,end_to_end", "-median_s")[0]
            if m["variant"] not in left_out]
    if left_out - {m["variant"] for m in pick(docs_dir, path, f"case={case}")[0]}:
        raise ValueError(f"without={without}: the case {case} has no such variant")
    best = min((m for m in rows if m["device"] == "cpu" and m["phase"] == "kernel"),
               key=lambda m: m["median_s"])
    size = "{width} x {height} pixels, {iterations} iterations".format(**rows[0]["params"])
    names = [m["label"] + (" (end to end)" if m["phase"] == "end_to_end" else "") for m in rows]
    colours = [GPU_COLOUR if m["device"] == "gpu" else CPU_COLOUR for m in rows]
    fig, (times, speedups) = plt.subplots(2, 1, figsize=(8, 2 * (0.36 * len(rows) + 1.3) + 0.9))
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


def ceilings(row: dict, loop: dict) -> tuple[float, float]:
    """(pipe, issue) ceilings of a kernel in pixel-iterations per second. Pipe: the datasheet
    rate of its precision (an FMA counted as two: half as many instructions per second) over its
    float instructions per iteration. Issue: an SM's 4 schedulers issue 4 warp instructions, 128
    lane-instructions, per clock, as many as its FP32 lanes complete, so the FP32 instruction
    rate over all its instructions per iteration."""
    rate = row[f"{loop['precision'].lower()}_tflops"] * 1e12 / 2
    return rate / loop["float"], row["fp32_tflops"] * 1e12 / 2 / (loop["float"] + loop["other"])


@renderer("mandelbrot_ceiling")
def ceiling(docs_dir: Path, path: str, specs: str, loops: str) -> str:
    """Each kernel of the large case against its two ceilings: the pipe of its precision and the
    instruction issue, from the instructions per iteration counted in its SASS (`loops`: the
    JSON that tools/structure_logs.py wrote from the SASS dump)."""
    rows, doc = pick(docs_dir, path, "case=large phase=kernel")
    row = spec_row(docs_dir, specs, doc)
    if row is None:
        raise ValueError(f"{specs} has no row for the GPU of {path}")
    loops = load_json(docs_dir, loops)["loops"]
    out = []
    for m in (m for m in rows if m["variant"] in loops):
        loop, rate, work = loops[m["variant"]], m["per_s"]["pixel_iterations"], m["work"]
        pipe, issue = ceilings(row, loop)
        out.append([m["label"], f"{loop['float']:.3g} {loop['precision']}", f"{loop['other']:.3g}", fmt_rate(pipe),
                    fmt_rate(issue), "issue" if issue < pipe else loop["precision"] + " pipe",
                    fmt_rate(rate), f"{rate / min(pipe, issue):.0%}",
                    f"{work['pixel_iterations'] / work['warp_iterations']:.1%}"])
    if not out:
        raise ValueError(f"{path}: no kernel of the large case has its loop in the SASS")
    return "\n" + markdown_table(
        ["Kernel", "Float / iteration", "Other / iteration", "Pipe ceiling", "Issue ceiling",
         "Bound by", "Measured", "Of the lower ceiling", "Lanes busy"], out, "lrrrrlrrr") + "\n"


@renderer("mandelbrot_mix")
def mix(docs_dir: Path, path: str, loops: str) -> str:
    """The instruction mix of each kernel's main loop (`loops`), per iteration: an opcode a row,
    float opcodes first, a kernel a column (labelled as in the results file)."""
    loops = load_json(docs_dir, loops)["loops"]
    labels = {m["variant"]: m["label"] for m in pick(docs_dir, path, "case=large phase=kernel")[0]}
    kernels = [v for v in loops if v in labels]
    if not kernels:
        raise ValueError(f"{path}: no kernel of the large case has its loop in the SASS")
    ops = sorted({op for v in kernels for op in loops[v]["ops"]},
                 key=lambda op: (not any(op in loops[v]["float_ops"] for v in kernels), op))
    trips = ["Iterations per trip", *(str(loops[v]["iterations_per_trip"]) for v in kernels)]
    rows = [[f"`{op}`", *(f"{loops[v]['ops'][op]:.3g}" if op in loops[v]["ops"] else "" for v in kernels)]
            for op in ops]
    return "\n" + markdown_table(["Opcode", *(labels[v] for v in kernels)], [trips, *rows],
                                  "l" + "r" * len(kernels)) + "\n"


PREDICTIONS = "data/mandelbrot-predictions.csv"  # what was expected of each kernel, and when


@renderer("mandelbrot_predictions")
def predictions(docs_dir: Path, path: str) -> str:
    """What was expected of each kernel before the run (PREDICTIONS), each named by its label."""
    labels = {key: v["label"] for key, v in load(docs_dir, path)["variants"].items()}
    rows = [[labels[r["variant"]], escape(r["prediction"])] for r in read_csv(docs_dir, PREDICTIONS)]
    return "\n" + markdown_table(["Kernel", "Expected before the run"], rows, "ll") + "\n"


@renderer("mandelbrot_sweep")
def sweep(docs_dir: Path, path: str) -> str:
    """The tuning run (`path`): every candidate's median kernel time on the large case."""
    return table(docs_dir, path, where="case=large phase=kernel", sort="variant", align="lrr",
                 cols="Candidate={label};Median time={s:time};"
                      "Pixel-iterations per second={per_s[pixel_iterations]:sig}")


PROFILE = [  # (row heading, how a variant's figure is made from its ncu metrics)
    ("Warp instructions per iteration", lambda n, it: n["smsp__inst_executed.sum"] / it),
    ("FMA pipe (FP32) instructions per iteration", lambda n, it: n["sm__inst_executed_pipe_fma.sum"] / it),
    ("FP64 pipe instructions per iteration", lambda n, it: n["sm__inst_executed_pipe_fp64.sum"] / it),
    ("Integer (ALU) instructions per iteration", lambda n, it: n["sm__inst_executed_pipe_alu.sum"] / it),
    ("Issue slots busy", lambda n, it: n["smsp__issue_active.avg.per_cycle_active"]),
    ("FMA pipe (FP32) busy", lambda n, it: n["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"] / 100),
    ("FP64 pipe busy", lambda n, it: n["sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"] / 100),
    ("Achieved occupancy", lambda n, it: n["sm__warps_active.avg.pct_of_peak_sustained_active"] / 100),
    ("Registers per thread", lambda n, it: n["launch__registers_per_thread"]),
]
STALLS = ("math_pipe_throttle", "wait", "not_selected", "selected", "short_scoreboard",
          "dispatch_stall", "branch_resolving", "no_instruction")


@renderer("mandelbrot_profile")
def profile(docs_dir: Path, path: str, ncu: str) -> str:
    """Nsight Compute's figures of each profiled kernel (one launch on the deep case), a column
    each: instructions per warp-iteration (the warps' iterations of that case, from the results
    file), how busy the issue slots and pipes were, occupancy, and the warp stall reasons in
    cycles per issued instruction (a warp waiting for the pipe, for a result, or ready but not
    picked)."""
    profiled = load_json(docs_dir, ncu)["variants"]
    rows = {m["variant"]: m for m in pick(docs_dir, path, "case=deep phase=kernel")[0]}
    variants = [v for v in profiled if v in rows]
    if not variants:
        raise ValueError(f"{ncu}: no profiled kernel has a deep-case row in {path}")
    iterations = {v: rows[v]["work"]["warp_iterations"] / 32 for v in variants}  # warp-iterations
    def shown(figure, v: str, spec: str) -> str:  # "–": a metric this ncu did not collect
        try:
            return format(figure(profiled[v], iterations[v]), spec)
        except KeyError:
            return "–"
    out = []
    for heading, figure in PROFILE:
        spec = ".0%" if "busy" in heading or "occupancy" in heading else ".3g"
        out.append([heading, *(shown(figure, v, spec) for v in variants)])
    for reason in STALLS:
        name = f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"
        out.append([f"Stall: {reason.replace('_', ' ')}",
                    *(shown(lambda n, it: n[name], v, ".2f") for v in variants)])
    return "\n" + markdown_table(["", *(rows[v]["label"] for v in variants)], out,
                                  "l" + "r" * len(variants)) + "\n"


# --- One figure each, for the page's sentences: {{ mandelbrot.NAME ... }} ----------------------
@renderer("mandelbrot_summary")
def summary_table(docs_dir: Path, *, path: str) -> str:
    """Case by case, the fastest float64 kernel (chunked) against the fastest CPU variant, kernel
    only and end to end."""
    return table(docs_dir, path, "Case=`{case}`;Size={width} x {height} pixels, {iterations} "
                 "iterations;Fastest CPU variant={cpu[label]}: {cpu[s]:time};GPU kernel={s:time};"
                 "Speed-up={over_cpu:ratio};GPU end to end={e2e[s]:time};"
                 "Speed-up={e2e[over_cpu]:ratio};"
                 "GPU pixel-iterations per second={per_s[pixel_iterations]:sig}", "lllrrrrr",
                 where=f"variant={BAR_VARIANT} phase=kernel", join="cpu=case={case} phase=kernel "
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


@value("mandelbrot.ratio")
def ratio(docs_dir: Path, variant: str, over: str, case: str, *, path: str) -> str:
    """How many times the pixel-iterations per second of `over` a kernel reaches."""
    return cell(docs_dir, path, "{per_s[pixel_iterations]:/{base[per_s][pixel_iterations]}:.2f}",
                f"case={case} phase=kernel variant={variant}",
                join=f"base=case={case} phase=kernel variant={over}")


@value("mandelbrot.picked")
def picked(docs_dir: Path, variant: str, *, path: str) -> str:
    """The candidate of a tuning run (`path`) with the least median kernel time on the large
    case for a chunked kernel (gpu/mandelbrot.sh's rule): its chunk length and block."""
    label = cell(docs_dir, path, "{label}", f"case=large phase=kernel variant={variant}/*", "s")
    return escape(label.split("chunked, ")[-1])


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
