"""No number on a page that nobody can check: the typed-figure guard, inverted.

Every number a reader reads on a rendered page must be one of:

1. **rendered**: produced by the render step, which marks its output (`renderers.page` puts a
   `{{ name }}` figure in `<span data-rendered>` and a `<!-- render -->` block in
   `<div data-rendered>`); a notebook cell whose outputs are re-derived from the results file by
   the notebook test carries the tag `rendered` (nbconvert's class `celltag_rendered`);
2. **cited**: in a sentence (or a table row) with a footnote reference after it (a footnote cites
   what comes before it, not a figure later in the sentence) or with a linked source and
   its date ("([NVIDIA's list](https://...), as of 2026-12-01)"), or in a footnote that links its
   source (an address, a page or data file of this site, an arXiv or DOI identifier);
3. **allowed**: covered by one of the few patterns in ALLOW below, each a kind of number that is
   not a measurement (a year, a version, a size, ...).

Anything else fails, naming the page, the number and its sentence. test_every_built_page_is_guarded
reads the built site (`mkdocs build`, or GUARD_BUILT_SITE=<a built site> to reuse one): each
page's article, the notebook page, alt and title text, every output fence (any language that is
not a listing), figures with units in listings' comments, and the page's description. Approximate words for a
quantity ("nine tenths", "a few hundred times") count as numbers too.

What is read: prose, headings, tables, lists, admonitions, diagrams (Mermaid), footnotes, the
text of output blocks (```` ```text ```` and plain fences, such as the shown output under
`<!--pytest-codeblocks:expected-output-->` of a command that is skipped on CI, a GPU command) and
notebook outputs. An output under `expected-output` whose command runs on every CI run is compared
with what the command prints, so a typed figure there fails that test; it is not read here.
What is not read either: source listings
(fences in a programming or shell language, the included snippet files, notebook code cells).
Their numbers are the program (sizes, launch shapes, constants the reader runs and can change),
not claims about what a run measured; the snippet tests check the programs. Inline code is a
flag or an identifier; only a figure with a unit inside it (`3.4 ms`) is read.

How pages are read: each page is rendered as `mkdocs build` renders it, without the theme: the
hook's own functions (`render_markdown`, `provenance`) and Python-Markdown with mkdocs.yml's
extensions; a notebook's cells from its JSON, shown as mkdocs-jupyter shows them. That costs a
few seconds, where a full build costs half a minute (GUARD_BUILT_SITE=<a built site> runs
test_a_full_build_reads_the_same, which checks that both read alike). One page, from the
repository root:

    .venv/bin/python tests/test_no_typed_figures.py docs/kernels/matmul.md
    .venv/bin/python -m pytest tests/test_no_typed_figures.py -k matmul

Numbers that were on the pages when this guard was switched on and cannot be fixed from the page's
own text are listed in tests/fixtures/typed-figures-debt.txt, each with why it stays (see DEBT
below); `--debt` prints a page's lines.
"""

from __future__ import annotations

import contextlib
import functools
import html
import json
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([*DOCS.rglob("*.md"), *DOCS.rglob("*.ipynb")])
FOOTNOTE = "\ue000"  # stands for a footnote reference in a block's text
LINK = "\ue001"  # stands for a link in a block's text
AS_OF = re.compile(r"\b(?:as of|read|retrieved|accessed)\s+(?:\w+\s+)?(?:19|20)\d\d\b|\b(?:19|20)\d\d-\d\d\b")

# A number: digits not glued to a name (H200, sm_90, float4 and x86-64 are names), with an
# optional sign, currency, thousands separators and decimals.
NUMBER = re.compile(r"(?<![\w.^:])(?<!\w-)[$€£]?[-+−]?\d+(?:[,\u202f]\d{3})*(?:\.\d+)?(?:[eE][-+−]?\d+)?")
WORDS = ("two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
         "sixty|seventy|eighty|ninety|hundreds?|thousands?|dozens?|tens|a few|several|a couple")
APPROX = re.compile(rf"\b(?:{WORDS})(?:[\s-]+(?:of\s+)?(?:hundred|thousand|million)s?)*(?:\s+of)?"
                    r"[\s-]*(?:times\s+(?:as|more|less|faster|slower|larger|smaller|fewer|higher|lower|the)\b"
                    r"|-?fold\b|tenths\b|quarters\b|per\s?cent\b|orders? of magnitude)"
                    r"|\ban order of magnitude\b"
                    # digit-free amounts: half a million, nearly a thousand, twice as fast
                    r"|\b(?:half|a|one|nearly|almost|about|over|under|some)\s+(?:a\s+)?(?:hundred|thousand|million|billion)\b"
                    r"|\b(?:twice|thrice|double|triple|quadruple|half)\s+(?:as|the|that|its|their)\b", re.I)
# In inline code only a figure with a unit is read.
UNIT_FIGURE = re.compile(r"\d(?:[\d.,]*)\s?(?:[nµμum]?s|[kMGTP]i?B/s|[kMGTP]?FLOP/?s|%|×)(?!\w)")

