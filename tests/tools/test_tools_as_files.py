"""The site tools need the repository root on the path (they share tests/site's browser helpers):
run as a file instead of `python -m tools.X`, they say so in one line, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.parametrize("tool", ["site_report", "screenshots"])
def test_run_as_a_file_is_one_line(tool, tmp_path):
    (tmp_path / "index.html").write_text("<p>a built site</p>")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "snippets")}
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / f"{tool}.py"), "--site",
                           str(tmp_path)] if tool == "site_report" else
                          [sys.executable, str(ROOT / "tools" / f"{tool}.py"), str(tmp_path), "x",
                           "-o", str(tmp_path / "shots")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: run it from the repository root as: python -m "
                                  f"tools.{tool}") and proc.stderr.count("\n") == 1


def test_site_report_with_stdout_closed_is_one_line_before_any_work(tmp_path):
    """`>&-`: its report would go nowhere, so it says so at once rather than measure the site
    for minutes and end silently."""
    (tmp_path / "index.html").write_text("<p>a built site</p>")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "snippets")}
    try:
        proc = subprocess.run(["bash", "-c", f"{sys.executable} -m tools.site_report --site "
                               f"{tmp_path} >&-"], capture_output=True, text=True, timeout=60,
                              cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("it went on measuring with standard output closed")
    assert (proc.returncode, proc.stderr) == (
        1, "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
