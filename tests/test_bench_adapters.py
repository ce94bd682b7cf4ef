"""The harness's adapters (bench/adapters.py): what each times and returns, with NumPy standing
in for a GPU library, and the C runner built around a lesson (bench/runner.cu)."""

from __future__ import annotations

import subprocess
import time

import numpy as np
import pytest

from bench import adapters


class NumpyLib:  # a GPU library's operations, done by NumPy
    put = staticmethod(np.array)
    empty_like = staticmethod(np.empty_like)
    empty = staticmethod(lambda shape: np.empty(shape, np.float32))

    @staticmethod
    def get(d, out=None):
        if out is None:
            return d.copy()
        out[...] = d
        return out


    host = staticmethod(lambda a, pin: a.copy())
    copies: list = []

    @classmethod
    def to_device(cls, h, d):
        cls.copies.append("to_device")
        d[...] = h
        return d

    @classmethod
    def to_host(cls, d, h):
        cls.copies.append("to_host")
        h[...] = d
        return h


@pytest.fixture
def numpy_lib(monkeypatch):
    monkeypatch.setattr(adapters, "_lib", lambda name: NumpyLib)


X, Y = np.arange(8, dtype=np.float32), np.ones(8, np.float32)


def test_on_device_in_place_times_the_kernel_on_arrays_already_there(numpy_lib):
    calls = []

    def axpy(a, x, y):
        calls.append(type(x))
        y += a * x
    prep = adapters.OnDevice("numba", axpy, (2,)).prepare((X, Y), {})
    np.testing.assert_array_equal(prep.run(), 2 * X + Y)  # end to end: fresh inputs each call
    np.testing.assert_array_equal(prep.run(), 2 * X + Y)
    prep.kernel()
    prep.kernel()  # in place on the same device arrays: the second call adds again
    np.testing.assert_array_equal(prep.fetch(), 4 * X + Y)
    np.testing.assert_array_equal(Y, 1)  # the host inputs are never written


def test_on_device_output_like_the_first_input(numpy_lib):
    prep = adapters.OnDevice("numba", lambda x, out: np.copyto(out, x), take=1,
                             out="like").prepare((X, Y), {})
    np.testing.assert_array_equal(prep.run(), X)
    prep.kernel()
    np.testing.assert_array_equal(prep.fetch(), X)


@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_host_copy_times_the_copy_alone_and_checks_what_arrived(numpy_lib, direction):
    prepared = adapters.HostCopy("numba", direction, "pinned").prepare((X, Y), {})
    NumpyLib.copies.clear()
    prepared.kernel()
    assert NumpyLib.copies == ["to_device" if direction == "h2d" else "to_host"]
    assert np.array_equal(prepared.fetch(), X) and np.array_equal(prepared.run(), X)


def test_a_lesson_without_whole_puts_launches_and_gets_its_last_argument():
    def launch(a, b, out):  # writes its last argument, returns nothing
        out[...] = a + b

    row = adapters.Lesson(None, lambda x, y: (x, y, np.zeros_like(x)), launch, get=np.copy)
    prepared = row.prepare((X, Y), {})
    prepared.kernel()
    assert np.array_equal(prepared.fetch(), X + Y) and np.array_equal(prepared.run(), X + Y)


def test_built_times_the_build_and_first_call_apart_then_the_call_alone():
    built, calls = [], []

    def build(scale, params):  # compiled and captured here, once per case
        built.append(params["n"])
        time.sleep(0.05)
        return lambda: calls.append("call") or scale * X[:params["n"]]

    row = adapters.Built(build, (2,), get=lambda out: out.tolist(), record={"extra": {"k": 1}})
    prepared = row.prepare((), {"n": 3})
    assert built == [3] and calls == ["call"]  # the first call is made in prepare
    assert row.first_call_s({"n": 3}) >= 0.05 and row.first_call_s({"n": 4}) is None
    assert prepared.kernel() is None and calls == ["call"] * 2  # launched, not fetched
    assert prepared.fetch() == [0.0, 2.0, 4.0] == prepared.run() and len(calls) == 3
    assert prepared.record == {"extra": {"k": 1}} and built == [3]


def test_on_host_returns_what_the_function_returns_or_its_output():
    total = adapters.OnHost(lambda x: float(x.sum()), take=1).prepare((X, Y), {})
    assert total.run() == 28.0
    axpy = adapters.OnHost(lambda a, x, y: np.add(a * x, y, out=y), (3,)).prepare((X, Y), {})
    np.testing.assert_array_equal(axpy.run(), 3 * X + Y)
    np.testing.assert_array_equal(Y, 1)  # it ran on copies


def test_a_lesson_named_by_module_and_function_is_imported_when_measured():
    assert adapters.resolve("math:sqrt")(9) == 3
    with pytest.raises(ModuleNotFoundError):
        adapters.resolve("no_such_lesson:f")


def test_ctable_passes_the_case_size_to_the_runner(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(adapters, "runner_output",
                        lambda lesson, args, flags=(): seen.setdefault("args", args))
    adapters.CTable(tmp_path / "x.cu").prepare((), {"n": 1000}).external()
    assert seen.pop("args")[-1] == "1000"
    adapters.CTable(tmp_path / "x.cu").prepare((), {"m": 3, "n": 4, "k": 5}).external()
    assert seen["args"][-1] == "3x4x5"


# ---------------------------------------------------------------- the C runner

@pytest.fixture(scope="module")
def runner(nvcc_build):
    return nvcc_build("bench/runner.cu", "-arch=sm_90", '-DLESSON="../saxpy/saxpy.cu"')


def run(binary, *args):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=60)


def test_runner_help_lists_the_lessons_table(runner):
    out = run(runner, "--help")
    assert out.returncode == 0 and "--bench" in out.stdout and "cuda_c_float4" in out.stdout


@pytest.mark.parametrize("args", [["0"], ["-3"], ["abc"], ["12x"], ["1e9"], ["nan"],
                                  ["99999999999999999999"], ["8589934593"], ["3x4x5"],
                                  ["--repeats", "5"], ["--budget", "inf"], ["--kernel", "nope"],
                                  ["--repeats"], ["--bogus"]])
def test_runner_rejects_bad_arguments_before_touching_the_gpu(runner, args):
    out = run(runner, *args)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error:")


def test_runner_without_a_gpu_fails_with_the_cuda_error(runner):
    from conftest import HAS_GPU

    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    out = run(runner, "--bench", "1000")
    assert out.returncode == 1 and "CUDA error: cudaError" in out.stderr
    assert "BENCH" not in out.stdout


def test_a_kernel_that_failed_its_check_fails_its_row(monkeypatch, tmp_path):
    fake = tmp_path / "bench-x"
    fake.write_text("#!/bin/sh\necho 'BENCH {\"variant\": \"k\", \"samples_s\": [], "
                    "\"error\": {\"metric\": \"mismatched_elements\", \"value\": 3, "
                    "\"ok\": false}}'\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(adapters, "runner_binary", lambda lesson, flags=(): fake)
    with pytest.raises(RuntimeError, match="failed its check.*mismatched_elements"):
        adapters.runner_output(tmp_path / "x.cu", ["--bench", "10"])