# Numbers that are not measurements. Each pattern covers the number and its context; keep the
# list short: a measurement never belongs here (render it or cite it).
SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹"
ALLOW = [
    # a year or an ISO date (as-of dates, release years)
    r"\b(?:19|20)\d\d(?:-\d\d){0,2}\b",
    # a version: of named software or hardware generations, or any a.b.c
    r"\b(?:CUDA|CUDA Toolkit|Python|NumPy|numpy|Numba|numba|numba-cuda|CuPy|PyTorch|torch|JAX|jax|nvcc|"
    r"[Bb]ranch|branches|[Dd]river|since|"
    r"TensorFlow|Keras|keras|Triton|ROCm|OpenCL|SYCL|PTX|ISA|driver|drivers|R|Ubuntu|Debian|MkDocs|"
    r"Material|PCIe|NVLink|Llama|version|versions|Update|LLVM|GCC|gcc|C\+\+|XLA|cuDNN|cuBLAS|NCCL|"
    r"Mermaid|Gen|HBM|HIP|Vulkan|Metal|JDK|Node|IEEE|sm)\s+(?:\d+(?:\.\d+|\.x)*(?:,\s*|\s*(?:and|or|to)\s+"
    r"|/|\s+Update\s+|\s+)?)+",
    r"\bv?\d+\.\d+\.\d+(?:\.\d+)?\b",
    # a size or shape: 3x3, 1024 × 1536, 64 × 64 × 3, 2^28, 2²⁸, 4096³ (an input, not a result)
    rf"(?<![\d.])\d[\d,]*\s?(?:[x×]|by)\s?\d[\d,]*(?:\s?[x×]\s?\d[\d,]*)*(?![\d{SUPERSCRIPT}]|\.\d)",
    r"(?<![\d.])\d+\s?[x×]\s?[A-Z]\b|\b[A-Z]\s?[x×]\s?\d+\b",  # a shape with a letter: a 64×N tile
    # a count of things (an input or a size, not a rate): 1,000,003 elements, 1000 iterations
    r"\b\d{1,3}(?:,\d{3})*(?:\d+)?\s(?:elements|points|iterations|pixels|threads|blocks|steps|epochs|"
    r"images|photos|files|tokens|users|layers|lanes|registers|SMs|cores|vCPUs|chips|GPUs|samples|"
    r"batches|parameters|neurons|processes|runs|repeats|calls|sequences|rows|columns)\b"
    r"(?!\s+(?:a|per|each|every)\s+(?:second|minute|hour|step|call)\b)"
    r"(?!/s|\s+per\s+(?:s|sec|second)\b)",
    # the sizes a page runs its code at: N = 6, 1,000,003 and 2²⁸
    r"\bN\s*=\s*(?:[\d⁰¹²³⁴⁵⁶⁷⁸⁹]+(?:,\d{3})*(?:\s*\([\d,]+\))?(?:,\s*|\s+(?:and|or|to)\s+)?)+",
    # a simple fraction worked out on the page (2 FLOPs over 12 bytes is 1/6)
    r"(?<![\d.])1/\d+\b",
    rf"(?<![\d.])2(?:\^\d+|[{SUPERSCRIPT}]+)|(?<![\d.])\d+[²³](?![{SUPERSCRIPT}])",
    # the size of a page's input, written right after its element type: 2²⁸ float32 (1 GiB),
    # rows of float32 (512 MiB in, 512 MiB out); a size measured at run time has no such place
    r"\b(?:float|int|uint|bfloat)\d+s?\s\(\d+\s[KMGT]iB(?:\sin,\s\d+\s[KMGT]iB\sout)?\)",
    # a commit (a hexadecimal name with a letter in it: 097a431)
    r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b",
    # a width: 32-bit floats, 16-byte loads, 1-D grids
    r"\b\d+-(?:bit|byte|D|thread|element|wide)\b|\b[1-4]D\b",
    # a compute capability, or a family of versions: 9.0, 10.0 and 10.3, CUDA 12.x
    r"\b(?:capability|capabilities|CC)\s+\d+\.[\dx](?:(?:,\s*|\s*(?:and|or|to)\s+)\d+\.[\dx])*|\b\d+\.x\b",
    # a name with a number in it: a step, a kernel, a table, an ordinal, a GPU or CPU model, a
    # model's parameter count (Llama 3.1 70B), an exit status
    r"\b(?:[Ss]teps?|[Kk]ernel|[Tt]able|[Rr]ound|[Ii]ssue|[Cc]all|[Ee]poch|[Pp]art|[Cc]ase|Gen|RTX|"
    r"GTX|Radeon|Xeon|Platinum|EPYC|Ryzen|Tesla|Instinct|[Ll]evel|status|exits?|code|route)\s+#?\d+"
    r"(?:-\d+)?[a-z+]?"
    r"(?!\w)|#\d+\b",
    r"\b\d+(?:st|nd|rd|th)\b|\b\d+(?:\.\d+)?B\b",
    # a GPU's name as nvidia-smi prints it, memory size included: NVIDIA H100 80GB HBM3
    r"\bH[12]00 \d+GB HBM\d\b",
    # a count or an index: a whole number below 100 without a unit of measure (16 vCPUs, 32
    # threads, 2 bytes); and a power of two without one (a size, a block shape: 256, 65,536)
    rf"(?<![\d.,$:/])[-−]?(?:{'|'.join(f'{2**k:,}|{2**k}' for k in range(34, 5, -1))}|\d\d?)(?!\d)(?!\s?[:/]\s?\d)"
    r"(?![\d.,]\d|-\d)(?!\s?(?:[nµμum]?s\b|sec|seconds?|minutes?|hours?|[kKMGTP]i?B\b|[kMGTPE]?FLOP|"
    r"[kMGT]?Hz|W\b|watts?|%|per ?cent|×|x\b|times\b|-fold|k\b|-ms|[a-z]+/s\b|"
    r"milli|micro|nano|[kMGTP]i?B\b|bytes/|GT/s|TOPS|ulps?\b|°|degrees|dollars?|cents?|"
    r"\w+\s+(?:a|per|each|every)\s+(?:second|minute|hour|step|call)\b))",
]
ALLOWED = [re.compile(p) for p in ALLOW]
SUPERSCRIPTS = str.maketrans("0123456789-", SUPERSCRIPT + "⁻")


