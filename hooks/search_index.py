"""MkDocs hook: keep diagram source and long listings out of the search index.

Material's search indexes every text node of a page, so a search for a term used in a diagram
or a 200-line listing previewed raw Mermaid or a whole file, and a page that merely lists a term
in code ranked with the page about it. Material's search plugin skips elements marked
`data-search-exclude`; this marks every Mermaid block and every `<pre>` (code block, notebook
cell or output) longer than MAX_INDEXED_LINES lines. Short code (a command, a one-line error
message) and code titles stay searchable.
"""

from __future__ import annotations

import re

MAX_INDEXED_LINES = 12

_MERMAID = re.compile(r'<(pre|div) class="mermaid"')
_PRE = re.compile(r"<pre(?=[\s>])([^>]*)>(.*?)</pre>", re.S)


def _mark_long(match: re.Match) -> str:
    attrs, body = match.group(1), match.group(2)
    if body.count("\n") <= MAX_INDEXED_LINES or "data-search-exclude" in attrs:
        return match.group(0)
    return f"<pre{attrs} data-search-exclude>{body}</pre>"


def mark(html: str) -> str:
    html = _MERMAID.sub(lambda m: f'<{m.group(1)} class="mermaid" data-search-exclude', html)
    return _PRE.sub(_mark_long, html)


def on_page_content(html, page, config, files):  # noqa: ARG001 - MkDocs hook signature
    return mark(html)
