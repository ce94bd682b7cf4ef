"""Mandelbrot page: tables, charts and checks rendered from a results file written by bench/run.py.

Every renderer takes `path=`; several files may be given as "a.json|b.json": the first that
exists is used, and a later one is announced as a stand-in (for example the CPU-only run before
the GPU run is committed).
"""

from __future__ import annotations

import re
from collections import Counter
from html import escape
from pathlib import Path

from . import load_json, markdown_table, renderer, svg_figure
from .run_details import describe_run, load_results

BAR_PIXEL_ITERATIONS = 1.5e12  # the bar for the tuned float64 kernel on the large case (issue 15)
BAR_VARIANT = "cuda_f64_fast"
BAR_SPREAD = 1.2
LABELS = {"python": "pure Python", "numpy": "NumPy (vectorised)", "njit": "Numba @njit (1 core)",
          "njit_parallel": "Numba @njit(parallel=True)", "cuda_f64": "Numba CUDA float64",
          "cuda_f64_fast": "Numba CUDA float64, tuned", "cuda_f32": "Numba CUDA float32"}
GPU_COLOUR, CPU_COLOUR = "#3f51b5", "#9e9e9e"
PHASES = {"kernel": "kernel", "end_to_end": "end to end", "compile_first": "first call, empty cache",
          "compile_cached": "first call, warm cache", "context_init": "CUDA context start-up"}


def pick(docs_dir: Path, path: str) -> tuple[str, dict, str]:
    """(chosen path, results document, stand-in notice or ""): "a.json|b.json" reads b.json,
    with a warning box, while a.json is not committed yet (run_details.load_results)."""
    options = [p.strip() for p in path.split("|") if p.strip()]
    if not 1 <= len(options) <= 2:
        raise ValueError(f"path={path!r}: give one results file, or two as 'file|fallback'")
    doc, used, notice = load_results(docs_dir, options[0], options[1] if options[1:] else None)
    return used, doc, notice


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
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    _, doc, _ = pick(docs_dir, path)
    rows = sorted((m for m in case_rows(doc, case) if m["phase"] in ("kernel", "end_to_end")),
                  key=lambda m: -m["median_s"])
    best = best_cpu(rows)
    names = [f"{label(m)}{' (end to end)' if m['phase'] == 'end_to_end' else ''}" for m in rows]
    colours = [GPU_COLOUR if m["device"] == "gpu" else CPU_COLOUR for m in rows]
    panels = 2 if best else 1
    fig, axes = plt.subplots(panels, 1, figsize=(8, panels * (0.42 * len(rows) + 1.3) + 0.9),
                             squeeze=False)
    left = axes[0][0]
    medians = [m["median_s"] for m in rows]
    errors = [[m["median_s"] - m["min_s"] for m in rows], [m["max_s"] - m["median_s"] for m in rows]]
    left.barh(names, medians, xerr=errors, color=colours, zorder=2)
    left.set_xscale("log")
    left.set_xlabel("time per run, seconds (log scale; whiskers: min and max)")
    if best:
        right = axes[1][0]
        speed = [best["median_s"] / m["median_s"] for m in rows]
        right.barh(names, speed, color=colours, zorder=2)
        right.set_xscale("log")
        right.axvline(1.0, color="#000000", linewidth=0.8, zorder=3)
        right.set_xlabel(f"speed-up over {label(best)} (log scale)")
    for ax in (row[0] for row in axes):
        ax.set_axisbelow(True)
        ax.grid(axis="x", which="major", zorder=0)
    fig.legend(handles=[Patch(color=GPU_COLOUR, label="GPU"), Patch(color=CPU_COLOUR, label="CPU")],
               loc="upper right", ncols=2, frameon=False)
    fig.suptitle(size_text(rows[0]["params"]), x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
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


def cpu_model(doc: dict) -> str:
    name = doc["system"].get("host", {}).get("cpu") or "unnamed CPU"
    name = re.sub(r"\((R|TM)\)", "", name).strip()
    return f"{'an' if name[:1].upper() in 'AEIOU' else 'a'} {name}"


def cpu_text(doc: dict) -> str:
    """The CPU the CPU figures ran on, as the results file names it."""
    return f"{doc['system'].get('host', {}).get('cores', '?')} vCPUs of {cpu_model(doc)}"


def gpu_text(doc: dict) -> str:
    gpus = doc["system"].get("gpus") or []
    return f"an {gpus[0]['name']}" if gpus else "no GPU"


def best_f64_gpu(rows: list[dict]) -> dict[str, dict]:
    """The phases of the fastest float64 GPU kernel of a case."""
    kernels = [m for m in rows if m["variant"].startswith("cuda_f64") and m["phase"] == "kernel"]
    if not kernels:
        return {}
    variant = min(kernels, key=lambda m: m["median_s"])["variant"]
    return {m["phase"]: m for m in rows if m["variant"] == variant}


@renderer("mandelbrot_headline")
def headline(docs_dir: Path, path: str) -> str:
    """One line per case: the fastest float64 GPU kernel against the best CPU variant, naming
    both machines."""
    _, doc, notice = pick(docs_dir, path)
    cpu, gpu_name = cpu_text(doc), gpu_text(doc)
    lines = []
    for case in dict.fromkeys(m["case"] for m in doc["measurements"] if m["case"] != "compile"):
        rows = case_rows(doc, case)
        best = best_cpu(rows)
        gpu = best_f64_gpu(rows)
        if not best:
            continue
        if not gpu:
            lines.append(f"- **{case}** ({size_text(best['params'])}): best CPU variant "
                         f"{label(best)} on {cpu}, {fmt_time(best['median_s'])}; "
                         "no GPU figure in this file.")
            continue
        k, e = gpu.get("kernel"), gpu.get("end_to_end")
        lines.append(f"- **{case}** ({size_text(best['params'])}): {label(k)}, on {gpu_name}, runs "
                     f"{relative(best['median_s'] / k['median_s'])} {label(best)} "
                     f"on {cpu} ({fmt_time(k['median_s'])} against "
                     f"{fmt_time(best['median_s'])}); with allocation and copies, "
                     f"{relative(best['median_s'] / e['median_s'])} it "
                     f"({fmt_time(e['median_s'])}). Throughput: "
                     f"{fmt_rate(throughput(k))} pixel-iterations per second.")
    if any("simulator" in m.get("clock", "") for m in doc["measurements"]):
        lines.append("- The GPU variants of this file ran on Numba's CUDA simulator: their "
                     "times measure Python on the CPU and say nothing about a GPU.")
    return notice + "\n" + "\n".join(lines) + "\n"


@renderer("mandelbrot_compiled_gain")
def compiled_gain(docs_dir: Path, path: str, case: str) -> str:
    """How much faster compiled code is than pure Python on one core, from the file."""
    _, doc, _ = pick(docs_dir, path)
    rows = {m["variant"]: m for m in case_rows(doc, case) if m["phase"] == "kernel"}
    if "python" not in rows or "njit" not in rows:
        return "\n*This results file lacks the pure Python or the @njit figure of this case.*\n"
    python, njit = rows["python"], rows["njit"]
    text = (f"Compiled by `@njit`, the loop runs {fmt_ratio(python['median_s'] / njit['median_s'])} "
            f"times as fast as pure Python on the same single core ({fmt_time(njit['median_s'])} "
            f"against {fmt_time(python['median_s'])}, {size_text(python['params'])}, "
            f"on one vCPU of {cpu_model(doc)[2:].lstrip()})")
    if "njit_parallel" in rows:
        par = rows["njit_parallel"]
        text += (f"; `parallel=True` on all cores makes that "
                 f"{fmt_ratio(python['median_s'] / par['median_s'])} times")
    return "\n" + text + ".\n"


# --- Floating-point instructions per iteration, counted in the kernels' SASS (GPU machine code) -
FLOAT_OPCODES = {"FP64": {"DADD", "DMUL", "DFMA", "DSETP", "DMNMX"},
                 "FP32": {"FADD", "FMUL", "FFMA", "FSETP", "FMNMX"}}
PRODUCT = {"FP64": "DMUL", "FP32": "FMUL"}
PRODUCTS_PER_ITERATION = 3  # x*x, y*y, x*y: every iteration of every kernel does exactly three
INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)(.*)")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")


