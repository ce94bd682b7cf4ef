"""Lessons that take a size check it, and lessons that take none refuse one: a bad argument is
one line on stderr and exit status 2, before any work (no traceback, no "OK" for -5)."""
import runpy
import sys
from pathlib import Path

import pytest

SNIPPETS = Path(__file__).resolve().parents[1] / "snippets"
SIZED = ["saxpy/saxpy_numpy.py", "saxpy/saxpy_numba_cpu.py", "saxpy/saxpy_numba_cuda.py",
         "saxpy/saxpy_cupy.py", "reduction/reduce_numba.py", "array_addition/vector_add_numba.py"]
BAD_SIZES = [["-5"], ["0"], [str(2**28 + 1)], ["99999999999999"], ["x"], ["3", "4"]]


def run_lesson(lesson: str, args: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    path = SNIPPETS / lesson
    if "cupy" in lesson:
        pytest.importorskip("cupy")
    monkeypatch.syspath_prepend(str(path.parent))  # its companions, as when copied together
    monkeypatch.setattr(sys, "argv", [str(path), *args])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(path), run_name="__main__")
    out, err = capsys.readouterr()
    return exit_.value.code, out, err


@pytest.mark.parametrize("lesson", SIZED)
@pytest.mark.parametrize("args", BAD_SIZES, ids=" ".join)
def test_a_bad_size_is_one_line_and_status_2(lesson, args, monkeypatch, capsys):
    code, out, err = run_lesson(lesson, args, monkeypatch, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "error:" in err, (out, err)


@pytest.mark.parametrize(("lesson", "args"), [
    ("reduction/softmax_numba.py", ["0", "5"]),
    ("reduction/softmax_numba.py", ["7"]),
    ("reduction/softmax_numba.py", ["65536", "65536"]),
    ("saxpy/show_ptx.py", ["1000"]),
    ("saxpy/littles_law.py", ["--sms", "0"]),
    ("saxpy/littles_law.py", ["--latency-ns", "inf"]),
    ("mandelbrot/mandelbrot.py", ["-5"]),  # takes no arguments
])
def test_other_bad_arguments_are_one_line_and_status_2(lesson, args, monkeypatch, capsys):
    code, out, err = run_lesson(lesson, args, monkeypatch, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "error:" in err, (out, err)
