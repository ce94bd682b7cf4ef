"""Render a page's Markdown: each `<!-- render NAME k=v -->` block and `{{ name k=v }}` figure.

The MkDocs hook (hooks/render_data.py) calls `render_markdown` for every page; tests call it
on a page's source without a build. Any failure raises RenderError naming the page.

What the render step produced carries a `data-rendered="NAME"` attribute in the HTML: a block in
a `<div>`, a figure in a `<span>` (the whole code span when it sits in one; none inside a tag's
attribute or a link target, which a reader does not read). Neither changes how a page looks;
tests/test_no_typed_figures.py accepts a number inside one as rendered, not typed.
"""

from __future__ import annotations

import re
import shlex
import textwrap
from pathlib import Path

from . import get, get_value


class RenderError(Exception):
    """A placeholder or block that could not be rendered (the build stops on it)."""


DIRECTIVE = re.compile(r"^<!--\s*render\s+(?P<name>[\w.-]+)(?P<args>.*?)-->\s*$")
VALUE = re.compile(r"\{\{\s*(?P<name>[\w.-]+)(?P<args>(?:\s+[\w-]+=(?:\"[^\"]*\"|[^\s}]+))*)\s*\}\}")
FENCE = re.compile(r"^\s*(```|~~~)")
# md_in_html keeps a top-level block inside it Markdown; nested in an admonition or a tab the
# block is Markdown already, and the attribute would stay in the HTML.
MARK = '<div data-rendered="{}"{}>'
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def parse_args(text: str) -> dict[str, str]:
    tokens = shlex.split(text)
    if bad := [t for t in tokens if "=" not in t]:
        raise ValueError(f"argument {bad[0]!r} is not key=value")
    return dict(t.split("=", 1) for t in tokens)


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
            rendered = get(name)(docs_dir, **parse_args(match["args"]))
            # A directive indented inside an admonition or a tab renders indented the same.
            indent = line[:len(line) - len(line.lstrip())]
            mark = MARK.format(name, "" if indent else " markdown")
            out.append(textwrap.indent(f"{mark}\n\n{rendered}\n\n</div>", indent))
        except Exception as exc:  # any failure must stop the build, with the page named
            raise RenderError(f"{page_name}: render {name}: {exc}") from exc
    return "\n".join(out) + "\n"


def render_values(line: str, docs_dir: Path, page_name: str) -> str:
    """Replace each {{ name key=value }} placeholder of a line by the one figure it names,
    marked as rendered (see the module's docstring)."""
    def span(match: re.Match) -> str:  # a code span holding placeholders: mark it whole
        first = VALUE.search(match[0])
        return (f'<span data-rendered="{first["name"]}">{VALUE.sub(one, match[0])}</span>'
                if first else match[0])

    def marked(match: re.Match) -> str:
        before = line[:match.start()]
        if before.rfind("<") > before.rfind(">") or before.rfind("](") > before.rfind(")"):
            return one(match)  # an attribute or a link target: no element can go there
        return f'<span data-rendered="{match["name"]}">{one(match)}</span>'

    def one(match: re.Match) -> str:
        try:
            text = get_value(match["name"])(docs_dir, **parse_args(match["args"]))
        except Exception as exc:  # any failure must stop the build, with the page named
            raise RenderError(f"{page_name}: {{{{ {match['name']} }}}}: {exc}") from exc
        if not isinstance(text, str) or "\n" in text:
            raise RenderError(f"{page_name}: {{{{ {match['name']} }}}} must render one line")
        return text
    line = CODE_SPAN.sub(span, line)
    return VALUE.sub(marked, line)


RESULTS_ARG = re.compile(r"\bpath=(data/[\w.-]+\.json)\b")
INCLUDE = re.compile(r'--8<--\s+"(?P<path>snippets/[^":"]+)')


def shown_files(markdown: str) -> list[str]:
    """The snippet files a page includes (whole or in sections), in page order."""
    return list(dict.fromkeys(m["path"] for m in INCLUDE.finditer(markdown)))


def provenance(markdown: str, docs_dir: Path, page_uri: str) -> str:
    """What closes every page that shows measurements or code: for each results file the page
    renders, the GPU (or CPU), date and commit it was measured with; and each shown file as a
    download served with the site (see the hook's on_files)."""
    from bench import results  # the schema's reader
    from bench.system import changed_sources  # the check of what the run executed

    runs = []
    for rel in dict.fromkeys(RESULTS_ARG.findall(markdown)):
        if '"gpu-survival-toolkit/results/' not in (docs_dir / rel).read_text()[:200]:
            continue  # a fact table or another tool's report, not a benchmark run
        doc = results.read_results(docs_dir / rel)
        system, code = doc["system"], doc.get("code") or {}
        gpus = system.get("gpus") or []
        where = gpus[0]["name"] if gpus else system.get("host", {}).get("cpu", "CPU")
        changed = changed_sources(code, docs_dir.parent)
        since = ("; code changed since: " + ", ".join(f"`{f}`" for f in changed) if changed
                 else "; the code it ran is not recorded" if changed is None else "")
        runs.append(f"`{rel}`: {where}, {system.get('date', '?')[:10]}, commit "
                    f"`{code.get('commit', 'unknown')[:7]}`"
                    + (" (uncommitted changes)" if code.get("dirty") else "") + since)
    up = "../" * page_uri.count("/")
    files = [f"[{Path(f).name}]({up}{f})" for f in shown_files(markdown)]
    if not runs and not files:
        return ""
    lines = ['<div class="page-provenance" data-rendered="provenance" markdown>', ""]
    if runs:
        lines += ["**Measured:** " + "; ".join(runs) + ".", ""]
    if files:
        lines += ["**Download the files shown:** " + " · ".join(files), ""]
    return "\n".join(lines + ["</div>", ""])
