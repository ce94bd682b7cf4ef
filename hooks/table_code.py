"""MkDocs hook: code of several words in a table cell may wrap at its spaces, and only there.

On a wide screen a cell's long code (a call, a command, an error message) wraps so that its
table fits the column (extra.css: `code[data-wrap]`); a browser would also break a line after
a hyphen (`opencl-`, `--`), so each word is kept whole in a span of its own. Code of one word,
and all code on a phone, stays on one line.
"""

from __future__ import annotations

import re

_TABLE = re.compile(r"<table>.*?</table>", re.S)
_CODE = re.compile(r"<code>([^<]*\s[^<]*)</code>")  # plain inline code of more than one word


def _words(match: re.Match) -> str:
    text = re.sub(r"\S+", lambda w: f"<span>{w[0]}</span>", match.group(1))
    return f"<code data-wrap>{text}</code>"


def mark(html: str) -> str:
    return _TABLE.sub(lambda table: _CODE.sub(_words, table.group(0)), html)


def on_page_content(html, page, config, files):  # noqa: ARG001 - MkDocs hook signature
    return mark(html)
