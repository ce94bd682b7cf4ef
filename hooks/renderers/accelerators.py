"""Renderers for the ML-accelerators section: sourced fact tables (CSV) and measured timings (JSON).

Pages call them with one-line comments, for example
``<!-- render accel_specs path=data/accelerator-specs.csv part=memory -->``.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from urllib.parse import urlparse

from . import data_file, load_json, markdown_table, read_csv, renderer, value
from .run_details import describe_run, label

URL = re.compile(r"https?://[^\s;,)]+")
AS_OF = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def sourced(docs_dir: Path, path: str, required: tuple[str, ...]) -> list[dict]:
    """Rows of a sourced CSV; fails (and so fails the build) if a row lacks a source or date."""
    rows = read_csv(docs_dir, path)
    if not rows:
        raise ValueError(f"{path} has no rows")
    missing = [c for c in required if c not in rows[0]]
    if missing:
        raise ValueError(f"{path} lacks columns {missing}")
    for i, row in enumerate(rows, start=2):
        if not row["source"].strip():
            raise ValueError(f"{path} line {i}: no source")
        if not AS_OF.match(row["as_of"].strip()):
            raise ValueError(f"{path} line {i}: as_of {row['as_of']!r} is not YYYY[-MM[-DD]]")
    return rows


def link_label(url: str) -> str:
    """A link text that tells sources apart: the site plus the last part of the path
    (`nvidia.com/h200`, `docs.cloud.google.com/v5e`), owner/repo for GitHub."""
    parsed = urlparse(url)
    host = parsed.netloc.removeprefix("www.")
    parts = [p for p in parsed.path.split("/") if p]
    if host in ("github.com", "raw.githubusercontent.com") and len(parts) >= 2:
        return "/".join(parts[:2])
    strip = lambda t: re.sub(r"\.(html?|rst|txt|md|aspx)$", "", t)  # noqa: E731
    tail = strip(parts[-1]) if parts else ""
    if tail in ("", "index", "summary", "amp", "specifications") and len(parts) > 1:
        tail = strip(parts[-2])
    return f"{host}/{tail}" if tail else host


def source_links(text: str) -> str:
    """Each URL in a source cell as a short link named after its page; other text kept."""
    parts = []
    for chunk in text.split(" ; "):
        m = URL.search(chunk)
        if not m:
            parts.append(escape(chunk.strip()))
            continue
        url = m.group(0)
        label = chunk[:m.start()].strip().rstrip(":")
        rest = chunk[m.end():].strip()
        parts.append((f"{escape(label)}: " if label else "") + f"[{escape(link_label(url))}]({url})"
                     + (f" {escape(rest)}" if rest else ""))
    return "; ".join(parts)


def number(value: str, unconfirmed: bool) -> str:
    if not value.strip():
        return "–"
    return f"{value}\\*" if unconfirmed else value


def nowrap(text: str) -> str:
    """Keep a short identifier on one line in a table cell (long names may wrap)."""
    if len(text) > 18:
        return escape(text)
    return f'<span style="white-space: nowrap">{escape(text)}</span>'


SPEC_COLS = ("accelerator", "kind", "memory_gb", "memory_type", "bandwidth_gbs", "link_gbs", "link",
             "fp32_tflops", "bf16_tflops", "fp8_tflops", "fp4_tflops", "power_w", "source",
             "as_of", "unconfirmed", "notes")


SPEC_TABLES = {  # part -> (header, align, the cells of a row after its name)
    "memory": (["accelerator", "memory (GB)", "bandwidth (GB/s)", "scale-up link (GB/s per chip)"],
               "lrrl", lambda r, num: [f"{num('memory_gb')} {escape(r['memory_type'])}",
                                       num("bandwidth_gbs"), escape(r["link"]) + (
                                           f", {num('link_gbs')}" if r["link_gbs"].strip() else "")]),
    "compute": (["accelerator", "FP32 (vector)", "BF16", "FP8", "FP4"], "lrrrr",
                lambda r, num: [num(c) for c in ("fp32_tflops", "bf16_tflops", "fp8_tflops",
                                                 "fp4_tflops")]),
    "power": (["accelerator", "kind", "power (W)", "notes"], "llrl",
              lambda r, num: [escape(r["kind"]), num("power_w"), escape(r["notes"])]),
}


@renderer("accel_specs")
def accel_specs(docs_dir: Path, path: str, part: str) -> str:
    """One narrow table of the spec file (readable at phone width), each name footnoted."""
    header, align, cells = SPEC_TABLES[part]
    rows = []
    for i, r in enumerate(sourced(docs_dir, path, SPEC_COLS), start=1):
        unc = {u.strip() for u in r["unconfirmed"].split(";") if u.strip()}
        rows.append([f"**{nowrap(r['accelerator'])}**[^spec-{i}]",
                     *cells(r, lambda col: number(r[col], col in unc))])
    return markdown_table(header, rows, align=align) + "\n"


@renderer("accel_spec_sources")
def accel_spec_sources(docs_dir: Path, path: str) -> str:
    return "\n".join(f"[^spec-{i}]: {escape(r['accelerator'])}: {source_links(r['source'])} "
                     f"(as of {r['as_of']})"
                     for i, r in enumerate(sourced(docs_dir, path, SPEC_COLS), start=1)) + "\n"


@renderer("cpu_gap")
def cpu_gap(docs_dir: Path, path: str, gpu: str, cpus: str) -> str:
    """How many times a GPU's dense BF16 and memory bandwidth exceed each named CPU's,
    computed from the spec file (so the page never types the ratio)."""
    rows = {r["accelerator"]: r for r in sourced(docs_dir, path, SPEC_COLS)}
    g = rows[gpu]
    out = []
    for name in cpus.split("|"):
        c = rows[name]
        out.append([nowrap(name), f"{float(g['bf16_tflops']) / float(c['bf16_tflops']):.0f}×",
                    f"{float(g['bandwidth_gbs']) / float(c['bandwidth_gbs']):.0f}×",
                    "AMX tiles" if "AMX" in c["notes"] else "AVX-512 only"])
    return markdown_table([f"{escape(gpu)} over", "BF16 TFLOPS", "bandwidth", "matrix unit"],
                          out, align="lrrl") + "\n"


def footnoted_table(docs_dir: Path, path: str, prefix: str, header: list[str],
                    columns: tuple[str, ...], row, note) -> str:
    """A sourced CSV as a table whose rows carry a footnote: `row(r, mark)` gives a row's cells
    (mark: its footnote reference), `note(r)` the footnote's text before its source."""
    out, foot = [], []
    for i, r in enumerate(sourced(docs_dir, path, (*columns, "source", "as_of")), start=1):
        out.append(row(r, f"[^{prefix}-{i}]"))
        text = note(r)
        if text and not text.endswith("."):
            text += "."
        foot.append(f"[^{prefix}-{i}]: " + (f"{text} " if text else "")
                    + f"Source: {source_links(r['source'])} (as of {r['as_of']}).")
    return markdown_table(header, out) + "\n\n" + "\n".join(foot) + "\n"


