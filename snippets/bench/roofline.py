"""The roofline model from measured results: ceilings, kernel points, the check, the chart.

A kernel that does F floating-point operations while moving B bytes to and from memory has an
arithmetic intensity I = F / B (FLOP per byte). On a machine that moves at most BW bytes/s and
computes at most P FLOP/s, the kernel cannot run faster than

    attainable(I) = min(P, BW * I)        FLOP/s

Both ceilings come from measurements of the same run (results files written by
`run.py machine`): on a GPU, BW is a device-to-device copy; on a CPU, the best
of its streaming kernels (STREAM's convention: one core's bandwidth depends on how many fetches
it keeps in flight, so read, copy and SAXPY stream at different rates); P is a matrix product at
each precision. A measured kernel is a point (I, F / median time) that must lie below that roof:
a point above it means the FLOPs or bytes were miscounted or the time is wrong.

The site's build draws the CPU vs GPU page's chart with it; the lesson is
snippets/machine/roofline.py.
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


def attainable(bandwidth: float, peak: float, intensity: float) -> float:
    """The roof: the fastest a kernel of this arithmetic intensity can run (FLOP/s)."""
    return min(peak, bandwidth * intensity)


def point_from(m: dict, source: str = "", benchmark: str = "") -> Point:
    """A measured kernel as a roofline point: intensity = flops / bytes, rate = flops / time."""
    return Point(label=m["variant"], device=m["device"], precision=precision_of(m, benchmark),
                 intensity=m["flops"] / m["bytes"], rate=m["flops"] / m["median_s"], source=source,
                 flops=m["flops"])


FP64_BENCHMARKS = {"mandelbrot": ("cuda_f32", "cuda_f32_chunk")}  # float64, except these variants


def precision_of(m: dict, benchmark: str = "") -> str:
    """The compute ceiling a measurement is held to: its format, by name or by benchmark.

    A float64 kernel is held to the FP64 matrix-product rate (on an H200 that rate uses the FP64
    tensor cores, so a kernel on the FP64 units stays well below it); float32 kernels on CUDA
    cores to the FP32 rate; tensor-core formats to their own.
    """
    params = m.get("params") or {}
    extra = m.get("extra") or {}
    text = " ".join(str(v) for v in (m.get("variant"), m.get("precision"), params.get("dtype"),
                                     params.get("precision"), extra.get("precision"))).lower()
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
             and not str(m.get("variant", "")).endswith("read")  # a bandwidth, not a kernel
             # the matmul page's tuning grid (cuda_c/wt_*, cuda_c/tc_*): configurations of the
             # kernels already plotted, not kernels of their own
             and not str(m.get("variant", "")).startswith(("cuda_c/wt_", "cuda_c/tc_"))
             and (m.get("flops") or 0) > 0 and (m.get("bytes") or 0) > 0 and m["median_s"] > 0]
    if not best_per_variant:
        return found
    best: dict = {}
    for p in found:
        key = (p.device, p.label)
        if key not in best or (p.flops, p.rate) > (best[key].flops, best[key].rate):
            best[key] = p
    return list(best.values())


def combine(doc: dict, others: list[tuple[str, dict]]) -> tuple[dict, list[Point], list[str]]:
    """Ceilings of a machine run, its points and the points of other results files: (ceilings,
    points, what was left off and why).

    Points from other files were measured in other runs. On the GPU, a library matrix product
    of another run (cuBLAS) that beats this run's raises the roof of its precision: the roof is
    the fastest library product measured. On the CPU, a shared virtual machine whose streaming
    rate varies from run to run, streaming kernels of other runs are left off (their own page
    compares them within their run).
    """
    ceils = ceilings(doc)
    pts = points(doc, source="machine run")
    left = []
    for source, other in others:
        for p in points(other, source=source):
            if p.device not in ceils:
                left.append(f"{p.source} {p.label} (no {p.device.upper()} ceiling in this run)")
            elif not (p.device == "cpu" and p.intensity < 1):
                pts.append(p)
                peaks = ceils[p.device]["peaks"]
                if p.label.startswith("cublas") and p.rate > peaks.get(p.precision, 0):
                    peaks[p.precision] = p.rate
    return ceils, pts, left


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


def chart_points(pts: list[Point]) -> list[Point]:
    """The points worth a label on the chart: of the kernels of one results file that sit at
    about the same intensity on the same device (a sweep of matrix-product variants, the
    versions of SAXPY), the fastest and the slowest; the page's table lists them all."""
    groups: dict = {}
    for p in pts:
        key = (p.source, p.device, p.precision, round(math.log10(p.intensity), 1))
        groups.setdefault(key, []).append(p)
    keep = []
    for group in groups.values():
        group.sort(key=lambda q: q.rate)
        keep += [group[-1]] + ([group[0]] if len(group) > 1 else [])
    return keep


