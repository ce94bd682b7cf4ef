"""The roofline of a measured machine, its measured figures, and arithmetic from sourced specs.

- `roofline path= [fallback=] [kernels="a.json b.json"]`: the chart, from ceilings measured in
  one run of `python snippets/bench/run.py machine`, with the kernels of that run and of the
  other results files plotted on it (files that do not exist yet are named, not plotted).
- `machine_table path= [fallback=]`: every figure of that run.
- `llm_decode specs= [measured=]`: the fastest batch-1 decoding a memory bandwidth allows.
- `spec_table specs= keys=`: sourced spec rows with their source and as-of date.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from html import escape
from pathlib import Path

from . import markdown_table, renderer, svg_figure

from .run_details import load_results as load_results_file

SNIPPETS = Path(__file__).resolve().parents[2] / "snippets"


def load_results(path: Path) -> dict:
    return load_results_file(path.parent, path.name)[0]


def _load_model():
    spec = importlib.util.spec_from_file_location("machine_roofline", SNIPPETS / "machine" / "roofline.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["machine_roofline"] = module
    spec.loader.exec_module(module)
    return module


model = _load_model()


def resolve(docs_dir: Path, path: str, fallback: str | None) -> tuple[dict, str, str]:
    """(document, the file actually used, a warning when it is the fallback)."""
    return load_results_file(docs_dir, path, fallback)


def device_names(doc: dict) -> dict[str, str]:
    """How the chart and tables name each device: the GPU by name, the CPU as what it was."""
    s = doc["system"]
    host = s.get("host", {})
    vm = "-fc-" in host.get("os", "")  # a Firecracker microVM: the machines this site rents
    cores = f"{host.get('cores', '?')} {'vCPUs of a VM' if vm else 'cores'}"
    names = {"cpu": f"host CPU ({cores})"}
    if s.get("gpus"):
        names["gpu"] = s["gpus"][0]["name"]
    return names


def gather(docs_dir: Path, doc: dict, kernels: str) -> tuple[dict, list, list[str]]:
    """Ceilings of the machine run, every point that has a ceiling, and what is missing
    (snippets/machine/roofline.py, `combine`, says how other runs' points are treated)."""
    missing, others = [], []
    for rel in kernels.split():
        if (docs_dir / rel).is_file():
            others.append((Path(rel).stem, load_results(docs_dir / rel)))
        else:
            missing.append(f"`{rel}` (not measured yet)")
    ceils, pts, left = model.combine(doc, others)
    return ceils, pts, missing + left


@renderer("roofline")
def roofline(docs_dir: Path, path: str, fallback: str | None = None, kernels: str = "") -> str:
    doc, used, intro = resolve(docs_dir, path, fallback)
    ceils, pts, missing = gather(docs_dir, doc, kernels)
    problems = model.check(ceils, pts)
    names = device_names(doc)
    fig = model.draw(ceils, pts, title=" + ".join(names.get(d, d) for d in ("gpu", "cpu")
                                                  if d in ceils), device_names=names)
    alt = ("Roofline chart: attainable FLOP/s against arithmetic intensity, with the memory "
           "bandwidth and FP64, FP32, TF32 and BF16 matrix-product ceilings measured in one run "
           "and measured kernels as labelled points")
    out = intro + svg_figure(fig, alt=alt, caption=f"Ceilings from {used}") + "\n\n"
    rows = []
    for p in sorted(pts, key=lambda p: (p.device, p.source, p.intensity, p.label)):
        c = ceils[p.device]
        roof = model.attainable(c["bandwidth"], c["peaks"].get(p.precision, 0), p.intensity)
        rows.append([f"{p.label} ({p.source})", p.device.upper(), p.precision,
                     f"{p.intensity:.3g}", f"{p.rate / 1e9:,.1f}",
                     f"{100 * p.rate / roof:.0f}&nbsp;%" if roof else "–"])
    out += ('??? note "Every point on the chart"\n\n'
            + "\n".join("    " + line for line in markdown_table(
                ["kernel (results file)", "device", "roof", "FLOP per byte", "GFLOP/s",
                 "of its roof"], rows, "lllrrr").splitlines()) + "\n")
    if missing:
        out += "\nNot on the chart: " + "; ".join(missing) + ".\n"
    if problems:
        out += ('\n!!! failure "A point is above its roof: a counting or timing error"\n\n'
                + "".join(f"    - {escape(p)}\n" for p in problems))
    return out


@renderer("machine_table")
def machine_table(docs_dir: Path, path: str, fallback: str | None = None) -> str:
    doc, _, intro = resolve(docs_dir, path, fallback)
    names = device_names(doc)
    rows = []
    for m in doc["measurements"]:
        if m["phase"] != "kernel":
            continue
        n, v = m["params"]["n"], m["variant"]
        if "matmul" in m["case"]:
            rows.append([names.get(m["device"], m["device"]),
                         f"{v.split('_')[1].upper()} matrix product, {n} × {n}",
                         f"{m['flops'] / m['median_s'] / 1e12:,.2f} TFLOP/s"])
        elif m["case"] == "pcie":
            what = (v.replace("_", ", ").replace("h2d", "host → device")
                    .replace("d2h", "device → host"))
            rows.append([names["gpu"], f"{what} memory, {4 * n / 2**30:g} GiB",
                         f"{m['bytes'] / m['median_s'] / 1e9:,.1f} GB/s"])
        else:
            what = {"read": "read (sum)", "copy": "copy", "saxpy": "SAXPY"}[v.split("_")[1]]
            rows.append([names.get(m["device"], m["device"]),
                         f"{what} bandwidth, {n:,} float32",
                         f"{m['bytes'] / m['median_s'] / 1e9:,.1f} GB/s"])
    out = intro + markdown_table(["device", "what", "measured"], rows, "llr") + "\n"
    ceils = model.ceilings(doc)
    for dev, c in sorted(ceils.items()):
        ridges = ", ".join(f"{prec} {c['peaks'][prec] / c['bandwidth']:.1f}"
                           for prec in model.PRECISIONS if prec in c["peaks"])
        out += (f"\n{names.get(dev, dev)}: ridge points (matrix-product rate ÷ memory roof), in "
                f"FLOP per byte: {ridges}.\n")
    return out


def read_specs(docs_dir: Path, specs: str) -> dict[str, dict]:
    with open(docs_dir / specs, newline="") as f:
        rows = {r["key"]: r for r in csv.DictReader(f)}
    for key, r in rows.items():
        if not r["source"].startswith("http") or not r["as_of"]:
            raise ValueError(f"{specs}: row {key} lacks a source URL or an as-of date")
        r["number"] = float(r["value"])
    return rows


def cite(r: dict) -> str:
    host = r["source"].split("/")[2]
    return f"[{host}]({r['source']}), {r['as_of']}"


@renderer("spec_table")
def spec_table(docs_dir: Path, specs: str, keys: str) -> str:
    rows = read_specs(docs_dir, specs)
    out = []
    for key in keys.split():
        r = rows[key]
        v, unit = r["number"], r["unit"]
        if unit == "B/s":
            shown = f"{v / 1e12:g} TB/s" if v >= 1e12 else f"{v / 1e9:g} GB/s"
        elif unit == "B":
            shown = f"{v / 1e9:g} GB" if v >= 1e9 else (f"{v / 1e6:g} MB" if v >= 1e6 else f"{v / 1e3:g} KB")
        elif unit == "FLOP/s":
            shown = f"{v / 1e12:g} TFLOP/s"
        else:
            shown = f"{v:,.0f}"
        out.append([r["item"], shown, cite(r)])
    return markdown_table(["spec", "value", "source, as of"], out, "lrl") + "\n"


@renderer("llm_decode")
def llm_decode(docs_dir: Path, specs: str, measured: str | None = None) -> str:
    r = read_specs(docs_dir, specs)
    bytes_per = r["bf16_bytes"]["number"]
    memories = [("NVIDIA H200 SXM (datasheet)", r["h200_bandwidth"]),
                ("NVIDIA H100 SXM (datasheet)", r["h100_bandwidth"]),
                ("NVIDIA A100 80GB SXM (datasheet)", r["a100_bandwidth"]),
                ("AMD EPYC 9654, one socket (datasheet)", r["epyc_9654_bandwidth"])]
    extra, pending = [], ""
    if measured and not (docs_dir / measured).is_file():
        pending = f" The row for this site's own H200 measurement appears once `{measured}` exists."
    if measured and (docs_dir / measured).is_file():
        doc = load_results(docs_dir / measured)
        ceils = model.ceilings(doc)
        if "gpu" in ceils:
            name = doc["system"]["gpus"][0]["name"]
            extra.append((f"{name}, device copy measured by this site", ceils["gpu"]["bandwidth"]))
    rows = []
    for model_key, label in (("llama70b_params", "70 B"), ("llama8b_params", "8 B")):
        weights = r[model_key]["number"] * bytes_per
        for mem_label, spec in memories:
            rows.append([label, f"{weights / 1e9:,.0f} GB", mem_label,
                         f"{spec['number'] / 1e12:g} TB/s", f"{spec['number'] / weights:,.1f}"])
        for mem_label, bw in extra:
            rows.append([label, f"{weights / 1e9:,.0f} GB", mem_label, f"{bw / 1e12:.2f} TB/s",
                         f"{bw / weights:,.1f}"])
    sources = "; ".join(cite(r[k]) for k in ("h200_bandwidth", "h100_bandwidth", "a100_bandwidth",
                                             "epyc_9654_bandwidth", "llama70b_params"))
    return (markdown_table(["model (BF16)", "weights read per token", "memory", "bandwidth",
                            "tokens/s at most (batch 1)"], rows, "lrlrr")
            + f"\n\nSources: {sources}.{pending}\n")
