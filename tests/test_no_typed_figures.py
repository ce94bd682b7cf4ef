"""No measured figure is typed into a page: measurements come from results files.

Every page under docs/ (Markdown, and the Markdown cells of notebooks) is read as a reader sees
it: outside code fences, inline code, HTML comments and link targets, with emphasis marks
dropped and non-breaking or thin spaces read as spaces. Mermaid diagrams are read too (a figure
inside a diagram is still a figure). What counts as a figure:

    times           4.6 ms, 12 s, 3 seconds, 250 microseconds, 2 hours
    rates           25 GB/s, 3 gigabytes per second, 17 TFLOP/s, 51 TFLOPS, 20 teraflops,
                    2,218 images/s, 1.4e12 pixel-iterations per second, 90 tokens per second
    shares          85%, 85 %, 85 per cent, 85 percent (of a ceiling, of a roof, of cuBLAS...)
    multipliers     40×, 40x, 40 times, 40-fold ("1024 × 1536", a size, is not one)

A measured figure is rendered from a results file under docs/data/ by a renderer. A figure that
is not a measurement (a datasheet figure next to its source, a threshold a test enforces, a
worked example's input, the original article's own claim) is allowed only by name in ALLOWED
below, with the reason; an allowance that no longer matches anything fails too, so the list
cannot rot.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import ROOT

DOCS = ROOT / "docs"
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*\{?\s*\.?([\w-]*)")
NUMBER = r"(?<![\w.\-/^])\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?"
SPACE = r"[ \u00a0\u202f\u2009]?"
PER_SECOND = r"(?:/|\s+per\s+)(?:s|sec|second)\b"
UNITS = "|".join([
    r"(?:ns|µs|μs|us|ms|s|sec|secs|seconds?|milli-?seconds?|micro-?seconds?|nano-?seconds?"
    r"|minutes?|hours?)\b",
    r"[kKMGTP]?i?B" + PER_SECOND,
    r"(?:kilo|mega|giga|tera|peta)?bytes" + PER_SECOND,
    r"[kMGTPE]?FLOP/s|[kMGTPE]?FLOPS\b|(?:giga|tera|peta|exa)flops\b",
    r"[A-Za-z][\w\-]*" + PER_SECOND,  # images/s, tokens per second, pixel-iterations/s
    r"%|\s?per ?cent\b",
    # "40×" but not a size ("64 × 64") or a count of parts ("8 × A100")
    r"×(?![ \u00a0\u202f\u2009]?[\d(A-Z])|x(?![\w(])|\s?times\b|-fold\b",
])
FIGURE = re.compile(rf"{NUMBER}{SPACE}(?:{UNITS})")

# Figures that are not measurements, by page (relative to docs/) and exact text as matched.
# Each says why it may be typed. Keep entries few: a measurement never belongs here.
ALLOWED: dict[str, dict[str, str]] = {
    "setup/check-your-gpu.md": {
        "1 s": "nvidia-smi's sampling period, from NVIDIA's documentation (cited)",
        "100%": "what GPU-Util shows for a busy kernel: an illustration of the metric",
        "60 s": "the doctor's default time limit per framework import: a setting",
    },
    "setup/gpus-on-aws.md": {
        "10 hours": "the worked cost example's input: the reader's run length",
        "720 hours": "a month of serving: the worked example's input",
        "20%": "EleutherAI's rule-of-thumb memory margin (cited)",
        "900 GB/s": "NVLink 4 rating per H100, NVIDIA's page (cited)",
        "450 GB/s": "NVLink 4 rating each way, NVIDIA's page (cited)",
        "400 GB/s": "P5 EFA networking rating (cited)",
        "50 GB/s": "P5 EFA networking per GPU (cited)",
        "600 GB/s": "A100 NVLink rating, NVIDIA's page (cited)",
    },
    "kernels/matmul.md": {
        "93.7 %": "Simon Boehm's published warptiling result on his RTX A6000, not ours (cited, his README)",
        "1.3 %": "Simon Boehm's published naive-kernel result on his RTX A6000 (cited, his README)",
    },
    "setup/troubleshooting.md": {
        "75%": "JAX's documented default preallocation share (cited)",
    },
}


def reader_text(line: str) -> str:
    """A line as a reader sees it, for the figure search."""
    line = re.sub(r"<!--.*?-->", "", line)  # render directives, pytest-codeblocks markers
    line = re.sub(r"`[^`\n]+`", "", line)  # inline code: flags and identifiers, not figures
    line = re.sub(r"\]\([^)\s]*\)", "]", line)  # link targets
    line = re.sub(r"&(nbsp|#160|#8239|thinsp);", " ", line)
    return re.sub(r"(\*\*|__|(?<!\w)[*_]|[*_](?!\w))", "", line)  # bold and italic marks


def readable_lines(text: str, suffix: str = ".md") -> list[str]:
    """The lines a reader reads: prose and diagrams, not code."""
    if suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    kept, fence = [], None
    for line in text.splitlines():
        match = FENCE.match(line)
        if match:
            fence = match.group(2) if fence is None else None
            continue
        if fence is None or fence == "mermaid":
            kept.append(reader_text(line))
    return kept


def typed_figures(text: str, suffix: str = ".md") -> list[tuple[str, str]]:
    """(figure, line) for every figure typed on a page."""
    return [(m.group(0).strip(), line.strip()[:140])
            for line in readable_lines(text, suffix) for m in FIGURE.finditer(line)]


PAGES = sorted([*DOCS.rglob("*.md"), *DOCS.rglob("*.ipynb")])


def page_id(page: Path) -> str:
    return str(page.relative_to(DOCS))


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_no_measured_figure_is_typed(page):
    allowed = ALLOWED.get(page_id(page), {})
    found = [f"{fig!r} in: {line}" for fig, line in typed_figures(page.read_text(), page.suffix)
             if fig not in allowed]
    assert not found, (f"{page.relative_to(ROOT)} types figures by hand: render measurements "
                       "from a results file; allow a non-measurement in ALLOWED with its "
                       "reason:\n  " + "\n  ".join(found))


def test_every_allowance_still_matches_a_figure():
    stale = []
    for name, figures in ALLOWED.items():
        page = DOCS / name
        found = {fig for fig, _ in typed_figures(page.read_text(), page.suffix)} \
            if page.is_file() else set()
        stale += [f"{name}: {fig!r}" for fig in figures if fig not in found]
    assert not stale, "ALLOWED names figures the pages no longer have"


# Every form a writer might use; each must be caught.
TYPED = [
    ("The GPU took 4.6 ms.", "4.6 ms"),
    ("Compilation took 1.21 s and then 3 seconds more.", "1.21 s"),
    ("a 250 microseconds launch", "250 microseconds"),
    ("Copies ran at 25 GB/s.", "25 GB/s"),
    ("about 3 gigabytes per second", "3 gigabytes per second"),
    ("4.36 TB/s", "4.36 TB/s"),
    ("the kernel reached 17 TFLOP/s", "17 TFLOP/s"),
    ("cuBLAS does 51 TFLOPS in FP32", "51 TFLOPS"),
    ("about 20 teraflops", "20 teraflops"),
    ("1.2e12 pixel-iterations per second", "1.2e12 pixel-iterations per second"),
    ("1.42e12 pixel-iterations/s", "1.42e12 pixel-iterations/s"),
    ("2,218 images/s at batch 256", "2,218 images/s"),
    ("90 tokens per second", "90 tokens per second"),
    ("at 88.9% of the copy", "88.9%"),
    ("at 88.9 % of the copy", "88.9 %"),
    ("85 per cent of cuBLAS", "85 per cent"),
    ("85 percent of cuBLAS", "85 percent"),
    ("**103.6%** of the copy", "103.6%"),
    ("742× faster", "742×"),
    ("742\u00a0× faster", "742\u00a0×"),
    ("40x faster", "40x"),
    ("about 10 times the bandwidth", "10 times"),
    ("a 30-fold speed-up", "30-fold"),
    ("SAXPY\u00a0at\u00a092.2\u202f% of copy", "92.2\u202f%"),
    ("92.2&nbsp;% of copy", "92.2 %"),
    ("_2,218 images/s_", "2,218 images/s"),
]


@pytest.mark.parametrize(("line", "figure"), TYPED, ids=[f for _, f in TYPED])
def test_the_check_catches_every_form(line, figure):
    found = [fig for fig, _ in typed_figures(line)]
    assert figure.strip() in found, f"missed {figure!r} in {line!r}: found {found}"


def test_the_check_reads_diagrams_and_notebook_markdown():
    diagram = '```mermaid\nflowchart LR\n  A["HBM3e: 4.8 TB/s"] --> B\n```\n'
    assert [f for f, _ in typed_figures(diagram)] == ["4.8 TB/s"]
    notebook = json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["The GPU was ", "742× faster."]},
        {"cell_type": "code", "source": ["print('12 ms')"]}]})
    assert [f for f, _ in typed_figures(notebook, ".ipynb")] == ["742×"]


NOT_FIGURES = """\
An image of 1024 × 1536 pixels, 64 × 64 × 3 inputs, 3 × 10⁻⁴, 32 threads per warp.
Version 2.21, CUDA 13.0, sm_90, x86-64, 4096³, 2^28 elements, a 3x3 filter, 16 GiB of memory.

```bash
sleep 5s  # inside a fence: code, not a figure; 40× too
```

Run it with `--min-sample 0.02 s`; see <!-- render x path=data/a.json --> and
[the timing page](kernels/5ms.md).
"""


def test_the_check_allows_sizes_versions_code_and_directives():
    assert typed_figures(NOT_FIGURES) == []


def test_pages_are_found():
    assert DOCS / "kernels" / "mandelbrot.md" in PAGES
    assert any(p.suffix == ".ipynb" for p in PAGES)
