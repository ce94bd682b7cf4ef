"""The GPU doctor: the real CI machine, then one fake machine per diagnosis.

A fake machine is a folder standing in for / (PCI devices under sys/, the driver under proc/,
toolkits under usr/local/), a PATH of scripts that play back recorded tool outputs
(tests/fixtures/doctor/outputs/), and a compiled stand-in for libcuda whose answers come from
environment variables. Frameworks are injected as probe results, except in one test that puts a
fake `torch` package on PYTHONPATH and runs the doctor as a reader would.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import HAS_GPU, ROOT, SNIPPETS, load_snippet, run_snippet, FULL, run_to

DOCTOR = "doctor/gpu_doctor.py"
FIX = ROOT / "tests" / "fixtures" / "doctor"
OUT = FIX / "outputs"
# The fake tools run with PATH holding only themselves: they call cat and cp by absolute path.
CAT, CP = shutil.which("cat") or "/bin/cat", shutil.which("cp") or "/bin/cp"


@pytest.fixture(scope="module")
def doc():
    return load_snippet(DOCTOR)


@pytest.fixture(scope="module")
def fake_lib(tmp_path_factory) -> Path:
    gcc = shutil.which("gcc") or pytest.skip("gcc is not on PATH (needed to build the fake libcuda)")
    lib = tmp_path_factory.mktemp("fakelib") / "libcuda.so.1"
    subprocess.run([gcc, "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(lib),
                    str(FIX / "fake_libcuda.c")], check=True)
    return lib


class Machine:
    """A fake machine: a root folder, a PATH of fake tools, a libcuda and an environment."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.root = tmp_path / "root"
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        self.root.mkdir()
        (self.root / "proc").mkdir()
        (self.root / "proc" / "modules").write_text("ext4 1 0 - Live 0x0\n")
        self.env = {"PATH": str(self.bin), "HOME": str(tmp_path)}
        self.libcuda = str(tmp_path / "no-such-libcuda.so.1")
        self.pci("0000:00:00.0", "0x8086", "0x060000")  # a host bridge

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def pci(self, slot: str, vendor: str, klass: str, device: str = "0x2335", driver: str | None = None):
        for name, value in (("vendor", vendor), ("class", klass), ("device", device)):
            self.write(f"sys/bus/pci/devices/{slot}/{name}", value + "\n")
        if driver:
            target = self.root / "sys/bus/pci/drivers" / driver
            target.mkdir(parents=True, exist_ok=True)
            (self.root / f"sys/bus/pci/devices/{slot}/driver").symlink_to(target)
        return self

    def gpu_on_bus(self, klass: str = "0x030200", driver: str | None = "nvidia"):
        return self.pci("0000:18:00.0", "0x10de", klass, driver=driver)

    def kernel_driver(self, recorded: str):
        self.write("proc/driver/nvidia/version", (OUT / recorded).read_text())
        return self

    def tool(self, name: str, body: str):
        exe = self.bin / name
        exe.write_text("#!/bin/sh\n" + body + "\n")
        exe.chmod(0o755)
        return self

    def smi(self, recorded: str, query: str | None = None, rc: int = 0):
        q = f"{CAT} '{OUT / query}'; exit 0" if query else "exit 9"
        return self.tool("nvidia-smi", f"case \"$1\" in --query-gpu=*) {q};; esac\n"
                                       f"{CAT} '{OUT / recorded}'; exit {rc}")

    def lspci(self, recorded: str):
        return self.tool("lspci", f"{CAT} '{OUT / recorded}'")

    def nvcc(self, version: str, program_output: str | None = None, program_rc: int = 1):
        """A fake nvcc; with program_output, `nvcc -o X` writes a program printing that."""
        build = "exit 1"
        if program_output is not None:
            prog = self.tmp / f"program-{version}"
            prog.write_text(f"#!/bin/sh\nprintf '%s\\n' '{program_output}'\nexit {program_rc}\n")
            prog.chmod(0o755)
            build = f"{CP} '{prog}' \"$2\""
        return self.tool("nvcc", f"case \"$1\" in\n"
                                 f"  --version) {CAT} '{OUT / f'nvcc-{version}.txt'}';;\n"
                                 f"  --list-gpu-arch) {CAT} '{OUT / f'nvcc-{version}-list-gpu-arch.txt'}';;\n"
                                 f"  -o) {build};;\n  *) exit 1;;\nesac")

    def with_libcuda(self, lib: Path, **answers):
        self.libcuda = str(lib)
        self.env.update({f"FAKE_{k.upper()}": str(v) for k, v in answers.items()})
        return self

    def cudart(self, lib: Path, version: str):
        major = version.split(".")[0]
        dest = self.root / f"usr/local/cuda-{version}/lib64/libcudart.so.{major}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(lib, dest)
        (self.root / "usr/local/cuda").symlink_to(f"/usr/local/cuda-{version}")
        self.env["FAKE_CUDART"] = str(int(major) * 1000 + int(version.split(".")[1]) * 10)
        return self

    def report(self, doc, frameworks: dict | None = None, compile_kernel: bool = False) -> dict:
        d = doc.Doctor(root=str(self.root), path=self.env["PATH"], libcuda=self.libcuda,
                       frameworks="none", compile_kernel=compile_kernel, timeout=20, environ=self.env)
        return doc.build_report(d, framework_results=frameworks)


