"""MkDocs hook: render tables and charts from files under docs/data/ at build time.

A page asks for a rendering with a one-line comment, outside code fences:

    <!-- render NAME key=value key="value with spaces" -->

NAME is a function registered with ``@renderer("NAME")`` in a module of the
``renderers`` package (hooks/renderers/, installed with the project). It receives the docs
folder and the key=value pairs and returns Markdown/HTML that replaces the comment: a table, a
chart, a details box. Pages own their sentences; a figure inside a sentence is a placeholder
that renders one number from a results file:

    The fastest kernel reaches {{ saxpy.share variant=cuda_c_float4 }} of the copy.

where ``saxpy.share`` is registered with ``@value("saxpy.share")`` and returns a short string
(``91.9 %``). An unknown NAME, a missing data file or a renderer error fails the build, so a
page can never show a stale or hand-typed figure in place of the measured one.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import renderers  # the project's package (pyproject.toml): uv installs it in both environments
from mkdocs.exceptions import PluginError

DIRECTIVE = re.compile(r"^<!--\s*render\s+(?P<name>[\w.-]+)(?P<args>.*?)-->\s*$")
VALUE = re.compile(r"\{\{\s*(?P<name>[\w.-]+)(?P<args>(?:\s+[\w-]+=(?:\"[^\"]*\"|[^\s}]+))*)\s*\}\}")
FENCE = re.compile(r"^\s*(```|~~~)")


def parse_args(text: str) -> dict[str, str]:
    args = {}
    for token in shlex.split(text):
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError(f"argument {token!r} is not key=value")
        args[key] = value
    return args


def render_markdown(markdown: str, docs_dir: Path, page_name: str) -> str:
    out, in_fence = [], False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else DIRECTIVE.match(line.strip())
        if not match:
            out.append(line if in_fence else render_values(line, docs_dir, page_name))
            continue
        name = match["name"]
        try:
            func = renderers.get(name)
            rendered = func(docs_dir, **parse_args(match["args"]))
            # A directive indented inside an admonition or a tab renders indented the same.
            indent = line[:len(line) - len(line.lstrip())]
            out.append("\n".join(indent + part if part else part
                                  for part in rendered.split("\n")))
        except Exception as exc:  # any failure must stop the build, with the page named
            raise PluginError(f"{page_name}: render {name}: {exc}") from exc
    return "\n".join(out) + "\n"


def render_values(line: str, docs_dir: Path, page_name: str) -> str:
    """Replace each {{ name key=value }} placeholder of a line by the one figure it names."""
    def one(match: re.Match) -> str:
        try:
            text = renderers.get_value(match["name"])(docs_dir, **parse_args(match["args"]))
        except Exception as exc:  # any failure must stop the build, with the page named
            raise PluginError(f"{page_name}: {{{{ {match['name']} }}}}: {exc}") from exc
        if not isinstance(text, str) or "\n" in text:
            raise PluginError(f"{page_name}: {{{{ {match['name']} }}}} must render one line")
        return text
    return VALUE.sub(one, line)


def on_page_markdown(markdown, page, config, files):
    return render_markdown(markdown, Path(config["docs_dir"]), page.file.src_uri)


def on_page_context(context, page, config, nav):
    # Notebook pages have no front matter: take their description from the notebook's metadata.
    if page.file.src_uri.endswith(".ipynb") and not page.meta.get("description"):
        notebook = json.loads(Path(page.file.abs_src_path).read_text())
        description = notebook.get("metadata", {}).get("description")
        if description:
            page.meta["description"] = description
    return context
