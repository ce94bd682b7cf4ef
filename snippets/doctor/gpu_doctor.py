#!/usr/bin/env python3
"""GPU doctor: find out why CUDA does not work on this machine, and what to run next.

It checks, in order: an NVIDIA device on the PCI bus; the kernel driver and its version;
nvidia-smi; the CUDA driver library (libcuda); the CUDA runtime (libcudart) and toolkit (nvcc);
the CUDA version each installed Python framework was built for; the GPU's compute capability
against what those builds support; and whether a one-element kernel actually runs.

Standard library only, Python 3.8 or newer, nothing to install. It never stops on an error: a
missing tool or library is a finding. Frameworks are imported in child processes with a time
limit, so a hanging import cannot hang the doctor.

Exit status: 0 a usable GPU and no problem found; 1 no usable GPU; 3 a usable GPU, but something
found here will break some programs (read the diagnosis); 2 bad arguments.
"""

from __future__ import annotations

import os
import signal
import sys


WRITTEN = []  # the files this run has written whole (write_atomically)


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130;
    the line names any output already written whole."""
    done = f" ({', '.join(WRITTEN)} written whole before it)" if WRITTEN else ""
    os.write(2, f"interrupted{done}\n".encode())
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

import argparse
import concurrent.futures
import ctypes
import datetime as dt
import glob
import importlib.metadata
import importlib.util
import json
import platform
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

SCHEMA = "gpu-survival-toolkit/gpu-doctor/1"
FRAMEWORKS = ("numba", "cupy", "torch", "tensorflow")

# --8<-- [start:table]
# Minimum Linux x86_64 driver of each CUDA release (GA), from NVIDIA's CUDA Toolkit Release
# Notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions" (13.2 Update 2 edition,
# read 2026-11-29); 13.3 from the driver NVIDIA's 13.3 Linux installer is named after (read
# 2026-12-02). From 13.4 on NVIDIA names only a driver branch ("R615": any driver of that
# branch or newer; 13.4 Update 1 notes, section 2.2). docs/data/cuda-driver-compat.csv holds
# the full table with its sources.
MIN_DRIVER = {
    "11.0": "450.51.05", "11.1": "455.23", "11.2": "460.27.03", "11.3": "465.19.01",
    "11.4": "470.42.01", "11.5": "495.29.05", "11.6": "510.39.01", "11.7": "515.43.04",
    "11.8": "520.61.05", "12.0": "525.60.13", "12.1": "530.30.02", "12.2": "535.54.03",
    "12.3": "545.23.06", "12.4": "550.54.14", "12.5": "555.42.02", "12.6": "560.28.03",
    "12.8": "570.26", "12.9": "575.51.03", "13.0": "580.65.06", "13.1": "590.44.01",
    "13.2": "595.45.04", "13.3": "610.43.02", "13.4": "R615",
}
# Minor-version compatibility (same table's Table 2): any driver of at least this branch runs
# programs built with any toolkit of that CUDA major version, with limits (no newer PTX JIT).
MIN_BRANCH_FOR_MAJOR = {11: 450, 12: 525, 13: 580}
# --8<-- [end:table]

# CUresult codes that need their own advice (cuda.h).
CU_NO_DEVICE, CU_SYSTEM_NOT_READY, CU_SYSTEM_DRIVER_MISMATCH, CU_COMPAT_NOT_SUPPORTED = 100, 802, 803, 804

ONE_ELEMENT_CU = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void add_one(int *x) { x[0] += 1; }
static int fail(const char *what, cudaError_t e) {
    printf("FAIL %s %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return 1;
}
int main() {
    int runtime = 0, driver = 0, host = 41, *dev = nullptr;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    printf("runtime %d driver %d\n", runtime, driver);
    cudaError_t e = cudaMalloc(&dev, sizeof(int));
    if (e != cudaSuccess) return fail("cudaMalloc", e);
    if ((e = cudaMemcpy(dev, &host, sizeof(int), cudaMemcpyHostToDevice)) != cudaSuccess)
        return fail("cudaMemcpy", e);
    add_one<<<1, 1>>>(dev);
    if ((e = cudaGetLastError()) != cudaSuccess) return fail("launch", e);
    if ((e = cudaMemcpy(&host, dev, sizeof(int), cudaMemcpyDeviceToHost)) != cudaSuccess)
        return fail("cudaMemcpy", e);
    cudaFree(dev);
    printf(host == 42 ? "OK 42\n" : "WRONG %d\n", host);
    return host == 42 ? 0 : 1;
}
"""

# Run in a child process, one framework at a time: prints one JSON line after a marker.
FRAMEWORK_PROBE = r"""
import json, sys, warnings
name, r = sys.argv[1], {}
def short(e):
    return " ".join(f"{type(e).__name__}: {e}".split())[:300]
def arch(cc):
    return "%d.%d" % tuple(cc)
try:
    if name == "numba":
        import numba
        from numba import cuda
        r["version"] = numba.__version__
        r["implementation"] = getattr(cuda, "implementation", "built-in")
        try:
            import numba_cuda
            r["numba_cuda"] = numba_cuda.__version__
        except Exception:
            pass
        try:
            r["cuda_build"] = arch(cuda.runtime.get_version())
        except Exception as e:
            r["runtime_error"] = short(e)
        try:
            from numba.cuda.cudadrv import nvrtc
            r["archs"] = ["compute_%d%d" % tuple(cc) for cc in nvrtc.get_supported_ccs()]
        except Exception:
            pass
        r["gpu_visible"] = bool(cuda.is_available())
        if not r["gpu_visible"]:
            try:
                cuda.cudadrv.driver.driver.get_version()
            except Exception as e:
                r["gpu_error"] = short(e)
        else:
            import numpy as np
            dev = cuda.get_current_device()
            r["devices"] = [{"name": dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name),
                             "cc": arch(dev.compute_capability)}]
            @cuda.jit
            def add_one(x):
                x[0] += 1
            d = cuda.to_device(np.full(1, 41, dtype=np.int32))
            add_one[1, 1](d)
            r["kernel"] = "ok" if int(d.copy_to_host()[0]) == 42 else "wrong result"
    elif name == "cupy":
        import cupy
        r["version"] = cupy.__version__
        v = cupy.cuda.runtime.runtimeGetVersion()
        r["cuda_build"] = "%d.%d" % (v // 1000, v % 1000 // 10)
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:
            n, r["gpu_error"] = 0, short(e)
        r["gpu_visible"] = n > 0
        if n:
            cc = cupy.cuda.Device(0).compute_capability
            r["devices"] = [{"name": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                             "cc": "%s.%s" % (cc[:-1], cc[-1])}]
            x = cupy.full(1, 41, dtype=cupy.int32) + 1
            r["kernel"] = "ok" if int(x.get()[0]) == 42 else "wrong result"
    elif name == "torch":
        import torch
        r["version"] = torch.__version__
        r["cuda_build"] = torch.version.cuda
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r["gpu_visible"] = bool(torch.cuda.is_available())
        if caught:
            r["gpu_error"] = " ".join(str(caught[0].message).split())[:300]
        if r["gpu_visible"]:
            r["archs"] = list(torch.cuda.get_arch_list())
            r["devices"] = [{"name": torch.cuda.get_device_name(0),
                             "cc": arch(torch.cuda.get_device_capability(0))}]
            x = torch.full((1,), 41, device="cuda") + 1
            r["kernel"] = "ok" if int(x.item()) == 42 else "wrong result"
    elif name == "tensorflow":
        import os
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
        r["version"] = tf.__version__
        info = tf.sysconfig.get_build_info()
        r["cuda_build"] = info.get("cuda_version")
        r["cudnn"] = info.get("cudnn_version")
        r["archs"] = list(info.get("cuda_compute_capabilities") or [])
        r["is_cuda_build"] = bool(info.get("is_cuda_build"))
        gpus = tf.config.list_physical_devices("GPU")
        r["gpu_visible"] = bool(gpus)
        if gpus:
            d = tf.config.experimental.get_device_details(gpus[0])
            r["devices"] = [{"name": d.get("device_name"), "cc": arch(d.get("compute_capability", (0, 0)))}]
            with tf.device("/GPU:0"):
                x = tf.constant([41]) + 1
            r["kernel"] = "ok" if int(x.numpy()[0]) == 42 else "wrong result"
except Exception as e:
    r["error"] = short(e)
print("GPU-DOCTOR-JSON " + json.dumps(r))
"""