def ids(report: dict) -> list[str]:
    return [f["id"] for f in report["findings"]]


def finding(report: dict, id_: str) -> dict:
    return next(f for f in report["findings"] if f["id"] == id_)


@pytest.fixture
def machine(tmp_path):
    return Machine(tmp_path)


@pytest.fixture
def h200(machine, fake_lib):
    """A healthy H200: driver 580.95.05 (CUDA 13.0), toolkit 13.0, compute capability 9.0."""
    return (machine.gpu_on_bus().kernel_driver("proc-driver-nvidia-version-580.txt")
            .smi("nvidia-smi-h200-580.txt", "nvidia-smi-h200-580-query.csv").lspci("lspci-h200.txt")
            .nvcc("13.0").with_libcuda(fake_lib, cuda_driver=13000, cc=90).cudart(fake_lib, "13.0"))


# ---------------------------------------------------------------- the real CI machine

def test_ci_machine_without_gpu_is_diagnosed_as_such(doc):
    if HAS_GPU:
        pytest.skip("this machine has a GPU; test_real_gpu_is_usable covers it")
    report = doc.build_report(doc.Doctor(frameworks="none", compile_kernel=True, timeout=120))
    assert report["exit_status"] == 1 and not report["usable"]
    assert ids(report)[0] == "no-device"
    assert not report["facts"]["libcuda"]["loaded"]
    if shutil.which("nvcc"):
        kernel = report["facts"]["nvcc_kernel"]
        assert kernel["built"] and not kernel["ok"]
        assert kernel["error_name"] == "cudaErrorInsufficientDriver"  # what CUDA says with no driver
        assert "nvcc-without-gpu" in ids(report)
        assert report["facts"]["toolkit"]["nvcc_archs"][0] == "compute_75"  # CUDA 13's lowest target
    assert "driver-too-old" not in ids(report)  # no driver at all is not "too old"


@pytest.mark.gpu
def test_real_gpu_is_usable():
    out = run_snippet(DOCTOR, "--json", "-", timeout=600)
    report = json.loads(out.stdout)
    assert out.returncode == report["exit_status"] == 0, out.stdout[-3000:]
    assert report["usable"] and report["facts"]["libcuda"]["devices"]


# ---------------------------------------------------------------- hardware and kernel driver

def test_no_nvidia_device(doc, machine):
    machine.lspci("lspci-no-gpu.txt")
    report = machine.report(doc)
    assert ids(report) == ["no-device"]
    assert report["exit_status"] == 1
    assert "2 PCI devices" not in finding(report, "no-device")["detail"]  # one device: the bridge
    assert "None of the 1 PCI devices" in finding(report, "no-device")["detail"]
    assert finding(report, "no-device")["next"] == ["lspci -nn | grep -i nvidia"]


def test_3d_controller_without_driver(doc, machine):
    # Data-center GPUs are "3D controller" (class 0x0302): `lspci | grep -i vga` misses them.
    machine.gpu_on_bus(klass="0x030200", driver=None).lspci("lspci-h200.txt")
    report = machine.report(doc)
    assert ids(report) == ["no-driver"]
    gpu = report["facts"]["pci"]["nvidia"][0]
    assert gpu["class"] == "3D controller" and "H200" in gpu["name"]
    assert any("nvidia-open-580" in cmd for cmd in finding(report, "no-driver")["next"])
    assert report["exit_status"] == 1


def test_nouveau_holds_the_gpu(doc, machine):
    machine.gpu_on_bus(klass="0x030000", driver="nouveau")
    machine.write("proc/modules", "nouveau 2 0 - Live 0x0\n")
    report = machine.report(doc)
    assert ids(report) == ["no-driver"]
    assert "nouveau" in finding(report, "no-driver")["detail"]


def test_nvidia_smi_cannot_communicate_with_driver(doc, machine):
    machine.gpu_on_bus(driver=None).smi("nvidia-smi-no-driver.txt", rc=9)
    report = machine.report(doc)
    assert ids(report) == ["no-driver", "smi-no-driver"]
    assert "sudo modprobe nvidia" in finding(report, "smi-no-driver")["next"]


def test_driver_library_version_mismatch(doc, machine):
    machine.gpu_on_bus().kernel_driver("proc-driver-nvidia-version-570.txt")
    machine.smi("nvidia-smi-mismatch.txt", rc=18)
    report = machine.report(doc)
    assert "driver-library-mismatch" in ids(report)
    f = finding(report, "driver-library-mismatch")
    assert "570.124.06" in f["detail"] and f["next"] == ["sudo reboot"]


def test_nvidia_smi_missing_while_driver_loaded(doc, h200):
    (h200.bin / "nvidia-smi").unlink()
    report = h200.report(doc)
    assert ids(report) == ["smi-missing"]
    assert report["exit_status"] == 0  # a warning: CUDA itself works


