"""Text files shown as they were written (the doctor's report, GPU logs, XLA's HLO), and one
field of a data file for a sentence of a page."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from . import read_csv, renderer, value


@renderer("text_file")
def text_file(docs_dir: Path, path: str, lang: str = "text", title: str = "") -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", (docs_dir / path).read_text(errors="replace")).rstrip("\n")
    fence = "````" if "```" in text else "```"
    shown = title or (path.removeprefix("../") if path.startswith("../") else f"docs/{path}")
    return f'{fence}{lang} title="{escape(shown)}"\n{text}\n{fence}\n'


@value("csv.value")
def csv_value(docs_dir: Path, path: str, column: str) -> str:
    """The one value a column has on every row (a shared source, an as-of date)."""
    found = {r[column] for r in read_csv(docs_dir, path)}
    if len(found) != 1:
        raise ValueError(f"{path}: column {column} has {len(found)} values, not one")
    return escape(found.pop())
