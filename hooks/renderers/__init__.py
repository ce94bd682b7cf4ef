"""Renderers for the render_data hook: each turns a data file into Markdown/HTML.

A module of this package registers functions with ``@renderer("name")`` (a block: a table, a
chart) or ``@value("topic.name")`` (one figure inside a sentence: a short string); every module
here is imported with the package. Renderers read data files only: they import no teaching file
and no benchmark, and hold no sentences of a page.
"""

from __future__ import annotations

import csv
import functools
import html
import importlib
import json
import pkgutil
from pathlib import Path
from typing import Callable

_REGISTRY: dict[str, Callable[..., str]] = {}
_VALUES: dict[str, Callable[..., str]] = {}


def _register(table: dict, name: str):
    def register(func):
        if name in table:
            raise RuntimeError(f"{name!r} registered twice")
        table[name] = func
        return func

    return register


def _lookup(table: dict, kind: str, name: str) -> Callable[..., str]:
    if name not in table:
        raise KeyError(f"no {kind} named {name!r}; known: {', '.join(sorted(table))}")
    return table[name]


renderer = functools.partial(_register, _REGISTRY)  # @renderer("name"): a block
value = functools.partial(_register, _VALUES)  # @value("topic.name"): one figure, {{ topic.name k=v }}
get = functools.partial(_lookup, _REGISTRY, "renderer")
get_value = functools.partial(_lookup, _VALUES, "value")


def values() -> list[str]:
    """Every registered figure name."""
    return sorted(_VALUES)


def data_file(docs_dir: Path, path: str) -> Path:
    file = docs_dir / path
    if not file.is_file():
        raise FileNotFoundError(f"data file {path} not found under {docs_dir}")
    return file


def load_json(docs_dir: Path, path: str) -> dict:
    return json.loads(data_file(docs_dir, path).read_text())


def read_csv(docs_dir: Path, path: str) -> list[dict]:
    """The rows of a CSV file; lines starting with # (its provenance) are skipped."""
    with data_file(docs_dir, path).open(newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def pairs(text: str) -> dict[str, str]:
    """A directive's "key=words;key=words" argument (a page's names for a file's keys), in order."""
    return dict(item.split("=", 1) for item in text.split(";"))


def markdown_table(header: list[str], rows: list[list[object]], align: str | None = None) -> str:
    """A Markdown table; `align` is one letter per column: l, r or c."""
    marks = {"l": ":--", "r": "--:", "c": ":-:"}
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(marks[a] for a in align or "l" * len(header)) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def long_name(name: str, after: str) -> str:
    """`name` (a kernel's or a profiler metric's) as inline code for a table cell that may
    break after each character of `after` ("_", ".") where the column is too narrow, and
    nowhere else: a 44-character kernel name kept a table wider than its column at 1280 px."""
    # Markdown still reads emphasis and code marks inside inline HTML: those characters go as
    # character references ("_ZN17cutlass__5x" rendered in italics).
    marks = {"_": "&#95;", "*": "&#42;", "`": "&#96;", "|": "&#124;"}
    # A break after a run of them ("cutlass__"), and none after a leading one ("_ZN").
    breaks = {i for i, c in enumerate(name[:-1]) if c in after and name[i + 1] not in after
              and name[:i].strip(after)}
    text = "".join(marks.get(c, html.escape(c)) + ("<wbr>" if i in breaks else "")
                   for i, c in enumerate(name))
    return f"<code data-wrap>{text}</code>"  # wraps on a wide screen (extra.css)


from .charts import svg_figure  # noqa: E402,F401 - the one chart style

for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")