# ---------------------------------------------------------------- libcuda and cuInit

def test_healthy_h200(doc, h200):
    report = h200.report(doc)
    assert ids(report) == ["ok"] and report["exit_status"] == 0 and report["usable"]
    facts = report["facts"]
    assert facts["libcuda"]["driver_cuda"] == "13.0" and facts["libcuda"]["devices"][0]["cc"] == "9.0"
    assert facts["cudart"][0]["version"] == "13.0"
    assert facts["toolkit"]["symlink"] == "/usr/local/cuda-13.0"
    assert facts["nvidia_smi"]["gpus"][0]["memory_mib"] == 143771
    text = doc.render_text(report)
    assert "Verdict: a usable GPU, no problem found (exit status 0)" in text
    assert "driver 580.95.05, CUDA 13.0" in text


def test_libcuda_missing_although_driver_loaded(doc, h200):
    h200.libcuda = str(h200.tmp / "missing" / "libcuda.so.1")
    report = h200.report(doc)
    assert "no-libcuda" in ids(report) and report["exit_status"] == 1
    assert finding(report, "no-libcuda")["next"][0] == "ldconfig -p | grep libcuda"


@pytest.mark.parametrize(("code", "expected"), [
    (802, "fabric-manager"),           # NVSwitch systems without Fabric Manager
    (803, "driver-library-mismatch"),  # libcuda of another driver version
    (804, "compat-unsupported"),       # cuda-compat package on a GPU it does not support
    (999, "cuinit-failed"),            # anything else
    (100, "cuinit-no-device"),
])
def test_cuinit_errors(doc, h200, code, expected):
    h200.env["FAKE_CUINIT"] = str(code)
    report = h200.report(doc)
    assert expected in ids(report) and report["exit_status"] == 1
    assert finding(report, expected)["next"], "every error says what to run next"


def test_cuda_visible_devices_hides_every_gpu(doc, h200):
    h200.env.update(FAKE_CUINIT="100", CUDA_VISIBLE_DEVICES="")
    report = h200.report(doc)
    assert ids(report) == ["cuda-visible-devices"]
    assert finding(report, "cuda-visible-devices")["next"] == ["unset CUDA_VISIBLE_DEVICES"]


def test_crashing_libcuda_is_a_finding_not_a_crash(doc, h200):
    h200.env["FAKE_CUINIT"] = "-1"  # cuInit aborts the process that calls it
    report = h200.report(doc)
    assert "libcuda-broken" in ids(report) and report["exit_status"] == 1
    assert "library probe failed" in finding(report, "libcuda-broken")["detail"]


def test_hanging_framework_import_is_cut_off(tmp_path, machine):
    pkg = tmp_path / "site" / "cupy"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import time\ntime.sleep(60)\n")
    env = {**machine.env, "PYTHONPATH": str(pkg.parent), "GPU_DOCTOR_ROOT": str(machine.root)}
    out = run_snippet(DOCTOR, "--frameworks", "cupy", "--no-compile", "--timeout", "1", "--json", "-",
                      env=env, timeout=60)
    report = json.loads(out.stdout)
    assert report["facts"]["frameworks"]["cupy"] == {"error": "import and test did not finish within 1 s"}
    assert "cupy-import" in ids(report) and out.returncode == 1


def test_hung_or_crashed_libcuda(doc):
    facts = {"kernel_driver": {"loaded": True, "version": "580.95.05"},
             "libcuda": {"loaded": False, "hung": True, "error": "did not return within 60 s"}}
    found = ids({"findings": doc.diagnose(facts)})
    assert "libcuda-broken" in found and doc.exit_status(facts, doc.diagnose(facts)) == 1


def test_wsl_has_no_pci_device_but_a_gpu(doc, machine, fake_lib):
    machine.write("dev/dxg", "")
    machine.with_libcuda(fake_lib, cuda_driver=13000, cc=89)
    machine.smi("nvidia-smi-h200-580.txt", "nvidia-smi-h200-580-query.csv")
    report = machine.report(doc)
    assert "no-device" not in ids(report) and "wsl" in ids(report)
    assert report["exit_status"] == 0


# ---------------------------------------------------------------- driver versus runtime

def t4_with_cuda13(machine, fake_lib):
    """A T4 on driver 535.104.05 (CUDA 12.2) with the CUDA 13.0 toolkit installed."""
    return (machine.gpu_on_bus().kernel_driver("proc-driver-nvidia-version-535.txt")
            .smi("nvidia-smi-t4-535.txt", "nvidia-smi-t4-535-query.csv").nvcc("13.0")
            .with_libcuda(fake_lib, cuda_driver=12020, cc=75).cudart(fake_lib, "13.0"))


def test_driver_older_than_runtime_major(doc, machine, fake_lib):
    report = t4_with_cuda13(machine, fake_lib).report(doc)
    assert ids(report) == ["driver-too-old"]
    f = finding(report, "driver-too-old")
    assert "CUDA 12.2" in f["title"] and "CUDA 13" in f["title"]
    assert "nvcc 13.0" in f["detail"] and "libcudart 13.0" in f["detail"]
    assert "580.65.06" in f["detail"]  # NVIDIA's minimum driver for CUDA 13.0
    assert "cudaErrorInsufficientDriver" in f["detail"]
    assert f["next"][0].startswith("sudo apt-get install -y nvidia-open-580")
    assert report["exit_status"] == 3  # the GPU works; CUDA 13 programs do not