# ----------------------------------------------------------------------------- helpers

def ascii_clean(text: str) -> str:
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """Shorten to at most `limit` characters at a word boundary."""
    text = ascii_clean(text)
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def run(cmd: list[str], path: str, timeout: float, env: dict | None = None) -> dict:
    """Run a command; never raises. Returns found/rc/out/err (rc None when it could not run)."""
    exe = shutil.which(cmd[0], path=path)
    if exe is None:
        return {"found": False, "path": None, "rc": None, "out": "", "err": ""}
    try:
        p = subprocess.run([exe, *cmd[1:]], capture_output=True, text=True, timeout=timeout,
                           env=env, errors="replace")
    except subprocess.TimeoutExpired:
        return {"found": True, "path": exe, "rc": None, "out": "", "err": f"timed out after {timeout:g} s"}
    except OSError as exc:
        return {"found": True, "path": exe, "rc": None, "out": "", "err": str(exc)}
    return {"found": True, "path": exe, "rc": p.returncode, "out": p.stdout, "err": p.stderr}


def read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def version_tuple(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text or ""))


def cuda_from_int(v: int) -> str:
    """13000 -> '13.0', 12020 -> '12.2' (the encoding of cuDriverGetVersion and friends)."""
    return f"{v // 1000}.{v % 1000 // 10}"


def major_minor(version: str | None) -> tuple[int, int] | None:
    m = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return (int(m[1]), int(m[2])) if m else None


def cuda_for_driver(driver: str | None) -> str | None:
    """The newest CUDA release in the table whose minimum driver this driver meets."""
    have = version_tuple(driver)
    if not have:
        return None
    best = None
    for cuda, need in MIN_DRIVER.items():
        if have >= version_tuple(need) and (best is None or major_minor(cuda) > major_minor(best)):
            best = cuda
    return best


def driver_needed_for(cuda: str) -> str:
    """Advice on the driver a CUDA version needs: the table's minimum, or the branch for its major."""
    mm = major_minor(cuda)
    key = f"{mm[0]}.{mm[1]}" if mm else cuda
    if key in MIN_DRIVER:
        need = MIN_DRIVER[key]
        return f"a driver of branch {need} or newer" if need.startswith("R") else f"{need} or newer"
    if mm and mm[0] in MIN_BRANCH_FOR_MAJOR:
        return f"branch {MIN_BRANCH_FOR_MAJOR[mm[0]]} or newer"
    return "a newer driver"


def parse_arch(a: str) -> tuple[str, int, int] | None:
    """'sm_90' -> ('sm', 9, 0); 'compute_100' -> ('compute', 10, 0); 'sm_90a' -> ('sm', 9, 0)."""
    m = re.fullmatch(r"(sm|compute)_(\d+)(\d)[a-z]?", a.strip())
    return (m[1], int(m[2]), int(m[3])) if m else None


def cc_runs(cc: str, archs: list[str]) -> bool:
    """Can code built for `archs` run on a GPU of compute capability `cc`?

    Machine code (sm_XY) runs on the same major version with an equal or higher minor; PTX
    (compute_XY) is compiled by the driver for any GPU of capability XY or higher."""
    dev = major_minor(cc)
    if dev is None:
        return True
    for a in archs:
        p = parse_arch(a)
        if p is None:
            continue
        kind, major, minor = p
        if kind == "compute" and (major, minor) <= dev:
            return True
        if kind == "sm" and major == dev[0] and minor <= dev[1]:
            return True
    return False


# ----------------------------------------------------------------------------- checks

