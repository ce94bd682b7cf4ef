"""The snippet contract: every include resolves, every snippet is shown and run, the site builds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT, SNIPPETS

DOCS = ROOT / "docs"
TESTS = ROOT / "tests"
INCLUDE = re.compile(r'--8<--\s+"(?P<target>[^"]+)"')
FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,}|~{3,})(?P<info>.*)$")
COLLECTED_INFO = {"python", "sh", "bash"}  # what pytest-codeblocks executes
RUNNABLE = {".py", ".c", ".cu"}
IGNORED_PARTS = {"__pycache__", ".ipynb_checkpoints"}


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def snippet_files() -> list[Path]:
    return sorted(p for p in SNIPPETS.rglob("*")
                  if p.is_file() and not IGNORED_PARTS & set(p.parts))


def fences(text: str):
    """Yield (info string, body) for each fenced block of a Markdown page."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, body, i = m["ticks"], [], i + 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append(lines[i])
            i += 1
        yield m["info"].strip(), "\n".join(body)
        i += 1


def includes() -> list[tuple[Path, str]]:
    return [(page, m["target"]) for page in pages() for m in INCLUDE.finditer(page.read_text())]


def included_paths() -> set[str]:
    return {target.split(":")[0] for _, target in includes()}


def executed_by_pages() -> str:
    return "\n".join(body for page in pages() for info, body in fences(page.read_text())
                     if info in COLLECTED_INFO)


@pytest.mark.parametrize(("page", "target"), includes(),
                         ids=[f"{p.relative_to(DOCS)}->{t}" for p, t in includes()])
def test_include_target_exists(page, target):
    path, _, section = target.partition(":")
    file = ROOT / path
    assert file.is_file(), f"{page.name} includes {path}, which does not exist"
    if section:
        text = file.read_text()
        assert f"[start:{section}]" in text and f"[end:{section}]" in text, (
            f"{page.name} includes section {section!r} of {path}, which has no such section")


@pytest.mark.parametrize("snippet", snippet_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_snippet_is_included_by_a_page(snippet):
    assert str(snippet.relative_to(ROOT)) in included_paths(), (
        f"{snippet.relative_to(ROOT)} is on no page: include it or delete it")


def test_no_collected_fence_holds_an_include():
    offenders = [f"{page.relative_to(DOCS)} ({info})" for page in pages()
                 for info, body in fences(page.read_text())
                 if info in COLLECTED_INFO and "--8<--" in body]
    assert not offenders, ("these fences would make pytest-codeblocks run a bare --8<-- line; "
                           f"give them a title=: {offenders}")


def is_runnable(path: Path) -> bool:
    text = path.read_text()
    if path.suffix == ".py":
        return '__name__ == "__main__"' in text
    return path.suffix in RUNNABLE and re.search(r"\bint\s+main\s*\(", text) is not None


@pytest.mark.parametrize("snippet", [p for p in snippet_files() if p.suffix in RUNNABLE],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_runnable_snippet_is_executed(snippet):
    if not is_runnable(snippet):
        pytest.skip("a module, not a program")
    rel = str(snippet.relative_to(SNIPPETS))
    tests_text = "\n".join(p.read_text() for p in TESTS.rglob("*.py"))
    assert rel in executed_by_pages() or rel in tests_text, (
        f"snippets/{rel} is run neither by a page's bash block nor by a test")


def test_fence_parser_sees_collected_blocks():
    # Guards the checks above: a parser that found no fences would pass them all.
    text = "```bash\necho hi\n```\n\n```python title=\"x.py\"\n--8<-- \"x.py\"\n```\n"
    assert list(fences(text)) == [("bash", "echo hi"), ('python title="x.py"', '--8<-- "x.py"')]


def test_site_builds_strictly(built_site):
    assert (built_site / "index.html").is_file()
    assert (built_site / "kernels" / "array-addition" / "index.html").is_file()