# ------------------------------------------------------------------ rendering a page


@functools.cache
def markdown_options() -> tuple[list, dict]:
    """mkdocs.yml's Markdown extensions and their settings (snippets read from the root)."""
    from mkdocs.utils.yaml import yaml_load  # MkDocs' own reader: `!ENV`, `!!python/name`

    config = yaml_load((ROOT / "mkdocs.yml").read_text())
    names, settings = [], {}
    for entry in config["markdown_extensions"]:
        name, conf = next(iter(entry.items())) if isinstance(entry, dict) else (entry, {})
        names.append(name)
        settings[name] = dict(conf or {})
    settings["pymdownx.snippets"]["base_path"] = [str(ROOT)]
    return names, settings


def markdown_html(text: str) -> str:
    import markdown

    names, settings = markdown_options()
    return markdown.Markdown(extensions=names, extension_configs=settings).convert(text)


@functools.cache
def page_html(page: Path) -> str:
    """A page's content as `mkdocs build` renders it (see the module's docstring)."""
    if page.suffix == ".ipynb":
        return notebook_html(json.loads(page.read_text()))
    from mkdocs.utils.meta import get_data
    from renderers.page import provenance, render_markdown

    text, meta = get_data(page.read_text())
    name, data, topic = page.relative_to(DOCS).as_posix(), meta.get("data"), meta.get("topic")
    uri = name.removesuffix(".md").removesuffix("index") + ("/" if name != "index.md" else "")
    with blocks_left_empty():
        return markdown_html(render_markdown(text, DOCS, name, data, topic)
                             + provenance(text, DOCS, uri, data, topic))


@contextlib.contextmanager
def blocks_left_empty():
    """Render `<!-- render -->` blocks as empty: whatever a block renders lies inside its mark
    (test_the_render_step_marks_what_it_produced), and drawing every chart would cost seconds."""
    import renderers.page as page

    real = page.get
    page.get = lambda name: functools.wraps(real(name))(lambda *args, **kwargs: "")  # its signature kept
    try:
        yield
    finally:
        page.get = real


def notebook_html(notebook: dict) -> str:
    """What mkdocs-jupyter shows of a notebook, with its classes: Markdown cells, each code
    cell's input (code) and outputs (the richest form of each; an image has no text)."""
    parts = []
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            parts.append(f'<div class="jp-MarkdownCell">{markdown_html(source)}</div>')
            continue
        tags = " ".join(f"celltag_{t}" for t in cell.get("metadata", {}).get("tags", []))
        parts.append(f'<div class="jp-Cell jp-CodeCell {tags}"><div class="jp-InputArea">'
                     f"<pre><code>{html.escape(source)}</code></pre></div>")
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text" in out or "text/plain" in data and not set(data) & {"image/png", "text/html"}:
                text = "".join(out.get("text") or data["text/plain"])
                parts.append(f'<div class="jp-OutputArea-output"><pre>{html.escape(text)}</pre></div>')
            elif "text/html" in data:
                parts.append(f'<div class="jp-OutputArea-output">{"".join(data["text/html"])}</div>')
            elif "traceback" in out:
                parts.append(f'<div class="jp-OutputArea-output"><pre>{html.escape(str(out))}</pre></div>')
        parts.append("</div>")
    return "\n".join(parts)


# ------------------------------------------------------------------ reading the HTML

BLOCKS = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "figcaption",
          "summary", "pre", "blockquote", "caption", "div"}
VOID = {"br", "img", "hr", "input", "meta", "link", "col", "source", "wbr"}
SKIPPED_CLASSES = {"headerlink", "footnote-backref", "filename", "jp-InputArea", "linenos"}
RUNNABLE = {"language-bash", "language-sh", "language-python"}  # what pytest-codeblocks runs
# Fences in a programming or configuration language are listings: their numbers are the program.
# Every other fence (text, console, json, plain) is output, read like prose line by line.
LISTINGS = {"language-" + x for x in ("python", "py", "bash", "sh", "shell", "c", "cuda", "cpp",
                                      "c++", "yaml", "toml", "ini", "json", "dockerfile", "markdown",
                                      "md")}
