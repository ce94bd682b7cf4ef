"""No benchmark figure is typed into a page that renders a results file.

Scope: every Markdown page under docs/ with a render directive (`<!-- render NAME path=... -->`,
outside code fences) whose path names a results file (JSON with the schema of
snippets/bench/results.py; "a.json|b.json" alternatives count too). Pages that render only
sourced fact tables are out of scope. On a page in scope, the text outside fenced code, inline code and render
directives must not contain a number followed by a time or throughput unit:

    ns, µs, us, ms, s, sec, second(s)         e.g. "4.07 s", "12 ms"
    B/s, kB/s, MB/s, GB/s, TB/s, GiB/s, ...    e.g. "3.35 TB/s"
    FLOP/s, GFLOP/s, TFLOPS, TFLOP/s, ...      e.g. "34 TFLOP/s"
    pixel-iterations/s, pixel-iterations per second, iterations per second
    x faster, times faster                     e.g. "40x faster"
    ×  (a speed-up mark: "40×"; "1024 × 1536", a size, is allowed)

Such figures come from a renderer (hooks/renderers/) reading a file under docs/data/. Sourced
facts (datasheet figures) go in a data file with their source and date and are rendered too.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = ROOT / "docs"
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
RENDER = re.compile(r"<!--\s*render\s.*?-->")
INLINE_CODE = re.compile(r"`[^`\n]+`")
NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?"
UNITS = (r"ns|µs|μs|us|ms|s|sec|seconds?"
         r"|[kMGTP]?i?B/s"
         r"|[kMGTP]?FLOP/?s|[kMGTP]?FLOPS"
         r"|(?:pixel-)?iterations(?:/s| per second)"
         r"|x faster|times faster")
FIGURE = re.compile(rf"{NUMBER}\s?(?:{UNITS})(?![\w/])|{NUMBER}\s?×(?!\s?\d)")


def prose(text: str) -> str:
    """The text of a page outside fenced code, inline code and render directives."""
    kept, in_fence = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            kept.append(INLINE_CODE.sub("", RENDER.sub("", line)))
    return "\n".join(kept)


def is_results_file(path: Path) -> bool:
    try:
        return json.loads(path.read_text()).get("schema", "").startswith(
            "gpu-survival-toolkit/results/")
    except (OSError, ValueError, AttributeError):
        return False


def renders_results(text: str) -> bool:
    """Does the page render a results file (outside code fences)?"""
    in_fence = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        for directive in [] if in_fence else RENDER.findall(line):
            args = shlex.split(directive.removeprefix("<!--").removesuffix("-->"))
            paths = [a.split("=", 1)[1] for a in args if a.startswith("path=")]
            if any(is_results_file(DOCS / p.strip()) for arg in paths for p in arg.split("|")):
                return True
    return False


def typed_figures(text: str, in_scope: bool | None = None) -> list[str]:
    """Typed figures on a page; `in_scope` overrides the results-file check (for examples)."""
    if not (renders_results(text) if in_scope is None else in_scope):
        return []
    found = []
    for number, line in enumerate(prose(text).splitlines(), 1):
        found += [f"{m.group(0)!r} in: {line.strip()[:120]}" for m in FIGURE.finditer(line)]
    return found


PAGES = sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_no_benchmark_figure_is_typed(page):
    found = typed_figures(page.read_text())
    assert not found, (f"{page.relative_to(ROOT)} types benchmark figures by hand; render them "
                       "from a results file instead:\n  " + "\n  ".join(found))


BAD = """\
<!-- render mandelbrot_table path=data/x.json case=article -->

The GPU took 4.6 ms, 40× faster than the CPU at 1.2e12 pixel-iterations per second.
Copies ran at 25 GB/s and the kernel reached 17 TFLOP/s, 3x faster.
"""

GOOD = """\
<!-- render mandelbrot_table path=data/x.json case=article -->

An image of 1024 × 1536 pixels, 20 iterations, 32 threads per warp, spread under 1.2.

```bash
sleep 5s  # inside a fence: code, not a figure
```

Run it with `--min-sample 0.02 s`; see `<!-- render x -->`.
"""


def test_the_check_catches_typed_figures():
    found = typed_figures(BAD, in_scope=True)
    caught = " ".join(found)
    for figure in ("4.6 ms", "40×", "1.2e12 pixel-iterations per second", "25 GB/s",
                   "17 TFLOP/s", "3x faster"):
        assert repr(figure) in caught, f"missed {figure!r}"


def test_the_check_allows_sizes_code_and_directives():
    assert typed_figures(GOOD, in_scope=True) == []


def test_scope_is_pages_that_render_a_results_file(tmp_path):
    results_file = tmp_path / "r.json"
    results_file.write_text('{"schema": "gpu-survival-toolkit/results/1"}')
    assert typed_figures("The original article reported 4.07 s on a CPU.") == []
    facts = "<!-- render mandelbrot_specs path=data/mandelbrot-gpu-specs.json -->\nIt took 3 s.\n"
    assert typed_figures(facts) == []  # a sourced fact table, not a results file
    results = f'<!-- render x path="data/nothing.json|{results_file}" -->\nIt took 3 s.\n'
    assert typed_figures(results) == ["'3 s' in: It took 3 s."]
    fenced = "```markdown\n" + results + "```\n"
    assert typed_figures(fenced) == []  # a directive shown as code renders nothing


def test_pages_are_found():
    assert Path(DOCS / "kernels" / "mandelbrot.md") in PAGES
