"""Timing done the fair way: warm up first, repeat, report median, min and max.

`time_host` times with the host clock; the function it times must finish its device work
itself (for example by copying the result back or synchronising). `time_events` times device
work with CUDA events recorded on the stream around the call; `time_cuda`, `time_cupy` and
`time_torch` give it the events of Numba, CuPy and PyTorch. `time_opencl` reads OpenCL
profiling events. `summarize` turns samples taken elsewhere (a CUDA C binary) into `Stats`.
Every `Stats` is per call and says how many calls each sample timed (`calls_per_sample`);
event timings also carry the SM clock read at each sample (`sm_clock`, see `gpu_state`).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable

from bench import gpu_state

MIN_REPEATS = 10


@dataclass
class Stats:
    median_s: float
    min_s: float
    max_s: float
    repeats: int
    clock: str  # "host", "cuda-event", "opencl-event", "cuda-event (external)", ...
    calls_per_sample: int = 1  # calls timed together in one sample (the figures are per call)
    sm_clock: dict | None = None  # GPU timings: the SM clock while the samples ran (gpu_state)

    @property
    def spread(self) -> float:
        """max / min: how much repeats disagree (1.0 is perfect)."""
        return self.max_s / self.min_s if self.min_s > 0 else float("inf")

    def to_dict(self) -> dict:
        out = asdict(self) | {"spread": round(self.spread, 4)}
        if out["sm_clock"] is None:
            del out["sm_clock"]
        return out


def summarize(samples: list[float], clock: str, calls_per_sample: int = 1) -> Stats:
    """Median, min and max of per-call samples (seconds)."""
    if not samples:
        raise ValueError("no samples")
    return Stats(statistics.median(samples), min(samples), max(samples), len(samples), clock,
                 calls_per_sample)


def _check(repeats: int, warmup: int, calls: int = 1) -> None:
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats} and {warmup}")
    if calls < 1:
        raise ValueError(f"calls must be >= 1, got {calls}")


def time_host(fn: Callable[[], object], repeats: int = MIN_REPEATS, warmup: int = 2) -> Stats:
    _check(repeats, warmup)
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return summarize(samples, "host")


def time_events(fn: Callable[[], object], new_event: Callable[[], object],
                elapsed_ms: Callable[[object, object], float], synchronize: Callable[[], object],
                repeats: int = MIN_REPEATS, warmup: int = 2, calls: int = 1) -> Stats:
    """Time device work between two CUDA events of any library, per call of `fn`.

    `new_event()` makes an event with `record()` and `synchronize()`; `elapsed_ms(start, end)`
    reads the milliseconds between two recorded events; `synchronize()` waits for the device.
    With `calls` > 1 each sample launches `fn` that many times between the two events and
    divides: while the GPU runs one call, the host queues the next, so the host's launch
    overhead (tens of microseconds in Python) stays out of the figure for short kernels.
    """
    _check(repeats, warmup, calls)
    for _ in range(warmup):
        fn()
    synchronize()
    samples, clocks = [], []
    for _ in range(repeats):
        start, end = new_event(), new_event()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        clocks.append(gpu_state.sm_clock_mhz())  # read while the sample's work is queued
        end.synchronize()
        samples.append(elapsed_ms(start, end) / 1e3 / calls)  # ms -> s, per call
    stats = summarize(samples, "cuda-event", calls)
    stats.sm_clock = gpu_state.clock_record(clocks, "each sample")
    return stats


def time_cuda(fn: Callable[[], object], repeats: int = MIN_REPEATS, warmup: int = 2,
              calls: int = 1) -> Stats:
    """Time device work launched through Numba between two CUDA events (see time_events)."""
    from numba import config, cuda

    if config.ENABLE_CUDASIM:  # the simulator's events return -1: use the host clock instead
        stats = time_host(fn, repeats, warmup)
        stats.clock = "host (CUDA simulator)"  # per call; `calls` only matters on a real GPU
        return stats
    return time_events(fn, cuda.event, lambda start, end: start.elapsed_time(end),
                       cuda.synchronize, repeats, warmup, calls)


def time_cupy(cp, fn: Callable[[], object], repeats: int = MIN_REPEATS, warmup: int = 2,
              calls: int = 1) -> Stats:
    """Time device work launched through CuPy between two CUDA events (see time_events)."""
    return time_events(fn, cp.cuda.Event, cp.cuda.get_elapsed_time,
                       cp.cuda.Device().synchronize, repeats, warmup, calls)


def time_torch(torch, fn: Callable[[], object], repeats: int = MIN_REPEATS, warmup: int = 2,
               calls: int = 1) -> Stats:
    """Time device work launched through PyTorch between two CUDA events (see time_events)."""
    return time_events(fn, lambda: torch.cuda.Event(enable_timing=True),
                       lambda start, end: start.elapsed_time(end), torch.cuda.synchronize,
                       repeats, warmup, calls)


def time_opencl(queue, fn: Callable[[], object], repeats: int = MIN_REPEATS, warmup: int = 2,
                calls: int = 1) -> Stats:
    """Time OpenCL device work with the queue's profiling events, per call of `fn`.

    `queue` must be created with profiling on
    (`cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)`);
    `fn()` enqueues the work and returns the event of what it enqueued (a kernel call returns
    one). A sample runs from the first call's start to the last call's end, on the device's
    own clock, divided by `calls`.
    """
    import pyopencl as cl

    _check(repeats, warmup, calls)
    if not queue.properties & cl.command_queue_properties.PROFILING_ENABLE:
        raise ValueError("the queue was created without PROFILING_ENABLE: no event times")
    for _ in range(warmup):
        fn()
    queue.finish()
    samples = []
    for _ in range(repeats):
        events = [fn() for _ in range(calls)]
        if any(not hasattr(e, "profile") for e in events):
            raise TypeError("fn must return the OpenCL event of the work it enqueued")
        events[-1].wait()
        queue.finish()
        samples.append((events[-1].profile.end - events[0].profile.start) * 1e-9 / calls)
    return summarize(samples, "opencl-event", calls)


def time_once(fn: Callable[[], object]) -> float:
    """Seconds for one call: for first calls that include compilation."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0
