"""The bad-input habit every command-line snippet carries: one habit, copied, never drifting.

A teaching file runs on its own, so it cannot import a shared module; instead each carries the
same few blocks (CONTRIBUTING.md, "Snippets"): the Ctrl-C handler installed before any import
that can be slow, `number()` for bounded numeric arguments, `output_file()` and
`write_atomically()` where it writes a file. These tests hold every copy to the others and
check that the handler really is in place before the first third-party import: Ctrl-C while
`import jax` or `import tensorflow` is still loading is one line and exit code 130, not a
KeyboardInterrupt traceback.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SNIPPETS = ROOT / "snippets"
HABIT = ("interrupted", "number", "output_file", "write_atomically")
# Lessons (DESIGN.md, "The snippet contract": a kernel, its launch, a check and a short demo)
# carry none of the habit; argparse's own errors are enough for them.
LESSONS = {"matmul/sgemm_numba.py"}
# The harness (snippets/bench/) is not copied by readers: it shares bench.cli instead.
CLIS = sorted(p for p in SNIPPETS.rglob("*.py") if "bench" not in p.relative_to(SNIPPETS).parts
              and str(p.relative_to(SNIPPETS)) not in LESSONS
              and 'if __name__ == "__main__":' in p.read_text())


def is_handler(node: ast.stmt) -> bool:
    """`if __name__ == "__main__": signal.signal(signal.SIGINT, interrupted)` at module level."""
    return (isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
            and "signal.signal(signal.SIGINT, interrupted)" in ast.unparse(node))


def imported(node: ast.stmt) -> list[str]:
    """Top-level module names a module-level statement imports (also inside try/if blocks)."""
    names = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import):
            names += [a.name.split(".")[0] for a in sub.names]
        elif isinstance(sub, ast.ImportFrom) and sub.level == 0 and sub.module:
            names.append(sub.module.split(".")[0])
    return names


def first_third_party_import(path: Path, companions: bool = False) -> tuple[int, str] | None:
    """The first module-level import not from the standard library; a companion file beside
    the snippet counts only with `companions`."""
    for i, node in enumerate(ast.parse(path.read_text()).body):
        for name in imported(node):
            if name not in sys.stdlib_module_names and name != "__future__" and (
                    companions or not (path.parent / f"{name}.py").exists()):
                return i, name
    return None


def habit_blocks(path: Path) -> dict[str, str]:
    text = path.read_text()
    tree = ast.parse(text)
    return {node.name: ast.get_source_segment(text, node) for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name in HABIT}


def test_every_command_line_snippet_is_found():
    names = {p.name for p in CLIS}
    assert {"xla_jax.py", "train.py", "saxpy_numpy.py", "matmul_triton.py"} <= names, names
    assert len(CLIS) >= 25


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_lessons_carry_none_of_the_habit(lesson):
    path = SNIPPETS / lesson
    assert 'if __name__ == "__main__":' in path.read_text()
    assert not habit_blocks(path) and "signal.signal" not in path.read_text()


@pytest.mark.parametrize("path", CLIS, ids=lambda p: str(p.relative_to(SNIPPETS)))
def test_the_interrupt_handler_comes_before_any_slow_import(path):
    tree = ast.parse(path.read_text())
    handler = [i for i, node in enumerate(tree.body) if is_handler(node)]
    assert handler, f"{path.name}: no module-level Ctrl-C handler (habit block 1)"
    assert "interrupted" in habit_blocks(path)
    found = first_third_party_import(path, companions=True)
    if found:
        assert handler[0] < found[0], f"{path.name}: `import {found[1]}` comes before the handler"


@pytest.mark.parametrize("name", HABIT)
def test_every_copy_of_a_habit_block_is_the_same(name):
    copies: dict[str, list[str]] = {}
    for path in CLIS:
        if block := habit_blocks(path).get(name):
            copies.setdefault(block, []).append(path.name)
    assert copies, f"no snippet defines {name}()"
    assert len(copies) == 1, f"{name}() differs between copies: {sorted(copies.values())}"


SLOW_IMPORTS = [(p, found[1]) for p in CLIS if (found := first_third_party_import(p))]


@pytest.mark.parametrize("path,module", SLOW_IMPORTS,
                         ids=[str(p.relative_to(SNIPPETS)) for p, _ in SLOW_IMPORTS])
def test_ctrl_c_during_the_first_slow_import_is_one_line_and_exit_130(path, module, tmp_path):
    # A stand-in for the snippet's first third-party module, found first on the path: it
    # presses Ctrl-C on its own process while "loading", as a reader would during `import jax`.
    (tmp_path / f"{module}.py").write_text(
        "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n")
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=60, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 130, (out.returncode, out.stderr[-800:])
    assert out.stderr == "interrupted\n", out.stderr[-800:]