def draw(ceils: dict, pts: list[Point], title: str = "Roofline", device_names: dict | None = None):
    """A log-log roofline chart: one roof per device and precision, one labelled marker per
    kernel, labels placed where they overlap no other label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = device_names or {}
    colours = {"gpu": "tab:blue", "cpu": "tab:orange"}
    styles = {"FP64": "-.", "FP32": "-", "TF32": "--", "BF16": ":"}
    pts = chart_points(pts)
    xs = [p.intensity for p in pts] + [1 / 8, 4096]
    for c in ceils.values():
        xs += [pk / c["bandwidth"] for pk in c["peaks"].values()]
    lo, hi = min(xs) / 4, max(xs) * 4
    fig, ax = plt.subplots(figsize=(9, 6.4))
    grid = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    for device, c in sorted(ceils.items()):
        bw, colour = c["bandwidth"], colours.get(device, "tab:gray")
        who = names.get(device, device.upper())
        for prec in PRECISIONS:
            if prec not in c["peaks"]:
                continue
            peak = c["peaks"][prec]
            ax.plot(grid, [attainable(bw, peak, x) for x in grid], styles[prec], color=colour,
                    lw=1.8 if prec == "FP32" else 1.2,
                    label=f"{who}: {prec} matmul {peak / 1e12:.3g} TFLOP/s")
        ax.plot([], [], " ", label=f"{who}: memory {bw / 1e9:,.0f} GB/s")
    markers = iter("osD^v<>ph*")
    seen: dict = {}
    for p in pts:
        key = p.source or p.device
        if key not in seen:
            seen[key] = next(markers, "o")
        ax.plot([p.intensity], [p.rate], seen[key], ms=6, mfc="white",
                color=colours.get(p.device, "tab:gray"))
    for key, marker in seen.items():
        ax.plot([], [], marker, color="black", mfc="white", label=f"measured: {key}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("FLOP/s")
    ax.set_title(title)
    ax.grid(True, which="major")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1, frameon=False)
    _place_labels(fig, ax, pts)
    return fig


def _place_labels(fig, ax, pts: list[Point]) -> None:
    """Label every point, trying offsets until a label overlaps no other label and no marker."""
    renderer = fig.canvas.get_renderer()
    area = ax.get_window_extent(renderer)
    taken = []
    for p in pts:  # markers count as taken space
        x, y = ax.transData.transform((p.intensity, p.rate))
        taken.append(matplotlib_bbox(x - 5, y - 5, x + 5, y + 5))
    offsets = [(7, -4), (7, 6), (7, -14), (-7, 6), (-7, -14), (7, 16), (7, -24), (-7, 16),
               (-7, -24), (7, 26), (7, -34), (-7, 26), (-7, -34), (7, 36), (7, -44)]
    for p in sorted(pts, key=lambda q: (q.intensity, q.rate)):
        for dx, dy in offsets:
            text = ax.annotate(p.label, (p.intensity, p.rate), textcoords="offset points",
                               xytext=(dx, dy), ha="left" if dx > 0 else "right",
                               va="center")
            box = text.get_window_extent(renderer).expanded(1.05, 1.1)
            inside = (area.x0 <= box.x0 and box.x1 <= area.x1 and area.y0 <= box.y0
                      and box.y1 <= area.y1)
            if inside and not any(box.overlaps(t) for t in taken):
                taken.append(box)
                break
            text.remove()
        else:  # every place taken: the last offset, with a leader line
            text = ax.annotate(p.label, (p.intensity, p.rate), textcoords="offset points",
                               xytext=(-12, -54), ha="right",
                               arrowprops={"arrowstyle": "-", "lw": 0.6})
            taken.append(text.get_window_extent(renderer))


def matplotlib_bbox(x0, y0, x1, y1):
    from matplotlib.transforms import Bbox

    return Bbox([[x0, y0], [x1, y1]])
