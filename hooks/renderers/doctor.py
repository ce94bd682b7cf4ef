"""Text files shown as they were written (the doctor's report, GPU logs), NVIDIA's driver table,
and one field of a data file for a sentence of a page."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

from . import markdown_table, read_csv, renderer, value


@renderer("text_file")
def text_file(docs_dir: Path, path: str, lang: str = "text", title: str = "") -> str:
    """A generated text file (a report, a log, XLA's optimized HLO) as a code block."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", (docs_dir / path).read_text(errors="replace")).rstrip("\n")
    fence = "````" if "```" in text else "```"
    shown = title or (path.removeprefix("../") if path.startswith("../") else f"docs/{path}")
    return f'{fence}{lang} title="{escape(shown)}"\n{text}\n{fence}\n'


@value("json.field")
def json_field(docs_dir: Path, path: str, key: str) -> str:
    return escape(str(json.loads((docs_dir / path).read_text())[key]))


@value("csv.value")
def csv_value(docs_dir: Path, path: str, column: str) -> str:
    """The one value a column has on every row (a shared source, an as-of date)."""
    found = {r[column] for r in read_csv(docs_dir, path)}
    if len(found) != 1:
        raise ValueError(f"{path}: column {column} has {len(found)} values, not one")
    return escape(found.pop())


@renderer("cuda_driver_table")
def cuda_driver_table(docs_dir: Path, path: str, majors: str = "13,12,11") -> str:
    """NVIDIA's minimum driver per CUDA release (— where NVIDIA lists none)."""
    keep = set(majors.split(","))
    shown = [r for r in read_csv(docs_dir, path) if r["cuda_version"].split(".")[0] in keep]
    for r in shown:
        if not r.get("source", "").startswith("https://") or not r.get("as_of"):
            raise ValueError(f"{path}: row {r['toolkit']!r} lacks a source URL or an as-of date")
    return markdown_table(
        ["CUDA release", "minimum Linux x86-64 driver", "minimum Windows x86-64 driver"],
        [[r["toolkit"], f"≥ {r['linux_x86_64_min_driver']}",
          "—" if r["windows_x86_64_min_driver"] == "N/A" else f"≥ {r['windows_x86_64_min_driver']}"]
         for r in shown], align="lrr") + "\n"
