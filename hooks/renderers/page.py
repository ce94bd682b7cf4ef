"""Render a page's Markdown: each `<!-- render NAME ... -->` block and `{{ name ... }}` figure.

The MkDocs hook (hooks/render_data.py) calls `render_markdown` for every page; tests call it
on a page's source without a build (`render_page` splits the front matter first). Any failure
raises RenderError, one line naming the page and the placeholder.

A page binds its data files once, in its front matter: `data: matmul-h100.json` (under
docs/data/), or several by name, `data: {m: matmul-h100.json, tune: matmul-tune-h100.json}`,
the first being the page's default. A renderer's file argument (FILE_ARGS) takes a bound name
(`path=tune`) or a path under docs/ (a value with a `/`); left out, it is the file bound under
its own name (`specs: ...`), and `path` the page's default.
A page may name its topic too, `topic: matmul`: a figure's bare name is then the topic's
first (`{{ share x }}` is `{{ matmul.share x }}`), else a name of no topic (`cell`, `field`).
Arguments are `key=value` or, in the order the function names them, bare words:
`{{ matmul.share cuda_c/warptile }}`. An unknown name, argument, field or row raises.

What the render step produced carries a `data-rendered="NAME"` attribute in the HTML: a block in
a `<div>`, a figure in a `<span>` (the whole code span when it sits in one; none inside a tag's
attribute or a link target, which a reader does not read). Neither changes how a page looks;
tests/test_no_typed_figures.py accepts a number inside one as rendered, not typed.
"""

from __future__ import annotations

import inspect
import re
import shlex
import textwrap
from pathlib import Path

from . import get, get_value, values


class RenderError(Exception):
    """A placeholder or block that could not be rendered (the build stops on it)."""


DIRECTIVE = re.compile(r"^<!--\s*render\s+(?P<name>[\w.-]+)(?P<args>.*?)-->\s*$")
VALUE = re.compile(r"\{\{\s*(?P<name>[\w.-]+)(?P<args>(?:\s+(?:[\w-]+=)?(?:\"[^\"]*\"|[^\s}]+))*)\s*\}\}")
FENCE = re.compile(r"^\s*(```|~~~)")
# md_in_html keeps a top-level block inside it Markdown; nested in an admonition or a tab the
# block is Markdown already, and the attribute would stay in the HTML.
MARK = '<div data-rendered="{}"{}>'
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
FILE_ARGS = ("path", "confirm", "specs", "loops", "ncu", "stalls", "build")  # arguments that name a file


def bindings(data: str | dict | None) -> dict[str, str]:
    """A page's front-matter `data:` as {name: path under docs/}; a lone file's name is ""."""
    if data is None:
        return {}
    named = {"": data} if isinstance(data, str) else data
    if not isinstance(named, dict) or not all(isinstance(v, str) for v in named.values()):
        raise RenderError(f"front matter data: {data!r} is neither a file nor {{name: file}}")
    return {k: f"data/{v}" for k, v in named.items()}


def full_name(name: str, topic: str | None) -> str:
    """The figure a placeholder names: with a page topic, a bare name is the topic's first."""
    return f"{topic}.{name}" if topic and "." not in name and f"{topic}.{name}" in values() else name


def value_of(name: str, topic: str | None):
    return get_value(full_name(name, topic))


def parse_args(text: str) -> tuple[list[str], dict[str, str]]:
    """Bare words (in order) and key=value pairs of a placeholder."""
    tokens = shlex.split(text)
    return ([t for t in tokens if "=" not in t],
            dict(t.split("=", 1) for t in tokens if "=" in t))


def call(func, docs_dir: Path, args: str, bound: dict[str, str]) -> str:
    """`func` called with a placeholder's arguments, its file arguments resolved (module doc)."""
    words, kwargs = parse_args(args)
    for key in FILE_ARGS:
        if key in kwargs and "/" not in kwargs[key]:
            if kwargs[key] not in bound:
                raise ValueError(f"{key}={kwargs[key]}: the page binds no data file of that "
                                 f"name (front matter data: {sorted(bound) or 'none'})")
            kwargs[key] = bound[kwargs[key]]
    names = list(inspect.signature(func).parameters)
    for key in (k for k in FILE_ARGS if k in names and k not in kwargs and names.index(k) > len(words)):
        if key in bound or (key == "path" and bound):  # the file bound by its name, or the default
            kwargs[key] = bound.get(key, next(iter(bound.values())))
    return func(docs_dir, *words, **kwargs)


def failed(page_name: str, placeholder: str, exc: Exception) -> RenderError:
    """One line: the page, the placeholder as written, what went wrong."""
    what = " ".join(str(exc).split()) or type(exc).__name__
    return RenderError(f"{page_name}: {' '.join(placeholder.split())}: {type(exc).__name__}: {what}")