class Doctor:
    def __init__(self, root: str = "/", path: str | None = None, libcuda: str = "libcuda.so.1",
                 frameworks: str = "auto", compile_kernel: bool = True, timeout: float = 60.0,
                 environ: dict | None = None):
        self.root = Path(root)
        self.environ = dict(os.environ if environ is None else environ)
        self.path = path if path is not None else self.environ.get("PATH", os.defpath)
        self.libcuda = libcuda
        self.frameworks = frameworks
        self.compile_kernel = compile_kernel
        self.timeout = timeout
        self.fake_root = self.root.resolve() != Path("/")

    def at(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def cmd(self, *args: str, timeout: float | None = None, env: dict | None = None) -> dict:
        return run(list(args), self.path, timeout or self.timeout,
                   env=env if env is not None else self.environ)

    # -- platform
    def check_platform(self) -> dict:
        proc_version = read(self.at("/proc/version")) or ""
        return {
            "wsl": self.at("/dev/dxg").exists() or "microsoft" in proc_version.lower(),
            "container": self.at("/.dockerenv").exists() or self.at("/run/.containerenv").exists(),
            "os": platform.platform() if not self.fake_root else ascii_clean(proc_version)[:80],
            "python": platform.python_version(),
        }

    # -- PCI bus
    def check_pci(self) -> dict:
        devices, seen = [], 0
        for dev in sorted(glob.glob(str(self.at("/sys/bus/pci/devices/*")))):
            seen += 1
            vendor = (read(Path(dev, "vendor")) or "").strip().lower()
            klass = (read(Path(dev, "class")) or "").strip().lower()
            if vendor != "0x10de" or not klass.startswith("0x03"):
                continue
            driver = Path(dev, "driver")
            devices.append({
                "slot": Path(dev).name,
                "class": {"0x0300": "VGA compatible controller", "0x0302": "3D controller"}.get(
                    klass[:6], "display controller"),
                "device_id": (read(Path(dev, "device")) or "").strip(),
                "bound_driver": os.path.basename(os.path.realpath(driver)) if driver.exists() else None,
            })
        result = {"source": "sysfs", "pci_devices_seen": seen, "nvidia": devices}
        lspci = self.cmd("lspci", "-nn", timeout=15)
        if lspci["rc"] == 0:
            names = [ascii_clean(line) for line in lspci["out"].splitlines()
                     if "[10de:" in line.lower() and re.search(r"\[03\d\d\]", line)]
            result["lspci"] = names
            if not devices and names:  # no sysfs here (some containers): trust lspci
                result["source"] = "lspci"
                result["nvidia"] = [{"slot": n.split()[0], "class": n.split(" [03")[0].split(" ", 1)[-1],
                                     "device_id": None, "bound_driver": None} for n in names]
            for d in result["nvidia"]:
                for n in names:
                    if n.split()[0] in d["slot"]:
                        d["name"] = n.split(": ", 1)[-1]
        if seen == 0 and lspci["rc"] != 0:
            result["source"] = None
        return result

    # -- kernel driver
    def check_kernel_driver(self) -> dict:
        text = read(self.at("/proc/driver/nvidia/version"))
        if text is None:
            modules = read(self.at("/proc/modules")) or ""
            return {"loaded": False, "nouveau": bool(re.search(r"^nouveau\s", modules, re.M))}
        first = ascii_clean(text.splitlines()[0]) if text.strip() else ""
        m = re.search(r"\b(\d{3,}\.\d+(?:\.\d+)?)\b", first)
        return {"loaded": True, "version": m[1] if m else None, "text": first,
                "flavour": "open" if "Open Kernel Module" in first else "proprietary"}

    # -- nvidia-smi
    def check_nvidia_smi(self) -> dict:
        plain = self.cmd("nvidia-smi", timeout=30)
        r = {"found": plain["found"], "path": plain["path"], "ok": plain["rc"] == 0}
        if not plain["found"]:
            return r
        text = plain["out"] + plain["err"]
        if plain["rc"] != 0:
            r["error"] = ascii_clean(text)[:400] or f"exit status {plain['rc']}"
            return r
        m = re.search(r"Driver Version:\s*([\d.]+)", text)
        r["driver_version"] = m[1] if m else None
        m = re.search(r"CUDA Version:\s*([\d.]+)", text)
        r["cuda_version"] = m[1] if m else None
        q = self.cmd("nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap,pci.bus_id",
                     "--format=csv,noheader,nounits", timeout=30)
        gpus = []
        for line in q["out"].splitlines() if q["rc"] == 0 else []:
            parts = [x.strip() for x in line.split(",")]
            if len(parts) == 5:
                gpus.append({"name": parts[0], "driver": parts[1],
                             "memory_mib": int(float(parts[2])) if re.fullmatch(r"[\d.]+", parts[2]) else None,
                             "cc": parts[3], "bus_id": parts[4]})
        r["gpus"] = gpus
        return r

    # -- libcuda and libcudart, probed in a child process (a broken driver can crash or hang)
    def cudart_candidates(self) -> list[str]:
        found = []
        if not self.fake_root:
            ld = run(["ldconfig", "-p"], os.pathsep.join([self.path, "/sbin", "/usr/sbin"]), 15)
            found += re.findall(r"=>\s*(\S*libcudart\.so\.\d+)\s*$", ld["out"], re.M)
            for site in sys.path:  # CUDA runtime wheels: nvidia-cuda-runtime-cu12, nvidia-cuda-runtime (13)
                found += glob.glob(os.path.join(site, "nvidia", "cuda_runtime", "lib", "libcudart.so.*"))
                found += glob.glob(os.path.join(site, "nvidia", "cu1[0-9]", "lib", "libcudart.so.*"))
        for pattern in ("/usr/local/cuda*/lib64/libcudart.so.*", "/usr/local/cuda*/lib/libcudart.so.*",
                        "/usr/lib/x86_64-linux-gnu/libcudart.so.*"):
            found += glob.glob(str(self.at(pattern)))
        unique = {}
        for f in found:
            if re.search(r"libcudart\.so\.\d+$", f) and os.path.exists(f):
                unique.setdefault(os.path.realpath(f), f)
        return sorted(unique.values())

    def check_libraries(self) -> dict:
        request = {"libcuda": self.libcuda, "cudart": self.cudart_candidates()}
        env = dict(self.environ)
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--probe-libraries",
                                json.dumps(request)], capture_output=True, text=True,
                               timeout=self.timeout, env=env, errors="replace")
            line = [x for x in p.stdout.splitlines() if x.startswith("GPU-DOCTOR-JSON ")]
            if line:
                return json.loads(line[-1].split(" ", 1)[1])
            err = ascii_clean(p.stderr)[-300:] or f"exit status {p.returncode}"
            return {"libcuda": {"loaded": False, "crashed": True, "error": f"library probe failed: {err}"},
                    "cudart": []}
        except subprocess.TimeoutExpired:
            return {"libcuda": {"loaded": False, "hung": True,
                                "error": f"loading libcuda / cuInit did not return within {self.timeout:g} s"},
                    "cudart": []}

    # -- toolkit
    def check_toolkit(self) -> dict:
        r = {"symlink": None, "installed": sorted(p.name for p in self.at("/usr/local").glob("cuda-*")
                                                    if p.is_dir())}
        link = self.at("/usr/local/cuda")
        if link.is_symlink():
            r["symlink"] = os.readlink(link)
        elif link.is_dir():
            r["symlink"] = "(a directory, not a link)"
        nvcc = self.cmd("nvcc", "--version", timeout=30)
        r["nvcc_on_path"] = nvcc["found"]
        if not nvcc["found"]:
            off_path = sorted(glob.glob(str(self.at("/usr/local/cuda*/bin/nvcc"))))
            r["nvcc_off_path"] = off_path
            return r
        r["nvcc_path"] = nvcc["path"]
        m = re.search(r"release (\d+\.\d+), (V[\d.]+)", nvcc["out"])
        r["nvcc_version"], r["nvcc_build"] = (m[1], m[2]) if m else (None, None)
        if nvcc["rc"] != 0:
            r["nvcc_error"] = ascii_clean(nvcc["out"] + nvcc["err"])[:300]
        archs = self.cmd("nvcc", "--list-gpu-arch", timeout=30)
        r["nvcc_archs"] = sorted(set(re.findall(r"compute_\d+", archs["out"])),
                                 key=lambda a: int(a.split("_")[1])) if archs["rc"] == 0 else []
        return r

    def check_environment(self) -> dict:
        def cuda_dirs(var):
            return [p for p in self.environ.get(var, "").split(os.pathsep)
                    if re.search(r"/cuda(-\d+(\.\d+)?)?(/|$)", p)]
        entries = cuda_dirs("PATH") + cuda_dirs("LD_LIBRARY_PATH")
        return {
            "PATH": cuda_dirs("PATH"),
            "LD_LIBRARY_PATH": cuda_dirs("LD_LIBRARY_PATH"),
            "missing": [p for p in entries if not self.at(p).exists()],
            "CUDA_VISIBLE_DEVICES": self.environ.get("CUDA_VISIBLE_DEVICES"),
            "NUMBA_ENABLE_CUDASIM": self.environ.get("NUMBA_ENABLE_CUDASIM"),
            "CUPY_COMPILE_WITH_PTX": self.environ.get("CUPY_COMPILE_WITH_PTX"),
        }

    # -- Python packages
    @staticmethod
    def check_wheels() -> list[dict]:
        """Installed distributions that are tied to one CUDA major version, from their names."""
        out = {}
        for dist in importlib.metadata.distributions():
            name = (dist.metadata["Name"] or "").lower().replace("_", "-")
            version = dist.version or ""
            major = None
            m = (re.fullmatch(r"nvidia-[a-z0-9-]+-cu(\d+)", name) or re.fullmatch(r"cupy-cuda(\d+)x", name)
                 or re.fullmatch(r"jax-cuda(\d+)-(?:plugin|pjrt)", name))
            if m:
                major = int(m[1])
            elif name in ("nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "cuda-toolkit") and version:
                major = version_tuple(version)[0]
            elif name == "torch" and "+cu" in version:
                major = int(version.split("+cu")[1][:-1] or 0)
            if major:
                # The first one on sys.path wins, as it does for import.
                out.setdefault(name, {"name": name, "version": version, "cuda_major": major})
        return sorted(out.values(), key=lambda w: w["name"])

    def frameworks_to_probe(self) -> list[str]:
        if self.frameworks == "none":
            return []
        if self.frameworks == "auto":
            names = []
            for name in FRAMEWORKS:
                try:
                    if importlib.util.find_spec(name) is not None:
                        names.append(name)
                except (ImportError, ValueError):
                    pass
            return names
        return [n for n in self.frameworks.split(",") if n]

    def probe_framework(self, name: str) -> dict:
        env = {k: v for k, v in self.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        try:
            p = subprocess.run([sys.executable, "-c", FRAMEWORK_PROBE, name], capture_output=True,
                               text=True, timeout=self.timeout, env=env, errors="replace")
        except subprocess.TimeoutExpired:
            return {"error": f"import and test did not finish within {self.timeout:g} s"}
        line = [x for x in p.stdout.splitlines() if x.startswith("GPU-DOCTOR-JSON ")]
        if not line:
            return {"error": f"the probe crashed (exit status {p.returncode}): "
                             f"{ascii_clean(p.stderr)[-300:]}"}
        result = json.loads(line[-1].split(" ", 1)[1])
        if "error" in result and "No module named" in result["error"] and "version" not in result:
            result["installed"] = False
        return result

    def nvcc_kernel(self, toolkit: dict) -> dict | None:
        if not self.compile_kernel or not toolkit.get("nvcc_on_path"):
            return None
        with tempfile.TemporaryDirectory(prefix="gpu-doctor-") as tmp:
            src, exe = Path(tmp, "one_element.cu"), Path(tmp, "one_element")
            src.write_text(ONE_ELEMENT_CU)
            build = self.cmd("nvcc", "-o", str(exe), str(src), timeout=max(self.timeout, 120))
            if build["rc"] != 0:
                return {"built": False, "error": ascii_clean(build["out"] + build["err"])[:400]}
            try:
                p = subprocess.run([str(exe)], capture_output=True, text=True, timeout=self.timeout,
                                   errors="replace")
                out, rc = p.stdout, p.returncode
            except (OSError, subprocess.TimeoutExpired) as exc:
                out, rc = str(exc), None
        r = {"built": True, "ok": rc == 0 and "OK 42" in out, "output": ascii_clean(out)[:300]}
        m = re.search(r"FAIL \S+ (cuda\w+)", out)
        r["error_name"] = m[1] if m else None
        m = re.search(r"runtime (\d+) driver (\d+)", out)
        if m:
            r["runtime"] = cuda_from_int(int(m[1]))
            r["driver"] = cuda_from_int(int(m[2])) if int(m[2]) else None
        return r

    # -- everything
    def collect(self, framework_results: dict | None = None) -> dict:
        facts = {"platform": self.check_platform(), "pci": self.check_pci(),
                 "kernel_driver": self.check_kernel_driver(), "nvidia_smi": self.check_nvidia_smi(),
                 "toolkit": self.check_toolkit(), "environment": self.check_environment()}
        facts.update(self.check_libraries())
        facts["wheels"] = [] if self.frameworks == "none" else self.check_wheels()
        names = self.frameworks_to_probe() if framework_results is None else []
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(names) + 1)) as pool:
            kernel = pool.submit(self.nvcc_kernel, facts["toolkit"])
            futures = {n: pool.submit(self.probe_framework, n) for n in names}
            facts["frameworks"] = {n: f.result() for n, f in futures.items()}
            facts["nvcc_kernel"] = kernel.result()
        if framework_results is not None:
            facts["frameworks"] = framework_results
        return facts


