"""The roofline model from measured results: ceilings, kernel points, the check, the chart.

A kernel that does F floating-point operations while moving B bytes to and from memory has an
arithmetic intensity I = F / B (FLOP per byte). On a machine that moves at most BW bytes/s and
computes at most P FLOP/s, the kernel cannot run faster than

    attainable(I) = min(P, BW * I)        FLOP/s

Both ceilings come from measurements of the same run (results files written by
snippets/machine/measure_machine.py): on a GPU, BW is a device-to-device copy; on a CPU, the best
of its streaming kernels (STREAM's convention: one core's bandwidth depends on how many fetches
it keeps in flight, so read, copy and SAXPY stream at different rates); P is a matrix product at
each precision. A measured kernel is a point (I, F / median time) that must lie below that roof:
a point above it means the FLOPs or bytes were miscounted or the time is wrong.

Used by measure_machine.py (a PNG) and by the site's build (an SVG on the CPU vs GPU page).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PRECISIONS = ("FP64", "FP32", "TF32", "BF16")
TOLERANCE = 1.10  # how far above a roof a point may sit before it counts as an error (see check)


@dataclass
class Point:
    label: str
    device: str  # "cpu" or "gpu"
    precision: str  # which compute ceiling applies: FP32, TF32 or BF16
    intensity: float  # FLOP per byte
    rate: float  # FLOP/s
    source: str = ""
    flops: float = 0.0  # the work it did (to pick a sweep's largest problem)


# --8<-- [start:roof]
def attainable(bandwidth: float, peak: float, intensity: float) -> float:
    """The roof: the fastest a kernel of this arithmetic intensity can run (FLOP/s)."""
    return min(peak, bandwidth * intensity)


def point_from(m: dict, source: str = "", benchmark: str = "") -> Point:
    """A measured kernel as a roofline point: intensity = flops / bytes, rate = flops / time."""
    return Point(label=m["variant"], device=m["device"], precision=precision_of(m, benchmark),
                 intensity=m["flops"] / m["bytes"], rate=m["flops"] / m["median_s"], source=source,
                 flops=m["flops"])
# --8<-- [end:roof]


FP64_BENCHMARKS = {"mandelbrot": ("cuda_f32",)}  # float64 throughout, except these variants


def precision_of(m: dict, benchmark: str = "") -> str:
    """The compute ceiling a measurement is held to: its format, by name or by benchmark.

    A float64 kernel is held to the FP64 matrix-product rate (on an H200 that rate uses the FP64
    tensor cores, so a kernel on the FP64 units stays well below it); float32 kernels on CUDA
    cores to the FP32 rate; tensor-core formats to their own.
    """
    params = m.get("params") or {}
    text = " ".join(str(v) for v in (m.get("variant"), m.get("precision"), params.get("dtype"),
                                     params.get("precision"))).lower()
    if any(k in text for k in ("bf16", "bfloat16", "fp16", "float16", "half")):
        return "BF16"
    if "tf32" in text:
        return "TF32"
    if any(k in text for k in ("fp64", "float64", "f64", "double")):
        return "FP64"
    if benchmark in FP64_BENCHMARKS and m.get("variant") not in FP64_BENCHMARKS[benchmark]:
        return "FP64"
    return "FP32"


def ceilings(doc: dict) -> dict:
    """{device: {"bandwidth": B/s, "peaks": {precision: FLOP/s}}} from a measure_machine file."""
    found: dict = {}
    for m in doc["measurements"]:
        if m["phase"] != "kernel" or m.get("role") not in ("ceiling", "ceiling+point"):
            continue
        dev = found.setdefault(m["device"], {"bandwidth": None, "peaks": {}})
        if "matmul" in m["case"]:
            dev["peaks"][precision_of(m)] = m["flops"] / m["median_s"]
        else:  # a streaming kernel; with several (the CPU's), the best of them
            dev["bandwidth"] = max(dev["bandwidth"] or 0, m["bytes"] / m["median_s"])
    return {d: c for d, c in found.items() if c["bandwidth"] and c["peaks"].get("FP32")}


def points(doc: dict, source: str = "", best_per_variant: bool = True) -> list[Point]:
    """Kernels with counted FLOPs and bytes (kernel phase, not ceilings) as roofline points.

    With best_per_variant, a size sweep gives one point per (device, variant): its largest
    problem (most FLOPs), the one that fills the machine best; the fastest of equal sizes.
    """
    found = [point_from(m, source, doc.get("benchmark", "")) for m in doc["measurements"]
             if m.get("phase") == "kernel" and m.get("role") not in ("ceiling", "transfer")
             and (m.get("flops") or 0) > 0 and (m.get("bytes") or 0) > 0 and m["median_s"] > 0]
    if not best_per_variant:
        return found
    best: dict = {}
    for p in found:
        key = (p.device, p.label)
        if key not in best or (p.flops, p.rate) > (best[key].flops, best[key].rate):
            best[key] = p
    return list(best.values())


def check(ceils: dict, pts: list[Point], tolerance: float = TOLERANCE) -> list[str]:
    """Problems: points above their roof (times tolerance) or with no roof to be held to.

    The memory roof is a copy (one read per write); a kernel with more reads than writes can beat
    it by a few per cent, and run-to-run noise adds a little. A factor of 2 (an FMA counted as one
    FLOP, a write not counted) is an error; 10% is the margin allowed.
    """
    problems = []
    for p in pts:
        c = ceils.get(p.device)
        if c is None or p.precision not in c["peaks"]:
            problems.append(f"{p.source} {p.device} {p.label}: no measured {p.precision} ceiling "
                            f"for the {p.device}")
            continue
        roof = attainable(c["bandwidth"], c["peaks"][p.precision], p.intensity)
        if not (math.isfinite(p.rate) and p.rate <= roof * tolerance):
            problems.append(f"{p.source} {p.device} {p.label}: {p.rate / 1e9:.1f} GFLOP/s at "
                            f"{p.intensity:.3g} FLOP/B is above its roof of {roof / 1e9:.1f} GFLOP/s")
    return problems


def draw(ceils: dict, pts: list[Point], title: str = "Roofline"):
    """A log-log roofline chart: one roof per device and precision, one marker per kernel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"gpu": "tab:blue", "cpu": "tab:orange"}
    styles = {"FP64": "-.", "FP32": "-", "TF32": "--", "BF16": ":"}
    xs = [p.intensity for p in pts] + [1 / 8, 4096]
    for c in ceils.values():
        xs += [pk / c["bandwidth"] for pk in c["peaks"].values()]
    lo, hi = min(xs) / 4, max(xs) * 4
    fig, ax = plt.subplots(figsize=(8, 5.2))
    for device, c in sorted(ceils.items()):
        bw, colour = c["bandwidth"], colours.get(device, "tab:gray")
        for prec in PRECISIONS:
            if prec not in c["peaks"]:
                continue
            peak = c["peaks"][prec]
            grid = [lo * (hi / lo) ** (k / 200) for k in range(201)]
            ax.plot(grid, [attainable(bw, peak, x) for x in grid], styles[prec], color=colour,
                    lw=1.8 if prec == "FP32" else 1.2,
                    label=f"{device.upper()} {prec} matmul {peak / 1e12:.3g} TFLOP/s")
        ax.text(lo * 1.3, bw * lo * 1.3 * 1.6, f"{device.upper()} memory roof {bw / 1e9:,.0f} GB/s",
                color=colour, rotation=0, fontsize=8, va="bottom")
    markers = iter("osD^v<>ph*")
    seen: dict = {}
    by_source: dict = {}
    for p in pts:
        by_source.setdefault((p.source, p.device), []).append(p)
    for p in pts:
        key = p.source or p.device
        if key not in seen:
            seen[key] = next(markers, "o")
        ax.plot([p.intensity], [p.rate], seen[key], ms=6, mfc="white",
                color=colours.get(p.device, "tab:gray"))
        group = by_source[(p.source, p.device)]
        # Label few points per file (its fastest and slowest); the page's table lists them all.
        if len(group) <= 3 or p.rate in (max(q.rate for q in group), min(q.rate for q in group)):
            ax.annotate(p.label, (p.intensity, p.rate), textcoords="offset points",
                        xytext=(5, -3), fontsize=7)
    for key, marker in seen.items():
        ax.plot([], [], marker, color="black", mfc="white", label=f"measured: {key}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("FLOP/s")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return fig
