"""The roofline of a measured machine, its measured figures, and arithmetic from sourced specs.

- `roofline path= [fallback=] [kernels="a.json b.json"]`: the chart, from ceilings measured in
  one run of snippets/machine/measure_machine.py, with the kernels of that run and of the other
  results files plotted on it (files that do not exist yet are named, not plotted).
- `machine_table path= [fallback=]`: every figure of that run.
- `llm_decode specs= [measured=]`: the fastest batch-1 decoding a memory bandwidth allows.
- `spec_table specs= keys=`: sourced spec rows with their source and as-of date.
- `simd_lanes specs=`: FP32 lanes of a server CPU and a GPU, counted the same way.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from html import escape
from pathlib import Path

from . import markdown_table, renderer, svg_figure

SNIPPETS = Path(__file__).resolve().parents[2] / "snippets"
sys.path.insert(0, str(SNIPPETS))
from bench.results import load_results  # noqa: E402


def _load_model():
    spec = importlib.util.spec_from_file_location("machine_roofline", SNIPPETS / "machine" / "roofline.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["machine_roofline"] = module
    spec.loader.exec_module(module)
    return module


model = _load_model()


def resolve(docs_dir: Path, path: str, fallback: str | None) -> tuple[dict, str, str]:
    """(document, the file actually used, a warning when it is the fallback)."""
    if (docs_dir / path).is_file():
        return load_results(docs_dir / path), path, ""
    if fallback and (docs_dir / fallback).is_file():
        doc = load_results(docs_dir / fallback)
        return doc, fallback, (
            f'!!! warning "No GPU results yet"\n\n    `{path}` does not exist yet: this shows '
            f"`{fallback}`, measured on {escape(doc['system']['host']['cpu'])} without a GPU.\n\n")
    raise FileNotFoundError(f"neither {path} nor a fallback file exists under {docs_dir}")


def gather(docs_dir: Path, doc: dict, kernels: str) -> tuple[dict, list, list[str]]:
    """Ceilings of the machine run, every point that has a ceiling, and what is missing."""
    ceils = model.ceilings(doc)
    pts = model.points(doc, source="machine run")
    missing = []
    for rel in kernels.split():
        file = docs_dir / rel
        if not file.is_file():
            missing.append(f"`{rel}` (not measured yet)")
            continue
        for p in model.points(load_results(file), source=Path(rel).stem):
            if p.device in ceils:
                pts.append(p)
            else:
                missing.append(f"{p.source} {p.label} (no {p.device.upper()} ceiling in this run)")
    return ceils, pts, missing


@renderer("roofline")
def roofline(docs_dir: Path, path: str, fallback: str | None = None, kernels: str = "") -> str:
    doc, used, intro = resolve(docs_dir, path, fallback)
    ceils, pts, missing = gather(docs_dir, doc, kernels)
    problems = model.check(ceils, pts)
    s = doc["system"]
    gpu = s["gpus"][0]["name"] if s.get("gpus") else "no GPU"
    fig = model.draw(ceils, pts, title=f"{gpu} + {s['host']['cpu']}")
    alt = ("Roofline chart: attainable FLOP/s against arithmetic intensity, with the memory "
           "bandwidth and matrix-product ceilings measured in one run and measured kernels as points")
    out = intro + svg_figure(fig, alt=alt, caption=f"Ceilings from {used}") + "\n\n"
    rows = []
    for p in sorted(pts, key=lambda p: (p.device, p.intensity)):
        c = ceils[p.device]
        roof = model.attainable(c["bandwidth"], c["peaks"].get(p.precision, 0), p.intensity)
        rows.append([p.source, p.label, p.device.upper(), p.precision, f"{p.intensity:.3g}",
                     f"{p.rate / 1e9:,.1f}", f"{100 * p.rate / roof:.0f}%" if roof else "–"])
    out += markdown_table(["results file", "kernel", "device", "roof", "FLOP per byte",
                           "GFLOP/s", "of its roof"], rows, "lllcrrr") + "\n"
    if missing:
        out += "\nNot on the chart: " + "; ".join(missing) + ".\n"
    if problems:
        out += ('\n!!! failure "A point is above its roof: a counting or timing error"\n\n'
                + "".join(f"    - {escape(p)}\n" for p in problems))
    return out


@renderer("machine_table")
def machine_table(docs_dir: Path, path: str, fallback: str | None = None) -> str:
    doc, _, intro = resolve(docs_dir, path, fallback)
    rows = []
    for m in doc["measurements"]:
        dev = m["device"].upper()
        n = m["params"]["n"]
        if m["case"] == "matmul":
            rows.append([dev, f"{m['variant'].upper()} matrix product", f"{n} × {n}",
                         f"{m['flops'] / m['median_s'] / 1e12:,.2f} TFLOP/s"])
        else:
            what = {"memory": f"memory {m['variant']}", "saxpy": "SAXPY",
                    "pcie": m["variant"].replace("_", " ").replace("h2d", "host → device")
                    .replace("d2h", "device → host")}[m["case"]]
            rows.append([dev, what, f"{n:,} floats", f"{m['bytes'] / m['median_s'] / 1e9:,.1f} GB/s"])
    out = intro + markdown_table(["device", "what", "size", "measured"], rows, "llrr") + "\n"
    ceils = model.ceilings(doc)
    for dev, c in sorted(ceils.items()):
        out += (f"\n{dev.upper()} ridge point (FP32 matrix product ÷ memory roof): "
                f"{c['peaks']['FP32'] / c['bandwidth']:.1f} FLOP per byte.\n")
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


@renderer("simd_lanes")
def simd_lanes(docs_dir: Path, specs: str) -> str:
    r = read_specs(docs_dir, specs)
    cpu = r["xeon_8480_cores"]["number"] * r["xeon_8480_fma_units"]["number"] * \
        r["avx512_fp32_lanes"]["number"]
    gpu = r["h100_sms"]["number"] * r["h100_fp32_per_sm"]["number"]
    rows = [["Intel Xeon Platinum 8480+", f"{r['xeon_8480_cores']['number']:.0f} cores",
             f"{r['xeon_8480_cores']['number']:.0f} × {r['xeon_8480_fma_units']['number']:.0f} "
             f"AVX-512 FMA units × {r['avx512_fp32_lanes']['number']:.0f} lanes", f"{cpu:,.0f}"],
            ["NVIDIA H100 / H200 SXM", f"{r['h100_sms']['number']:.0f} SMs",
             f"{r['h100_sms']['number']:.0f} × {r['h100_fp32_per_sm']['number']:.0f} FP32 units",
             f"{gpu:,.0f}"]]
    return (markdown_table(["chip", "cores", "FP32 lanes, counted the same way", "lanes"], rows,
                           "llll") + f"\n\nRatio: {gpu / cpu:.1f} ×. Sources: "
            + "; ".join(cite(r[k]) for k in ("xeon_8480_cores", "avx512_fp32_lanes", "h100_sms"))
            + ".\n")


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


@renderer("littles_law")
def littles_law(docs_dir: Path, specs: str, latencies_ns: str = "500 1000") -> str:
    """Bytes that must be in flight to stream at the H200's bandwidth: bandwidth x latency."""
    r = read_specs(docs_dir, specs)
    bw, sms = r["h200_bandwidth"]["number"], r["h100_sms"]["number"]
    warp_bytes = r["warp_size"]["number"] * 4  # one float32 load by every thread of a warp
    rows = []
    for ns in (float(x) for x in latencies_ns.split()):
        flight = bw * ns * 1e-9
        per_sm = flight / sms
        rows.append([f"{ns:g} ns", f"{flight / 1e6:.1f} MB", f"{per_sm / 1e3:.1f} KB",
                     f"{per_sm / 4:,.0f}", f"{per_sm / warp_bytes:,.0f}"])
    return (markdown_table(["memory latency", "bytes in flight (whole GPU)", "per SM",
                            "float32 loads in flight per SM", "warp-wide loads per SM"], rows,
                           "lrrrr")
            + f"\n\nAt {bw / 1e12:g} TB/s ({cite(r['h200_bandwidth'])}) over {sms:.0f} SMs "
            f"({cite(r['h100_sms'])}).\n")