def probe_libraries(request: dict) -> dict:
    """Load libcuda and each libcudart with ctypes; runs in a child process of the doctor."""
    out = {"libcuda": {"requested": request["libcuda"], "loaded": False}, "cudart": []}
    c = out["libcuda"]
    try:
        lib = ctypes.CDLL(request["libcuda"])
    except OSError as exc:
        c["error"] = str(exc)
    else:
        c["loaded"] = True
        maps = read(Path("/proc/self/maps")) or ""
        m = re.search(r"(/\S*libcuda\.so[.\d]*)$", maps, re.M)
        c["path"] = m[1] if m else request["libcuda"]
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 and v.value:
            c["driver_cuda"] = cuda_from_int(v.value)
        rc = lib.cuInit(0)
        name = ctypes.c_char_p()
        c["init_code"] = rc
        c["init"] = (name.value.decode() if lib.cuGetErrorName(rc, ctypes.byref(name)) == 0 and name.value
                     else f"CUresult {rc}")
        devices = []
        if rc == 0:
            n = ctypes.c_int(0)
            lib.cuDeviceGetCount(ctypes.byref(n))
            for i in range(n.value):
                dev, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
                buf = ctypes.create_string_buffer(256)
                lib.cuDeviceGet(ctypes.byref(dev), i)
                lib.cuDeviceGetName(buf, 256, dev)
                lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # CC major
                lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # CC minor
                devices.append({"name": buf.value.decode(errors="replace"), "cc": f"{major.value}.{minor.value}"})
        c["devices"] = devices
    for path in request["cudart"]:
        entry = {"path": path}
        try:
            rt = ctypes.CDLL(path)
            v = ctypes.c_int(0)
            if rt.cudaRuntimeGetVersion(ctypes.byref(v)) == 0:
                entry["version"] = cuda_from_int(v.value)
        except (OSError, AttributeError) as exc:
            entry["error"] = str(exc)
        entry["source"] = "pip wheel" if "site-packages" in path else "system"
        out["cudart"].append(entry)
    return out


# ----------------------------------------------------------------------------- diagnosis

def finding(id_: str, severity: str, title: str, detail: str, fix: list[str] | None = None) -> dict:
    return {"id": id_, "severity": severity, "title": title, "detail": detail, "next": fix or []}


def driver_cuda(facts: dict) -> tuple[str | None, str]:
    """The CUDA version the installed driver supports, and where that number came from."""
    lc, smi, kd = facts.get("libcuda", {}), facts.get("nvidia_smi", {}), facts.get("kernel_driver", {})
    if lc.get("driver_cuda"):
        return lc["driver_cuda"], "cuDriverGetVersion"
    if smi.get("cuda_version"):
        return smi["cuda_version"], "nvidia-smi"
    est = cuda_for_driver(kd.get("version"))
    return (est, "NVIDIA's minimum-driver table") if est else (None, "")


def runtimes(facts: dict) -> list[tuple[str, str]]:
    """(what, CUDA version) for everything here that was built against a CUDA runtime."""
    found = []
    for rt in facts.get("cudart", []):
        if rt.get("version"):
            found.append((f"libcudart {rt['version']} ({rt['path']})", rt["version"]))
    tk = facts.get("toolkit", {})
    if tk.get("nvcc_version"):
        found.append((f"nvcc {tk['nvcc_version']}", tk["nvcc_version"]))
    for name, fw in sorted(facts.get("frameworks", {}).items()):
        if fw.get("cuda_build") and major_minor(fw["cuda_build"]):
            found.append((f"{name} {fw.get('version', '')} (built for CUDA {fw['cuda_build']})", fw["cuda_build"]))
    for w in facts.get("wheels", []):
        major = w["cuda_major"]  # from the wheel's name here; a replayed report may be damaged
        if not isinstance(major, int) or isinstance(major, bool) or not 0 < major < 100:
            raise ValueError(f"pip wheel {w['name']}: cuda_major {major!r} is not a CUDA major "
                             "version")
        found.append((f"pip wheel {w['name']} {w['version']} (CUDA {w['cuda_major']})", f"{w['cuda_major']}.0"))
    return found


def device_ccs(facts: dict) -> list[str]:
    ccs = [d["cc"] for d in facts.get("libcuda", {}).get("devices", []) if d.get("cc")]
    ccs = ccs or [g["cc"] for g in facts.get("nvidia_smi", {}).get("gpus", []) if major_minor(g.get("cc"))]
    return sorted(set(ccs))


def gpu_usable(facts: dict) -> bool:
    lc = facts.get("libcuda", {})
    if not (lc.get("loaded") and lc.get("init_code") == 0 and lc.get("devices")):
        return False
    kernels = [fw.get("kernel") for fw in facts.get("frameworks", {}).values() if fw.get("kernel")]
    nk = facts.get("nvcc_kernel")
    if nk and nk.get("built") and not is_ptx_error(nk.get("error_name") or ""):
        kernels.append("ok" if nk.get("ok") else "failed")  # newer PTX is a build problem, not the GPU's
    return not kernels or "ok" in kernels


def is_ptx_error(text: str) -> bool:
    return any(p in text for p in ("UnsupportedPtxVersion", "UNSUPPORTED_PTX_VERSION", "unsupported toolchain"))


def minor_version_finding(too_new: list[tuple[str, str]], drv: str, drv_mm: tuple[int, int],
                          facts: dict) -> dict:
    """Runtime newer than the driver within one CUDA major: what can fail, and, per kind of
    software found, what to do about it (nvcc users build machine code; CuPy already does)."""
    ccs = device_ccs(facts)
    sm = ccs[0].replace(".", "") if ccs else "XY"
    whats = [w for w, _ in too_new]
    detail = (f"{'; '.join(whats)}; the driver supports CUDA {drv}. CUDA's minor-version "
              f"compatibility lets programs built with any CUDA {drv_mm[0]}.x toolkit run on a "
              f"driver of branch {MIN_BRANCH_FOR_MAJOR.get(drv_mm[0], '?')} or newer, except for "
              "what needs the newer driver: PTX produced by the newer toolkit cannot be "
              "JIT-compiled by this driver (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), and newer APIs "
              "return cudaErrorCallRequiresNewerDriver. Upgrading the driver removes both limits.")
    fix = []
    if any(w.startswith(("nvcc", "libcudart")) for w in whats):
        detail += f" For your own CUDA C code: build machine code for the GPU (-arch=sm_{sm})."
        fix.append(f"nvcc -arch=sm_{sm} -o app app.cu   # machine code: no PTX for the driver to JIT")
    if any(w.startswith("cupy") for w in whats):
        ptx = facts.get("environment", {}).get("CUPY_COMPILE_WITH_PTX") not in (None, "", "0")
        if ptx:
            detail += (" CuPy: CUPY_COMPILE_WITH_PTX is set, so CuPy hands PTX to the driver, which "
                       "fails on this driver; unset it and CuPy compiles machine code itself.")
            fix.append("unset CUPY_COMPILE_WITH_PTX")
        else:
            detail += (" CuPy needs nothing: it compiles its kernels to machine code for this GPU "
                       "(CUPY_COMPILE_WITH_PTX unset), so the PTX limit does not apply to it.")
    if any(w.startswith("numba") for w in whats):
        detail += (" Numba (numba-cuda) links through nvJitLink, which handles this case.")
    fix.append("nvidia-smi --query-gpu=driver_version --format=csv,noheader   # then a newer driver")
    return finding("minor-version-compat", "warning",
                   f"Runtime newer than the driver within CUDA {drv_mm[0]}: works, with limits",
                   detail, fix)


