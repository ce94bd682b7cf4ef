"""Mandelbrot page: tables, charts and checks rendered from a results file written by bench/run.py.

Every renderer takes `path=`; several files may be given as "a.json|b.json": the first that
exists is used, and a later one is announced as a stand-in (for example the CPU-only run before
the GPU run is committed).
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from . import load_json, markdown_table, renderer, svg_figure
from .run_details import describe_run, load

BAR_PIXEL_ITERATIONS = 1.0e12  # the bar for cuda_f64 on the large case
BAR_SPREAD = 1.2
LABELS = {"python": "pure Python", "numpy": "NumPy (vectorised)", "njit": "Numba @njit (1 core)",
          "njit_parallel": "Numba @njit(parallel=True)", "cuda_f64": "Numba CUDA float64",
          "cuda_f32": "Numba CUDA float32"}
PHASES = {"kernel": "kernel", "end_to_end": "end to end", "compile_first": "first call, empty cache",
          "compile_cached": "first call, warm cache", "context_init": "CUDA context start-up"}


def pick(docs_dir: Path, path: str) -> tuple[str, dict, str]:
    """(chosen path, results document, stand-in notice or "")."""
    options = [p.strip() for p in path.split("|") if p.strip()]
    for i, option in enumerate(options):
        if (docs_dir / option).is_file():
            notice = "" if i == 0 else (
                f'!!! warning "Stand-in results"\n\n    {escape(options[0])} has not been '
                f"committed yet: the figures below come from {escape(option)}.\n")
            return option, load(docs_dir, option), notice
    raise FileNotFoundError(f"none of {options} exists under {docs_dir}")


def fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_rate(per_s: float) -> str:
    return f"{per_s:.3g}".replace("e+", "e")


def label(m: dict) -> str:
    return LABELS.get(m["variant"], m["variant"])


def case_rows(doc: dict, case: str) -> list[dict]:
    rows = [m for m in doc["measurements"] if m["case"] == case]
    if not rows:
        raise ValueError(f"case {case!r} is not in the results file")
    return rows


def best_cpu(rows: list[dict]) -> dict | None:
    cpu = [m for m in rows if m["device"] == "cpu" and m["phase"] == "kernel"]
    return min(cpu, key=lambda m: m["median_s"]) if cpu else None


def throughput(m: dict) -> float | None:
    work = (m.get("work") or {}).get("pixel_iterations")
    return work / m["median_s"] if work and m["median_s"] > 0 else None


def relative(ratio: float) -> str:
    """"3.2 times as fast as" or "41 times slower than": a ratio of medians in words."""
    if ratio >= 1:
        return f"{fmt_ratio(ratio)} times as fast as"
    return f"{fmt_ratio(1 / ratio)} times slower than"


def fmt_ratio(ratio: float) -> str:
    return f"{ratio:,.0f}" if ratio >= 100 else f"{ratio:.3g}"


def size_text(params: dict) -> str:
    return f"{params['width']} x {params['height']} pixels, {params['iterations']} iterations"


@renderer("mandelbrot_table")
def table(docs_dir: Path, path: str, case: str) -> str:
    _, doc, _ = pick(docs_dir, path)
    rows = case_rows(doc, case)
    best = best_cpu(rows)
    out = []
    for m in sorted(rows, key=lambda m: (m["device"], m["phase"] != "kernel", -m["median_s"])):
        rate = throughput(m)
        speed = fmt_ratio(best["median_s"] / m["median_s"]) if best else "n/a"
        err = m.get("error") or {}
        what = f"{label(m)}, {PHASES[m['phase']]}" if m["device"] == "gpu" else label(m)
        out.append([what, fmt_time(m["median_s"]), f"{m['spread']:.2f}",
                    fmt_rate(rate) if rate else "", speed,
                    f"{err.get('value', 0):.2%}" if err else ""])
    header = ["Variant", "Median time", "Spread", "Pixel-iterations per second",
              "Speed-up over best CPU", "Pixels differing"]
    caption = (f"\n\n*{size_text(rows[0]['params'])}; each time is the median of "
               f"{min(m['repeats'] for m in rows)} or more timed samples; spread is the slowest "
               "sample over the fastest. Speed-up is against "
               f"{label(best) if best else 'no CPU variant'}, the fastest CPU variant measured.*\n")
    return "\n" + markdown_table(header, out, "lrrrrr") + caption


@renderer("mandelbrot_chart")
def chart(docs_dir: Path, path: str, case: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, doc, _ = pick(docs_dir, path)
    rows = sorted((m for m in case_rows(doc, case) if m["phase"] in ("kernel", "end_to_end")),
                  key=lambda m: -m["median_s"])
    best = best_cpu(rows)
    names = [f"{label(m)}{' (end to end)' if m['phase'] == 'end_to_end' else ''}" for m in rows]
    colours = ["#3f51b5" if m["device"] == "gpu" else "#9e9e9e" for m in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 0.45 * len(rows) + 1.4), sharey=True)
    medians = [m["median_s"] for m in rows]
    errors = [[m["median_s"] - m["min_s"] for m in rows], [m["max_s"] - m["median_s"] for m in rows]]
    left.barh(names, medians, xerr=errors, color=colours)
    left.set_xscale("log")
    left.set_xlabel("time per run, seconds (log scale; whiskers: min and max)")
    if best:
        speed = [best["median_s"] / m["median_s"] for m in rows]
        right.barh(names, speed, color=colours)
        right.set_xscale("log")
        right.axvline(1.0, color="black", linewidth=0.8)
        right.set_xlabel(f"speed-up over {label(best)} (log scale)")
    for ax in (left, right):
        ax.grid(axis="x", which="both", alpha=0.3)
    fig.suptitle(size_text(rows[0]["params"]), fontsize=10)
    alt = (f"Bar charts for {size_text(rows[0]['params'])}: time per variant on a log scale, and "
           "speed-up over the fastest CPU variant; GPU bars are blue, CPU bars grey. "
           + "; ".join(f"{n}: {fmt_time(m['median_s'])}" for n, m in zip(names, rows)))
    return svg_figure(fig, alt=alt)


@renderer("mandelbrot_compile")
def compile_table(docs_dir: Path, path: str) -> str:
    _, doc, _ = pick(docs_dir, path)
    rows = [m for m in doc["measurements"] if m["case"] == "compile"]
    if not rows:
        return "\n*This results file has no compile-time measurements.*\n"
    order = list(PHASES)
    out = [[label(m) if m["variant"] != "cuda" else "CUDA driver and context",
            PHASES[m["phase"]], fmt_time(m["median_s"]),
            f"{fmt_time(m['min_s'])} – {fmt_time(m['max_s'])}", m["repeats"]]
           for m in sorted(rows, key=lambda m: (m["variant"], order.index(m["phase"])))]
    params = rows[0].get("params") or {}
    caption = (f"\n\n*Each figure: a new Python process makes its first call "
               f"({size_text(params) if params else 'a tiny case'}); median over that many "
               "processes.*\n")
    return "\n" + markdown_table(["Variant", "Call", "Median", "Min – max", "Processes"],
                                  out, "llrrr") + caption


@renderer("mandelbrot_headline")
def headline(docs_dir: Path, path: str) -> str:
    """One line per case: GPU kernel and end-to-end speed-up over the best CPU variant."""
    _, doc, notice = pick(docs_dir, path)
    cores = doc["system"].get("host", {}).get("cores", "?")
    lines = []
    for case in dict.fromkeys(m["case"] for m in doc["measurements"] if m["case"] != "compile"):
        rows = case_rows(doc, case)
        best = best_cpu(rows)
        gpu = {m["phase"]: m for m in rows if m["variant"] == "cuda_f64"}
        if not best:
            continue
        if not gpu:
            lines.append(f"- **{case}** ({size_text(best['params'])}): best CPU variant "
                         f"{label(best)} on {cores} cores, {fmt_time(best['median_s'])}; "
                         "no GPU figure in this file.")
            continue
        k, e = gpu.get("kernel"), gpu.get("end_to_end")
        lines.append(f"- **{case}** ({size_text(best['params'])}): the float64 kernel runs "
                     f"{relative(best['median_s'] / k['median_s'])} {label(best)} "
                     f"on {cores} cores ({fmt_time(k['median_s'])} against "
                     f"{fmt_time(best['median_s'])}); with allocation and copies, "
                     f"{relative(best['median_s'] / e['median_s'])} it "
                     f"({fmt_time(e['median_s'])}). Throughput: "
                     f"{fmt_rate(throughput(k))} pixel-iterations per second.")
    if any("simulator" in m.get("clock", "") for m in doc["measurements"]):
        lines.append("- The GPU variants of this file ran on Numba's CUDA simulator: their "
                     "times measure Python on the CPU and say nothing about a GPU.")
    return notice + "\n" + "\n".join(lines) + "\n"


# Double-precision instructions per iteration of the kernel's loop: 3 multiplications,
# 5 additions or subtractions and the comparison with 4. None is an FMA (see mul64), so the
# kernel can use at most half of a datasheet FLOP/s figure, which counts an FMA as two.
INSTRUCTIONS_PER_ITERATION = 9


def ceiling(specs: dict, gpu_name: str, field: str) -> tuple[float, dict] | None:
    """Pixel-iterations per second the loop could reach at the datasheet rate, and the row."""
    for row in specs["rows"]:
        if row.get("match") and row["match"] in gpu_name:
            return row[field] * 1e12 / 2 / INSTRUCTIONS_PER_ITERATION, row
    return None


@renderer("mandelbrot_bars")
def bars(docs_dir: Path, path: str, specs: str) -> str:
    """The issue's bars, checked against the file: throughput of cuda_f64 on the large case
    (with the datasheet ceiling), and the repeat-to-repeat spread of every GPU figure."""
    _, doc, _ = pick(docs_dir, path)
    spec_doc = load_json(docs_dir, specs)
    gpus = doc["system"].get("gpus") or []
    ms = doc["measurements"]
    items = []
    for variant, field in (("cuda_f64", "fp64_tflops"), ("cuda_f32", "fp32_tflops")):
        big = [m for m in ms if m["case"] == "large" and m["variant"] == variant
               and m["phase"] == "kernel"]
        if not big:
            items.append(f"- {label({'variant': variant})} on the large case: not in this "
                         "results file.")
            continue
        rate = throughput(big[0])
        text = (f"- {label(big[0])}, {size_text(big[0]['params'])}: "
                f"{fmt_rate(rate)} pixel-iterations per second")
        if variant == "cuda_f64":
            verdict = "met" if rate >= BAR_PIXEL_ITERATIONS else "**not met**"
            text += f", against a bar of {fmt_rate(BAR_PIXEL_ITERATIONS)}: {verdict}"
        top = ceiling(spec_doc, gpus[0]["name"], field) if gpus else None
        if top:
            text += (f"; {rate / top[0]:.0%} of the {fmt_rate(top[0])} that the datasheet's "
                     f"{top[1][field]:g} TFLOP/s allow for a loop of "
                     f"{INSTRUCTIONS_PER_ITERATION} instructions without FMA on the "
                     f"{escape(top[1]['gpu'])}")
        items.append(text + ".")
    timed = [m for m in ms if m["device"] == "gpu" and m["phase"] in ("kernel", "end_to_end")]
    wide = [m for m in timed if m["spread"] >= BAR_SPREAD]
    if timed and not wide:
        items.append(f"- Spread (max/min) below {BAR_SPREAD} for all {len(timed)} GPU timings.")
    elif timed:
        worst = ", ".join(f"{m['case']} {m['variant']} {PHASES[m['phase']]} "
                          f"({m['spread']:.2f})" for m in wide)
        items.append(f"- Spread (max/min) of {BAR_SPREAD} or more in {len(wide)} of "
                     f"{len(timed)} GPU timings: {worst}.")
    else:
        items.append("- No GPU timings in this results file.")
    return "\n" + "\n".join(items) + "\n"


@renderer("mandelbrot_details")
def details(docs_dir: Path, path: str) -> str:
    chosen, doc, _ = pick(docs_dir, path)
    notes = "".join(f"\n- {n}" for n in doc.get("notes", []))
    body = describe_run(doc) + (f"\n\nNotes:{notes}" if notes else "")
    indented = "\n".join("    " + line for line in body.splitlines())
    return f'??? info "How this was measured ({escape(chosen)})"\n\n{indented}\n'


@renderer("mandelbrot_specs")
def specs(docs_dir: Path, path: str) -> str:
    """Datasheet FP64 and FP32 peaks, with source and as-of date on every row."""
    data = load_json(docs_dir, path)
    out = []
    for row in data["rows"]:
        for key in ("gpu", "fp64_tflops", "fp32_tflops", "source", "as_of"):
            if key not in row:
                raise ValueError(f"row {row.get('gpu', '?')} lacks {key!r}")
        ratio = row["fp32_tflops"] / row["fp64_tflops"]
        out.append([row["gpu"], row["kind"], f"{row['fp64_tflops']:g}", f"{row['fp32_tflops']:g}",
                    f"1 : {ratio:.0f}" if ratio >= 1.5 else f"1 : {ratio:.1f}",
                    f"[{escape(row['source_title'])}]({row['source']}), {row['as_of']}"])
    return markdown_table(["GPU", "Kind", "FP64 TFLOP/s", "FP32 TFLOP/s", "FP64 : FP32",
                           "Source, as of"], out, "llrrrl")
