"""Describe the machine a benchmark ran on: CPU, GPU, driver, CUDA, library versions, date, command.

Every results file carries this block so a figure can always be traced to its hardware and
software. Nothing here raises: a missing tool or library is recorded as None.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
import platform
import shlex
import shutil
import subprocess
import sys

LIBRARIES = ("numpy", "numba", "numba-cuda", "cupy-cuda12x", "cupy-cuda13x", "tensorflow",
             "keras", "jax", "jaxlib", "torch", "pyopencl", "pocl-binary-distribution")


def _run(cmd: list[str]) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def gpus() -> list[dict]:
    """One entry per NVIDIA GPU, from nvidia-smi's query mode (empty without a driver)."""
    fields = "name,driver_version,memory.total,compute_cap,pci.bus_id"
    out = _run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"])
    found = []
    for line in (out or "").splitlines():
        name, driver, mem, cc, bus = (x.strip() for x in line.split(","))
        found.append({"name": name, "driver": driver, "memory_mib": int(float(mem)),
                      "compute_capability": cc, "pci_bus_id": bus})
    return found


def cuda_versions() -> dict:
    """CUDA driver API and runtime versions as Numba sees them, when it can see a GPU."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return {"driver": None, "runtime": None, "note": "Numba CUDA simulator"}
    try:
        from numba import cuda

        if not cuda.is_available():
            return {"driver": None, "runtime": None}
        drv = cuda.cudadrv.driver.driver.get_version()
        rt = cuda.runtime.get_version()
        return {"driver": "%d.%d" % drv, "runtime": "%d.%d" % rt}
    except Exception as exc:  # any failure is a finding, not a crash
        return {"driver": None, "runtime": None, "error": f"{type(exc).__name__}: {exc}"}


def library_versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def describe_system(check_cuda: bool = True) -> dict:
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join([os.path.basename(sys.executable), *sys.argv]),
        "host": {"os": platform.platform(), "cpu": cpu_model(), "cores": usable_cores()},
        "gpus": gpus(),
        "cuda": cuda_versions() if check_cuda else None,
        "libraries": library_versions(),
    }