def diagnose(facts: dict) -> list[dict]:
    out = []
    plat, pci = facts.get("platform", {}), facts.get("pci", {})
    kd, smi = facts.get("kernel_driver", {}), facts.get("nvidia_smi", {})
    lc, tk, env = facts.get("libcuda", {}), facts.get("toolkit", {}), facts.get("environment", {})
    fws, nk = facts.get("frameworks", {}), facts.get("nvcc_kernel") or {}
    wsl, container = plat.get("wsl"), plat.get("container")
    has_device = bool(pci.get("nvidia")) or bool(lc.get("devices")) or bool(smi.get("gpus"))
    smi_err = smi.get("error", "")

    # 1. Hardware.
    if not has_device and not wsl and not kd.get("loaded") and not smi.get("ok"):
        seen = pci.get("pci_devices_seen", 0)
        detail = (f"None of the {seen} PCI devices has NVIDIA's vendor ID 0x10de with a display class "
                  "(0x0300 VGA or 0x0302 3D controller), and no NVIDIA driver is loaded." if seen else
                  "The PCI bus could not be read (no /sys/bus/pci and no lspci), and no NVIDIA driver "
                  "is loaded.")
        fixes = ["lspci -nn | grep -i nvidia"]
        if container:
            detail += (" This is a container: it sees a GPU only when started with one (docker run "
                       "--gpus all), which needs the NVIDIA driver and Container Toolkit on the host.")
            fixes.append("docker run --rm --gpus all nvidia/cuda:13.0.3-base-ubuntu24.04 nvidia-smi")
        else:
            detail += (" On a cloud VM, check that the instance type has a GPU; on a laptop, check that "
                       "the firmware has not disabled the discrete GPU.")
        out.append(finding("no-device", "error", "No NVIDIA GPU on this machine", detail, fixes))
    if wsl:
        out.append(finding(
            "wsl", "info", "Running under WSL 2",
            "WSL has no NVIDIA PCI device and no kernel module of its own: the Windows driver provides "
            "the GPU and puts libcuda and nvidia-smi in /usr/lib/wsl/lib. Never install a Linux driver "
            "inside WSL; install only the toolkit (cuda-toolkit-X-Y from the wsl-ubuntu repository).",
            ["ls /usr/lib/wsl/lib/"]))

    # 2. Kernel driver.
    bound = {d.get("bound_driver") for d in pci.get("nvidia", [])} - {None}
    if pci.get("nvidia") and not kd.get("loaded") and not wsl:
        nouveau = kd.get("nouveau") or "nouveau" in bound
        out.append(finding(
            "no-driver", "error",
            "NVIDIA GPU present, but the NVIDIA kernel driver is not loaded",
            ("The open-source nouveau driver has the GPU; it cannot run CUDA. Installing NVIDIA's driver "
             "blacklists nouveau; reboot afterwards. " if nouveau else
             "/proc/driver/nvidia/version does not exist. Either no driver is installed, or its kernel "
             "module failed to load: after a kernel update the module may not have been rebuilt (DKMS), "
             "and with Secure Boot on an unsigned module is refused. ")
            + "Read the kernel log for the reason before reinstalling.",
            ["sudo dmesg | grep -i -E 'nvidia|nvrm|nouveau' | tail -n 20",
             "mokutil --sb-state",
             "sudo apt-get install -y nvidia-open-580 && sudo reboot   # NVIDIA's apt repository, see Install CUDA"]))

    # 3. nvidia-smi.
    if "version mismatch" in smi_err.lower():
        out.append(finding(
            "driver-library-mismatch", "error", "Driver/library version mismatch",
            f"nvidia-smi says: \"{smi_err[:160]}\". The driver's user-space libraries were upgraded "
            f"but the old kernel module (version {kd.get('version') or 'unknown'}) is still loaded. "
            "A reboot loads the new module.", ["sudo reboot"]))
    elif "couldn't communicate" in smi_err.lower() or "could not communicate" in smi_err.lower():
        out.append(finding(
            "smi-no-driver", "error", "nvidia-smi cannot talk to the NVIDIA driver",
            "nvidia-smi is installed, but the kernel module is not loaded (or not the one nvidia-smi "
            "belongs to). Load it by hand to see why it fails.",
            ["sudo modprobe nvidia", "sudo dmesg | grep -i nvrm | tail -n 20", "dkms status"]))
    elif smi.get("found") and not smi.get("ok"):
        out.append(finding("smi-failed", "error", "nvidia-smi failed",
                           f"nvidia-smi printed: \"{smi_err[:200]}\".", ["nvidia-smi -q | head -n 40"]))
    elif not smi.get("found") and (kd.get("loaded") or lc.get("loaded")):
        out.append(finding(
            "smi-missing", "warning", "nvidia-smi is not on PATH",
            "The driver is loaded but its nvidia-smi tool is missing from PATH"
            + (" (in a container it is mounted only with --gpus all or NVIDIA_DRIVER_CAPABILITIES "
               "including utility)." if container else "."),
            ["ls /usr/bin/nvidia-smi /usr/lib/wsl/lib/nvidia-smi 2>/dev/null"]))
    smi_drv = smi.get("driver_version")
    if (smi_drv and kd.get("version") and smi_drv != kd["version"]
            and not any(f["id"] == "driver-library-mismatch" for f in out)):
        out.append(finding(
            "driver-library-mismatch", "error", "Driver/library version mismatch",
            f"The loaded kernel module is {kd['version']} but nvidia-smi reports {smi_drv}: the driver "
            "was upgraded without a reboot.", ["sudo reboot"]))

    # 4. libcuda and cuInit.
    driver_present = kd.get("loaded") or smi.get("ok") or wsl
    if not lc.get("loaded") and driver_present:
        out.append(finding(
            "no-libcuda", "error", "The CUDA driver library libcuda.so.1 cannot be loaded",
            f"{ascii_clean(lc.get('error', ''))[:200]} The kernel driver is there, but its user-space "
            "CUDA library is not on the loader's path"
            + (": WSL keeps it in /usr/lib/wsl/lib." if wsl else
               ": in a container, start it with --gpus all; on a host, the driver's compute package "
                 "(libnvidia-compute-<branch>) is missing."),
            ["ldconfig -p | grep libcuda"]
            + (["export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH"] if wsl else [])))
    if lc.get("hung") or lc.get("crashed"):
        out.append(finding("libcuda-broken", "error", "Loading libcuda or cuInit failed badly",
                           lc.get("error", ""), ["sudo dmesg | tail -n 30", "nvidia-smi -q | head -n 40"]))
    code = lc.get("init_code")
    if lc.get("loaded") and code not in (None, 0):
        cvd = env.get("CUDA_VISIBLE_DEVICES")
        name = lc.get("init", f"CUresult {code}")
        if code == CU_NO_DEVICE and cvd is not None:
            out.append(finding(
                "cuda-visible-devices", "error", "CUDA_VISIBLE_DEVICES hides every GPU",
                f"cuInit returned {name} (\"no CUDA-capable device is detected\") and "
                f"CUDA_VISIBLE_DEVICES is set to \"{cvd}\".", ["unset CUDA_VISIBLE_DEVICES"]))
        elif code == CU_NO_DEVICE:
            out.append(finding(
                "cuinit-no-device", "error", "The CUDA driver finds no device",
                f"cuInit returned {name} (\"no CUDA-capable device is detected\")."
                + (" In a container, start it with --gpus all." if container else
                   " The device may be held by another driver (vfio-pci, nouveau) or be in a bad state."),
                ["nvidia-smi -L", "lspci -nnk | grep -i -A3 nvidia"]))
        elif code == CU_SYSTEM_NOT_READY:
            out.append(finding(
                "fabric-manager", "error", "CUDA system not ready: start NVIDIA Fabric Manager",
                f"cuInit returned {name}. On NVSwitch systems (HGX/DGX H100, H200, B200) CUDA waits for "
                "the Fabric Manager service, whose version must match the driver's.",
                ["systemctl status nvidia-fabricmanager",
                 "sudo apt-get install -y nvidia-fabricmanager-580 && sudo systemctl enable --now nvidia-fabricmanager"]))
        elif code == CU_SYSTEM_DRIVER_MISMATCH:
            out.append(finding(
                "driver-library-mismatch", "error", "libcuda does not match the kernel driver",
                f"cuInit returned {name}: the libcuda that was loaded ({lc.get('path')}) belongs to another "
                "driver version than the kernel module. Reboot after a driver upgrade; if a cuda-compat "
                "directory is on LD_LIBRARY_PATH, remove it.", ["sudo reboot"]))
        elif code == CU_COMPAT_NOT_SUPPORTED:
            out.append(finding(
                "compat-unsupported", "error", "The forward-compatibility libcuda does not support this GPU",
                f"cuInit returned {name}: a cuda-compat libcuda ({lc.get('path')}) was loaded, and "
                "forward compatibility works only on data-center GPUs. Remove the compat directory from "
                "LD_LIBRARY_PATH and upgrade the driver instead.", ["echo $LD_LIBRARY_PATH"]))
        else:
            out.append(finding("cuinit-failed", "error", f"cuInit failed: {name}",
                               "The CUDA driver loaded but could not initialise. A GPU in a bad state "
                               "after suspend or an Xid error often needs a reboot.",
                               ["sudo dmesg | grep -i xid | tail -n 10", "nvidia-smi -q | head -n 40"]))

    # 5. Driver versus runtime versions: the compatibility rule.
    # --8<-- [start:rule]
    drv, drv_source = driver_cuda(facts)
    drv_mm = major_minor(drv)
    if drv_mm and (lc.get("loaded") or smi.get("ok") or kd.get("loaded")):
        too_new_major, too_new_minor = [], []
        for what, version in runtimes(facts):
            mm = major_minor(version)
            if mm[0] > drv_mm[0]:
                too_new_major.append((what, version))
            elif mm[0] == drv_mm[0] and mm > drv_mm and not what.startswith("pip wheel"):
                too_new_minor.append((what, version))
        if too_new_major:
            need = max((v for _, v in too_new_major), key=major_minor)
            majors = sorted({major_minor(v)[0] for _, v in too_new_major})
            out.append(finding(
                "driver-too-old", "error",
                f"The driver supports CUDA {drv}; this machine has software built for CUDA {majors[-1]}",
                f"{'; '.join(w for w, _ in too_new_major)}. A CUDA program needs a driver at least as "
                f"new as its runtime's major version: it fails with cudaErrorInsufficientDriver "
                f"(\"CUDA driver version is insufficient for CUDA runtime version\"). CUDA {majors[-1]}.x "
                f"needs driver {driver_needed_for(f'{majors[-1]}.0')}; CUDA {need} needs "
                f"{driver_needed_for(need)}. (Driver CUDA version from {drv_source}.) Either upgrade the "
                f"driver, or install builds for CUDA {drv_mm[0]}.",
                [f"sudo apt-get install -y nvidia-open-{MIN_BRANCH_FOR_MAJOR.get(majors[-1], 580)} && sudo reboot"]
                + ([f'pip install "numba-cuda[cu{drv_mm[0]}]" cupy-cuda{drv_mm[0]}x   # builds for the driver you have']
                   if drv_mm[0] in (12, 13) else [])))
        if too_new_minor:
            out.append(minor_version_finding(too_new_minor, drv, drv_mm, facts))
    # --8<-- [end:rule]

    # 6. The test kernels.
    failed = []
    if nk.get("built") and not nk.get("ok"):
        failed.append(("nvcc test program", nk.get("error_name") or nk.get("output", "")))
    for name, fw in sorted(fws.items()):
        if fw.get("kernel") not in (None, "ok"):
            failed.append((name, fw["kernel"]))
    for who, why in failed:
        if is_ptx_error(why):
            out.append(finding(
                "ptx-too-new", "error", f"{who}: PTX newer than the driver",
                f"The kernel failed with {why}: it was compiled to PTX by a toolkit newer than the driver "
                f"(driver supports CUDA {drv or '?'}), and the driver cannot JIT-compile newer PTX. "
                "Compile machine code for the GPU instead of PTX, or upgrade the driver.",
                [f"nvcc -arch=sm_{device_ccs(facts)[0].replace('.', '') if device_ccs(facts) else 'XY'} -o app app.cu"]))
        elif lc.get("init_code") == 0 and not any(f["id"] == "driver-too-old" for f in out):
            out.append(finding("kernel-failed", "error", f"{who}: the one-element test kernel failed",
                               f"Result: {why}.", ["nvidia-smi", "sudo dmesg | grep -i xid | tail -n 10"]))
    if nk.get("built") and not nk.get("ok") and not has_device and not driver_present:
        out.append(finding(
            "nvcc-without-gpu", "info", "nvcc works; the program it builds cannot run here",
            f"The CUDA {tk.get('nvcc_version')} toolkit compiled the test program, which then stopped "
            f"with {nk.get('error_name') or nk.get('output')}: that is what the CUDA runtime returns when "
            "no driver is installed. You can build CUDA programs on this machine, and run them on one "
            f"with a GPU and a driver for CUDA {tk.get('nvcc_version')} or newer "
            f"({driver_needed_for(tk.get('nvcc_version') or '')}).", []))
    if tk.get("nvcc_on_path") and tk.get("nvcc_build") is None:
        out.append(finding("nvcc-broken", "warning", "nvcc did not report a version",
                           tk.get("nvcc_error", ""), ["nvcc --version"]))

    # 7. Compute capability against the builds.
    for cc in device_ccs(facts):
        lowest = parse_arch((tk.get("nvcc_archs") or ["none"])[0])
        if lowest and major_minor(cc) < lowest[1:]:
            archs = tk["nvcc_archs"]
            out.append(finding(
                "cc-below-toolkit", "error",
                f"nvcc {tk.get('nvcc_version')} cannot build for this GPU (compute capability {cc})",
                f"Its lowest target is {archs[0]}. CUDA 13 dropped Maxwell, Pascal and Volta (5.x-7.0); "
                "use a CUDA 12.x toolkit for these GPUs.", ["nvcc --list-gpu-arch"]))
        for name, fw in sorted(fws.items()):
            if fw.get("archs") and name in ("torch", "tensorflow") and not cc_runs(cc, fw["archs"]):
                out.append(finding(
                    "cc-not-in-build", "error",
                    f"{name} {fw.get('version', '')} has no kernels for compute capability {cc}",
                    f"It was built for {', '.join(fw['archs'])}. Kernels fail with \"no kernel image is "
                    "available for execution on the device\". Install a build that lists your GPU.",
                    [{"torch": "python -c 'import torch; print(torch.cuda.get_arch_list())'",
                      "tensorflow": "python -c 'import tensorflow as tf; print(tf.sysconfig.get_build_info())'"}[name]]))

    # 8. Frameworks that do not see a GPU that the driver sees.
    for name, fw in sorted(fws.items()):
        if fw.get("installed") is False:
            continue
        if fw.get("error"):
            out.append(finding(f"{name}-import", "warning", f"{name}: import or test failed",
                               fw["error"], [f"python -c 'import {name}'"]))
            continue
        if lc.get("init_code") != 0 or not lc.get("devices") or fw.get("gpu_visible"):
            continue
        if any(f["id"] == "driver-too-old" for f in out):
            continue
        if name == "torch" and not fw.get("cuda_build"):
            why, fix = "this is a CPU-only build of PyTorch (torch.version.cuda is None)", \
                ["pip install torch --index-url https://download.pytorch.org/whl/cu130"]
        elif name == "tensorflow" and not fw.get("is_cuda_build", True):
            why, fix = "this TensorFlow build has no CUDA support", ['pip install "tensorflow[and-cuda]"']
        elif name == "tensorflow":
            why, fix = ("TensorFlow could not load its CUDA libraries (cuDNN, cuBLAS, ...); without the "
                        "[and-cuda] extra it logs \"Could not load dynamic library\" / \"Cannot dlopen some "
                        "GPU libraries\" and runs on the CPU",
                        [f'pip install "tensorflow[and-cuda]=={fw.get("version", "")}"'])
        elif name == "numba":
            why, fix = (fw.get("gpu_error") or fw.get("runtime_error") or "numba.cuda.is_available() is False",
                        ['pip install "numba-cuda[cu12]"   # or [cu13] with a CUDA 13 driver'])
        else:
            why, fix = fw.get("gpu_error") or "it reports no GPU", []
        out.append(finding(f"{name}-no-gpu", "error", f"{name} does not see the GPU", why + ".", fix))

    # 9. Paths and environment.
    if not tk.get("nvcc_on_path") and tk.get("nvcc_off_path"):
        out.append(finding(
            "nvcc-not-on-path", "warning", "The CUDA toolkit is installed but nvcc is not on PATH",
            f"Found {', '.join(tk['nvcc_off_path'])}. The toolkit's packages do not change PATH.",
            ["export PATH=/usr/local/cuda/bin${PATH:+:${PATH}}   # add to ~/.bashrc"]))
    if env.get("missing"):
        out.append(finding(
            "stale-cuda-paths", "warning", "PATH or LD_LIBRARY_PATH names CUDA directories that do not exist",
            f"{', '.join(env['missing'])}: typically an old line in ~/.bashrc for a toolkit that was "
            "removed or never installed (the original article hard-coded /usr/local/cuda-12.3). Point "
            "them at /usr/local/cuda, the link to the toolkit in use.",
            ["grep -n cuda ~/.bashrc ~/.profile"]))
    if env.get("NUMBA_ENABLE_CUDASIM") not in (None, "", "0"):
        out.append(finding(
            "numba-simulator", "warning", "NUMBA_ENABLE_CUDASIM is set: Numba kernels run on the CPU",
            "With the CUDA simulator on, numba.cuda kernels run as Python threads on the CPU, however "
            "healthy the GPU is. The doctor tested Numba without it.", ["unset NUMBA_ENABLE_CUDASIM"]))
    cupys = [w["name"] for w in facts.get("wheels", []) if w["name"].startswith("cupy-cuda")]
    if len(cupys) > 1:
        out.append(finding("cupy-twice", "error", "Several CuPy packages are installed",
                           f"{', '.join(cupys)} share one import name and overwrite each other's files.",
                           [f"pip uninstall -y {' '.join(cupys)} && pip install cupy-cuda{drv_mm[0] if drv_mm else 12}x"]))

    if not out or all(f["severity"] == "info" for f in out):
        if gpu_usable(facts):
            out.append(finding("ok", "info", "The GPU is usable", "Every check passed.", []))
    return out