# Inside a listing, a comment or docstring is read (Pygments' comment classes), but only for a
# figure with a unit (UNIT_FIGURE): its other numbers are the program's sizes and constants.
COMMENTS = {"c", "c1", "cm", "ch", "cs", "cd", "sd"}
ATTRIBUTES = ("alt", "title", "aria-label")  # attribute text a reader sees (tooltips, alt text)


class Unit:
    """The text of one block (a paragraph, a cell, a list item's own text, an output block)."""

    def __init__(self, kind: str):
        self.kind, self.text, self.size = kind, [], 0
        self.rendered, self.code = [], []  # (start, end) stretches of the text
        self.cited = self.header = False


class Reader(HTMLParser):
    """Splits a page's HTML into Units, noting which stretches the render step produced.

    Each open element carries the state it passes to its content: skip (not read), rendered,
    code (inline code), fnref (a footnote number), footnote (the footnote's <li>)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict, dict]] = []
        self.units: list[Unit] = []
        self.open: list[Unit] = [Unit("prose")]
        self.rows: list[list[Unit]] = []
        self.command_skipped = self.skip_next = self.checked_next = False

    def handle_comment(self, data):
        # A command with `pytest.mark.skip(` never runs; the output shown under
        # `expected-output` after a command that runs on every CI run is checked by running it.
        if data.strip().startswith("pytest.mark.skip"):
            self.skip_next = True
        elif data.strip() == "pytest-codeblocks:expected-output":
            self.checked_next = not self.command_skipped

    def handle_starttag(self, tag, attrs):
        if tag == "br":  # a line break separates what it breaks: "5, 5<br>0.137" is not 50.137
            self.open[-1].text.append("\n")
            self.open[-1].size += 1
        self.read_attributes(tag, dict(attrs))
        if tag in VOID:
            return
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        state = dict(self.stack[-1][2]) if self.stack else {"kind": "prose"}
        if tag in {"script", "style"} or classes & SKIPPED_CLASSES:
            state["kind"] = "skip"
        if "data-rendered" in attrs or "celltag_rendered" in classes:
            state["rendered"] = True
        if tag == "code" and state["kind"] == "prose":
            state["code"] = True
        if tag == "sup" and (attrs.get("id") or "").startswith("fnref"):
            state["fnref"] = True
            self.open[-1].text.append(FOOTNOTE)
            self.open[-1].size += 1
        if tag == "li" and (attrs.get("id") or "").startswith("fn:"):
            state["footnote"] = {"first": len(self.units), "links": False}
        if tag == "a" and not (attrs.get("href") or "#").startswith("#") and state.get("footnote"):
            state["footnote"]["links"] = True  # a footnote that links its source
        if tag == "a" and not (attrs.get("href") or "#").startswith("#") and state["kind"] != "skip":
            self.open[-1].text.append(LINK)
            self.open[-1].size += 1
        if tag == "pre" and "mermaid" in classes:
            state["kind"] = "prose"  # a diagram is read as prose
        if tag == "div" and "jp-OutputArea-output" in classes and state["kind"] != "skip":
            state["kind"] = "output"
        if tag == "div" and "highlight" in classes and state["kind"] != "skip":
            langs = {c for c in classes if c.startswith("language-")}
            if langs & RUNNABLE:
                self.command_skipped, self.skip_next = self.skip_next, False
            checked, self.checked_next = self.checked_next, False
            state["kind"] = "output" if not langs & LISTINGS and not checked else "skip"
            state["listing"] = bool(langs & LISTINGS)
        own_unit = False
        if tag == "span" and state.get("listing") and classes & COMMENTS:
            state["kind"], own_unit = "comment", True  # a comment in a listing is read

        if tag in {"option", "button", "label"}:  # form controls read apart: "1 2 4 8", not "1248"
            self.open[-1].text.append(" ")
            self.open[-1].size += 1
        if tag == "tr":
            self.rows.append([])
        if tag == "table":
            attrs["first unit"] = len(self.units)
        attrs["own unit"] = own_unit
        self.stack.append((tag, attrs, state))
        if tag in BLOCKS or own_unit:
            self.open.append(Unit(state["kind"]))

    def read_attributes(self, tag, attrs):
        """Alt text and tooltips, each a unit of its own (rendered inside a rendered element)."""
        state = self.stack[-1][2] if self.stack else {"kind": "prose"}
        classes = set((attrs.get("class") or "").split())
        if state["kind"] == "skip" or classes & SKIPPED_CLASSES or tag in {"script", "style"}:
            return
        for name in ATTRIBUTES:
            if (attrs.get(name) or "").strip():
                unit = Unit("prose")
                unit.text, unit.size = [attrs[name]], len(attrs[name])
                if state.get("rendered") or "data-rendered" in attrs:
                    unit.rendered.append((0, unit.size))
                self.units.append(unit)

    def handle_endtag(self, tag):
        if not any(t == tag for t, _, _ in self.stack):
            return
        while self.stack:
            top, attrs, state = self.stack.pop()
            if top in BLOCKS or attrs.get("own unit"):
                unit = self.open.pop()
                self.units.append(unit)
                unit.header = top == "th"
                if top in {"td", "th"} and self.rows:
                    self.rows[-1].append(unit)
            if top == "table" and any(FOOTNOTE in "".join(u.text) for u in self.units[attrs["first unit"]:]
                                      if u.header):
                for unit in self.units[attrs["first unit"]:]:  # a source in the header row
                    unit.cited = True                         # cites the whole table
            if top == "tr" and self.rows:
                row = self.rows.pop()
                if any(FOOTNOTE in "".join(u.text) for u in row):
                    for unit in row:
                        unit.cited = True
            note = state.get("footnote")
            if top == "li" and note and note["links"] and not (
                    self.stack and self.stack[-1][2].get("footnote") is note):
                for unit in self.units[note["first"]:]:  # the citation itself
                    unit.cited = True
            if top == tag:
                break

    def handle_data(self, data):
        state = self.stack[-1][2] if self.stack else {"kind": "prose"}
        if state.get("footnote") and re.search(r"\barXiv:\d{4}\.\d{4,5}|\bdoi:10\.", data):
            state["footnote"]["links"] = True  # an arXiv or DOI identifier names the source too
        if state["kind"] == "skip" or state.get("fnref"):
            return
        if any(t == "sup" for t, _, _ in self.stack):
            data = data.translate(SUPERSCRIPTS)  # 2<sup>28</sup> reads 2²⁸, not 228
        unit = self.open[-1]
        start, unit.size = unit.size, unit.size + len(data)
        unit.text.append(data)
        if state.get("rendered"):  # one stretch, however many elements the render step wrote
            if unit.rendered and unit.rendered[-1][1] == start:
                start = unit.rendered.pop()[0]
            unit.rendered.append((start, unit.size))
        if state.get("code"):
            unit.code.append((start, unit.size))

    def close(self):
        super().close()
        while len(self.open) > 1:
            self.units.append(self.open.pop())
        self.units.append(self.open[0])


SENTENCE_END = re.compile(rf"[.!?:][)\"”’]?{FOOTNOTE}*(?:\s+|$)|\n\s*\n")


def violations(page_html_text: str) -> list[str]:
    """Each number on a page that is neither rendered, cited nor allowed: "number: sentence"."""
    reader = Reader()
    reader.feed(page_html_text)
    reader.close()
    found = []
    for unit in reader.units:
        if unit.kind == "skip" or unit.cited:
            continue
        text = "".join(unit.text)
        inside = lambda spans, s, e: any(a <= s and e <= b for a, b in spans)  # noqa: E731
        allowed = [m.span() for rx in ALLOWED for m in rx.finditer(text)]
        lines = text.split("\n") if unit.kind == "output" else None
        for match in [*NUMBER.finditer(text), *APPROX.finditer(text)]:
            s, e = match.span()
            if inside(unit.rendered, s, e) or inside(allowed, s, e):
                continue
            if (inside(unit.code, s, e) or unit.kind == "comment") and not any(
                    inside([m.span()], s, e) for m in UNIT_FIGURE.finditer(text)):
                continue
            if lines is None:
                begin = max([0, *(m.end() for m in SENTENCE_END.finditer(text, 0, s))])
                end = next((m.end() for m in SENTENCE_END.finditer(text, e)), len(text))
                sentence = text[begin:end]
                if FOOTNOTE in text[e:end] or LINK in sentence and AS_OF.search(sentence):
                    continue  # cited: a footnote after it in its sentence, or a dated link
            else:
                begin = text.rfind("\n", 0, s) + 1
                sentence = text[begin:text.find("\n", e) % (len(text) + 1)]
            word = re.search(r"\S*$", text[:s])[0] + match[0] + re.match(r"\S*", text[e:])[0]
            sentence = sentence.replace(FOOTNOTE, "").replace(LINK, "")
            word = word.replace(FOOTNOTE, "").replace(LINK, "")
            found.append(f"{' '.join(word.strip('(),;:').split())}  in: {' '.join(sentence.split())[:160]}")
    return found


def page_violations(page: Path) -> list[str]:
    return violations(page_html(page))


# ------------------------------------------------------------------ the tests


def page_id(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


# Numbers that were on the pages when this guard was switched on and cannot be fixed from the
# page's own text, one a line: page, number, its sentence (digits masked, so that a re-rendered
# figure in the same sentence does not move the entry) and, after a tab and "# ", why it stays
# (test_every_debt_says_why). Each is a debt: fix it and strike the line off (the test fails on
# a line that no longer matches). A number not listed fails at once.
DEBT = ROOT / "tests" / "fixtures" / "typed-figures-debt.txt"


def debt_key(page: Path, violation: str) -> str:
    word, _, sentence = violation.partition("  in: ")
    return f"{page_id(page)}\t{word}\t{re.sub(r'[0-9]', '#', sentence)[:100]}"


def debt_lines() -> list[tuple[str, str]]:
    """(key, reason) of each line of DEBT; comment lines start with '#'."""
    lines = DEBT.read_text().splitlines() if DEBT.is_file() else []
    return [(key, reason.strip()) for line in lines if line and not line.startswith("#")
            for key, _, reason in [line.rpartition("\t# ")]]


def owed(page: Path) -> list[str]:
    return [key for key, _ in debt_lines() if key.startswith(page_id(page) + "\t")]


def test_every_debt_says_why():
    """A number is kept on a page unchecked only with a reason one can act on."""
    silent = [key for key, reason in debt_lines() if len(reason.split()) < 5]
    assert not silent, "give each a reason after '\\t# ':\n" + "\n".join(silent)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_number_is_rendered_cited_or_allowed(page):
    from collections import Counter

    found = page_violations(page)
    new = Counter(debt_key(page, v) for v in found) - Counter(owed(page))
    assert not new, (
        f"{page.relative_to(ROOT)}: {sum(new.values())} number(s) neither rendered from docs/data/, "
        "nor cited (a footnote in its sentence), nor a non-measurement in ALLOW:\n  "
        + "\n  ".join(v for v in found if debt_key(page, v) in new))
    paid = Counter(owed(page)) - Counter(debt_key(page, v) for v in found)
    assert not paid, f"fixed: strike these lines off {DEBT.relative_to(ROOT)}:\n" + "\n".join(paid)


@pytest.mark.skipif(not os.environ.get("GUARD_BUILT_SITE"), reason="set GUARD_BUILT_SITE to a built site")
def test_a_full_build_reads_the_same():
    """The fast rendering above finds what a full `mkdocs build` shows (charts, theme and all):
    GUARD_BUILT_SITE=/tmp/site .venv/bin/python -m pytest tests/test_no_typed_figures.py -k full."""
    site = Path(os.environ["GUARD_BUILT_SITE"])
    for page in PAGES:
        uri = page_id(page).rsplit(".", 1)[0]
        uri = "" if uri == "index" else uri.removesuffix("/index") + "/"
        built = re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>',
                          (site / uri / "index.html").read_text(), re.S)[1]
        assert sorted(violations(built)) == sorted(page_violations(page)), page_id(page)


@pytest.fixture(scope="module")
def site(request) -> Path:
    """The built site: GUARD_BUILT_SITE when set (a site built once and reused), else the one
    the root conftest's built_site fixture builds once per run."""
    if os.environ.get("GUARD_BUILT_SITE"):
        return Path(os.environ["GUARD_BUILT_SITE"])
    return request.getfixturevalue("built_site")


