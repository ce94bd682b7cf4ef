"""The ML-accelerators section: the GPU-over-CPU ratios of the spec file. Its fact tables,
timings and single figures are `table` directives and `{{ cell }}`s (table.py)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from . import markdown_table, read_csv, renderer


@renderer("cpu_gap")
def cpu_gap(docs_dir: Path, path: str, gpu: str, cpus: str) -> str:
    """How many times a GPU's dense BF16 and memory bandwidth exceed each named CPU's,
    computed from the spec file (so the page never types the ratio)."""
    rows = {r["accelerator"]: r for r in read_csv(docs_dir, path)}
    g = rows[gpu]
    out = [[escape(name), f"{float(g['bf16_tflops']) / float(rows[name]['bf16_tflops']):.0f}×",
            f"{float(g['bandwidth_gbs']) / float(rows[name]['bandwidth_gbs']):.0f}×",
            "AMX tiles" if "AMX" in rows[name]["notes"] else "AVX-512 only"] for name in cpus.split("|")]
    return markdown_table([f"{escape(gpu)} over", "BF16 TFLOPS", "bandwidth", "matrix unit"],
                          out, align="lrrl") + "\n"
