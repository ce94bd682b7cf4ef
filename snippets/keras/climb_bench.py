"""Measures the climb (climb.py, climb_torch.py) for benchmark.py: every row in one process, in
interleaved rounds, then one profiler trace of each row reduced to where a step's time goes.

Each sample is one epoch over the row's images, timed on the host clock (the epoch returns the
loss as a Python float, so every step has finished). After every row is built (compiled, one
warm epoch), each row warms up again in round order for at least `warm_s` seconds, uncounted;
then each of `rounds` rounds runs every row in turn for at least `per_round` epochs and at least
`round_s` seconds, with Python's garbage collector off. The machine is a virtual machine: a
round in which the hypervisor took more than STEAL_LIMIT of the host's CPU time (steal, from
/proc/stat) is set aside and run again, at most `retries` times in a row and RETRY_BUDGET times
in the whole run; a set-aside round stays in the record, marked, and its epochs are not counted.
The GPU rows' rounds come first, the CPU rows' after them, so that no CPU row's threads share
the host with a GPU row's round. Torch's thread count is set once, before any row is built.
Prints one `BENCH {json}` line per row (bench.external's format): seconds per image, FLOP per
image, each round's median, epochs, seconds and steal share, and the trace's breakdown of a step.
"""

from __future__ import annotations

import gc
import glob
import gzip
import json
import math
import os
import statistics
import tempfile
import time

import numpy as np

# The rule for a round disturbed by the hypervisor, fixed before the run of 2026-12-02 (fifth
# session): in the previous run ordinary rounds lost 0.02 to 1.0 % of the host's CPU time to
# steal and the three slow ones 2.1 to 3.4 %.
STEAL_LIMIT = 0.015
RETRY_BUDGET = 12  # set-aside rounds in one run, at most: a bound on the run's time

# row -> (how it trains, its climb step or settings, images per sample)
ROWS = {
    "climb-default": ("keras", {"step": "default"}, 1024),
    "climb-xla": ("keras", {"step": "xla"}, 32768),
    "climb-uint8": ("keras", {"step": "uint8"}, 32768),
    "climb-batch": ("keras", {"step": "batch"}, 32768),
    "climb-spe": ("keras", {"step": "spe"}, 32768),
    "climb-resident": ("keras", {"step": "resident"}, 32768),
    "climb-bf16": ("keras", {"step": "bf16"}, 32768),
    "climb-scan": ("keras", {"step": "scan"}, 32768),
    "climb-resample": ("keras", {"step": "resample"}, 32768),
    "climb-pool": ("keras", {"step": "pool"}, 32768),
    "climb-batch4096": ("keras", {"step": "batch4096"}, 65536),
    "plain-xla": ("keras", {"step": "xla", "augment": False}, 32768),
    "plain-batch4096": ("keras", {"step": "batch4096", "augment": False}, 65536),
    "torch-compile": ("torch", {"batch": 1024, "compile": True, "bf16": True}, 32768),
    "cpu-keras-xla": ("keras-cpu", {"step": "spe", "batch": 256}, 256),
    "cpu-torch": ("torch-cpu", {"batch": 256, "compile": False, "bf16": False}, 256),
}


