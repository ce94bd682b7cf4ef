"""ML accelerators, platforms: the OpenCL vector add and SAXPY, run for real (PoCL on the CPU,
or the GPU's OpenCL driver), device selection, and the OpenCL benchmark."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import SNIPPETS, load_snippet

cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")
sys.path.insert(0, str(SNIPPETS))
from bench.results import load_results  # noqa: E402

ADD = "opencl/vector_add.py"
SAXPY = "opencl/saxpy.py"
DEVICE = "opencl/cl_device.py"
BENCH = "opencl/bench_opencl.py"


@pytest.fixture(scope="module")
def queue():
    dev = load_snippet(DEVICE)
    try:
        device = dev.pick_device("any")
    except dev.NoDevice as exc:
        pytest.skip(f"no OpenCL device: {exc}")
    return dev.make_queue(device)[1]


@pytest.mark.parametrize("n", [1, 6, 255, 256, 257, 100_003])
def test_vector_add_matches_numpy(queue, n):
    mod = load_snippet(ADD)
    a, b = mod.make_inputs(n)
    np.testing.assert_array_equal(mod.add_on_device(queue, a, b), a + b)


def test_vector_add_writes_every_element_and_nothing_past_the_end(queue):
    # NaN-filled output with one guard element after the end: a skipped element stays NaN,
    # and a kernel without its bounds check would overwrite the guard.
    mod = load_snippet(ADD)
    n = 300  # rounds up to 512 work-items: 212 of them must do nothing
    a, b = mod.make_inputs(n)
    out = np.full(n + 1, np.nan, dtype=np.float32)
    out[n] = -1.0
    ctx, mf = queue.context, cl.mem_flags
    d_a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    d_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    d_c = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    kernel = cl.Kernel(cl.Program(ctx, mod.SOURCE).build(), "vector_add")
    kernel(queue, (512,), (256,), d_a, d_b, d_c, np.int64(n))
    cl.enqueue_copy(queue, out, d_c)
    assert not np.isnan(out[:n]).any()
    assert out[n] == -1.0


@pytest.mark.parametrize(("n", "a"), [(1, 2.0), (6, 2.0), (1000, -0.5), (65_537, 0.1), (3, 0.0)])
def test_saxpy_is_within_one_ulp(queue, n, a):
    mod = load_snippet(SAXPY)
    x, y = mod.make_inputs(n)
    out = mod.saxpy_on_device(queue, a, x, y)
    assert mod.mismatches(out, mod.reference(a, x, y)).size == 0


def test_saxpy_check_catches_a_wrong_element():
    mod = load_snippet(SAXPY)
    x, y = mod.make_inputs(100)
    ref = mod.reference(3.0, x, y)
    out = ref.astype(np.float32)
    assert mod.mismatches(out, ref).size == 0
    out[41] = np.nextafter(np.nextafter(out[41], np.inf), np.inf)  # two ulps off
    assert mod.mismatches(out, ref).tolist() == [41]
    out[7] = np.nan
    assert mod.mismatches(out, ref).tolist() == [7, 41]


def test_page_commands_print_what_the_page_shows(queue, capsys):
    assert load_snippet(ADD).main([]) == 0
    assert capsys.readouterr().out == "C = A + B: 8 10 12 14 16 18\nOK: all 6 elements match\n"
    assert load_snippet(SAXPY).main([]) == 0
    assert capsys.readouterr().out == ("y = a*x + y: 4 6 8 10 12 14\n"
                                       "OK: all 6 elements within 1 ulp of a*x + y\n")


@pytest.mark.parametrize(("path", "args"), [(ADD, ["0"]), (ADD, ["ten"]), (ADD, ["--device", "fpga"]),
                                            (SAXPY, ["-3"]), (SAXPY, ["--a", "inf"]),
                                            (SAXPY, ["--a", "x"]), (DEVICE, ["--device", "tpu"]),
                                            (BENCH, ["--n", "0"])])
def test_bad_arguments_give_one_line_and_exit_2(path, args, capsys):
    with pytest.raises(SystemExit) as exc:
        load_snippet(path).main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:")


def test_pick_device_by_kind(queue):
    dev = load_snippet(DEVICE)
    kinds = {dev.kind_of(d) for _, d in dev.all_devices()}
    for kind in ("cpu", "gpu"):
        if kind in kinds:
            assert dev.kind_of(dev.pick_device(kind)) == kind
        else:
            with pytest.raises(dev.NoDevice, match=f"no OpenCL {kind} device"):
                dev.pick_device(kind)
    if "gpu" in kinds:
        assert dev.kind_of(dev.pick_device("any")) == "gpu"  # GPUs first


def test_no_icd_installed_is_a_clear_error(monkeypatch, capsys):
    dev = load_snippet(DEVICE)

    def no_platform():
        raise cl.LogicError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")

    monkeypatch.setattr(dev.cl, "get_platforms", no_platform)
    assert dev.platforms() == []
    with pytest.raises(dev.NoDevice, match="platforms found: none"):
        dev.pick_device("any")
    assert dev.main([]) == 1
    assert capsys.readouterr().err == "error: no OpenCL platform found (no ICD installed)\n"


def test_scripts_say_when_the_device_kind_is_missing(queue, capsys):
    dev = load_snippet(DEVICE)
    if any(dev.kind_of(d) == "gpu" for _, d in dev.all_devices()):
        pytest.skip("this machine has an OpenCL GPU")
    assert load_snippet(SAXPY).main(["--device", "gpu"]) == 1
    assert capsys.readouterr().err.startswith("error: no OpenCL gpu device")


def test_benchmark_writes_a_valid_results_file(queue, tmp_path, capsys):
    out = tmp_path / "ocl.json"
    assert load_snippet(BENCH).main(["--n", "5000", "--repeats", "2", "--out", str(out)]) == 0
    doc = load_results(out)
    rows = {(m["case"], m["phase"]) for m in doc["measurements"]}
    assert {("vector_add", "kernel"), ("vector_add", "end_to_end"), ("saxpy", "kernel"),
            ("saxpy", "end_to_end")} <= rows
    assert all(m["error"]["value"] == 0 and m["bytes"] == 12 * 5000 for m in doc["measurements"])
    kernel = [m for m in doc["measurements"] if m["phase"] == "kernel"]
    assert all(m["clock"] == "opencl-event" for m in kernel)
