"""What state the GPU was in while it was timed: its SM clock, its settings, its L2 size.

Read through NVML (libnvidia-ml, the library nvidia-smi itself uses) with ctypes, so nothing
is installed for it. Read-only: the harness never sets clocks, power limits, persistence or
MIG mode; it records them, so a figure can be judged against the clock it ran at. Without a
driver (a CPU-only machine, the CUDA simulator) every reading is None.
"""

from __future__ import annotations

import ctypes
import os
import statistics
import threading

SM = 1  # NVML_CLOCK_SM
_handle: list = []  # [library, device handle] once NVML answered, [None] if it cannot


def _nvml():
    if not _handle:
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                raise OSError("nvmlInit failed")
            handle = ctypes.c_void_p()
            # The first visible GPU, the one the benchmarks run on.
            visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
            index = int(visible) if visible.isdigit() else 0
            if lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) != 0:
                raise OSError("no NVML device")
            _handle[:] = [lib, handle]
        except (OSError, AttributeError):
            _handle[:] = [None]
    return _handle if _handle[0] is not None else None


def _uint(name: str, *args) -> int | None:
    nvml = _nvml()
    if nvml is None:
        return None
    out = ctypes.c_uint()
    return out.value if getattr(nvml[0], name)(nvml[1], *args, ctypes.byref(out)) == 0 else None


def sm_clock_mhz() -> int | None:
    """The SM clock now, in MHz (None without NVML)."""
    return _uint("nvmlDeviceGetClockInfo", SM)


def settings() -> dict:
    """The settings the card was found with (recorded, never changed): clocks, power, MIG."""
    nvml = _nvml()
    if nvml is None:
        return {}
    mig_now, mig_pending = ctypes.c_uint(), ctypes.c_uint()
    mig = nvml[0].nvmlDeviceGetMigMode(nvml[1], ctypes.byref(mig_now), ctypes.byref(mig_pending))
    power = _uint("nvmlDeviceGetPowerManagementLimit")
    return {"sm_clock_mhz": sm_clock_mhz(),
            "sm_clock_max_mhz": _uint("nvmlDeviceGetMaxClockInfo", SM),
            "sm_application_clock_mhz": _uint("nvmlDeviceGetApplicationsClock", SM),
            "power_limit_w": None if power is None else power / 1000,
            "mig_mode": None if mig != 0 else bool(mig_now.value),
            "persistence_mode": _uint("nvmlDeviceGetPersistenceMode")}


def l2_bytes() -> int | None:
    """The L2 cache of the GPU the benchmarks run on (through Numba), or None."""
    try:
        from numba import config, cuda

        if config.ENABLE_CUDASIM or not cuda.is_available():
            return None
        return int(cuda.get_current_device().L2_CACHE_SIZE)
    except Exception:  # noqa: BLE001 - a missing attribute or driver is "unknown"
        return None


class Sampler:
    """Reads the SM clock every `interval_s` in a thread while a `with` block runs: for
    timings whose samples are not CUDA events (host clock, a CUDA C program's own loop)."""

    def __init__(self, interval_s: float = 0.005):
        self.interval_s, self.readings = interval_s, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def _read(self):
        while not self._stop.is_set():
            mhz = sm_clock_mhz()
            if mhz is None:
                return
            self.readings.append(mhz)
            self._stop.wait(self.interval_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False


def clock_record(readings: list[int], how: str) -> dict | None:
    """The SM clock beside a measurement: median, min, max of its readings and how they were
    read; None when there were none (no NVML)."""
    readings = [r for r in readings if r is not None]
    if not readings:
        return None
    return {"median": statistics.median(readings), "min": min(readings),
            "max": max(readings), "readings": len(readings), "read": how}