def render_page(source: str, docs_dir: Path, page_name: str) -> str:
    """A page's source (front matter and Markdown) rendered, outside MkDocs."""
    from mkdocs.utils.meta import get_data

    markdown, meta = get_data(source)
    return render_markdown(markdown, docs_dir, page_name, meta.get("data"), meta.get("topic"))


def render_markdown(markdown: str, docs_dir: Path, page_name: str,
                    data: str | dict | None = None, topic: str | None = None) -> str:
    """`data`, `topic`: the page's front matter (see the module's docstring)."""
    bound = bindings(data)
    if topic is not None and not any(n.startswith(f"{topic}.") for n in values()):
        raise RenderError(f"{page_name}: front matter topic: {topic!r} names no figures")
    out, in_fence = [], False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else DIRECTIVE.match(line.strip())
        if not match:
            out.append(line if in_fence else render_values(line, docs_dir, page_name, bound, topic))
            continue
        name = match["name"]
        try:
            rendered = call(get(name), docs_dir, match["args"], bound)
            # A directive indented inside an admonition or a tab renders indented the same.
            indent = line[:len(line) - len(line.lstrip())]
            mark = MARK.format(name, "" if indent else " markdown")
            out.append(textwrap.indent(f"{mark}\n\n{rendered}\n\n</div>", indent))
        except Exception as exc:  # any failure must stop the build, with the page named
            raise failed(page_name, line.strip(), exc) from exc
    return "\n".join(out) + "\n"


def render_values(line: str, docs_dir: Path, page_name: str, bound: dict[str, str],
                  topic: str | None = None) -> str:
    """Replace each {{ name key=value }} placeholder of a line by the one figure it names,
    marked as rendered (see the module's docstring)."""
    def span(match: re.Match) -> str:  # a code span holding placeholders: mark it whole
        first = VALUE.search(match[0])
        return (f'<span data-rendered="{full_name(first["name"], topic)}">{VALUE.sub(one, match[0])}</span>'
                if first else match[0])

    def marked(match: re.Match) -> str:
        before = line[:match.start()]
        if before.rfind("<") > before.rfind(">") or before.rfind("](") > before.rfind(")"):
            return one(match)  # an attribute or a link target: no element can go there
        return f'<span data-rendered="{full_name(match["name"], topic)}">{one(match)}</span>'

    def one(match: re.Match) -> str:
        try:
            text = call(value_of(match["name"], topic), docs_dir, match["args"], bound)
            if not isinstance(text, str) or "\n" in text or not text.strip():
                raise ValueError(f"rendered {text!r}, not one line of text")
        except Exception as exc:  # any failure must stop the build, with the page named
            raise failed(page_name, match[0], exc) from exc
        return text
    line = CODE_SPAN.sub(span, line)
    line = VALUE.sub(marked, line)
    if "{{" in line:  # a placeholder the pattern could not read is no less a mistake
        raise failed(page_name, line[line.index("{{"):][:80], ValueError("not a placeholder"))
    return line


INCLUDE = re.compile(r'--8<--\s+"(?P<path>snippets/[^":"]+)')


def shown_files(markdown: str) -> list[str]:
    """The snippet files a page includes (whole or in sections), in page order."""
    return list(dict.fromkeys(m["path"] for m in INCLUDE.finditer(markdown)))


def rendered_files(markdown: str, data: str | dict | None = None,
                   topic: str | None = None) -> list[str]:
    """The files a page's placeholders render as `path` (named or bound), in page order."""
    bound, found, in_fence = bindings(data), [], False
    for line in markdown.splitlines():
        in_fence ^= bool(FENCE.match(line))
        directive = None if in_fence else DIRECTIVE.match(line.strip())
        for lookup, m in ([(get, directive)] if directive else
                          [] if in_fence else [(value_of, v) for v in VALUE.finditer(line)]):
            words, kwargs = parse_args(m["args"])
            func = lookup(m["name"], topic) if lookup is value_of else lookup(m["name"])
            names = list(inspect.signature(func).parameters)
            path = kwargs.get("path") or (bound and "path" in names and names.index("path") > len(words)
                                          and next(iter(bound.values())))
            found.append(bound.get(path, path) if path else None)
    return [f for f in dict.fromkeys(found) if f and f.endswith(".json")]


def provenance(markdown: str, docs_dir: Path, page_uri: str, data: str | dict | None = None,
               topic: str | None = None) -> str:
    """What closes every page that shows measurements or code: for each results file the page
    renders, the GPU (or CPU), date and commit it was measured with; and each shown file as a
    download served with the site (see the hook's on_files)."""
    from bench import results  # the schema's reader
    from bench.system import changed_sources  # the check of what the run executed

    runs = []
    for rel in rendered_files(markdown, data, topic):
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
