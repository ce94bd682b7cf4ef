"""Where a training step's time goes: one epoch traced by jax.profiler or torch.profiler,
reduced to a few numbers per step (bench.adapters.Training traces a GPU row after its rounds)."""

from __future__ import annotations

import glob
import gzip
import json
import os
import tempfile
from typing import Callable


def _union(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for begin, finish in sorted(spans):
        if finish > end:
            total += finish - max(begin, end)
            end = finish
    return total


def breakdown(device_events: list[tuple[str, float, float]], wall_us: float, steps: int,
              launches: int = 0) -> dict:
    """Per step, in ms: the traced span, kernels, copies (host<->device), GPU busy; top kernels.

    device_events: (name, start_us, duration_us) of everything the GPU ran. The traced span
    holds the profiler's own start and stop: `step_trace` sets the busy share against the step's
    untraced time."""
    kernels = [(t, t + d) for name, t, d in device_events if "memcpy" not in name.lower()]
    copies = [(t, t + d) for name, t, d in device_events if "memcpy" in name.lower()]
    busy = _union(kernels + copies)
    per = {}
    for name, _, d in device_events:
        per[name] = per.get(name, 0.0) + d
    top = sorted(per.items(), key=lambda kv: -kv[1])[:8]
    ms = 1e-3 / steps
    return {"steps": steps, "wall_ms": round(wall_us * ms, 4),
            "kernels_ms": round(_union(kernels) * ms, 4), "copies_ms": round(_union(copies) * ms, 4),
            "busy_ms": round(busy * ms, 4), "idle_ms": round((wall_us - busy) * ms, 4),
            "gpu_busy": round(busy / wall_us, 4) if wall_us else 0.0,
            "device_events_per_step": round(len(device_events) / steps, 1),
            "launches_per_step": round(launches / steps, 2),
            "top": [[name[:80], round(d * ms, 4)] for name, d in top]}


def jax_trace(epoch: Callable[[], object], steps: int) -> dict:
    import jax

    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder, create_perfetto_trace=True):
            epoch()
        files = glob.glob(os.path.join(folder, "plugins", "profile", "*", "perfetto_trace.json.gz"))
        with gzip.open(files[0]) as f:
            events = json.load(f)["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X"]
    on_gpu = [e for e in spans if "/device:GPU" in procs.get(e["pid"], "")]
    streams = [e for e in on_gpu if threads.get((e["pid"], e["tid"]), "").startswith("Stream")]
    device = [(e["name"], e["ts"], e.get("dur", 0)) for e in (streams or on_gpu)]
    start = min(e["ts"] for e in spans)
    wall = max(e["ts"] + e.get("dur", 0) for e in spans) - start
    launches = sum(1 for e in spans if "ExecutePrepare" in e["name"])
    return breakdown(device, wall, steps, launches)


def torch_trace(epoch: Callable[[], object], steps: int) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with tempfile.TemporaryDirectory() as folder:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            epoch()
        path = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    device = [(e["name"], e["ts"], e.get("dur", 0)) for e in spans
              if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    start = min(e["ts"] for e in spans)
    wall = max(e["ts"] + e.get("dur", 0) for e in spans) - start
    launches = sum(1 for e in spans if e.get("name") == "cudaLaunchKernel")
    torch.cuda.synchronize()
    return breakdown(device, wall, steps, launches)


def step_trace(framework: str, epoch: Callable[[], object], steps: int, step_s: float) -> dict:
    """The breakdown of one traced epoch of `steps` steps, its GPU busy share and idle time
    against `step_s` (a step's untraced seconds); {"error": ...} where the profiler fails."""
    try:
        profile = (jax_trace if framework == "jax" else torch_trace)(epoch, steps)
    except Exception as exc:  # noqa: BLE001 - a missing profiler leaves the row untraced
        return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    profile["step_ms"] = round(step_s * 1e3, 4)
    profile["gpu_busy"] = round(min(1.0, profile["busy_ms"] / profile["step_ms"]), 4)
    profile["idle_ms"] = round(max(0.0, profile["step_ms"] - profile["busy_ms"]), 4)
    return profile