def make_images(n: int, size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n uint8 images (size x size x 3) and 0/1 labels: 512 distinct ones, repeated."""
    from make_dataset import draw

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, min(n, 512))
    images = np.stack([draw("dog" if y else "cat", rng, size)[:size, :size] for y in labels])
    reps = math.ceil(n / len(labels))
    return np.tile(images, (reps, 1, 1, 1))[:n], np.tile(labels, reps)[:n].astype("float32")


def images(n: int, size: int = 64) -> tuple[np.ndarray, np.ndarray]:
    x, y = make_images(n, size)
    return x, y[:, None]


def build(row: str, scale: float = 1.0, size: int = 64):
    """(epoch, n, batch, settings, framework) for a row; `scale` shrinks the images (tests)."""
    kind, spec, n = ROWS[row]
    if kind.startswith("keras"):
        from climb import settings

        spec = {"batch": settings(spec["step"])["batch"], **spec}
    n = max(int(n * scale), spec["batch"])
    x, y = images(n, size)
    if kind.startswith("keras"):
        import jax

        from climb import trainer

        changes = {k: v for k, v in spec.items() if k != "step"}
        if kind == "keras-cpu":
            with jax.default_device(jax.devices("cpu")[0]):
                model, s, epoch = trainer(spec["step"], x, y, **changes)

            def on_cpu(epoch=epoch):
                with jax.default_device(jax.devices("cpu")[0]):
                    return epoch()
            return on_cpu, n, s["batch"], s, "jax"
        model, s, epoch = trainer(spec["step"], x, y, **changes)
        return epoch, n, s["batch"], s, "jax"
    import torch

    from climb_torch import trainer as torch_trainer

    dev = "cuda" if kind == "torch" else "cpu"  # measure() set the threads, once
    model, epoch = torch_trainer(torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev),
                                 spec["batch"], spec["compile"], spec["bf16"])
    return epoch, n, spec["batch"], dict(spec, threads=torch.get_num_threads()), "torch"


# --- traces: where a step's time goes -------------------------------------------------------

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
    holds the profiler's own start and stop: measure() sets the step's time from the untraced
    samples and the busy share against it."""
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


def jax_trace(epoch, steps: int) -> dict:
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


def torch_trace(epoch, steps: int) -> dict:
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


# --- the run ---------------------------------------------------------------------------------

def host_times() -> tuple[int, int] | None:
    """(steal, total) jiffies of every CPU from /proc/stat, or None where there is none."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (fields[7], sum(fields)) if len(fields) == 8 else None


def timed_round(epoch, n: int, per_round: int, round_s: float) -> tuple[list[float], dict]:
    """Epochs of one row until at least `per_round` ran and `round_s` seconds passed: seconds
    per image of each, and the round's record (median images/s, epochs, seconds, steal share)."""
    gc.collect()
    gc.disable()  # a collection inside a timed epoch would land on one row's round
    before, cpu, start, mine = host_times(), time.process_time(), time.perf_counter(), []
    try:
        while len(mine) < per_round or time.perf_counter() - start < round_s:
            t0 = time.perf_counter()
            loss = epoch()
            mine.append((time.perf_counter() - t0) / n)
    finally:
        gc.enable()
    wall, after = time.perf_counter() - start, host_times()
    steal = None
    if before and after and after[1] > before[1]:
        steal = round((after[0] - before[0]) / (after[1] - before[1]), 4)
    return mine, {"images_per_s": round(1 / statistics.median(mine), 1), "epochs": len(mine),
                  "seconds": round(wall, 3), "steal": steal, "loss": loss,
                  "cpu_per_s": round((time.process_time() - cpu) / wall, 2)}


def measure(rows: list[str], rounds: int = 3, per_round: int = 6, round_s: float = 3.0,
            warm_s: float = 1.0, scale: float = 1.0, trace: bool = True, retries: int = 2,
            build_s: float = float("inf"), say=print) -> list[dict]:
    """BENCH records (dicts) for `rows`, measured together; a row that fails is left out, and
    so is every row not yet built (compiled, warmed) `build_s` seconds after the start."""
    from climb import train_flop_per_image

    if any(ROWS[row][0].startswith("torch") for row in rows):
        import torch

        torch.set_num_threads(os.cpu_count() or 1)  # one setting for every torch row, all run
    built, failed, start = {}, {}, time.perf_counter()
    for row in rows:
        t0 = time.perf_counter()
        if t0 - start > build_s:
            failed[row] = f"not built: {build_s:.0f} s had passed"
            continue
        try:
            epoch, n, batch, s, framework = build(row, scale)
            loss = epoch()  # compiles
            epoch()  # warm
        except Exception as exc:  # noqa: BLE001 - one row's failure is reported, the rest go on
            failed[row] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''}"
            say(f"{row}: failed: {failed[row]}")
            continue
        built[row] = {"epoch": epoch, "n": n, "batch": batch, "settings": s,
                      "framework": framework, "first_s": time.perf_counter() - t0,
                      "samples": [], "rounds": [], "loss": loss}
        say(f"{row}: ready in {built[row]['first_s']:.1f} s (first loss {loss:.4f})")
    gc.collect()
    gc.freeze()  # what the builds left is never collected again: short collections per round
    set_aside = 0
    for group in ([r for r in built if not r.startswith("cpu")],
                  [r for r in built if r.startswith("cpu")]):
        for row in group:  # the warm-up round: warm_s seconds each, in round order, not counted
            start = time.perf_counter()
            built[row]["epoch"]()
            while time.perf_counter() - start < warm_s:
                built[row]["epoch"]()
        for r in range(rounds):
            for row in group:
                b = built[row]
                for attempt in range(retries + 1):
                    mine, got = timed_round(b["epoch"], b["n"], per_round, round_s)
                    b["loss"] = got.pop("loss")
                    got["round"] = r + 1
                    disturbed = got["steal"] is not None and got["steal"] > STEAL_LIMIT
                    may_repeat = attempt < retries and set_aside < RETRY_BUDGET
                    got["counted"] = not (disturbed and may_repeat)
                    b["rounds"].append(got)
                    say(f"round {r + 1}: {row}: {got['images_per_s']:,.0f} images/s "
                        f"({got['epochs']} epochs, {got['seconds']:.2f} s, steal {got['steal']})"
                        + ("" if got["counted"] else ": steal above the limit, set aside"))
                    if got["counted"]:
                        b["samples"] += mine
                        break
                    set_aside += 1
    records = []
    for row, b in built.items():
        steps = b["n"] // b["batch"]
        profile = {}
        if trace and not row.startswith("cpu"):
            try:
                profile = (jax_trace if b["framework"] == "jax" else torch_trace)(b["epoch"], steps)
                say(f"{row}: trace: GPU busy {profile['busy_ms']:.3f} ms a step "
                    f"({profile['wall_ms']:.3f} ms traced)")
            except Exception as exc:  # noqa: BLE001 - a missing profiler leaves the row untraced
                profile = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        if "busy_ms" in profile:  # the step's time from the untraced samples, not the trace
            profile["step_ms"] = round(statistics.median(b["samples"]) * b["batch"] * 1e3, 4)
            profile["gpu_busy"] = round(min(1.0, profile["busy_ms"] / profile["step_ms"]), 4)
            profile["idle_ms"] = round(max(0.0, profile["step_ms"] - profile["busy_ms"]), 4)
        ok = math.isfinite(b["loss"])
        records.append({
            "variant": row, "phase": "end_to_end", "samples_s": b["samples"],
            "calls_per_sample": b["n"], "clock": "host",
            "error": {"metric": "training loss after the last sample",
                      "value": round(b["loss"], 5) if ok else -1.0, "ok": ok},
            "flops": train_flop_per_image(64),
            "params": {"batch_size": b["batch"], "images_per_sample": b["n"], "image_size": 64},
            "extra": {"framework": b["framework"], "settings": b["settings"],
                      "rounds_images_per_s": [g["images_per_s"] for g in b["rounds"]
                                              if g["counted"]],
                      "rounds": b["rounds"], "first_two_epochs_s": round(b["first_s"], 2),
                      "trace": profile}})
    for row, why in failed.items():
        say(f"{row} failed: {why}")
    return records


def output(rows: list[str], **kw) -> str:
    return "".join(f"BENCH {json.dumps(r)}\n" for r in measure(rows, **kw))