def exit_status(facts: dict, findings: list[dict]) -> int:
    if not gpu_usable(facts):
        return 1
    return 3 if any(f["severity"] == "error" for f in findings) else 0


# ----------------------------------------------------------------------------- report

def summary_lines(facts: dict) -> list[tuple[str, str]]:
    rows = []
    plat, pci, kd = facts.get("platform", {}), facts.get("pci", {}), facts.get("kernel_driver", {})
    smi, lc, tk = facts.get("nvidia_smi", {}), facts.get("libcuda", {}), facts.get("toolkit", {})
    if plat.get("wsl"):
        rows.append(("PCI bus", "not visible under WSL 2 (the Windows driver owns the GPU)"))
    elif pci.get("nvidia"):
        rows.append(("PCI bus", "; ".join(f"{d['slot']} {d.get('name') or d['class'] + ' ' + str(d.get('device_id'))}"
                                          + (f" [driver: {d['bound_driver']}]" if d.get("bound_driver") else "")
                                          for d in pci["nvidia"])))
    elif pci.get("source"):
        rows.append(("PCI bus", f"no NVIDIA device among {pci.get('pci_devices_seen', 0)} PCI devices"))
    else:
        rows.append(("PCI bus", "could not be read"))
    rows.append(("kernel driver", f"{kd.get('version')} ({kd.get('flavour')} kernel module)" if kd.get("loaded")
                 else "not loaded (no /proc/driver/nvidia/version)"
                 + ("; nouveau is loaded" if kd.get("nouveau") else "")))
    if not smi.get("found"):
        rows.append(("nvidia-smi", "not found on PATH"))
    elif smi.get("ok"):
        gpus = ", ".join(f"{g['name']} (cc {g['cc']}, {g['memory_mib']} MiB)" for g in smi.get("gpus", []))
        rows.append(("nvidia-smi", f"driver {smi.get('driver_version')}, CUDA {smi.get('cuda_version')}; {gpus}"))
    else:
        rows.append(("nvidia-smi", f"failed: {clip(smi.get('error', ''), 120)}"))
    if lc.get("loaded"):
        devs = ", ".join(f"{d['name']} (cc {d['cc']})" for d in lc.get("devices", [])) or "no device"
        rows.append(("libcuda", f"{lc.get('path')}: driver API CUDA {lc.get('driver_cuda')}; "
                                f"cuInit: {lc.get('init')}; {devs}"))
    else:
        rows.append(("libcuda", f"cannot be loaded ({clip(lc.get('error', ''), 120)})"))
    rts = facts.get("cudart", [])
    rows.append(("CUDA runtime", "; ".join(f"libcudart {r.get('version', '?')} ({r['source']}: {r['path']})"
                                           for r in rts) or "no libcudart found"))
    if tk.get("nvcc_on_path"):
        archs = tk.get("nvcc_archs") or []
        span = f"; builds for {archs[0]} ... {archs[-1]}" if archs else ""
        rows.append(("CUDA toolkit", f"nvcc {tk.get('nvcc_version')} ({tk.get('nvcc_build')}) at {tk.get('nvcc_path')}{span}"))
    else:
        rows.append(("CUDA toolkit", "nvcc not on PATH" + (f" (found {', '.join(tk['nvcc_off_path'])})"
                                                           if tk.get("nvcc_off_path") else "")))
    if tk.get("symlink") or tk.get("installed"):
        rows.append(("/usr/local/cuda", f"-> {tk.get('symlink')}; installed: {', '.join(tk.get('installed', [])) or 'none'}"))
    wheels = facts.get("wheels", [])
    rows.append(("CUDA wheels", ", ".join(f"{w['name']} {w['version']}" for w in wheels) or "none"))
    for name, fw in sorted(facts.get("frameworks", {}).items()):
        if fw.get("installed") is False:
            continue
        if fw.get("error"):
            rows.append((name, f"failed: {clip(fw['error'], 150)}"))
            continue
        version = fw.get("version", "")
        if name == "numba":
            version += f" ({fw.get('implementation')} CUDA target" + (
                f", numba-cuda {fw['numba_cuda']})" if fw.get("numba_cuda") else ")")
        built = f", CUDA {fw['cuda_build']}" if fw.get("cuda_build") else ""
        if fw.get("gpu_visible"):
            devs = ", ".join(f"{d['name']} (cc {d['cc']})" for d in fw.get("devices", []))
            state = f"sees {devs}; test kernel: {fw.get('kernel')}"
        else:
            state = "no GPU" + (f" ({clip(fw['gpu_error'], 110)})" if fw.get("gpu_error") else "")
        rows.append((name, f"{version}{built}: {state}"))
    nk = facts.get("nvcc_kernel")
    if nk:
        rows.append(("test kernel", "nvcc test program: " + (
            "ran, result OK" if nk.get("ok") else
            f"built; run failed: {nk.get('error_name') or nk.get('output')}" if nk.get("built") else
            f"did not compile: {clip(nk.get('error', ''), 120)}")))
    return rows


