"""Timing done the fair way: warm up first, repeat, report median, min and max.

`time_host` times with the host clock; the function it times must finish its device work
itself (for example by copying the result back or synchronising). `time_events` times device
work with CUDA events recorded on the stream around the call; `time_cuda`, `time_cupy` and
`time_torch` give it the events of Numba, CuPy and PyTorch. `time_opencl` reads OpenCL
profiling events. `summarize` turns samples taken elsewhere (a CUDA C binary) into `Stats`.
`time_rounds` times several rows together in interleaved rounds, setting aside a round the
hypervisor disturbed (`Rounds`: the climb's training steps).
Every `Stats` is per call and says how many calls each sample timed (`calls_per_sample`);
event timings also carry the SM clock read at each sample (`sm_clock`, see `gpu_state`).
"""

from __future__ import annotations

import gc
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


# Interleaved rounds: rows that share a host, a virtual machine's, timed turn by turn.
STEAL_LIMIT = 0.015  # the rule for a round the hypervisor disturbed, fixed before the run of
#   2026-12-02 (fifth session): in the run before, ordinary rounds lost 0.02 to 1.0 % of the
#   host's CPU time to steal and the three slow ones 2.1 to 3.4 %


@dataclass(frozen=True)
class Rounds:
    """A case timed in interleaved rounds (`Case.rounds`): every row is set up, run once (its
    first call compiles) and once more, each begun within `build_s` seconds of the first. Then
    each row warms up for at least `warm_s` seconds, uncounted, in round order; then each of
    `rounds` rounds runs every row in turn for at least `per_round` calls and `round_s` seconds,
    with the garbage collector off. A round that lost more than `steal_limit` of the host's CPU
    time to steal (/proc/stat) is set aside and run again, at most `retries` times in a row and
    `budget` times in the run; it stays in the record, marked, and its samples are not counted.
    A sample is one call. The GPU rows' rounds come first, the CPU rows' after them."""
    rounds: int = 3
    per_round: int = 6
    round_s: float = 3.0
    warm_s: float = 1.0
    retries: int = 2
    budget: int = 12  # set-aside rounds in one run, at most: a bound on the run's time
    steal_limit: float = STEAL_LIMIT
    build_s: float | None = None  # set-up time for all rows; a row not set up by then is left out

    def describe(self) -> str:
        """The rule in words, for the results file's notes."""
        return (f"timed in interleaved rounds: after at least {self.warm_s:g} s of uncounted "
                f"warm-up calls each, {self.rounds} rounds (GPU rows, then CPU rows), each row "
                f"at least {self.per_round} calls and {self.round_s:g} s a round; a round that "
                f"lost more than {self.steal_limit:.1%} of the host's CPU time to steal runs "
                f"again (up to {self.retries} times, {self.budget} in the run)")


def host_times() -> tuple[int, int] | None:
    """(steal, total) jiffies of every CPU from /proc/stat, or None where there is none."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (fields[7], sum(fields)) if len(fields) == 8 else None


def timed_round(fn: Callable[[], object], per_round: int, round_s: float,
                host: Callable[[], tuple[int, int] | None] = host_times) -> tuple[dict, object]:
    """Calls of `fn` until at least `per_round` ran and `round_s` seconds passed: the round's
    record (each call's seconds, the round's seconds, its steal share and the process's CPU
    seconds per second) and the last call's result."""
    gc.collect()
    gc.disable()  # a collection inside a timed call would land on one row's round
    before, cpu, start, samples = host(), time.process_time(), time.perf_counter(), []
    try:
        while len(samples) < per_round or time.perf_counter() - start < round_s:
            t0 = time.perf_counter()
            last = fn()
            samples.append(time.perf_counter() - t0)
    finally:
        gc.enable()
    wall, after = time.perf_counter() - start, host()
    steal = None
    if before and after and after[1] > before[1]:
        steal = round((after[0] - before[0]) / (after[1] - before[1]), 4)
    return {"samples_s": samples, "seconds": round(wall, 3), "steal": steal,
            "cpu_per_s": round((time.process_time() - cpu) / wall, 2)}, last


def time_rounds(groups: list[dict[str, Callable[[], object]]], spec: Rounds,
                say: Callable[[str], object] = print,
                host: Callable[[], tuple[int, int] | None] | None = None) -> dict[str, dict]:
    """Each group's rows (key -> fn, set up and warm) in interleaved rounds, one group after
    the other (see Rounds). Per row: its counted samples (seconds per call), every round's
    record in the order run ("round", "counted" and timed_round's fields) and the last result."""
    host = host or host_times
    gc.collect()
    gc.freeze()  # what the set-ups left is never collected again: short collections per round
    timed = {key: {"samples_s": [], "rounds": [], "last": None} for g in groups for key in g}
    set_aside = 0
    for group in groups:
        for fn in group.values():  # the warm-up: warm_s seconds each, in round order, uncounted
            start = time.perf_counter()
            fn()
            while time.perf_counter() - start < spec.warm_s:
                fn()
        for number in range(1, spec.rounds + 1):
            for key, fn in group.items():
                for attempt in range(spec.retries + 1):
                    got, timed[key]["last"] = timed_round(fn, spec.per_round, spec.round_s, host)
                    disturbed = got["steal"] is not None and got["steal"] > spec.steal_limit
                    may_repeat = attempt < spec.retries and set_aside < spec.budget
                    got.update(round=number, counted=not (disturbed and may_repeat))
                    timed[key]["rounds"].append(got)
                    say(f"round {number}: {key}: median {statistics.median(got['samples_s']):.4g} s "
                        f"a call ({len(got['samples_s'])} calls, {got['seconds']:.2f} s, steal "
                        f"{got['steal']})" + ("" if got["counted"] else ": steal above the limit, "
                                              "set aside"))
                    if got["counted"]:
                        timed[key]["samples_s"] += got["samples_s"]
                        break
                    set_aside += 1
    return timed