@renderer("ml_compilers")
def ml_compilers(docs_dir: Path, path: str) -> str:
    """Three columns (name and layer, what it does, status); detail and sources as footnotes."""
    return footnoted_table(
        docs_dir, path, "cc", ["compiler", "what it does", "status"],
        ("name", "layer", "what_it_does", "status", "status_detail"),
        lambda r, mark: [f"**{escape(r['name'])}**<br>{escape(r['layer'])}", escape(r["what_it_does"]),
                         (r["status"] if r["status"] == "maintained" else f"**{escape(r['status'])}**") + mark],
        lambda r: escape(r["status_detail"]))


@renderer("llm_serving")
def llm_serving(docs_dir: Path, path: str) -> str:
    return footnoted_table(
        docs_dir, path, "srv", ["server", "what it is for", "how it gets there"],
        ("name", "what_it_is_for", "how", "status"),
        lambda r, mark: [f"**{escape(r['name'])}**{mark}", escape(r["what_it_is_for"]), escape(r["how"])],
        lambda r: f"Status: {escape(r['status'])}.")


@renderer("cloud_services")
def cloud_services(docs_dir: Path, path: str) -> str:
    return footnoted_table(
        docs_dir, path, "cloud", ["", "AWS SageMaker AI", "Google Vertex AI", "Azure Machine Learning"],
        ("capability", "sagemaker", "vertex_ai", "azure_ml"),
        lambda r, mark: [f"**{escape(r['capability'])}**{mark}",
                         *(escape(r[c]) for c in ("sagemaker", "vertex_ai", "azure_ml"))],
        lambda r: "")


ELEMENTWISE = ("add", "subtract", "multiply", "divide", "tanh", "exponential", "log", "maximum",
               "minimum", "negate", "sqrt", "rsqrt", "power", "abs", "logistic", "erf")
