"""How a registry row names the lesson it measures: four adapters, so that a topic's
`benchmark.py` is a table and nothing else.

- `OnDevice(lib, fn, ...)`: a lesson function on GPU arrays of Numba, CuPy or PyTorch;
- `OnHost(fn, ...)`: a lesson function on NumPy arrays, on the CPU;
- `CTable(lesson)`: every row of a CUDA C lesson's KERNELS table, timed by bench/runner.cu;
- `Custom(prepare)`: anything else (a framework's training step): a function returning `Prepared`.

`fn` is a callable or a "module:name" string, imported when the row is measured (a machine
without CuPy still measures the other rows); `args` go before the arrays. The topic's
`Benchmark.inputs(params)` gives the host arrays every row of a case starts from.
"""

from __future__ import annotations

import functools
import importlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench import external


def resolve(fn: Callable | str) -> Callable:
    if callable(fn):
        return fn
    module, _, name = fn.partition(":")
    return getattr(importlib.import_module(module), name)


def real_gpu() -> bool:
    from numba import config, cuda

    return not config.ENABLE_CUDASIM and cuda.is_available()


def pinned(a: np.ndarray) -> np.ndarray:
    """`a` in page-locked host memory where a real GPU is present (end-to-end copies then run at
    the link's DMA rate), else `a` itself."""
    if not real_gpu():
        return a
    from numba import cuda

    out = cuda.pinned_array(a.shape, a.dtype)
    out[...] = a
    return out


class _Lib:
    """A GPU array library's four operations: put (host to device), empty (like a device array
    or of a shape), get (device to host, into `out` when given)."""

    def __init__(self, name: str):
        self.name = name
        if name == "numba":
            from numba import cuda

            self.put, self.empty_like = cuda.to_device, cuda.device_array_like
            self.empty = lambda shape: cuda.device_array(shape, np.float32)
            self.get = lambda d, out=None: d.copy_to_host(out)
        elif name == "cupy":
            import cupy as cp

            self.put, self.empty_like = cp.asarray, cp.empty_like
            self.empty = lambda shape: cp.empty(shape, cp.float32)
            self.get = lambda d, out=None: d.get(out=out)
        elif name == "torch":
            import torch

            self.put = lambda a: torch.from_numpy(np.asarray(a)).to("cuda")
            self.empty_like = torch.empty_like
            self.empty = lambda shape: torch.empty(shape, dtype=torch.float32, device="cuda")
            self.get = (lambda d, out=None: d.cpu().numpy() if out is None
                        else torch.from_numpy(out).copy_(d).numpy())
        else:
            raise ValueError(f"unknown GPU library {name!r} (numba, cupy or torch)")


@functools.lru_cache(maxsize=None)
def _lib(name: str) -> _Lib:
    return _Lib(name)


@functools.lru_cache(maxsize=4)
def _host_buffer(shape: tuple) -> np.ndarray:
    return pinned(np.empty(shape, np.float32))


def _output(make):
    """Where a function writes: "like" (an array like the first input), a shape, or nothing
    (None: the last input is updated in place; "return": the function returns its result)."""
    if make in (None, "return"):
        return None
    if make == "like":
        return lambda lib, arrays: lib.empty_like(arrays[0])
    if isinstance(make, tuple):
        return lambda lib, arrays: lib.empty(make)
    raise ValueError(f"out must be None, 'return', 'like' or a shape, got {make!r}")


@dataclass(frozen=True)
class OnDevice:
    """`fn(*args, *device_inputs[, out])` on the GPU. `out`: None (the last input is updated in
    place and is the result), "return" (fn returns it), "like" (the result goes to a new array
    like the first input) or a shape (a new float32 array). The kernel-only time runs `fn` on arrays already on the device (the output
    allocated once); end to end puts the inputs, runs and gets the result back (its output, too,
    allocated once: the copies are what end to end adds)."""
    lib: str
    fn: Callable | str
    args: tuple = ()
    out: str | tuple | None = None
    take: int | None = None  # pass only the first `take` inputs

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        inputs = inputs[:self.take]
        lib, fn = _lib(self.lib), functools.partial(resolve(self.fn), *self.args)
        alloc, returns = _output(self.out), self.out == "return"
        arrays = [lib.put(a) for a in inputs]
        last = {"out": alloc(lib, arrays) if alloc else arrays[-1]}

        def call(arrays, target):
            got = fn(*arrays, *([target] if alloc else []))
            return got if returns else target

        def kernel():
            last["out"] = call(arrays, last["out"])

        spare = {}  # end to end writes to an output allocated once, as a program's loop would

        def run():
            fresh = [lib.put(a) for a in inputs]
            if alloc and "out" not in spare:
                spare["out"] = alloc(lib, fresh)
            result = call(fresh, spare["out"] if alloc else fresh[-1])
            shape = tuple(result.shape)
            return lib.get(result, _host_buffer(shape) if len(shape) else None)

        return Prepared(run=run, kernel=kernel, fetch=lambda: lib.get(last["out"]))


