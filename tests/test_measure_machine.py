"""The "measure your machine" snippet: CPU-only here (it must say no GPU was found), full on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU, load_snippet, run_snippet

SNIPPET = "machine/measure_machine.py"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("machine")
    proc = run_snippet(SNIPPET, "--quick", "--out", out / "m.json", "--plot", out / "r.png")
    return proc, out


def test_quick_run_measures_the_cpu_and_draws_the_roofline(quick_run):
    proc, out = quick_run
    assert proc.returncode == 0, proc.stderr
    mod = load_snippet(SNIPPET)
    from bench.results import load_results

    doc = load_results(out / "m.json")
    cpu = {(m["case"], m["variant"]) for m in doc["measurements"] if m["device"] == "cpu"}
    assert {("memory", "read"), ("memory", "copy"), ("saxpy", "saxpy"), ("matmul", "fp32")} <= cpu
    assert (out / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "cpu" in mod.roofline.ceilings(doc)
    for m in doc["measurements"]:
        assert m["error"]["value"] <= 1e-4 if "error" in m else m["phase"] == "transfer"


def test_quick_run_says_clearly_when_there_is_no_gpu(quick_run):
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    proc, out = quick_run
    assert proc.stdout.startswith("No GPU found (")
    assert "measured the CPU only" in proc.stdout.splitlines()[0]
    from bench.results import load_results

    doc = load_results(out / "m.json")
    assert any(n.startswith("No GPU found") for n in doc["notes"])
    assert all(m["device"] == "cpu" for m in doc["measurements"])


@pytest.mark.parametrize("args", [["--repeats", "3"], ["--backend", "opencl"], ["--bogus"]])
def test_bad_arguments_give_one_line(args, capsys):
    with pytest.raises(SystemExit) as exc:
        load_snippet(SNIPPET).main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and err.startswith("error:")


def test_no_gpu_backend_explains_why():
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    mod = load_snippet(SNIPPET)
    gpu, why = mod.find_gpu("auto")
    assert gpu is None and ("not installed" in why or "no" in why)


def test_summary_formats_rates_and_bandwidths():
    mod = load_snippet(SNIPPET)
    rows = mod.summary([
        {"case": "matmul", "variant": "bf16", "device": "gpu", "params": {"n": 8192},
         "flops": 2 * 8192**3, "median_s": 2 * 8192**3 / 700e12},
        {"case": "pcie", "variant": "h2d_pinned", "device": "gpu", "params": {"n": 2**28},
         "bytes": 4 * 2**28, "median_s": 4 * 2**28 / 50e9}])
    assert rows[0] == ("GPU BF16 matrix product, n = 8192", "700.000 TFLOP/s")
    assert rows[1] == ("GPU h2d pinned bandwidth, 268,435,456 floats", "50.0 GB/s")


@pytest.mark.gpu
def test_full_run_on_a_gpu(tmp_path):
    proc = run_snippet(SNIPPET, "--quick", "--out", tmp_path / "m.json", "--plot", tmp_path / "r.png")
    assert proc.returncode == 0, proc.stderr
    from bench.results import load_results

    doc = load_results(tmp_path / "m.json")
    gpu = {(m["case"], m["variant"]) for m in doc["measurements"] if m["device"] == "gpu"}
    assert {("memory", "copy"), ("saxpy", "saxpy"), ("pcie", "h2d_pinned"), ("pcie", "d2h_pageable"),
            ("matmul", "fp32")} <= gpu


class NumpyStandIn:
    """The GPU back-end interface, done with NumPy on the host: exercises measure_gpu's flow."""

    name = "NumPy stand-in"

    def __init__(self, mod, broken=False):
        self.mod, self.broken = mod, broken

    def time(self, fn, repeats, warmup=3):
        from bench import timing

        return timing.time_host(fn, repeats, warmup)

    def to_device(self, a):
        return a.copy()

    def to_host(self, d):
        return d.copy()

    def empty_like(self, d):
        return np.empty_like(d)

    def copy(self, dst, src):
        np.copyto(dst, src)

    def saxpy(self, a, x, y):
        if not self.broken:
            y += np.float32(a) * x

    def host_buffer(self, n, pinned):
        a = np.empty(n, np.float32)
        return a, a

    def matmul(self, n, precision):
        if precision != "FP32":
            return None
        rng = np.random.default_rng(1)
        a, b = (rng.uniform(-1, 1, (n, n)).astype(np.float32) for _ in range(2))
        c = np.empty((n, n), np.float32)

        def check():
            return self.mod.rel_error(c[:64], a[:64].astype(np.float64) @ b.astype(np.float64))

        return (lambda: np.matmul(a, b, out=c)), check, 4

    def finish(self):
        pass


def test_gpu_measurements_flow_through_a_stand_in_backend():
    mod = load_snippet(SNIPPET)
    rows, notes = mod.measure_gpu(NumpyStandIn(mod), 1000, 64, 10)
    got = {(m["case"], m["variant"]): m for m in rows}
    assert set(got) == {("memory", "copy"), ("saxpy", "saxpy"), ("pcie", "h2d_pageable"),
                        ("pcie", "d2h_pageable"), ("pcie", "h2d_pinned"), ("pcie", "d2h_pinned"),
                        ("matmul", "fp32")}
    assert got[("memory", "copy")]["role"] == "ceiling" and got[("memory", "copy")]["bytes"] == 8000
    assert got[("matmul", "fp32")]["flops"] == 2 * 64**3
    assert [n.split()[0] for n in notes] == ["TF32", "BF16"]  # said, not silently skipped


def test_gpu_measurements_refuse_a_wrong_saxpy():
    mod = load_snippet(SNIPPET)
    with pytest.raises(RuntimeError, match="wrong elements"):
        mod.measure_gpu(NumpyStandIn(mod, broken=True), 1000, 64, 10)