HLO_OP = re.compile(r"=\s*\S+\s+(?P<op>[a-z-]+)\(")


def hlo_counts(text: str) -> tuple[dict[str, int], list[str]]:
    """Element-wise operations inside the fused computations, and the fusion kinds, of an
    optimized-HLO dump."""
    counts: dict[str, int] = {}
    inside = False
    for line in text.splitlines():
        if line.startswith("%fused") or line.startswith("fused_"):
            inside = True
        elif line.startswith("}"):
            inside = False
        elif inside and (m := HLO_OP.search(line)) and m["op"] in ELEMENTWISE:
            counts[m["op"]] = counts.get(m["op"], 0) + 1
    kinds = re.findall(r"\bfusion\(.*?kind=(\w+)", text)
    return counts, kinds


@value("compilers.hlo")
def hlo_fact(docs_dir: Path, path: str, fact: str = "total") -> str:
    """A count from a committed HLO file: total (element-wise operations inside the fusions),
    ops ("6 multiply, 3 add, ..."), fusions, kinds (of fusion)."""
    counts, kinds = hlo_counts(data_file(docs_dir, path).read_text())
    if not counts or not kinds:
        raise ValueError(f"{path}: no fused element-wise operations found")
    return {"total": str(sum(counts.values())), "fusions": str(len(kinds)),
            "kinds": ", ".join(sorted(set(kinds))),
            "ops": ", ".join(f"{n} {op}" for op, n in sorted(counts.items(), key=lambda kv: -kv[1]))
            }[fact]


def fmt_ms(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    ms = seconds * 1e3
    return f"{ms:,.3f}" if ms < 10 else f"{ms:,.1f}"


def size_of(m: dict) -> str:
    p = m.get("params", {})
    if "size" in p:
        return f"{p['size']}: {p['width']}&nbsp;×&nbsp;{p['batch']}"
    if "n" in p:
        return f"{p['n']:,} elements"
    return ""


@renderer("accel_timings")
def accel_timings(docs_dir: Path, path: str) -> str:
    """First call (tracing + compilation) next to the warm median, per variant and size. Reads
    both the runner's files (first call in work.first_call_s; training calls of several steps,
    shown per step) and the older compile_first rows."""
    doc = load_json(docs_dir, path)
    groups: dict[tuple, dict] = {}
    for m in doc["measurements"]:
        key = (m["case"], m["variant"], m["device"], size_of(m))
        groups.setdefault(key, {})[m["phase"]] = m
    rows = []
    for (case, variant, device, size), phases in groups.items():
        warm = phases.get("end_to_end") or phases.get("kernel")
        if warm is None:
            continue
        first = phases.get("compile_first")
        first_s = first["median_s"] if first else (warm.get("work") or {}).get("first_call_s")
        steps = warm.get("params", {}).get("steps_per_call", 1)
        rows.append([label(doc, variant), size, device, fmt_ms(first_s),
                     fmt_ms(warm["median_s"] / steps),
                     f"{warm['spread']:.2f}" if warm.get("spread") else "–"])
    table = markdown_table(["variant", "size", "device", "first call (ms)", "warm, median (ms)",
                            "max/min"], rows, align="lllrrr")
    return table + "\n\n" + describe_run(doc) + "\n"


@value("frameworks.steps")
def steps_per_call(docs_dir: Path, path: str) -> str:
    """The training steps in one timed call of a results file (the warm column is per step)."""
    return str(max(m.get("params", {}).get("steps_per_call", 1)
                   for m in load_json(docs_dir, path)["measurements"]))


@renderer("opencl_timings")
def opencl_timings(docs_dir: Path, path: str) -> str:
    doc = load_json(docs_dir, path)
    rows = []
    for m in doc["measurements"]:
        p = m["params"]
        gbs = m["bytes"] / m["median_s"] / 1e9 if m.get("bytes") and m["median_s"] > 0 else None
        rows.append([m["case"], escape(p["device_name"]), m["phase"].replace("_", "-"),
                     f"{p['n']:,}", fmt_ms(m["median_s"]), f"{gbs:,.1f}" if gbs else "–",
                     str(m["error"]["value"])])
    table = markdown_table(["kernel", "OpenCL device", "timed", "elements", "median (ms)",
                            "GB/s", "wrong elements"], rows, align="lllrrrr")
    return table + "\n\n" + describe_run(doc) + "\n"
