"""OpenCL (platforms page): vector add and SAXPY run for real on Intel's OpenCL CPU runtime (or a
GPU's driver), device listing, one-line errors for a missing driver or a failed build, the
ICD registration helper, the benchmark, and the same kernels on a CPU model LLVM does not know.

The test environment's CPU driver is Intel's (PyPI: intel-opencl-rt), registered with the ICD
loader by snippets/opencl/register_intel_cpu.py: `make test` does it and sets OCL_ICD_VENDORS;
run alone, this module does the same before any test asks for a platform.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, SNIPPETS, load_snippet, run_snippet

cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")

ADD = "opencl/vector_add.py"
SAXPY = "opencl/saxpy.py"
DEVICE = "opencl/cl_device.py"
REGISTER = "opencl/register_intel_cpu.py"
CLIS = (ADD, SAXPY, DEVICE, REGISTER)
# Where the suite must find an OpenCL device: Intel's runtime is in the lock file there.
MUST_RUN = sys.platform == "linux" and platform.machine() == "x86_64"

# What PoCL 3.0 (pocl-binary-distribution, LLVM 14) raised through pyopencl on an AMD CPU of
# family 0x1f under qemu-x86_64, recorded once: LLVM named the CPU "generic" and clang refused it.
POCL_UNKNOWN_CPU = (
    "clBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram failed: BUILD_PROGRAM_FAILURE - "
    "clBuildProgram failed: BUILD_PROGRAM_FAILURE\n\nBuild on <pyopencl.Device 'pthread-AMD EPYC' "
    "on 'Portable Computing Language' at 0x4000552700>:\n\nerror: unknown target CPU 'generic'\n"
    "Device pthread-AMD EPYC failed to build the program\n\n(options: -I /x/pyopencl/cl)")


def _register_intel_runtime() -> None:
    """Without `make test`, point the ICD loader at Intel's runtime in a temporary folder."""
    if "OCL_ICD_VENDORS" in os.environ:
        return
    reg = load_snippet(REGISTER)
    library = reg.intel_library()
    if library is not None:
        folder = Path(tempfile.mkdtemp(prefix="opencl-vendors-"))
        reg.register(folder, library)
        os.environ["OCL_ICD_VENDORS"] = str(folder)


_register_intel_runtime()  # at collection, before any test (or page command) loads a driver


@pytest.fixture(scope="module")
def queue():
    mod = load_snippet(ADD)
    try:
        device = mod.pick_device("any")
    except mod.OpenCLProblem as exc:
        if MUST_RUN:
            pytest.fail(f"the OpenCL tests must run here, but: {exc}")
        pytest.skip(f"no OpenCL device: {exc}")
    ctx = cl.Context([device])
    yield cl.CommandQueue(ctx)
    del ctx


def one_line_error(proc: subprocess.CompletedProcess, code: int) -> str:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error:"), proc.stderr
    return proc.stderr


# --- the kernels, for real ---------------------------------------------------------------------

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
    kernel = cl.Kernel(mod.build(ctx, mod.SOURCE), "vector_add")
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


def test_page_commands_print_what_the_page_shows(queue):
    proc = run_snippet(ADD)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, "C = A + B: 8 10 12 14 16 18\nOK: all 6 elements match\n", "")
    proc = run_snippet(SAXPY)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, "y = a*x + y: 4 6 8 10 12 14\nOK: all 6 elements within 1 ulp of a*x + y\n", "")


def test_device_list_says_each_device_compiles(queue):
    proc = run_snippet(DEVICE)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines and all(line.endswith(": compiles") for line in lines), proc.stdout