def sass_loops(text: str) -> dict[str, dict]:
    """For each kernel of a SASS dump written by `mandelbrot.py --sass` (sections headed
    "===== VARIANT FUNCTION"), its main loop: of the backward branches' bodies, the one with the
    most products (DMUL in float64, FMUL in float32). Float instructions per iteration = float
    instructions of that precision in the body / iterations per trip, where iterations per trip =
    products in the body / 3."""
    kernels: dict[str, dict] = {}
    for section in re.split(r"^===== ", text, flags=re.M)[1:]:
        header, _, body = section.partition("\n")
        variant = header.split()[0]
        code, labels, pending = [], {}, []
        for line in body.splitlines():
            found = LABEL.match(line)
            if found:
                pending.append(found.group(1))
                continue
            ins = INSTRUCTION.search(line)
            if ins and not ins.group(2).startswith("."):
                addr = int(ins.group(1), 16)
                for name in pending:
                    labels[name] = addr
                pending = []
                code.append((addr, ins.group(2), ins.group(3)))
        loops = []
        for addr, op, rest in code:
            target = re.search(r"`\((\.L_x_\d+)\)", rest)
            if op.startswith("BRA") and target and labels.get(target.group(1), addr + 1) <= addr:
                start = labels[target.group(1)]
                loops.append(Counter(o.split(".")[0] for a, o, _ in code if start <= a <= addr))
        if not loops:
            raise ValueError(f"no loop found in the SASS of {variant}")
        counts = max(loops, key=lambda c: c["DMUL"] + c["FMUL"])
        precision = "FP64" if counts["DMUL"] else "FP32"
        products = counts[PRODUCT[precision]]
        trips = products // PRODUCTS_PER_ITERATION
        if trips < 1 or products % PRODUCTS_PER_ITERATION:
            raise ValueError(f"{variant}: {products} {PRODUCT[precision]} in the loop, "
                             "not a multiple of 3")
        float_ops = {op: n for op, n in sorted(counts.items()) if op in FLOAT_OPCODES[precision]}
        total = sum(counts.values())
        kernels[variant] = {"precision": precision, "iterations_per_trip": trips,
                            "float": sum(float_ops.values()) / trips,
                            "other": (total - sum(float_ops.values())) / trips,
                            "float_ops": float_ops}
    return kernels


