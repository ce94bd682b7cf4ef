"""OpenCL (platforms page): vector add and SAXPY, one program, run for real on Intel's OpenCL CPU
runtime (or a GPU's driver), device listing, one-line errors for a missing driver or a failed
build, the ICD registration helper (a tool: Ctrl-C, atomic writes), the benchmark, and the same kernels on a
CPU model LLVM does not know.

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

from helpers import ROOT, SNIPPETS, load_benchmark, load_snippet, run_snippet, FULL, run_to

cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")

KERNELS = "opencl/vector_add_saxpy.py"  # imports cl_device.py, beside it
DEVICE = "opencl/cl_device.py"
REGISTER = "opencl/register_intel_cpu.py"
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
def ocl():
    """The kernels program, importing cl_device.py from its own folder as it does for a reader."""
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(SNIPPETS / "opencl"))
        yield load_snippet(KERNELS)


@pytest.fixture(scope="module")
def queue(ocl):
    try:
        device = ocl.pick_device("any")
    except ocl.OpenCLProblem as exc:
        if MUST_RUN:
            pytest.fail(f"the OpenCL tests must run here, but: {exc}")
        pytest.skip(f"no OpenCL device: {exc}")
    ctx = cl.Context([device])
    yield cl.CommandQueue(ctx)
    del ctx


@pytest.fixture(scope="module")
def program(ocl, queue):
    return ocl.build(queue.context, ocl.SOURCE)


def one_line_error(proc: subprocess.CompletedProcess, code: int) -> str:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error:"), proc.stderr
    return proc.stderr


# --- the kernels, for real ---------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 6, 255, 256, 257, 100_003])
def test_vector_add_matches_numpy(ocl, queue, program, n):
    a, b = ocl.add_inputs(n)
    np.testing.assert_array_equal(ocl.add_on_device(queue, program, a, b), a + b)


def test_vector_add_writes_every_element_and_nothing_past_the_end(ocl, queue, program):
    # NaN-filled output with one guard element after the end: a skipped element stays NaN,
    # and a kernel without its bounds check would overwrite the guard.
    n = 300  # rounds up to 512 work-items: 212 of them must do nothing
    a, b = ocl.add_inputs(n)
    out = np.full(n + 1, np.nan, dtype=np.float32)
    out[n] = -1.0
    ctx, mf = queue.context, cl.mem_flags
    d_a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    d_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    d_c = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    cl.Kernel(program, "vector_add")(queue, (512,), (256,), d_a, d_b, d_c, np.int64(n))
    cl.enqueue_copy(queue, out, d_c)
    assert not np.isnan(out[:n]).any()
    assert out[n] == -1.0


@pytest.mark.parametrize(("n", "a"), [(1, 2.0), (6, 2.0), (1000, -0.5), (65_537, 0.1), (3, 0.0)])
def test_saxpy_is_within_one_ulp(ocl, queue, program, n, a):
    x, y = ocl.saxpy_inputs(n)
    out = ocl.saxpy_on_device(queue, program, a, x, y)
    assert ocl.mismatches(out, ocl.saxpy_reference(a, x, y)).size == 0


def test_saxpy_check_catches_a_wrong_element(ocl):
    x, y = ocl.saxpy_inputs(100)
    ref = ocl.saxpy_reference(3.0, x, y)
    out = ref.astype(np.float32)
    assert ocl.mismatches(out, ref).size == 0
    out[41] = np.nextafter(np.nextafter(out[41], np.inf), np.inf)  # two ulps off
    assert ocl.mismatches(out, ref).tolist() == [41]
    out[7] = np.nan
    assert ocl.mismatches(out, ref).tolist() == [7, 41]


PAGE_OUTPUT = {  # what the platforms page shows for each kernel at N = 6
    "vector_add": "C = A + B: 8 10 12 14 16 18\nOK: all 6 elements match\n",
    "saxpy": "y = a*x + y: 4 6 8 10 12 14\nOK: all 6 elements within 1 ulp of a*x + y\n"}


@pytest.mark.parametrize("kernel", ["both", "vector_add", "saxpy"])
def test_page_command_prints_what_the_page_shows(queue, kernel):
    proc = run_snippet(KERNELS, "--kernel", kernel)
    expected = "".join(text for name, text in PAGE_OUTPUT.items() if kernel in ("both", name))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, "")


def test_a_wrong_element_is_reported_and_exits_1(ocl, queue, monkeypatch, capsys):
    monkeypatch.setattr(ocl, "add_on_device", lambda *args: np.zeros(6, np.float32))
    assert ocl.main([]) == 1
    out, err = capsys.readouterr()
    assert err == "error: 6 of 6 elements are wrong (first at index 0)\n"
    assert out.endswith(PAGE_OUTPUT["saxpy"])  # SAXPY still runs and passes


def test_device_list_says_each_device_compiles(queue):
    proc = run_snippet(DEVICE)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines and all(line.endswith(": compiles") for line in lines), proc.stdout


def test_pick_device_by_kind(ocl, queue):
    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    for kind, flag in (("cpu", cl.device_type.CPU), ("gpu", cl.device_type.GPU)):
        if any(d.type & flag for d in devices):
            assert ocl.pick_device(kind).type & flag
        else:
            with pytest.raises(ocl.OpenCLProblem, match=f"no OpenCL {kind} device"):
                ocl.pick_device(kind)
    if any(d.type & cl.device_type.GPU for d in devices):
        assert ocl.pick_device("any").type & cl.device_type.GPU  # GPUs first


# --- one line, never a traceback ---------------------------------------------------------------

def test_register_help_and_bad_arguments():
    proc = run_snippet(REGISTER, "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage:") and not proc.stderr
    one_line_error(run_snippet(REGISTER, "--bogus"), 2)


@pytest.mark.parametrize("path", [KERNELS, DEVICE])
def test_no_driver_at_all_is_one_line_naming_the_fix(path, tmp_path):
    empty = tmp_path / "vendors"  # an ICD folder with no driver in it
    empty.mkdir()
    env = {**os.environ, "OCL_ICD_VENDORS": str(empty)}
    proc = run_snippet(path, env=env)
    if proc.returncode == 0:  # pyopencl's own PoCL wheel registers itself wherever it is installed
        pytest.skip("a driver bundled with pyopencl is still visible")
    err = one_line_error(proc, 1)
    assert "no OpenCL device" in err and "fix: install" in err


def test_missing_gpu_is_one_line(queue):
    if any(d.type & cl.device_type.GPU for p in cl.get_platforms() for d in p.get_devices()):
        pytest.skip("this machine has an OpenCL GPU")
    err = one_line_error(run_snippet(KERNELS, "--device", "gpu"), 1)
    assert "no OpenCL gpu device" in err and "OpenCL ICD" in err


def test_unknown_cpu_build_failure_is_explained_in_one_line():
    mod = load_snippet(DEVICE)

    class Device:  # what explain_build_failure reads from a device
        name = "pthread-AMD EPYC"

        class platform:  # noqa: N801 (pyopencl's attribute name)
            name = "Portable Computing Language"

    text = mod.explain_build_failure(Device, POCL_UNKNOWN_CPU)
    assert "\n" not in text
    assert "does not know the CPU model" in text and "unknown target CPU 'generic'" in text
    assert "pip install intel-opencl-rt intel-cmplr-lib-rt" in text


@pytest.mark.parametrize("kernel", ["vector_add", "saxpy"])
def test_a_failed_build_is_one_line_with_cause_and_fix(ocl, queue, kernel, monkeypatch, capsys):
    """The driver's own refusal, for real: a kernel source that does not compile."""
    monkeypatch.setattr(ocl, "SOURCE", "__kernel void broken(__global float *x) { x[0] = y; }")
    assert ocl.main(["--kernel", kernel]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: the OpenCL driver could not compile")
    assert "fix:" in err


@pytest.mark.parametrize("path", [KERNELS, DEVICE])
def test_pocl_unknown_cpu_failure_reaches_the_reader_as_one_line(ocl, queue, path, monkeypatch,
                                                                 capsys):
    def refuse(self, *args, **kwargs):
        raise cl.RuntimeError(POCL_UNKNOWN_CPU)

    if path == KERNELS:
        monkeypatch.setattr(cl.Program, "build", refuse)
        assert ocl.main([]) == 1
        out, err = capsys.readouterr()
    else:  # the device list runs as a reader runs it, with the build refused the same way
        code = ("import pyopencl as cl, runpy, sys\n"
                f"def refuse(self, *a, **k): raise cl.RuntimeError({POCL_UNKNOWN_CPU!r})\n"
                "cl.Program.build = refuse\nsys.path.insert(0, sys.argv[1].rpartition('/')[0])\n"
                "runpy.run_path(sys.argv[1], run_name='__main__')\n")
        proc = subprocess.run([sys.executable, "-c", code, str(SNIPPETS / DEVICE)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1
        out, err = proc.stdout, proc.stderr
    assert err.count("\n") == 1 and "pip install intel-opencl-rt intel-cmplr-lib-rt" in err
    if path == KERNELS:
        assert "cannot compile for this CPU" in err and not out
    else:  # the device list shows the driver's own line, and the fix once at the end
        assert "cannot compile (error: unknown target CPU 'generic')" in out
        assert err.startswith("error: no OpenCL device here can compile")


CTRL_C = "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n"
CTRL_C_AT = (  # `python -c CTRL_C_AT module.name.attr FILE ARGS`: Ctrl-C when FILE calls that
    "import importlib, runpy, sys\n"
    "module, *names = sys.argv[1].split('.')\n"
    "owner = importlib.import_module(module)\n"
    "for name in names[:-1]:\n"
    "    owner = getattr(owner, name)\n"
    f"setattr(owner, names[-1], lambda *args, **kwargs: exec({CTRL_C!r}))\n"
    "sys.argv = sys.argv[2:]\n"
    "sys.path.insert(0, sys.argv[0].rpartition('/')[0])  # as `python FILE` does\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n")


@pytest.mark.parametrize(("path", "where"), [(REGISTER, "pathlib.Path.mkdir")])
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(tmp_path, path, where):
    if where.startswith("import "):  # Ctrl-C while the module is still being imported
        (tmp_path / f"{where.split()[1]}.py").write_text(CTRL_C)
        command = [str(SNIPPETS / path)]
    else:  # Ctrl-C inside the work: the function is replaced by one that receives it
        command = ["-c", CTRL_C_AT, where, str(SNIPPETS / path)]
    args = ["--dir", str(tmp_path / "v"), "--optional"] if path == REGISTER else []
    proc = subprocess.run([sys.executable, *command, *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert (proc.returncode, proc.stderr) == (130, "interrupted\n")


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
    # The stopped write's temporary file is removed: the loader's folder holds the earlier file only.
    assert sorted(p.name for p in out.iterdir()) == ["intel-cpu.icd"]
    monkeypatch.undo()
    reg.register(out, tmp_path / "libintelocl.so", system=tmp_path / "none")
    assert (out / "intel-cpu.icd").read_text() == f"{(tmp_path / 'libintelocl.so').resolve()}\n"
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

    registry = load_benchmark("opencl")
    bench = registry.BENCHMARK
    source, arguments, written = registry.KERNELS["vector_add"]
    monkeypatch.setitem(registry.KERNELS, "vector_add",
                        (source.replace("a[i] + b[i]", "a[i] - b[i]"), arguments, written))
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
    proc = emulated(str(SNIPPETS / KERNELS), "100003", "--device", "cpu")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [line for line in proc.stdout.splitlines() if line.startswith("OK")] == [
        "OK: all 100003 elements match", "OK: all 100003 elements within 1 ulp of a*x + y"]




@pytest.mark.parametrize("stdout", ["/dev/full", "closed pipe"])
def test_register_to_a_full_device_or_a_closed_pipe_is_one_line_or_quiet(tmp_path, stdout):
    proc = run_to(stdout, REGISTER, "--dir", tmp_path / "v", "--optional")
    assert proc.returncode == 1
    assert proc.stderr == (FULL if stdout == "/dev/full" else "")


def test_register_refuses_an_empty_folder_name(tmp_path):
    proc = subprocess.run([sys.executable, str(SNIPPETS / REGISTER), "--dir", "", "--optional"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    err = one_line_error(proc, 2)
    assert "--dir" in err and "empty" in err
    assert list(tmp_path.iterdir()) == []  # nothing written into the current folder


def test_register_writes_through_a_symlinked_icd_file(tmp_path):
    reg = load_snippet(REGISTER)
    out = tmp_path / "vendors"
    out.mkdir()
    (tmp_path / "kept").write_text("/earlier/libintelocl.so\n")
    (out / "intel-cpu.icd").symlink_to(tmp_path / "kept")
    reg.register(out, tmp_path / "libintelocl.so", system=tmp_path / "none")
    assert (out / "intel-cpu.icd").is_symlink()
    assert (tmp_path / "kept").read_text() == f"{(tmp_path / 'libintelocl.so').resolve()}\n"


def test_register_with_stdout_closed_is_one_line_not_a_silent_success(tmp_path):
    """Its one output is the export line that set-up scripts eval: losing it must not exit 0."""
    proc = subprocess.run(["bash", "-c", f"{sys.executable} {SNIPPETS / REGISTER} --dir "
                           f"{tmp_path / 'v'} --optional >&-"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1 and proc.stderr == (
        "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