def built_page_html(page_file: Path) -> str:
    """What a reader reads of a built page: the article (charts, outputs, notebook cells and
    all) and the page's description (front matter, shown by search engines and link previews)."""
    text = page_file.read_text()
    article = re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>', text, re.S)
    description = re.search(r'<meta name="description" content="([^"]*)"', text)
    return (f"<p>{description[1]}</p>" if description else "") + (article[1] if article else "")


def test_every_built_page_is_guarded(site):
    """The guard on the built HTML: every page of the nav (the notebook page too) holds no number
    that is neither rendered, cited, allowed nor listed in DEBT."""
    from collections import Counter

    bad = []
    for page in PAGES:
        uri = page_id(page).rsplit(".", 1)[0]
        uri = "" if uri == "index" else uri.removesuffix("/index") + "/"
        found = violations(built_page_html(site / uri / "index.html"))
        new = Counter(debt_key(page, v) for v in found) - Counter(owed(page))
        bad += [f"{page_id(page)}: {v}" for v in found if debt_key(page, v) in new]
    assert not bad, "numbers neither rendered, cited nor allowed:\n" + "\n".join(bad)


def test_rendered_notebook_cells_are_checked_against_their_results_file():
    """A notebook cell may carry the tag `rendered` only if tests/test_mandelbrot.py re-runs it
    on the committed results file (its `results_cells`: reads `doc`, computes and draws nothing)."""
    for page in (p for p in PAGES if p.suffix == ".ipynb"):
        for i, cell in enumerate(json.loads(page.read_text())["cells"]):
            source = "".join(cell["source"])
            if "rendered" in cell.get("metadata", {}).get("tags", []):
                assert page.name == "mandelbrot-notebook.ipynb" and "doc" in source and \
                    "mb.compute" not in source and "plt." not in source, f"{page_id(page)} cell {i}"