def test_pick_device_by_kind(queue):
    mod = load_snippet(ADD)
    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    for kind, flag in (("cpu", cl.device_type.CPU), ("gpu", cl.device_type.GPU)):
        if any(d.type & flag for d in devices):
            assert mod.pick_device(kind).type & flag
        else:
            with pytest.raises(mod.OpenCLProblem, match=f"no OpenCL {kind} device"):
                mod.pick_device(kind)
    if any(d.type & cl.device_type.GPU for d in devices):
        assert mod.pick_device("any").type & cl.device_type.GPU  # GPUs first


# --- one line, never a traceback ---------------------------------------------------------------

@pytest.mark.parametrize("path", CLIS)
def test_help_exits_0(path):
    proc = run_snippet(path, "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage:") and not proc.stderr


@pytest.mark.parametrize("path", [ADD, SAXPY, DEVICE])
def test_without_pyopencl_help_works_and_running_names_the_package(path, tmp_path):
    (tmp_path / "pyopencl.py").write_text("raise ModuleNotFoundError(\"No module named 'pyopencl'\")\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # ahead of site-packages: pyopencl "missing"
    helped = run_snippet(path, "--help", env=env)
    assert helped.returncode == 0 and helped.stdout.startswith("usage:"), helped.stderr
    err = one_line_error(run_snippet(path, env=env), 2)
    assert "pip install pyopencl" in err


BAD_ARGS = [(ADD, ["0"]), (ADD, ["-5"]), (ADD, ["ten"]), (ADD, ["1.5"]), (ADD, ["9" * 30]),
            (ADD, ["--device", "fpga"]), (SAXPY, ["-3"]), (SAXPY, ["nan"]), (SAXPY, ["--a", "inf"]),
            (SAXPY, ["--a", "nan"]), (SAXPY, ["--a", "1e39"]), (SAXPY, ["--a", "x"]),
            (SAXPY, [str(2**31)]), (DEVICE, ["--device", "tpu"]), (DEVICE, ["extra"]),
            (REGISTER, ["--bogus"])]


@pytest.mark.parametrize(("path", "args"), BAD_ARGS)
def test_bad_arguments_give_one_line_and_exit_2(path, args):
    one_line_error(run_snippet(path, *args), 2)


@pytest.mark.parametrize("path", [ADD, SAXPY, DEVICE])
def test_no_driver_at_all_is_one_line_naming_the_fix(path, tmp_path):
    empty = tmp_path / "vendors"  # an ICD folder with no driver in it
    empty.mkdir()
    env = {**os.environ, "OCL_ICD_VENDORS": str(empty)}
    proc = run_snippet(path, env=env)
    if proc.returncode == 0:  # pyopencl's own PoCL wheel registers itself wherever it is installed
        pytest.skip("a driver bundled with pyopencl is still visible")
    err = one_line_error(proc, 1)
    assert "no OpenCL device" in err and "fix: install" in err


@pytest.mark.parametrize("path", [ADD, SAXPY])
def test_missing_gpu_is_one_line(queue, path):
    if any(d.type & cl.device_type.GPU for p in cl.get_platforms() for d in p.get_devices()):
        pytest.skip("this machine has an OpenCL GPU")
    err = one_line_error(run_snippet(path, "--device", "gpu"), 1)
    assert "no OpenCL gpu device" in err and "OpenCL ICD" in err


def test_unknown_cpu_build_failure_is_explained_in_one_line():
    mod = load_snippet(ADD)

    class Device:  # what explain_build_failure reads from a device
        name = "pthread-AMD EPYC"

        class platform:  # noqa: N801 (pyopencl's attribute name)
            name = "Portable Computing Language"

    text = mod.explain_build_failure(Device, POCL_UNKNOWN_CPU)
    assert "\n" not in text
    assert "does not know the CPU model" in text and "unknown target CPU 'generic'" in text
    assert "pip install intel-opencl-rt intel-cmplr-lib-rt" in text


@pytest.mark.parametrize("path", [ADD, SAXPY])
def test_a_failed_build_is_one_line_with_cause_and_fix(queue, path, monkeypatch, capsys):
    """The driver's own refusal, for real: a kernel source that does not compile."""
    mod = load_snippet(path)
    monkeypatch.setattr(mod, "SOURCE", "__kernel void broken(__global float *x) { x[0] = y; }")
    assert mod.main([]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: the OpenCL driver could not compile")
    assert "fix:" in err


@pytest.mark.parametrize("path", [ADD, SAXPY])
def test_pocl_unknown_cpu_failure_reaches_the_reader_as_one_line(queue, path, monkeypatch, capsys):
    mod = load_snippet(path)

    def refuse(self, *args, **kwargs):
        raise cl.RuntimeError(POCL_UNKNOWN_CPU)

    monkeypatch.setattr(cl.Program, "build", refuse)
    assert mod.main([]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot compile for this CPU" in err
    assert "intel-opencl-rt" in err


def test_device_list_names_the_fix_when_nothing_compiles(queue, monkeypatch, capsys):
    mod = load_snippet(DEVICE)

    def refuse(self, *args, **kwargs):
        raise cl.RuntimeError(POCL_UNKNOWN_CPU)

    monkeypatch.setattr(cl.Program, "build", refuse)
    assert mod.main([]) == 1
    out, err = capsys.readouterr()
    assert "cannot compile (error: unknown target CPU 'generic')" in out
    assert err.count("\n") == 1 and err.startswith("error: no OpenCL device here can compile")
    assert "pip install intel-opencl-rt intel-cmplr-lib-rt" in err


@pytest.mark.parametrize("path", [ADD, SAXPY])
def test_sizes_that_cannot_fit_are_refused_before_allocating(queue, path):
    err = one_line_error(run_snippet(path, str(2**31 - 1)), 1)
    assert "choose a smaller N" in err


@pytest.mark.parametrize("path", [ADD, SAXPY])
def test_ctrl_c_is_one_line_and_exit_130(path, monkeypatch, capsys):
    mod = load_snippet(path)

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(mod, "run", interrupted)
    assert mod.main([]) == 130
    assert capsys.readouterr().err == "interrupted\n"


# --- registering Intel's runtime with the ICD loader -------------------------------------------

def test_register_writes_the_library_and_keeps_system_drivers(tmp_path):
    reg = load_snippet(REGISTER)
    system = tmp_path / "etc-vendors"
    system.mkdir()
    (system / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
    lib = tmp_path / "lib" / "libintelocl.so"
    lib.parent.mkdir()
    lib.write_bytes(b"")
    out = tmp_path / "vendors"
    assert reg.register(out, lib, system=system) == ["nvidia.icd", "intel-cpu.icd"]
    assert (out / "intel-cpu.icd").read_text() == f"{lib.resolve()}\n"
    assert (out / "nvidia.icd").read_text() == "libnvidia-opencl.so.1\n"
    assert sorted(p.name for p in out.iterdir()) == ["intel-cpu.icd", "nvidia.icd"]  # no temp


def test_register_cli_prints_the_export_line(tmp_path):
    proc = run_snippet(REGISTER, "--dir", tmp_path / "v", "--optional")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"export OCL_ICD_VENDORS={(tmp_path / 'v').resolve()}\n"


@pytest.mark.parametrize("where", ["file", "under_file"])
def test_register_refuses_unusable_folders_in_one_line(tmp_path, where):
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me\n")
    target = blocker if where == "file" else blocker / "sub"
    err = one_line_error(run_snippet(REGISTER, "--dir", target, "--optional"), 1)
    assert "is a file, not a folder" in err
    assert blocker.read_text() == "keep me\n"


def test_register_without_the_runtime_names_the_package(tmp_path):
    proc = subprocess.run([sys.executable, "-I", "-c",
                           "import sys, runpy; sys.prefix = sys.argv[1]; sys.argv = sys.argv[1:]; "
                           f"runpy.run_path({str(SNIPPETS / REGISTER)!r}, run_name='__main__')",
                           str(tmp_path), "--dir", str(tmp_path / "v")],
                          capture_output=True, text=True, timeout=60)
    err = one_line_error(proc, 1)
    assert "pip install intel-opencl-rt intel-cmplr-lib-rt" in err


def test_an_interrupted_write_keeps_the_earlier_file(tmp_path, monkeypatch):
    reg = load_snippet(REGISTER)
    out = tmp_path / "vendors"
    out.mkdir()
    (out / "intel-cpu.icd").write_text("/earlier/libintelocl.so\n")

    def interrupt(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(reg.os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        reg.register(out, tmp_path / "libintelocl.so", system=tmp_path / "none")
    assert (out / "intel-cpu.icd").read_text() == "/earlier/libintelocl.so\n"
    assert [p.name for p in out.iterdir()] == ["intel-cpu.icd"]


# --- the benchmark -----------------------------------------------------------------------------

def test_benchmark_writes_a_valid_results_file(queue, tmp_path):
    from bench.results import load_results

    out = tmp_path / "ocl.json"
    proc = subprocess.run([sys.executable, str(SNIPPETS / "bench" / "run.py"), "opencl",
                           "--cases", "smoke", "--output", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = load_results(out)
    rows = {(m["case"], m["variant"], m["phase"]) for m in doc["measurements"]}
    assert {("smoke", "opencl_cpu", "kernel"), ("smoke", "opencl_cpu", "end_to_end")} <= rows
    for m in doc["measurements"]:
        assert m["error"]["value"] == 0 and m["bytes"] == 12 * 5000
        assert m["repeats"] >= 10 and m["params"]["n"] == 5000 and m["params"]["device_name"]
    clocks = {m["phase"]: m["clock"] for m in doc["measurements"]}
    assert clocks == {"kernel": "opencl-event (external)", "end_to_end": "host (external)"}


def test_benchmark_reports_a_wrong_kernel_as_failed(queue, tmp_path, monkeypatch):
    from bench import runner

    bench = runner.load("opencl")
    monkeypatch.setattr(bench.setup.__globals__["vector_add"], "SOURCE",
                        load_snippet(ADD).SOURCE.replace("a[i] + b[i]", "a[i] - b[i]"))
    found, notes = runner.run_benchmark(bench, ["smoke"], compile_runs=0)
    assert found == [] and runner.failures(notes)
    assert "mismatched_elements" in runner.failures(notes)[0]


# --- a CPU model LLVM does not know ------------------------------------------------------------

UNKNOWN_CPU = "EPYC-Milan,family=31,model=1"  # AMD, a family no LLVM release names


@pytest.mark.skipif(shutil.which("qemu-x86_64") is None or not MUST_RUN,
                    reason="needs qemu-x86_64 (Debian's qemu-user, which `make test` installs "
                           "when run as root)")
def test_unknown_cpu_model_runs_the_kernels(queue):
    """Under qemu-x86_64 the CPUID instruction reports an AMD CPU of family 0x1f: LLVM's own
    detection (llvmlite's, LLVM 20+) calls it "generic", the case where PoCL fails every build;
    Intel's runtime must still compile and run the page's kernels."""
    def emulated(*args):
        return subprocess.run(["qemu-x86_64", "-cpu", UNKNOWN_CPU, sys.executable, *args],
                              capture_output=True, text=True, timeout=600, cwd=ROOT)

    llvm = emulated("-c", "import llvmlite.binding as b; print(b.get_host_cpu_name())")
    assert llvm.returncode == 0, llvm.stderr[-1000:]
    assert llvm.stdout.strip() == "generic"
    for path, expected in ((ADD, "OK: all 100003 elements match"),
                           (SAXPY, "OK: all 100003 elements within 1 ulp of a*x + y")):
        proc = emulated(str(SNIPPETS / path), "100003", "--device", "cpu")
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.splitlines()[-1] == expected