def test_driver_version_estimated_from_table_without_libcuda(doc, machine):
    # Without nvidia-smi or libcuda, the kernel module's version still tells the CUDA version.
    machine.gpu_on_bus().kernel_driver("proc-driver-nvidia-version-535.txt").nvcc("13.0")
    report = machine.report(doc)
    f = finding(report, "driver-too-old")
    assert "CUDA 12.2" in f["title"] and "minimum-driver table" in f["detail"]


def test_minor_version_compatibility(doc, machine, fake_lib):
    # Driver 570 (CUDA 12.8) with toolkit 12.9: same major, so it runs, with limits.
    (machine.gpu_on_bus().kernel_driver("proc-driver-nvidia-version-570.txt")
     .smi("nvidia-smi-l4-570.txt", "nvidia-smi-l4-570-query.csv").nvcc("12.9")
     .with_libcuda(fake_lib, cuda_driver=12080, cc=89).cudart(fake_lib, "12.9"))
    report = machine.report(doc)
    assert ids(report) == ["minor-version-compat"]
    f = finding(report, "minor-version-compat")
    assert f["severity"] == "warning" and "branch 525" in f["detail"]
    assert "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" in f["detail"]
    assert f["next"][0].startswith("nvcc -arch=sm_89")
    assert report["exit_status"] == 0


def test_ptx_newer_than_driver(doc, machine, fake_lib):
    (machine.gpu_on_bus().kernel_driver("proc-driver-nvidia-version-570.txt")
     .smi("nvidia-smi-l4-570.txt", "nvidia-smi-l4-570-query.csv")
     .nvcc("12.9", "runtime 12090 driver 12080 FAIL launch cudaErrorUnsupportedPtxVersion "
                   "(the provided PTX was compiled with an unsupported toolchain.)")
     .with_libcuda(fake_lib, cuda_driver=12080, cc=89))
    report = machine.report(doc, compile_kernel=True)
    assert "ptx-too-new" in ids(report) and "minor-version-compat" in ids(report)
    assert finding(report, "ptx-too-new")["next"] == ["nvcc -arch=sm_89 -o app app.cu"]
    assert report["exit_status"] == 3


def test_nvcc_kernel_runs_on_healthy_gpu(doc, h200):
    h200.nvcc("13.0", "runtime 13000 driver 13000 OK 42", program_rc=0)
    report = h200.report(doc, compile_kernel=True)
    assert report["facts"]["nvcc_kernel"]["ok"] and ids(report) == ["ok"]


def test_nvcc_kernel_failure_is_reported(doc, h200):
    h200.nvcc("13.0", "runtime 13000 driver 13000 FAIL cudaMalloc cudaErrorDevicesUnavailable "
                      "(CUDA-capable device(s) is/are busy or unavailable)")
    report = h200.report(doc, compile_kernel=True)
    assert "kernel-failed" in ids(report) and report["exit_status"] == 1
    assert "cudaErrorDevicesUnavailable" in finding(report, "kernel-failed")["detail"]


def test_compute_capability_below_toolkit(doc, machine, fake_lib):
    # A Pascal GPU (6.1) with CUDA 13, whose lowest target is compute_75.
    (machine.gpu_on_bus().kernel_driver("proc-driver-nvidia-version-580.txt").nvcc("13.0")
     .with_libcuda(fake_lib, cuda_driver=13000, cc=61))
    report = machine.report(doc)
    assert "cc-below-toolkit" in ids(report) and "driver-too-old" not in ids(report)
    assert "compute_75" in finding(report, "cc-below-toolkit")["detail"]


# ---------------------------------------------------------------- Python frameworks

def fw(**kw) -> dict:
    return {"version": "1.0", **kw}


def test_framework_wheels_built_for_newer_cuda(tmp_path, fake_lib):
    # A fake torch built for CUDA 13.0, on a driver for CUDA 12.2, run as a reader runs the doctor.
    pkg = tmp_path / "site"
    (pkg / "torch").mkdir(parents=True)
    (pkg / "torch" / "__init__.py").write_text(
        "import warnings\n__version__ = '2.11.0+cu130'\n"
        "class version:\n    cuda = '13.0'\n"
        "class cuda:\n    @staticmethod\n    def is_available():\n"
        "        warnings.warn('The NVIDIA driver on your system is too old (found version 12020).')\n"
        "        return False\n")
    dist = pkg / "torch-2.11.0+cu130.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n")
    (tmp_path / "machine").mkdir()
    m = t4_with_cuda13(Machine(tmp_path / "machine"), fake_lib)
    env = {**m.env, "PYTHONPATH": str(pkg), "GPU_DOCTOR_ROOT": str(m.root)}
    out = run_snippet(DOCTOR, "--frameworks", "torch", "--no-compile", "--libcuda", m.libcuda,
                      "--json", "-", env=env, timeout=120)
    report = json.loads(out.stdout)
    assert out.returncode == report["exit_status"] == 3, out.stderr
    torch = report["facts"]["frameworks"]["torch"]
    assert torch["cuda_build"] == "13.0" and not torch["gpu_visible"]
    assert "too old" in torch["gpu_error"]
    assert {"name": "torch", "version": "2.11.0+cu130", "cuda_major": 13} in report["facts"]["wheels"]
    detail = finding(report, "driver-too-old")["detail"]
    assert "torch 2.11.0+cu130 (built for CUDA 13.0)" in detail and "pip wheel torch" in detail