def spec_row(specs: dict, gpu_name: str) -> dict | None:
    return next((row for row in specs["rows"] if row.get("match") and row["match"] in gpu_name),
                None)


@renderer("mandelbrot_fp64_ceiling")
def fp64_ceiling(docs_dir: Path, path: str, specs: str, sass: str) -> str:
    """Each float64 kernel of the large case against its FP64 ceiling (the datasheet's FP64 rate
    over the FP64 instructions per iteration counted in its SASS), and the bar for the tuned
    kernel."""
    _, doc, _ = pick(docs_dir, path)
    row = None
    gpus = doc["system"].get("gpus") or []
    if gpus:
        row = spec_row(load_json(docs_dir, specs), gpus[0]["name"])
    loops = sass_loops((docs_dir / sass).read_text())
    ms = doc["measurements"]
    out, items = [], []
    for m in ms:
        if m["case"] != "large" or m["phase"] != "kernel" or m["variant"] not in loops:
            continue
        loop, rate = loops[m["variant"]], throughput(m)
        ops = " + ".join(f"{n} {op}" for op, n in loop["float_ops"].items())
        work = m.get("work") or {}
        lanes = (f"{work['pixel_iterations'] / work['warp_iterations']:.1%}"
                 if work.get("warp_iterations") else "")
        field = {"FP64": "fp64_tflops", "FP32": "fp32_tflops"}[loop["precision"]]
        top = row[field] * 1e12 / 2 / loop["float"] if row else None
        out.append([label(m), f"{loop['float']:g} {loop['precision']}", f"{loop['other']:g}",
                    fmt_rate(top) if top else "", fmt_rate(rate),
                    f"{rate / top:.0%}" if top else "", lanes])
        if m["variant"] == BAR_VARIANT:
            verdict = "met" if rate >= BAR_PIXEL_ITERATIONS else "**not met**"
            items.append(f"- {label(m)}: {fmt_rate(rate)} pixel-iterations per second against "
                         f"a bar of {fmt_rate(BAR_PIXEL_ITERATIONS)}: {verdict}.")
        trips = loop["iterations_per_trip"]
        items.append(f"- {label(m)}: one trip through its main loop runs {trips} "
                     f"iteration{'s' if trips > 1 else ''}, with {ops} "
                     f"{loop['precision']} instructions.")
    if not out:
        return "\n*No GPU kernel of the large case in this results file.*\n\n" + "\n".join(items)
    source = (f"{row['fp64_tflops']:g} TFLOP/s FP64 and {row['fp32_tflops']:g} TFLOP/s FP32 of the "
              f"{escape(row['gpu'])} datasheet, an FMA counted as two, so half as many "
              "instructions per second" if row else "")
    large = next(m["params"] for m in ms if m["case"] == "large")
    caption = (f"\n\n*{size_text(large)}. "
               "Floating-point instructions of the kernel's precision and other instructions per "
               "iteration are counted in the main loop of each "
               f"kernel's SASS ([{escape(sass.split('/')[-1])}](../{escape(sass)}), written on the "
               "GPU by `mandelbrot.py --sass`). Ceiling: the instruction rate of that precision "
               f"({source}) over its instructions per iteration. Lanes busy: useful "
               "pixel-iterations over the iterations the warps run (32 lanes times the warp's "
               "slowest pixel).*\n")
    table = markdown_table(["Kernel", "Float / iteration", "Other / iteration",
                            "Ceiling", "Measured", "Of ceiling", "Lanes busy"], out, "lrrrrrr")
    return "\n" + table + caption + "\n" + "\n".join(items) + "\n"


@renderer("mandelbrot_spread")
def spread(docs_dir: Path, path: str) -> str:
    """The repeat-to-repeat spread (slowest sample over fastest) of every GPU timing."""
    _, doc, _ = pick(docs_dir, path)
    timed = [m for m in doc["measurements"]
             if m["device"] == "gpu" and m["phase"] in ("kernel", "end_to_end")]
    wide = [m for m in timed if m["spread"] >= BAR_SPREAD]
    if not timed:
        return "\nNo GPU timings in this results file.\n"
    if not wide:
        worst = max(timed, key=lambda m: m["spread"])
        return (f"\nSpread (slowest over fastest sample) below {BAR_SPREAD} for all {len(timed)} "
                f"GPU timings; the widest is {worst['spread']:.3f} ({worst['case']}, "
                f"{label(worst)}, {PHASES[worst['phase']]}).\n")
    listed = ", ".join(f"{m['case']} {label(m)} {PHASES[m['phase']]} ({m['spread']:.2f})"
                       for m in wide)
    return (f"\nSpread (slowest over fastest sample) of {BAR_SPREAD} or more in {len(wide)} of "
            f"{len(timed)} GPU timings: {listed}.\n")


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
