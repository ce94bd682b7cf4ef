"""`pytest --codeblocks docs/`, the command readers put in their CI, reports a failing page block
with its page, line, command, exit status and the end of its stderr: with pytest-xdist (`-n 2`)
and without, never an INTERNALERROR (pytest-codeblocks 0.18.0 alone gives the exit status, an
int, as the report: a bare `3`, or xdist's "TypeError: argument of type 'int' is not
iterable"). The README's CI example is checked here too."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from helpers import ROOT

PAGE = ROOT / "tests" / "fixtures" / "codeblocks" / "failing-page.md"


def run_codeblocks(*more: str) -> subprocess.CompletedProcess:
    # -p no:cacheprovider: no .pytest_cache written; -o addopts="": only what a reader types
    return subprocess.run([sys.executable, "-m", "pytest", "--codeblocks", "-p", "no:cacheprovider",
                           "-o", "addopts=", *more, str(PAGE.relative_to(ROOT))],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("parallel", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_failing_block_is_reported_with_its_stderr(parallel):
    proc = run_codeblocks(*parallel)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # tests failed; 3 would be an internal error
    assert "INTERNALERROR" not in out
    assert "1 failed, 1 passed" in out
    assert "failing-page.md, line 11: the block exited with status 3" in out
    assert 'echo "the reason it failed" >&2' in out  # the command
    assert re.search(r"stderr \(last 1 lines\):\n\s+the reason it failed", out), out
    assert "to stdout before failing" in out


def test_readme_ci_example_runs_the_readme_command():
    """The GitHub Actions example in the README sets up what the README says and runs the
    pages' blocks with exactly the command the README documents."""
    readme = (ROOT / "README.md").read_text()
    example = re.search(r"```yaml\n(?P<body>.*?)```", readme, re.S)
    assert example, "README has no CI example"
    body = example["body"]
    assert "pytest --codeblocks docs/" in readme
    steps = re.findall(r"run: (.+)", body)
    assert steps[-1].strip() == ".venv/bin/python -m pytest --codeblocks docs/", steps
    assert any("make .venv/.done" in s for s in steps), steps
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^\.venv/\.done:", makefile, re.M)
