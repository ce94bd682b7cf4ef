"""The CPU vs GPU page: the roofline chart, the machine's measured figures, sourced spec rows.

- `roofline path= alt= [kernels="a.json b.json"]`: the chart (bench.roofline) from the ceilings
  of one `run.py machine` file, with the kernels of it and of the other files plotted on it;
  `roofline_points` (same arguments but alt): every point of the chart, in a table.
- `machine_table path=`: every figure of that run; `{{ machine.ridges DEVICE }}`;
  `{{ machine.host cpu|cores|gpu }}`, the machine of any results file (`path=` or the page's).
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from bench import roofline as model

from . import markdown_table, renderer, svg_figure, value
from .run_details import gbs, label, load


def device_names(doc: dict) -> dict[str, str]:
    host = doc["system"].get("host", {})
    vm = "-fc-" in host.get("os", "")  # a Firecracker microVM: the machines this site rents
    names = {"cpu": f"host CPU ({host.get('cores', '?')} {'vCPUs of a VM' if vm else 'cores'})"}
    if doc["system"].get("gpus"):
        names["gpu"] = doc["system"]["gpus"][0]["name"]
    return names


def combined(docs_dir: Path, path: str, kernels: str) -> tuple[dict, dict, list]:
    doc = load(docs_dir, path)
    others = [(Path(rel).stem, load(docs_dir, rel)) for rel in kernels.split()]
    ceils, pts, left = model.combine(doc, others)
    problems = model.check(ceils, pts) + left
    if problems:  # a point above its roof or without one: a counting or timing error
        raise ValueError("; ".join(problems))
    return doc, ceils, pts


@renderer("roofline")
def roofline(docs_dir: Path, path: str, alt: str, kernels: str = "") -> str:
    doc, ceils, pts = combined(docs_dir, path, kernels)
    names = device_names(doc)
    fig = model.draw(ceils, pts, device_names=names,
                     title=" + ".join(names[d] for d in ("gpu", "cpu") if d in ceils))
    def phone(fig):  # a tall chart with its points unlabelled: roofline_points lists them
        for text in list(fig.axes[0].texts):
            text.remove()
        fig.set_size_inches(4.8, 9.5)

    return svg_figure(fig, alt=alt, caption=path, phone=phone) + "\n"


@renderer("roofline_points")
def roofline_points(docs_dir: Path, path: str, kernels: str = "") -> str:
    _, ceils, pts = combined(docs_dir, path, kernels)
    rows = []
    for p in sorted(pts, key=lambda p: (p.device, p.source, p.intensity, p.label)):
        c = ceils[p.device]
        roof = model.attainable(c["bandwidth"], c["peaks"][p.precision], p.intensity)
        rows.append([f"{p.label} ({p.source})", p.device.upper(), p.precision,
                     f"{p.intensity:.3g}", f"{p.rate / 1e9:,.1f}", f"{100 * p.rate / roof:.0f}&nbsp;%"])
    return markdown_table(["kernel (results file)", "device", "roof", "FLOP per byte",
                           "GFLOP/s", "of its roof"], rows, "lllrrr") + "\n"


@renderer("machine_table")
def machine_table(docs_dir: Path, path: str) -> str:
    doc = load(docs_dir, path)
    names = device_names(doc)
    rows = []
    for m in (m for m in doc["measurements"] if m["phase"] == "kernel"):
        n = m["params"]["n"]
        if "matmul" in m["case"]:
            size, rate = f"{n} × {n}", f"{m['flops'] / m['median_s'] / 1e12:,.2f} TFLOP/s"
        else:
            size = f"{4 * n / 2**30:g} GiB" if m["case"] == "pcie" else f"{n:,} float32"
            rate = f"{gbs(m):,.1f} GB/s"
        rows.append([names[m["device"]], f"{label(doc, m['variant'])}, {size}", rate])
    return markdown_table(["device", "what", "measured"], rows, "llr") + "\n"


@value("machine.ridges")
def ridges(docs_dir: Path, device: str, *, path: str) -> str:
    """Each precision's ridge point (matrix-product rate / memory roof), in FLOP per byte."""
    c = model.ceilings(load(docs_dir, path))[device]
    return ", ".join(f"{prec} {c['peaks'][prec] / c['bandwidth']:.1f}"
                     for prec in model.PRECISIONS if prec in c["peaks"])


@value("machine.device")
def device(docs_dir: Path, device: str, *, path: str) -> str:
    return escape(device_names(load(docs_dir, path))[device])


@value("machine.host")
def host(docs_dir: Path, field: str, *, path: str) -> str:
    """The machine that measured `path`: its CPU (`field=cpu`, the model; `field=cores`) or
    `field=gpu`, the GPU's name."""
    s = load(docs_dir, path)["system"]
    if field not in ("gpu", "cpu", "cores"):
        raise ValueError(f"no field {field!r}: gpu, cpu or cores")
    if field == "gpu":
        return (s.get("gpus") or [{"name": "no GPU"}])[0]["name"]
    return re.sub(r"\((R|TM)\)", "", str(s.get("host", {}).get(field, "?"))).strip()