def test_cpu_only_pytorch_on_a_working_gpu(doc, h200):
    report = h200.report(doc, frameworks={"torch": fw(cuda_build=None, gpu_visible=False)})
    assert ids(report) == ["torch-no-gpu"] and report["exit_status"] == 3
    assert "CPU-only build" in finding(report, "torch-no-gpu")["detail"]


def test_tensorflow_without_its_cuda_libraries(doc, h200):
    tf = fw(version="2.21.0", cuda_build="12.5.1", is_cuda_build=True, gpu_visible=False,
            archs=["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"])
    report = h200.report(doc, frameworks={"tensorflow": tf})
    assert ids(report) == ["tensorflow-no-gpu"]
    f = finding(report, "tensorflow-no-gpu")
    assert f["next"] == ['pip install "tensorflow[and-cuda]==2.21.0"'] and "libcudnn" not in f["title"]


def test_numba_that_cannot_find_its_runtime(doc, h200):
    numba = fw(implementation="NVIDIA", gpu_visible=False, gpu_error="no NVRTC found")
    report = h200.report(doc, frameworks={"numba": numba})
    assert ids(report) == ["numba-no-gpu"]
    assert "numba-cuda[cu12]" in finding(report, "numba-no-gpu")["next"][0]


def test_framework_without_kernels_for_this_gpu(doc, h200):
    torch = fw(cuda_build="13.0", gpu_visible=True, kernel="ok", archs=["sm_80", "sm_86"],
               devices=[{"name": "H200", "cc": "9.0"}])
    report = h200.report(doc, frameworks={"torch": torch})
    assert ids(report) == ["cc-not-in-build"]
    torch["archs"].append("compute_80")  # PTX for 8.0 is JIT-compiled for 9.0: fine
    assert ids(h200.report(doc, frameworks={"torch": torch})) == ["ok"]


def test_framework_kernel_that_runs(doc, h200):
    numba = fw(cuda_build="13.0", gpu_visible=True, kernel="ok", devices=[{"name": "H200", "cc": "9.0"}])
    report = h200.report(doc, frameworks={"numba": numba})
    assert ids(report) == ["ok"] and report["exit_status"] == 0
    assert "test kernel: ok" in doc.render_text(report)


def test_framework_kernel_with_wrong_result(doc, h200):
    report = h200.report(doc, frameworks={"cupy": fw(cuda_build="13.0", gpu_visible=True,
                                                      kernel="wrong result")})
    assert ids(report) == ["kernel-failed"] and report["exit_status"] == 1


def test_framework_import_failure_is_a_finding(doc, h200):
    report = h200.report(doc, frameworks={"tensorflow": {"error": "ImportError: libcudnn.so.9: "
                                                                   "cannot open shared object file"}})
    assert ids(report) == ["tensorflow-import"]
    assert "libcudnn" in finding(report, "tensorflow-import")["detail"]


def test_cupy_installed_twice(doc):
    facts = {"wheels": [{"name": "cupy-cuda12x", "version": "13.6.0", "cuda_major": 12},
                        {"name": "cupy-cuda13x", "version": "13.6.0", "cuda_major": 13}]}
    assert "cupy-twice" in ids({"findings": doc.diagnose(facts)})


def test_wheel_names_map_to_cuda_majors(doc, monkeypatch):
    class Dist:
        def __init__(self, name, version):
            self.metadata, self.version = {"Name": name}, version

    dists = [Dist("nvidia-cublas-cu12", "12.9.1.4"), Dist("nvidia-cuda-runtime", "13.0.96"),
             Dist("cupy-cuda13x", "13.6.0"), Dist("jax-cuda12-plugin", "0.7.0"),
             Dist("torch", "2.11.0+cu130"), Dist("torch-cpu-free", "1.0"), Dist("numpy", "2.4.6")]
    monkeypatch.setattr(doc.importlib.metadata, "distributions", lambda: dists)
    majors = {w["name"]: w["cuda_major"] for w in doc.Doctor.check_wheels()}
    assert majors == {"nvidia-cublas-cu12": 12, "nvidia-cuda-runtime": 13, "cupy-cuda13x": 13,
                      "jax-cuda12-plugin": 12, "torch": 13}


# ---------------------------------------------------------------- paths and environment