# The forms the figures audit kept back (issue 32), and the plain ones; each planted in a page.
PLANTED = [
    ("The kernels reach 72-83% of the copy.", "72-83%"),
    ("The GPU gives 318× CPU throughput.", "318×"),
    ("Training ran at 149.6k images/s on the GPU.", "149.6k"),
    ("It computes 1.89 × 10¹² pixel-iterations per second.", "1.89"),
    ("It took a 3.43-ms kernel to do it.", "3.43-ms"),
    ("cuBLAS gives 51.2 TFLOPs in FP32.", "51.2"),
    ("The GPU took 4.6 ms.", "4.6"),
    ("at 88.9&nbsp;% of the copy", "88.9"),
    ("**103.6%** of the copy", "103.6%"),
    ("about 40x faster", "40x"),
    ("within 1e-4 of the reference", "1e-4"),
    ("It costs $32.77 an hour.", "$32.77"),
    ("It reaches about nine tenths of cuBLAS.", "nine tenths"),
    ("The GPU is a few hundred times faster.", "a few hundred times"),
    ("Numba is several times slower.", "several times"),
    ("| kernel | time |\n|---|---|\n| naive | 12.5 ms |", "12.5"),
    ("| kernel | time |\n|---|---|\n| naive[^1] | 12.6 ms |\n| tiled | 3.1 ms |\n\n[^1]: <https://x.org>", "3.1"),
    ("The run took `3.4 ms`.", "3.4"),
    ("```mermaid\nflowchart LR\n  A[\"HBM3e: 4.8 TB/s\"] --> B\n```", "4.8"),
    ("!!! note\n    The GPU took 7.7 ms.", "7.7"),
    ("Output:\n\n```text\nkernel: 2.31 ms\n```", "2.31"),
    ("Output:\n\n```\nkernel: 2.32 ms\n```", "2.32"),
    ("A sentence with a source.[^1] But 9.9 ms is not cited.\n\n[^1]: NVIDIA, "
     "<https://docs.nvidia.com/>, 2026-12-02.", "9.9"),
    ("Uncited note.[^1]\n\n[^1]: We measured 5.5 ms ourselves.", "5.5"),
    ("<!--pytest.mark.skipif(True, reason=\"needs a GPU\")-->\n```bash\npython run.py\n```\n"
     "<!--pytest-codeblocks:expected-output-->\n```\nkernel 0.81 ms\n```", "0.81"),
    ("Its tile of 8×8.5 ms each.", "8.5"),  # a shape ends a sentence, not a decimal
    ("The kernel kept 512 MiB of float32 in its cache.", "512"),
    ("It read float32 (512 MiB in 0.2 ms).", "0.2"),
    ("A link is no citation without its date: [NVIDIA](https://www.nvidia.com/) lists 7.1 TB/s.", "7.1"),
    # the forms issue 44 found getting past the guard
    ("The run read half a million images.", "half a million"),
    ("It took nearly a thousand steps.", "nearly a thousand"),
    ("The fused kernel is twice as fast.", "twice as"),
    ("The GPU wins 12:1 against the CPU.", "12"),
    ("The GPU wins by 37/3 here.", "37/3"),
    ("NVIDIA lists the H200's memory[^a] and the copy here ran 3.3 ms.\n\n"
     "[^a]: NVIDIA, <https://www.nvidia.com/en-us/data-center/h200/>.", "3.3"),
    ("Training ran at 900 images a second.", "900"),
    ("The copy moved 48 GB in the run.", "48"),
    ("It drew 42 watts.", "42"),
    ("![chart](x.png \"speed-up 47.5\")", "47.5"),
    ("<img src=\"x.png\" alt=\"GPU at 3.7 ms\">", "3.7"),
    ('<abbr title="measured 8.25 ms">t</abbr>', "8.25"),
    ("```console\n$ run\nkernel 1.23 ms\n```", "1.23"),
    ("```python title=\"x.py\"\nx = 1  # took 6.6 ms on the H200\n```", "6.6"),
]


