"""Renderers for the render_data hook: each turns a data file into Markdown/HTML.

Add a module to this package and decorate functions with ``@renderer("name")``;
every module here is imported when the hook loads.
"""

from __future__ import annotations

import base64
import importlib
import io
import json
import pkgutil
from html import escape
from pathlib import Path
from typing import Callable

_REGISTRY: dict[str, Callable[..., str]] = {}


def renderer(name: str):
    def register(func):
        if name in _REGISTRY:
            raise RuntimeError(f"renderer {name!r} registered twice")
        _REGISTRY[name] = func
        return func

    return register


def get(name: str) -> Callable[..., str]:
    if name not in _REGISTRY:
        raise KeyError(f"no renderer named {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def load_json(docs_dir: Path, path: str) -> dict:
    file = docs_dir / path
    if not file.is_file():
        raise FileNotFoundError(f"data file {path} not found under {docs_dir}")
    return json.loads(file.read_text())


def markdown_table(header: list[str], rows: list[list[object]], align: str | None = None) -> str:
    """A Markdown table; `align` is one letter per column: l, r or c."""
    align = align or "l" * len(header)
    marks = {"l": ":--", "r": "--:", "c": ":-:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def svg_figure(fig, alt: str, caption: str = "") -> str:
    """Embed a matplotlib figure as an SVG <img> (no extra request, text kept as text)."""
    import matplotlib

    matplotlib.use("Agg")  # no display at build time
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue().encode()).decode()
    cap = f"<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return (
        f'<figure class="data-chart"><img alt="{escape(alt)}" '
        f'src="data:image/svg+xml;base64,{data}">{cap}</figure>'
    )


for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")
