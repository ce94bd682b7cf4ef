"""Text files shown as they were written (the doctor's report, GPU logs, XLA's HLO), and the
values of a data file's column for a sentence of a page."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from . import renderer, value
from .table import pick


@renderer("text_file")
def text_file(docs_dir: Path, path: str, lang: str = "text", title: str = "") -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", (docs_dir / path).read_text(errors="replace")).rstrip("\n")
    fence = "````" if "```" in text else "```"
    shown = title or (path.removeprefix("../") if path.startswith("../") else f"docs/{path}")
    return f'{fence}{lang} title="{escape(shown)}"\n{text}\n{fence}\n'


@value("csv.value")
def csv_value(docs_dir: Path, path: str, column: str, where: str = "") -> str:
    """The values a column has on the rows `where` keeps, each once, sorted: a source or an
    as-of date all rows share, or the sources of some rows."""
    return ", ".join(sorted({r[column] for r in pick(docs_dir, path, where)[0]}))
