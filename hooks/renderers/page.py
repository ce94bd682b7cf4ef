"""Render a page's Markdown: each `<!-- render NAME k=v -->` block and `{{ name k=v }}` figure.

The MkDocs hook (hooks/render_data.py) calls `render_markdown` for every page; tests call it
on a page's source without a build. Any failure raises RenderError naming the page.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from . import get, get_value


class RenderError(Exception):
    """A placeholder or block that could not be rendered (the build stops on it)."""


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
            func = get(name)
            rendered = func(docs_dir, **parse_args(match["args"]))
            # A directive indented inside an admonition or a tab renders indented the same.
            indent = line[:len(line) - len(line.lstrip())]
            out.append("\n".join(indent + part if part else part
                                  for part in rendered.split("\n")))
        except Exception as exc:  # any failure must stop the build, with the page named
            raise RenderError(f"{page_name}: render {name}: {exc}") from exc
    return "\n".join(out) + "\n"


def render_values(line: str, docs_dir: Path, page_name: str) -> str:
    """Replace each {{ name key=value }} placeholder of a line by the one figure it names."""
    def one(match: re.Match) -> str:
        try:
            text = get_value(match["name"])(docs_dir, **parse_args(match["args"]))
        except Exception as exc:  # any failure must stop the build, with the page named
            raise RenderError(f"{page_name}: {{{{ {match['name']} }}}}: {exc}") from exc
        if not isinstance(text, str) or "\n" in text:
            raise RenderError(f"{page_name}: {{{{ {match['name']} }}}} must render one line")
        return text
    return VALUE.sub(one, line)