@pytest.mark.parametrize(("markdown", "figure"), PLANTED, ids=[f for _, f in PLANTED])
def test_the_guard_names_a_planted_figure(markdown, figure):
    found = violations(markdown_html(markdown))
    assert any(figure in v for v in found), f"missed {figure!r}: found {found}"


def test_the_built_page_reader_reads_the_description():
    page = ('<html><head><meta name="description" content="A GPU 318 times faster."></head><body>'
            '<article class="md-content__inner md-typeset"><p>No figure here.</p></article></body></html>')
    assert any("318" in v for v in violations(built_page_html_text(page)))


def built_page_html_text(text: str) -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "index.html"
        path.write_text(text)
        return built_page_html(path)


def test_output_checked_by_running_its_command_is_not_read():
    """An output under `expected-output` after a command that runs on every CI run is compared
    with what the command prints: it cannot hold a typed figure for long."""
    page = ("```bash\npython demo.py\n```\n<!--pytest-codeblocks:expected-output-->\n"
            "```\nOK: all 1027 elements match, 3.5 s\n```\n")
    assert violations(markdown_html(page)) == []


def test_the_guard_names_a_figure_in_a_notebook_output():
    cell = {"cell_type": "code", "metadata": {}, "source": ["print(t)"],
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["kernel 0.004643 s\n"]}]}
    found = violations(notebook_html({"cells": [cell]}))
    assert any("0.004643" in v for v in found), found
    cell["metadata"]["tags"] = ["rendered"]  # re-derived from the results file by its test
    assert violations(notebook_html({"cells": [cell]})) == []


