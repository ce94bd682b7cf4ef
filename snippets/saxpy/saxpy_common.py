"""What every SAXPY program of this folder shares: the inputs, the check against NumPy, the timer,
the bandwidth report and the command line. Keep it beside them (`from saxpy_common import ...`).
"""

import argparse
import statistics
import timeit

import numpy as np

A = np.float32(2.0)
CALLS = 10  # GPU calls per timed sample: the GPU runs one while Python launches the next


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly representable values: a*x + y is exact in float32, with or without an FMA."""
    i = np.arange(n, dtype=np.int64)
    return ((i % 1000) * 0.5 - 250).astype(np.float32), ((i % 777) * 0.25).astype(np.float32)


def mismatches(saxpy, n: int, to_device=np.asarray, to_host=np.asarray) -> int:
    """Run saxpy(A, x, y) once, in place, on the inputs above (copied to the device and back with
    to_device and to_host); how many elements of y differ from NumPy's A*x + y. Exact inputs:
    the check is exact."""
    x, y = make_inputs(n)
    want = A * x + y
    d_y = to_device(y)
    saxpy(A, to_device(x), d_y)
    return int(np.count_nonzero(to_host(d_y) != want))


def seconds_per_call(fn, repeats: int, calls: int = 1, wait=lambda: None) -> float:
    """Median seconds per call of fn, over `repeats` samples of `calls` calls each, after one
    warm-up sample (a first call may compile). A GPU runs kernels asynchronously: wait() must
    return only once the device has finished all the work queued so far; each sample ends with
    it, so the clock counts the device's work, not just the launches."""
    def sample():
        for _ in range(calls):
            fn()
        wait()
    sample()
    return statistics.median(timeit.repeat(sample, number=1, repeat=repeats)) / calls


def report(title: str, n: int, timed: dict[str, tuple[float, int]], ceiling: str = "") -> None:
    """A line per version: {name: (seconds, bytes moved per element)} -> time and effective
    bandwidth; with `ceiling` (a device copy), each other version's bandwidth as a share of it."""
    print(title)
    rate = {name: moved * n / s for name, (s, moved) in timed.items()}
    for name, (s, _) in timed.items():
        line = f"{name:12s} {s * 1e3:9.4f} ms {rate[name] / 1e9:8.1f} GB/s"
        if ceiling and name != ceiling:
            line += f"  {100 * rate[name] / rate[ceiling]:5.1f}% of the copy"
        print(line)


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


def command_line(doc: str, n: int, repeats: int) -> argparse.ArgumentParser:
    """The arguments every SAXPY program takes: N, and how many timed samples."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("n", nargs="?", type=number(int, 1, 2**32), default=n,
                        help=f"number of float32 elements (default {n:,})")
    parser.add_argument("--repeats", type=number(int, 1, 10**6), default=repeats,
                        help=f"timed samples after a warm-up; the median is reported ({repeats})")
    return parser