def test_toolkit_installed_but_not_on_path(doc, h200):
    (h200.bin / "nvcc").unlink()
    h200.write("usr/local/cuda-13.0/bin/nvcc", "")
    report = h200.report(doc)
    assert ids(report) == ["nvcc-not-on-path"]
    assert "/usr/local/cuda/bin" in finding(report, "nvcc-not-on-path")["next"][0]


def test_stale_cuda_paths_from_the_original_article(doc, h200):
    h200.env["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.3/lib64"
    h200.env["PATH"] += ":/usr/local/cuda-12.3/bin"
    report = h200.report(doc)
    assert ids(report) == ["stale-cuda-paths"]
    assert "/usr/local/cuda-12.3/lib64" in finding(report, "stale-cuda-paths")["detail"]


@pytest.mark.parametrize(("value", "warned"), [("1", True), ("0", False), ("", False)])
def test_numba_simulator_switch(doc, h200, value, warned):
    h200.env["NUMBA_ENABLE_CUDASIM"] = value
    assert ("numba-simulator" in ids(h200.report(doc))) is warned


def test_garbage_from_every_tool_is_not_a_crash(doc, machine):
    machine.gpu_on_bus()
    machine.write("proc/driver/nvidia/version", "")
    machine.tool("nvidia-smi", "printf '\\377\\376 garbage, , ,\\n'")
    machine.tool("lspci", "exit 1")
    machine.tool("nvcc", "echo 'not a compiler'; exit 3")
    report = machine.report(doc, compile_kernel=True)
    assert report["exit_status"] == 1
    assert doc.render_text(report).endswith("(exit status 1)\n")


# ---------------------------------------------------------------- rules and data

@pytest.mark.parametrize(("cc", "archs", "runs"), [
    ("9.0", ["sm_80", "sm_90"], True),
    ("9.0", ["sm_80", "sm_86"], False),        # machine code runs only within its major version
    ("8.9", ["sm_80", "sm_86"], True),         # 8.6 code runs on 8.9
    ("9.0", ["sm_80", "compute_80"], True),    # PTX is JIT-compiled for newer GPUs
    ("7.5", ["sm_80", "compute_80"], False),   # but never for older ones
    ("12.0", ["sm_90", "sm_100", "compute_100"], True),
    ("10.0", ["sm_90a"], False),
])
def test_compute_capability_rule(doc, cc, archs, runs):
    assert doc.cc_runs(cc, archs) is runs


@pytest.mark.parametrize(("driver", "cuda"), [
    ("535.104.05", "12.2"), ("580.95.05", "13.0"), ("570.26", "12.8"), ("450.51.05", "11.0"),
    ("600.10", "13.2"), ("615.71.09", "13.4"), ("614.99", "13.3"), ("440.33", None), ("", None)])
def test_cuda_version_of_a_driver(doc, driver, cuda):
    assert doc.cuda_for_driver(driver) == cuda


def test_the_driver_a_cuda_release_needs(doc):
    assert doc.driver_needed_for("13.2") == "595.45.04 or newer"
    assert doc.driver_needed_for("13.4") == "a driver of branch R615 or newer"  # no exact figure
    assert doc.driver_needed_for("13.5") == "branch 580 or newer"  # not in the table: the major's


def compat_rows() -> list[dict]:
    with open(ROOT / "docs" / "data" / "cuda-driver-compat.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_driver_table_matches_nvidia_data(doc):
    rows = compat_rows()
    ga = {r["cuda_version"]: r["linux_x86_64_min_driver"] for r in rows
          if r["release"] == "GA" and r["linux_x86_64_min_driver"]}
    assert ga == doc.MIN_DRIVER
    for r in rows:
        assert r["source"].startswith("https://docs.nvidia.com/cuda/") and r["as_of"] >= "2026-01-01"
        # a release whose driver no NVIDIA source here names has an empty cell and says why
        assert r["linux_x86_64_min_driver"][:1].isdigit() or r["note"]


def test_every_error_says_what_to_run_next(doc, h200):
    scenarios = [{}, {"FAKE_CUINIT": "802"}, {"FAKE_CUINIT": "999"}, {"FAKE_CC": "61"}]
    for extra in scenarios:
        h200.env.update(extra)
        for f in h200.report(doc)["findings"]:
            assert f["severity"] != "error" or f["next"], f


# ---------------------------------------------------------------- the command line

def test_help():
    out = run_snippet(DOCTOR, "--help")
    assert out.returncode == 0 and "--json" in out.stdout and "Exit status" in out.stdout


@pytest.mark.parametrize("args", [["--timeout", "0"], ["--timeout", "soon"], ["--timeout", "nan"],
                                  ["--json", "/no/such/dir/r.json"], ["--frameworks", "jax"],
                                  ["--root", "/no/such/dir"], ["--bogus"]])
def test_bad_arguments(args):
    out = run_snippet(*[DOCTOR, *args])
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error:") and "Traceback" not in out.stderr


def test_cli_writes_text_and_json(tmp_path, machine):
    machine.lspci("lspci-no-gpu.txt")
    target = tmp_path / "report.json"
    env = {**machine.env, "GPU_DOCTOR_ROOT": str(machine.root)}
    out = run_snippet(DOCTOR, "--frameworks", "none", "--no-compile", "--json", str(target), env=env)
    assert out.returncode == 1
    assert "No NVIDIA GPU on this machine" in out.stdout and out.stdout.rstrip().endswith("(exit status 1)")
    report = json.loads(target.read_text())
    assert report["schema"] == "gpu-survival-toolkit/gpu-doctor/1" and report["exit_status"] == 1
    assert report["command"].startswith("gpu_doctor.py --frameworks none")


# ---------------------------------------------------------------- the pages' renderers

@pytest.fixture(scope="module")
def renderers():
    import renderers as package

    return package


def test_committed_report_is_what_the_doctor_says_now():
    """docs/data/doctor-h200.txt, shown on the page, is the current doctor's diagnosis of the
    facts recorded on the H200: regenerate it with the command below when the doctor changes."""
    out = run_snippet(DOCTOR, "--replay", str(ROOT / "docs/data/doctor-h200.json"))
    assert out.returncode == json.loads((ROOT / "docs/data/doctor-h200.json").read_text())["exit_status"]
    assert out.stdout == (ROOT / "docs/data/doctor-h200.txt").read_text(), (
        "stale: python snippets/doctor/gpu_doctor.py --replay docs/data/doctor-h200.json "
        "> docs/data/doctor-h200.txt")


@pytest.mark.parametrize(("content", "why"), [(None, "No such file"), ("{}", "not a doctor report"),
                                              ('{"schema": "x"}', "not a doctor report")])
def test_replay_refuses_what_is_not_a_report(tmp_path, content, why):
    target = tmp_path / "r.json"
    if content is not None:
        target.write_text(content)
    out = run_snippet(DOCTOR, "--replay", str(target))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and why in out.stderr


def test_report_renderer_shows_the_text_file(renderers):
    md = renderers.get("text_file")(ROOT / "docs", path="data/doctor-h200.txt")
    assert md.startswith('```text title="docs/data/doctor-h200.txt"\nGPU doctor, ')


def test_driver_table_renderer(renderers):
    from renderers.page import render_markdown

    lines = map(str.strip, (ROOT / "docs/setup/troubleshooting.md").read_text().splitlines())  # a folded block indents its lines
    line = next(l for l in lines
                if "13.*,12.*" in l and l.startswith("<!-- render table"))
    md = render_markdown(line.replace("13.*,12.*", "13.*"), ROOT / "docs", "troubleshooting.md",
                         data="cuda-driver-compat.csv")
    assert "| CUDA 13.0 GA | ≥ 580.65.06 | — |" in md
    assert "| CUDA 13.3 GA | ≥ 610.43.02* | ≥ R610 |" in md  # not read in Table 3 itself: flagged
    assert "| CUDA 13.4 GA | ≥ R615 | ≥ R615 |" in md  # NVIDIA names only the branch from 13.4
    assert "| CUDA 13.5 GA | — | — |" in md
    assert "CUDA 12" not in md


# ---------------------------------------------------------------- verdict, advice, --json (issues 18, 20)

RECORDED = ROOT / "docs" / "data" / "doctor-h200.json"


def test_verdict_names_the_warnings_it_lists(doc):
    report = json.loads(RECORDED.read_text())
    report["findings"] = doc.diagnose(report["facts"])
    assert [f["severity"] for f in report["findings"]] == ["warning"]
    text = doc.render_text(report)
    assert "no problem found" not in text
    assert "Verdict: a usable GPU, with 1 warning above" in text


def test_a_cupy_user_is_not_told_to_run_nvcc(doc):
    # The H200 machine: CuPy built for CUDA 13.2 on a 13.0 driver, everything else 13.0.
    facts = json.loads(RECORDED.read_text())["facts"]
    f = finding({"findings": doc.diagnose(facts)}, "minor-version-compat")
    assert "CuPy needs nothing" in f["detail"]
    assert not any(cmd.startswith("nvcc") for cmd in f["next"])
    facts["environment"]["CUPY_COMPILE_WITH_PTX"] = "1"
    f = finding({"findings": doc.diagnose(facts)}, "minor-version-compat")
    assert "unset CUPY_COMPILE_WITH_PTX" in f["next"]


@pytest.mark.parametrize("where", ["missing-folder", "a-folder"])
def test_unwritable_json_path_fails_before_the_checks(tmp_path, where):
    target = {"missing-folder": tmp_path / "nope" / "r.json", "a-folder": tmp_path}[where]
    out = run_snippet(DOCTOR, "--frameworks", "none", "--no-compile", "--json", target)
    assert out.returncode == 2 and out.stdout == ""  # no report: the checks never ran
    assert out.stderr.startswith("error: argument --json") and out.stderr.count("\n") == 1
    assert "not a file in an existing, writable folder" in out.stderr
    assert "Traceback" not in out.stderr


def test_an_earlier_report_survives_a_failed_write(doc, tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("earlier\n")

    def fail(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(doc.os, "replace", fail)
    with pytest.raises(OSError):
        doc.write_atomically(target, "{}\n")
    assert target.read_text() == "earlier\n"
    # The temporary file is removed: nothing but the earlier report is left.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    monkeypatch.undo()
    doc.write_atomically(target, "{}\n")
    assert target.read_text() == "{}\n" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_ctrl_c_is_one_line_and_exit_130(tmp_path, machine):
    # A framework probe that hangs keeps the doctor busy long enough to be interrupted; the
    # earlier report at the --json path must survive.
    pkg = tmp_path / "site" / "cupy"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import time\ntime.sleep(60)\n")
    target = tmp_path / "report.json"
    target.write_text("earlier\n")
    env = {**os.environ, **machine.env, "PYTHONPATH": str(pkg.parent),
           "GPU_DOCTOR_ROOT": str(machine.root)}
    proc = subprocess.Popen([sys.executable, str(ROOT / "snippets" / DOCTOR), "--frameworks", "cupy",
                             "--no-compile", "--timeout", "30", "--json", str(target)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    time.sleep(3)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C does: the whole process group
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted" and "Traceback" not in err
    assert target.read_text() == "earlier\n"




@pytest.mark.parametrize("stdout", ["/dev/full", "closed pipe"])
@pytest.mark.parametrize("json_", [[], ["--json", "-"]])
def test_a_full_device_or_a_closed_pipe_is_one_line_or_quiet(machine, stdout, json_):
    env = {**machine.env, "GPU_DOCTOR_ROOT": str(machine.root)}
    machine.lspci("lspci-no-gpu.txt")
    proc = run_to(stdout, DOCTOR, "--frameworks", "none", "--no-compile", *json_, env=env)
    assert proc.returncode == 2
    assert proc.stderr == (FULL if stdout == "/dev/full" else "")
    proc = run_to(stdout, DOCTOR, "--replay", ROOT / "docs/data/doctor-h200.json")
    assert proc.returncode == 2 and proc.stderr == (FULL if stdout == "/dev/full" else "")


def test_a_symlinked_json_report_is_written_through_the_link(tmp_path, machine):
    machine.lspci("lspci-no-gpu.txt")
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "report.json"
    target.write_text("earlier\n")
    link = tmp_path / "report.json"
    link.symlink_to("data/report.json")
    env = {**machine.env, "GPU_DOCTOR_ROOT": str(machine.root)}
    out = run_snippet(DOCTOR, "--frameworks", "none", "--no-compile", "--json", link, env=env)
    assert out.returncode == 1, out.stderr
    assert link.is_symlink() and json.loads(target.read_text())["exit_status"] == 1
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def replayed(doc, report, tmp_path) -> tuple[int, str]:
    """main(["--replay", FILE]) in this process: (exit status, stderr)."""
    import contextlib
    import io

    target = tmp_path / "r.json"
    target.write_text(report if isinstance(report, str) else json.dumps(report))
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = doc.main(["--replay", str(target)])
    except SystemExit as exc:
        code = exc.code
    return code, err.getvalue()


def test_replay_of_a_report_of_any_wrong_shape_is_one_line(doc, tmp_path):
    """Each fact (and each field of one) replaced by a value of another type: a diagnosis or
    one line with exit 2, never a traceback (a rendering included)."""
    good = json.loads((ROOT / "docs/data/doctor-h200.json").read_text())
    wrong = [3, "x", [], None, {}, [1]]
    cases = [("[]", ""), ('"x"', ""), ("[" * 100_000 + "]" * 100_000, "nested too deep")]
    for key, value in good["facts"].items():
        cases += [(json.dumps(good | {"facts": good["facts"] | {key: w}}), "") for w in wrong]
        for field in value if isinstance(value, dict) else []:
            cases += [(json.dumps(good | {"facts": good["facts"] | {key: value | {field: w}}}),
                       "") for w in wrong]
    cases += [(json.dumps(good | {"facts": w}), "") for w in wrong]
    for text, why in cases:
        code, err = replayed(doc, text, tmp_path)
        if err:
            assert code == 2 and err.count("\n") == 1 and why in err, (text[:300], err)
            assert err.startswith(f"error: --replay {tmp_path / 'r.json'}: not a doctor report")


def test_closed_stdout_is_one_line(tmp_path):
    proc = subprocess.run(["bash", "-c", f"{sys.executable} {SNIPPETS / DOCTOR} --replay "
                           f"{ROOT / 'docs/data/doctor-h200.json'} >&-"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr == (
        "error: standard output is closed; give it a file (> FILE) or /dev/null\n")


def test_ctrl_c_in_the_final_rename_says_the_report_is_whole(tmp_path):
    """A Ctrl-C that lands as the --json report is renamed into place: exit 130, one line that
    says the report was written whole, the report readable, no temporary file left."""
    from test_aws_refresher import interrupted_in_rename

    out = tmp_path / "report.json"
    done = interrupted_in_rename(DOCTOR, "--no-compile", "--timeout", "5", "--json", out)
    assert done.returncode == 130, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == f"interrupted ({out} written whole before it)"
    assert "findings" in json.loads(out.read_text())
    assert [p.name for p in tmp_path.iterdir()] == [out.name]