@dataclass(frozen=True)
class OnHost:
    """`fn(*args, *inputs[, out])` on the CPU, on copies of the inputs; the result is what `fn`
    returns, else `out` ("like": a new array like the first input), else the last input."""
    fn: Callable | str
    args: tuple = ()
    out: str | None = None
    take: int | None = None  # pass only the first `take` inputs

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        inputs = inputs[:self.take]
        fn = functools.partial(resolve(self.fn), *self.args)
        arrays = [np.array(a) for a in inputs]  # copies: the reference keeps the originals
        target = [np.empty_like(arrays[0])] if self.out == "like" else []

        def run():
            result = fn(*arrays, *target)
            return result if result is not None else (target or arrays)[-1]
        return Prepared(run=run)


@dataclass(frozen=True)
class CTable:
    """Every row of a CUDA C lesson's KERNELS table, checked and timed by bench/runner.cu at
    the case's size (`n`, or `m`, `n`, `k`); the rows are registered with `runs=False`."""
    lesson: str | Path
    repeats: int = 20
    flags: tuple[str, ...] = ()

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        size = ("x".join(str(params[d]) for d in "mnk") if "m" in params else str(params["n"]))
        args = ["--bench", "--repeats", str(self.repeats), size]
        return Prepared(external=lambda: runner_output(Path(self.lesson), args, self.flags))


@dataclass(frozen=True)
class Custom:
    """A row measured some other way: `prepare(params)` returns its `Prepared`."""
    prepare_fn: Callable[[dict], Any]

    def prepare(self, inputs: tuple, params: dict):
        return self.prepare_fn(params)


# ---------------------------------------------------------------- the C runner (bench/runner.cu)

RUNNER = Path(__file__).with_name("runner.cu")  # the C runner: it includes a lesson's table
BUILD = Path(__file__).resolve().parents[2] / "build"
COMPILED: set[Path] = set()  # the C sources this process built and ran (bench.system hashes them)


def runner_binary(lesson: Path, flags: tuple[str, ...] = ()) -> Path:
    """The C runner built around `lesson` (a CUDA C lesson with a KERNELS table, see runner.cu),
    built with nvcc when missing or older than the runner, the lesson or a header beside it."""
    lesson = Path(lesson).resolve()
    binary = BUILD / f"bench-{lesson.stem}"
    sources = [RUNNER, *lesson.parent.rglob("*.cu"), *lesson.parent.rglob("*.cuh"),
               *lesson.parent.rglob("*.h")]
    COMPILED.update(sources)
    if not binary.is_file() or binary.stat().st_mtime < max(s.stat().st_mtime for s in sources):
        if shutil.which("nvcc") is None:
            raise RuntimeError(f"{binary} is missing and nvcc is not on PATH to build it")
        binary.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["nvcc", "-O3", "-arch=native", f'-DLESSON="{lesson}"', *flags, "-o",
                        str(binary), str(RUNNER)], check=True, capture_output=True, text=True,
                       timeout=600)
    return binary


def runner_output(lesson: Path, args: list[str], flags: tuple[str, ...] = ()) -> str:
    """The C runner's standard output for `lesson` (`args` as runner.cu takes them: --bench,
    --kernel, --repeats, sizes), BENCH lines included. RuntimeError (one line) when it fails, or
    when a kernel failed its check (its record, which has no samples, says how)."""
    binary = runner_binary(lesson, flags)
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=600)
    failed = [line for line in proc.stdout.splitlines()
              if line.startswith(external.PREFIX) and '"ok": false' in line]
    if failed:
        raise RuntimeError(f"a kernel failed its check: {failed[0][len(external.PREFIX):][:300]}")
    if proc.returncode != 0:
        raise RuntimeError(f"{binary.name} exited {proc.returncode}: "
                           f"{(proc.stderr.strip().splitlines() or [''])[-1]}")
    return proc.stdout


# ---------------------------------------------------------------- a training step, timed in rounds

@dataclass(frozen=True)
class Training:
    """A lesson's training step, measured an epoch at a time, per image. `build(x, y,
    **settings)` sets the lesson's trainer up on the first `images` of the case's inputs (None:
    all), with the case's "settings" (its batch, ...), and returns (epoch, settings): epoch()
    trains one pass and returns its result (the loss as a host number: every step has finished);
    the settings hold its "batch". In a case timed in rounds (bench.timing.Rounds), a GPU row
    then traces one more epoch with `framework`'s profiler (bench.traces), unless the case's
    params say "trace": False."""
    build: Callable
    images: int | None = None
    framework: str | None = "jax"  # its profiler: "jax", "torch" (None: never traced)

    def prepare(self, inputs: tuple, params: dict):
        from bench import traces
        from bench.runner import Prepared

        x, y = inputs
        n = min(self.images or len(x), len(x))
        epoch, settings = self.build(x[:n], y[:n], **params.get("settings", {}))
        batch = settings["batch"]

        def trace(median_s: float) -> dict:  # median_s: seconds per image, untraced
            return traces.step_trace(self.framework, epoch, n // batch, median_s * batch)
        traced = self.framework and params.get("trace", True)
        return Prepared(run=epoch, calls=n, trace=trace if traced else None,
                        record={"params": {"batch_size": batch, "images_per_sample": n},
                                "extra": {"framework": self.framework, "settings": settings}
                                if self.framework else {"settings": settings}})