def verdict(report: dict) -> str:
    """One line that agrees with the findings listed above it."""
    status = report["exit_status"]
    if status == 1:
        return "no usable GPU"
    if status == 3:
        return "a usable GPU, but some software here cannot use it (see the errors)"
    warnings = sum(f["severity"] == "warning" for f in report["findings"])
    if warnings:
        return (f"a usable GPU, with {warnings} warning{'s' * (warnings > 1)} above "
                "(nothing found stops programs from running)")
    return "a usable GPU, no problem found"


def render_text(report: dict) -> str:
    marks = {"error": "[error]  ", "warning": "[warning]", "info": "[info]   "}
    lines = [f"GPU doctor, {report['date']} on {report['facts']['platform'].get('os', '?')}, "
             f"Python {report['facts']['platform'].get('python', '?')}", "", "Checks"]
    for key, value in summary_lines(report["facts"]):
        lines.append(f"  {key:<16}{value}")
    lines += ["", "Diagnosis"]
    for f in report["findings"]:
        lines.append(f"  {marks[f['severity']]} {f['title']}")
        words, line = f["detail"].split(), "             "
        for w in words:
            if len(line) + len(w) > 98:
                lines.append(line.rstrip())
                line = "             "
            line += w + " "
        if words:
            lines.append(line.rstrip())
        for cmd in f["next"]:
            lines.append(f"             next: {cmd}")
    lines += ["", f"Verdict: {verdict(report)} (exit status {report['exit_status']})"]
    return "\n".join(lines) + "\n"