def test_rendered_cited_and_allowed_numbers_pass():
    from renderers.page import render_markdown

    page = ("The fastest reaches {{ cell path=data/doctor-h200.json key=. show=\"{date}\" }} today.\n\n"
            "The H200 has 4.8 TB/s of bandwidth.[^spec] CUDA 12.4 and CUDA 13 on sm_90, a 3x3 "
            "filter, 2^28 and 2²⁸ elements, 1024 × 1536 pixels, 64-bit floats, float4, the RTX "
            "4090 and Llama 3.1 70B, commit 097a431, a 64×N tile, in 2026 (as of 2026-12-02); step 3, kernel 10, numpy 2.4.1.\n\n"
            "Up to 9,216 chips a pod ([TPU7x docs](https://docs.cloud.google.com/tpu), as of 2026-11).\n\n"
            "```python\nx = 12.5  # a listing: code\n```\n\n"
            "[^spec]: NVIDIA H200 datasheet, <https://www.nvidia.com/h200>, read 2026-12-02.\n")
    assert violations(markdown_html(render_markdown(page, DOCS, "test.md"))) == []


def test_every_allowance_is_used():
    """An ALLOW pattern that covers no number on any page is dead weight: delete it."""
    texts = ["".join(u.text) for page in PAGES for u in units(page_html(page))]
    unused = [p for p, rx in zip(ALLOW, ALLOWED) if not any(rx.search(t) for t in texts)]
    assert not unused, unused


def units(page_html_text: str) -> list[Unit]:
    reader = Reader()
    reader.feed(page_html_text)
    reader.close()
    return reader.units


def test_the_render_step_marks_what_it_produced():
    from renderers.page import render_markdown

    out = render_markdown("Date: {{ cell path=data/doctor-h200.json key=. show=\"{date}\" }}, "
                          "`{{ cell path=data/doctor-h200.json key=. show=\"{date}\" }}`, "
                          '<a href="{{ csv.value path=data/cuda-driver-compat.csv column=source }}">x</a>\n\n'
                          "<!-- render table path=data/cuda-driver-compat.csv cols=\"CUDA={toolkit}\" -->\n",
                          DOCS, "test.md")
    assert out.count('<span data-rendered="cell">') == 2
    assert 'href="http' in out  # an attribute is left unmarked
    assert '<div data-rendered="table" markdown>' in out
    built = markdown_html(out)
    assert built.count("data-rendered=") == 3 and "<table>" in built
    nested = markdown_html(render_markdown(
        "!!! note\n\n    <!-- render table path=data/cuda-driver-compat.csv cols=\"CUDA={toolkit}\" -->\n", DOCS, "t.md"))
    assert '<div data-rendered="table">' in nested and "<table>" in nested
    assert " markdown" not in nested  # no attribute left behind in the HTML


if __name__ == "__main__":  # pages, from the repository root; --debt prints DEBT lines instead
    status, debt = 0, "--debt" in sys.argv
    for arg in (a for a in sys.argv[1:] if a != "--debt"):
        page = Path(arg).resolve()
        found = page_violations(page)
        if debt:
            print("".join(f"{debt_key(page, v)}\n" for v in found), end="")
            continue
        print(f"{arg}: {len(found)} number(s) neither rendered, cited nor allowed")
        print("".join(f"  {v}\n" for v in found), end="")
        status |= bool(found)
    sys.exit(status)


# ------------------------------------------------------------------ the render templates
# What a render step outputs is marked rendered, and so trusted, whole: a figure typed into its
# template ("{s:ms} ms, 4.2 times faster") would pass as measured. Every literal of a template
# (what is left when its {fields} are taken out) is read as prose.
TEMPLATE_ARG = re.compile(r'\b(?:cols|show|caption|notes|alt|names)="([^"]*)"')
DIRECTIVE = re.compile(r"<!--\s*render\b.*?-->|\{\{.*?\}\}", re.S)


def template_literals(markdown: str) -> str:
    """The literal text of every template argument of the page's render directives and
    placeholders, one paragraph each (`;` and `=` separate a table's columns and headers)."""
    literals = []
    for directive in DIRECTIVE.finditer(markdown):
        for template in TEMPLATE_ARG.findall(directive.group(0)):
            text = re.sub(r"\{[^{}]*\}", " ", template)
            literals += [part for part in re.split(r"[;=]", text) if part.strip()]
    return "\n\n".join(literals)


@pytest.mark.parametrize("page", [p for p in PAGES if p.suffix == ".md"], ids=page_id)
def test_no_figure_is_typed_into_a_render_template(page):
    found = violations(markdown_html(template_literals(page.read_text())))
    assert not found, f"{page.relative_to(ROOT)}: figures typed into templates:\n  " + "\n  ".join(found)


def test_the_template_check_names_a_planted_figure():
    page = ('<!-- render table cols="speed-up={s:ms} ms, 4.2 times faster;GB/s={gbs:.0f}" -->\n'
            'The copy ran {{ cell show="{gbs:.0f} GB/s, 37 % of the peak" }}.')
    found = violations(markdown_html(template_literals(page)))
    assert any("4.2" in v for v in found) and any("37" in v for v in found), found
