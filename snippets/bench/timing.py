"""Timing done the fair way: warm up first, repeat, report median, min and max.

`time_host` times with the host clock; the function it times must finish its device work
itself (for example by copying the result back or synchronising). `time_events` times device
work with CUDA events recorded on the stream around the call; `time_cuda`, `time_cupy` and
`time_torch` give it the events of Numba, CuPy and PyTorch.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable

MIN_REPEATS = 10


@dataclass
class Stats:
    median_s: float
    min_s: float
    max_s: float
    repeats: int
    clock: str  # "host" or "cuda-event"

    @property
    def spread(self) -> float:
        """max / min: how much repeats disagree (1.0 is perfect)."""
        return self.max_s / self.min_s if self.min_s > 0 else float("inf")

    def to_dict(self) -> dict:
        return asdict(self) | {"spread": round(self.spread, 4)}


def _stats(samples: list[float], clock: str) -> Stats:
    return Stats(statistics.median(samples), min(samples), max(samples), len(samples), clock)


def _check(repeats: int, warmup: int) -> None:
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats} and {warmup}")


def time_host(fn: Callable[[], object], repeats: int = MIN_REPEATS, warmup: int = 2) -> Stats:
    _check(repeats, warmup)
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return _stats(samples, "host")


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
    _check(repeats, warmup)
    if calls < 1:
        raise ValueError(f"calls must be >= 1, got {calls}")
    for _ in range(warmup):
        fn()
    synchronize()
    samples = []
    for _ in range(repeats):
        start, end = new_event(), new_event()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        samples.append(elapsed_ms(start, end) / 1e3 / calls)  # ms -> s, per call
    return _stats(samples, "cuda-event")


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


def time_once(fn: Callable[[], object]) -> float:
    """Seconds for one call: for first calls that include compilation."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0