def build_report(doctor: Doctor, framework_results: dict | None = None) -> dict:
    facts = doctor.collect(framework_results)
    findings = diagnose(facts)
    return {"schema": SCHEMA, "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "command": " ".join(["gpu_doctor.py", *sys.argv[1:]]), "facts": facts,
            "findings": findings, "usable": gpu_usable(facts), "exit_status": exit_status(facts, findings)}


def show(text: str, end: str = "\n") -> bool:
    """Print the answer; False if it could not be. A reader that stops reading (| head) ends
    the run quietly; a full device is one line naming it."""
    try:
        print(text, end=end, flush=True)
        return True
    except OSError as exc:  # BrokenPipeError included
        try:
            where = os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
        except OSError:
            where = ""
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        if not isinstance(exc, BrokenPipeError):
            name = f"standard output ({where})" if where.startswith("/") else "standard output"
            print(f"error: cannot write to {name}: {exc.strerror}", file=sys.stderr)
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check this machine's NVIDIA GPU, driver, CUDA and Python frameworks; "
                    "say what is wrong and what to run next.",
        epilog="Exit status: 0 usable GPU and no problem; 1 no usable GPU; 3 usable GPU but "
               "something will break some programs; 2 bad arguments, or the report could not "
               "be written.")
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--json", metavar="FILE", type=json_target, help="also write the full report as JSON to FILE ('-': "
                        "print only the JSON)")
    parser.add_argument("--frameworks", default="auto",
                        help="Python frameworks to import and test: 'auto' (every one installed: "
                             f"{', '.join(FRAMEWORKS)}), 'none' (skip Python packages), or a "
                             "comma-separated list")
    parser.add_argument("--no-compile", action="store_true",
                        help="do not build and run the one-element test program with nvcc")
    parser.add_argument("--timeout", type=number(float, 0.001, 86400.0), default=60.0,
                        help="seconds allowed for each tool, library or framework probe (default 60)")
    parser.add_argument("--libcuda", default="libcuda.so.1",
                        help="CUDA driver library to load (default libcuda.so.1, as CUDA programs do; "
                             "give a path to test e.g. a cuda-compat package)")
    parser.add_argument("--root", default=os.environ.get("GPU_DOCTOR_ROOT", "/"),
                        help="read /proc, /sys, /dev and /usr/local under this directory instead of / "
                             "(for tests and chroots; default $GPU_DOCTOR_ROOT or /)")
    parser.add_argument("--replay", metavar="FILE", type=Path,
                        help="diagnose the facts recorded in FILE (a --json report, from any "
                             "machine) instead of this machine's")
    parser.add_argument("--probe-libraries", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe_libraries:
        print("GPU-DOCTOR-JSON " + json.dumps(probe_libraries(json.loads(args.probe_libraries))))
        return 0
    if sys.stdout is None:  # started with standard output closed (>&-): nowhere to answer
        parser.exit(2, "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
    if args.replay:
        try:
            report = json.loads(args.replay.read_text())
            if not isinstance(report, dict) or report.get("schema") != SCHEMA:
                found = report.get("schema") if isinstance(report, dict) else type(report).__name__
                raise ValueError(f"schema {found!r}, expected {SCHEMA!r}")
            facts = report["facts"]
            report.update(findings=diagnose(facts), usable=gpu_usable(facts))
            report["exit_status"] = exit_status(facts, report["findings"])
            text = render_text(report)  # inside: a fact of the wrong shape fails here too
        except OSError as exc:
            parser.error(f"--replay {args.replay}: {exc.strerror or exc}")
        except RecursionError:
            parser.error(f"--replay {args.replay}: not a doctor report (nested too deep)")
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            parser.error(f"--replay {args.replay}: not a doctor report ({why})")
        return report["exit_status"] if show(text, end="") else 2
    if not Path(args.root).is_dir():
        parser.error(f"--root {args.root!r} is not a directory")
    if args.frameworks not in ("auto", "none"):
        unknown = [n for n in args.frameworks.split(",") if n not in FRAMEWORKS]
        if unknown or not args.frameworks.strip(","):
            parser.error(f"--frameworks: unknown {', '.join(unknown) or 'empty list'}; "
                         f"choose from auto, none, {', '.join(FRAMEWORKS)}")
    doctor = Doctor(root=args.root, libcuda=args.libcuda, frameworks=args.frameworks,
                    compile_kernel=not args.no_compile, timeout=args.timeout)
    report = build_report(doctor)
    if args.json == "-":
        return report["exit_status"] if show(json.dumps(report, indent=1)) else 2
    if args.json:  # the file first: a reader who stops reading (| head) still gets it
        try:
            write_atomically(args.json, json.dumps(report, indent=1) + "\n")
        except OSError as exc:
            print(f"error: cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    return report["exit_status"] if show(render_text(report), end="") else 2


def number(kind, low, high):
    """An argparse type: a `kind` (int or float) from low to high; anything else is a one-line error."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'a whole number' if kind is int else 'a number'}: {text!r}") from None
        if not low <= value <= high:  # false for nan too
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {text}")
        return value
    return parse


def output_file(text: str) -> Path:
    """An argparse type: a file path in an existing, writable folder, checked before any work."""
    try:  # a real write: os.access says yes to root everywhere, even in /proc
        path = Path(text)
        if path.is_dir():
            raise IsADirectoryError(text)
        real = path.resolve()  # a symlink is written through: probe beside its target
        probe = real.with_name(f".{real.name}.{os.getpid()}.probe")
        probe.touch()
        probe.unlink()
    except (OSError, ValueError):
        raise argparse.ArgumentTypeError(f"{text}: not a file in an existing, writable folder") from None
    return path


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write through a temporary file and rename it: a reader never sees half a file. A symlink
    is written through: its target is replaced, the link stays. A device or a pipe (/dev/stdout,
    a FIFO) is written in place: renaming a file over it would replace it."""
    if Path(path).exists() and not Path(path).is_file():
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return
    path = Path(path).resolve()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")  # unique
    # Ctrl-C waits until the file is whole and in place (or the write failed): no temporary file
    # is left, and the one line it prints then can say the output was written.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        tmp.write_bytes(data) if isinstance(data, bytes) else tmp.write_text(data)
        os.replace(tmp, path)
        WRITTEN.append(str(path))
    finally:
        try:
            tmp.unlink(missing_ok=True)  # after a failed write (a full disk, say): no leftover
        except OSError:  # a file system gone read-only: the write's own error is the one to say
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a Ctrl-C held back lands here



def json_target(text: str):
    """--json: "-" (the report on stdout instead of the text), or a file checked before the checks."""
    return text if text == "-" else output_file(text)


if __name__ == "__main__":
    sys.exit(main())
