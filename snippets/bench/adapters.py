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
import json
import time
from dataclasses import dataclass, field
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
    """A GPU array library's operations: put (host to device), empty (like a device array or of
    a shape), get (device to host, into `out` when given); host (a host copy of a NumPy array,
    page-locked when `pin`), to_device and to_host (copies into existing arrays; each returns
    its destination, to_host as NumPy)."""

    def __init__(self, name: str):
        self.name = name
        if name == "numba":
            from numba import cuda

            self.put, self.empty_like = cuda.to_device, cuda.device_array_like
            self.empty = lambda shape: cuda.device_array(shape, np.float32)
            self.get = lambda d, out=None: d.copy_to_host(out)
            self.host = lambda a, pin: _copy(cuda.pinned_array(a.shape, a.dtype) if pin else a, a)
            self.to_device = lambda h, d: d.copy_to_device(h) or d
            self.to_host = lambda d, h: d.copy_to_host(h)
        elif name == "cupy":
            import cupy as cp

            self.put, self.empty_like = cp.asarray, cp.empty_like
            self.empty = lambda shape: cp.empty(shape, cp.float32)
            self.get = lambda d, out=None: d.get(out=out)
            import cupyx

            self.host = lambda a, pin: _copy(cupyx.empty_like_pinned(a) if pin else a, a)
            self.to_device = lambda h, d: d.set(h) or d
            self.to_host = lambda d, h: d.get(out=h)
        elif name == "torch":
            import torch

            self.put = lambda a: torch.from_numpy(np.asarray(a)).to("cuda")
            self.empty_like = torch.empty_like
            self.empty = lambda shape: torch.empty(shape, dtype=torch.float32, device="cuda")
            self.get = (lambda d, out=None: d.cpu().numpy() if out is None
                        else torch.from_numpy(out).copy_(d).numpy())
            self.host = lambda a, pin: (torch.from_numpy(a).pin_memory() if pin
                                        else torch.from_numpy(a.copy()))
            self.to_device = lambda h, d: d.copy_(h)
            self.to_host = lambda d, h: h.copy_(d).numpy()
        else:
            raise ValueError(f"unknown GPU library {name!r} (numba, cupy or torch)")


def _copy(out: np.ndarray, a: np.ndarray) -> np.ndarray:
    """`a` copied into `out`; a new pageable array where `out` is `a` itself."""
    if out is a:
        return a.copy()
    out[...] = a
    return out


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
    the case's size (`n`, or `m`, `n`, `k`); the rows are registered with `runs=False`.
    `flags`: nvcc's (an -arch replaces -arch=native; libraries such as -lcublas). `kernels`:
    for a case's params, {table row or selection ("all", "tune"): the name it is reported
    under}; a row reported under another row's name says which it was in `extra.instance`
    (None: the lesson's default set). `skip_failed`: a row that fails its check is left out
    (said on stderr) instead of failing the whole table, as a tuning run wants."""
    lesson: str | Path
    repeats: int = 20
    flags: tuple[str, ...] = ()
    kernels: Callable[[dict], dict[str, str]] | None = None
    skip_failed: bool = False

    def names(self, selection: str = "all") -> list[str]:
        """The table rows `--kernel selection` runs, from the built runner (`--list`)."""
        return runner_output(Path(self.lesson), ["--kernel", selection, "--list"],
                             self.flags).split()

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        size = ("x".join(str(params[d]) for d in "mnk") if "m" in params else str(params["n"]))
        chosen = self.kernels(params) if self.kernels else {}
        args = ["--bench", "--repeats", str(self.repeats),
                *(["--kernel", ",".join(chosen)] if chosen else []), size]

        def output() -> str:
            import json

            text = runner_output(Path(self.lesson), args, self.flags,
                                 **({"skip_failed": True} if self.skip_failed else {}))
            renamed = {row: to for row, to in chosen.items() if to != row}
            if not renamed:
                return text
            lines = []
            for line in text.splitlines():
                if line.startswith(external.PREFIX):
                    record = json.loads(line[len(external.PREFIX):])
                    row = next((r for r in renamed if record["variant"].endswith(r)), None)
                    if row:  # the BENCH name ends with the row's name (a lesson may prefix it)
                        record["variant"] = record["variant"][:-len(row)] + renamed[row]
                        record.setdefault("extra", {})["instance"] = row
                        line = external.PREFIX + json.dumps(record)
                lines.append(line)
            return "\n".join(lines)
        return Prepared(external=output)


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
    built with nvcc when missing or older than the runner, the lesson or a header beside it.
    `flags` go to nvcc after the source; without an -arch among them, -arch=native."""
    lesson = Path(lesson).resolve()
    binary = BUILD / f"bench-{lesson.stem}"
    sources = [RUNNER, *lesson.parent.rglob("*.cu"), *lesson.parent.rglob("*.cuh"),
               *lesson.parent.rglob("*.h")]
    COMPILED.update(sources)
    if not binary.is_file() or binary.stat().st_mtime < max(s.stat().st_mtime for s in sources):
        if shutil.which("nvcc") is None:
            raise RuntimeError(f"{binary} is missing and nvcc is not on PATH to build it")
        binary.parent.mkdir(parents=True, exist_ok=True)
        arch = [] if any(f.startswith(("-arch", "-gencode")) for f in flags) else ["-arch=native"]
        build = subprocess.run(["nvcc", "-O3", *arch, f'-DLESSON="{lesson}"', "-o", str(binary),
                                str(RUNNER), *flags], capture_output=True, text=True, timeout=900)
        if build.returncode != 0:
            raise RuntimeError(f"nvcc could not build {binary.name}: "
                               f"{(build.stderr.strip().splitlines() or [''])[0][:300]}")
    return binary


def runner_output(lesson: Path, args: list[str], flags: tuple[str, ...] = (),
                  skip_failed: bool = False) -> str:
    """The C runner's standard output for `lesson` (`args` as runner.cu takes them: --bench,
    --kernel, --repeats, sizes), BENCH lines included. RuntimeError (one line) when it fails, or
    when a kernel failed its check (its record, which has no samples, says how), unless
    `skip_failed`: then such a record is left out, and said on stderr."""
    import sys

    binary = runner_binary(lesson, flags)
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=600)
    failed = [line for line in proc.stdout.splitlines()
              if line.startswith(external.PREFIX) and '"ok": false' in line]
    if failed and not skip_failed:
        raise RuntimeError(f"a kernel failed its check: {failed[0][len(external.PREFIX):][:300]}")
    for line in failed:
        print(f"left out, failed its check: {line[len(external.PREFIX):][:300]}", file=sys.stderr)
    if proc.returncode != 0 and not (failed and proc.returncode == 1):  # 1: a check failed
        raise RuntimeError(f"{binary.name} exited {proc.returncode}: "
                           f"{(proc.stderr.strip().splitlines() or [''])[-1]}")
    return "\n".join(line for line in proc.stdout.splitlines() if line not in failed)


# ---------------------------------------------------------------- generic adapters

# Each library's own device-to-device copy (cudaMemcpy underneath) of x into out.
COPIES = {"numba": lambda x, out: out.copy_to_device(x),
          "cupy": lambda x, out: out.data.copy_from_device(x.data, x.nbytes),
          "torch": lambda x, out: out.copy_(x)}


def DeviceCopy(lib: str) -> OnDevice:  # noqa: N802 - an adapter, named like the others
    """A copy of the first input into a new device array with `lib`'s own copy: the ceiling an
    element-wise kernel is held to."""
    return OnDevice(lib, COPIES[lib], take=1, out="like")


@dataclass(frozen=True)
class HostCopy:
    """`lib`'s copy of the first input between host memory, "pageable" or "pinned" (page-locked:
    the copy engines read it directly), and the device: "h2d" (host to device) or "d2h". The
    kernel-only time is the copy alone; end to end is the same copy, then, host to device, the
    first 2^20 elements copied back to be checked (a prefix of the input)."""
    lib: str
    direction: str
    memory: str = "pageable"

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        lib, x = _lib(self.lib), np.asarray(inputs[0])
        host, d = lib.host(x, self.memory == "pinned"), lib.put(x)
        if self.direction == "h2d":
            return Prepared(run=lambda: lib.get(lib.to_device(host, d)[:2**20]),
                            kernel=lambda: lib.to_device(host, d), fetch=lambda: lib.get(d))
        return Prepared(run=lambda: lib.to_host(d, host), kernel=lambda: lib.to_host(d, host),
                        fetch=lambda: lib.to_host(d, host))


@dataclass(frozen=True)
class OpenCL:
    """A kernel of an OpenCL lesson on the first device of `kind` ("cpu" or "gpu"), in its own
    loop (OpenCL has no CUDA events): checked once end to end, then timed, the kernel alone with
    OpenCL profiling events (`timing.time_opencl`) and end to end (inputs copied in, kernel,
    output copied back) on the host clock. `kernels[params["kernel"]]` is (source, arguments
    from (n, a, b, c), index of the buffer it writes); `inputs(params)` gives a and b (c is
    empty); `check(params, out)` the error record; `device` is the lesson's companion module
    with `pick_device(kind)` and `build(context, source)`. Its BENCH records name `variant`."""
    variant: str
    kind: str
    kernels: dict
    inputs: Callable
    check: Callable
    device: str = "cl_device"
    local_size: int = 256
    min_sample_s: float = 0.02  # calls shorter than this are batched into one sample

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        def run() -> str:
            import pyopencl as cl

            try:
                return self.measure(params)
            except cl.Error as exc:  # the runner records one line and marks the row failed
                raise RuntimeError(f"OpenCL: {str(exc).strip().splitlines()[0]}") from None
        return Prepared(external=run)

    def measure(self, p: dict) -> str:
        import json
        import math
        import time

        import pyopencl as cl

        from bench import timing

        lesson = importlib.import_module(self.device)
        device = lesson.pick_device(self.kind)
        ctx = cl.Context([device])
        queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        source, arguments, written = self.kernels[p["kernel"]]
        t0 = time.perf_counter()
        kernel = cl.Kernel(lesson.build(ctx, source), p["kernel"])
        build_s = time.perf_counter() - t0
        a, b = self.inputs(p)
        n, mf = p["n"], cl.mem_flags
        buffers = (cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a),
                   cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=b),
                   cl.Buffer(ctx, mf.READ_WRITE, a.nbytes))
        grid, local = (-(-n // self.local_size) * self.local_size,), (self.local_size,)

        def launch():  # returns the kernel's event, which time_opencl reads
            return kernel(queue, grid, local, *arguments(n, *buffers))

        host = np.empty_like(a)

        def end_to_end():
            cl.enqueue_copy(queue, buffers[0], a)
            cl.enqueue_copy(queue, buffers[1], b)
            launch()
            cl.enqueue_copy(queue, host, buffers[written])  # blocking: waits for the kernel

        end_to_end()  # correctness first: one full run from fresh inputs
        error = self.check(p, host)
        one = timing.time_opencl(queue, launch, repeats=1, warmup=1).median_s
        calls = max(1, min(10_000, math.ceil(self.min_sample_s / one))) if one > 0 else 1000
        samples = timing.MIN_REPEATS + 1  # an odd count: the median is one of them
        # time_opencl per sample (repeats=1): the samples themselves go into the results file
        kernel_s = [timing.time_opencl(queue, launch, repeats=1, warmup=0, calls=calls).median_s
                    for _ in range(samples)]
        end_s = [timing.time_host(end_to_end, repeats=1, warmup=0).median_s
                 for _ in range(samples)]
        common = {"error": error, "extra": {"build_s": round(build_s, 4)},
                  "params": {"local_size": self.local_size, "device_name": device.name.strip(),
                             "platform": device.platform.name.strip(),
                             "opencl": device.version.strip(),
                             "driver": device.driver_version.strip()}}
        lines = [{"variant": self.variant, "phase": "kernel", "clock": "opencl-event",
                  "samples_s": kernel_s, "calls_per_sample": calls, **common},
                 {"variant": self.variant, "phase": "end_to_end", "clock": "host",
                  "samples_s": end_s, "calls_per_sample": 1, **common}]
        return "\n".join(external.PREFIX + json.dumps(line) for line in lines)


@dataclass(frozen=True)
class FirstCall:
    """`make(*args, params)` returns the call a row times, on data already where it runs (a
    compiled function, a framework's training steps; each call waits for its result), timed on
    the host clock. Its first call, where tracing and compilation happen, is timed on its own:
    the row's `work.first_call_s`."""
    make: Callable | str
    args: tuple = ()
    seconds: dict = field(default_factory=dict, compare=False, hash=False)

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        run = resolve(self.make)(*self.args, params)
        t0 = time.perf_counter()
        run()  # the first call: tracing and, for a compiled mode, compilation
        self.seconds[json.dumps(params, sort_keys=True)] = time.perf_counter() - t0
        return Prepared(run=run)

    def first_call_s(self, params: dict) -> float | None:
        return self.seconds.get(json.dumps(params, sort_keys=True))


@dataclass(frozen=True)
class Built:
    """A call built for the case on the device: `build(*args, params)` returns it (a compiled
    step, a CUDA graph's replay), and each call launches its work and returns the result there.
    The build and the first call, where compilation and capture happen, are timed together on
    the host clock (the row's `work.first_call_s`). Then the call alone is the kernel time and
    `get(call())`, which waits for the device or copies the result back, is end to end.
    (FirstCall is for a call that waits for its own result, a framework's training steps.)"""
    build: Callable | str
    args: tuple = ()
    get: Callable = lambda out: out
    record: dict = field(default_factory=dict, hash=False)  # into each measurement (extra)
    seconds: dict = field(default_factory=dict, compare=False, hash=False)

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        last = {}
        t0 = time.perf_counter()
        call = resolve(self.build)(*self.args, params)
        self.get(call())  # the first call: compilation, capture
        self.seconds[json.dumps(params, sort_keys=True)] = time.perf_counter() - t0
        return Prepared(run=lambda: self.get(call()), kernel=lambda: last.update(out=call()),
                        fetch=lambda: self.get(last["out"]), record=self.record)

    def first_call_s(self, params: dict) -> float | None:
        return self.seconds.get(json.dumps(params, sort_keys=True))


@dataclass(frozen=True)
class Lesson:
    """A lesson's own functions, on the case's inputs as they are (not copied): `whole(*inputs,
    *args)` is the reader's call, host data in and the result out (timed end to end; on the GPU
    it must wait for the device, as a copy back does). On the GPU, `put(*inputs, *args)` returns
    the kernel's arguments on the device (done once) and `launch(*those, *args)` runs the kernel
    alone on them (timed with CUDA events), returning the device result (None: it wrote its
    last argument) that `get` copies back to be checked (default: Numba's `copy_to_host`, else
    the result as it is). Without `whole`, the reader's call is put, launch and get in turn."""
    whole: Callable | str | None
    put: Callable | str | None = None
    launch: Callable | str | None = None
    args: tuple = ()
    get: Callable = lambda d: d.copy_to_host() if hasattr(d, "copy_to_host") else d

    def prepare(self, inputs: tuple, params: dict):
        from bench.runner import Prepared

        put, launch = (resolve(f) if f else None for f in (self.put, self.launch))

        def whole(*given):  # put, launch, get back
            device = put(*given)
            got = launch(*device, *self.args)
            return self.get(device[-1] if got is None else got)
        whole = resolve(self.whole) if self.whole else whole
        run = lambda: whole(*inputs, *self.args)  # noqa: E731
        if launch is None:
            return Prepared(run=run)
        device, last = put(*inputs, *self.args), {}

        def kernel():
            last["out"] = launch(*device, *self.args)
        return Prepared(run=run, kernel=kernel, fetch=lambda: self.get(
            device[-1] if last["out"] is None else last["out"]))


@dataclass(frozen=True)
class Cast:
    """Another adapter's row on the case's inputs cast once, untimed, to `dtype` (NumPy's)."""
    dtype: str
    row: Any

    def prepare(self, inputs: tuple, params: dict):
        return self.row.prepare(tuple(np.asarray(a, self.dtype) for a in inputs), params)


# ---------------------------------------------------------------- a training step, timed in rounds

def keras_scope(device: str):
    """Where a Keras model trains: the first GPU ("gpu"), the host CPU ("cpu"), or data parallel
    over two devices ("gpu2"; "cpu2", fake CPU devices, in the tests)."""
    import contextlib

    import keras

    if device == "gpu":
        return contextlib.nullcontext()
    if device.endswith("2"):
        devices = keras.distribution.list_devices(device[:3])[:2]
        if len(devices) < 2 or keras.backend.backend() != "jax":
            raise RuntimeError(f"{device} needs two {device[:3].upper()}s and the JAX backend")
        return keras.distribution.DataParallel(devices=devices).scope()
    if keras.backend.backend() != "jax":
        return keras.device("cpu:0")
    import jax

    return jax.default_device(jax.devices("cpu")[0])


@dataclass(frozen=True)
class Training:
    """A lesson's training step, measured an epoch at a time, per image. `trainer(*args, x, y,
    **settings)` sets the lesson's trainer up on the first `images` of the case's inputs (None:
    all), with `settings` and then the case's "settings" (its batch, ...). A Keras trainer
    returns (model, settings, epoch), built and run in `device`'s scope (keras_scope); a PyTorch
    one (framework "torch") gets x and y as tensors on `device` ("gpu" or "cpu", every host core
    for every row) and returns (model, epoch). epoch() trains one pass and returns the loss as a
    host number (every step has finished); the settings hold its "batch". `report`: each epoch
    returns, with its loss, whether XLA compiled the step and where the weights live (a Keras
    row's check). In a case timed in rounds (bench.timing.Rounds), a GPU row then traces one
    more epoch with `framework`'s profiler (bench.traces), unless the case's params say "trace":
    False."""
    trainer: Callable | str
    args: tuple = ()
    images: int | None = None
    framework: str | None = "jax"  # its profiler: "jax", "torch" (None: never traced)
    device: str = "gpu"
    settings: dict = field(default_factory=dict, hash=False)
    report: bool = False

    def prepare(self, inputs: tuple, params: dict):
        from bench import traces
        from bench.runner import Prepared

        x, y = inputs
        n = min(self.images or len(x), len(x))
        epoch, settings = self.build(x[:n], y[:n], {**self.settings, **params.get("settings", {})})
        batch = settings["batch"]

        def trace(median_s: float) -> dict:  # median_s: seconds per image, untraced
            return traces.step_trace(self.framework, epoch, n // batch, median_s * batch)
        traced = self.framework and params.get("trace", True)
        return Prepared(run=epoch, calls=n, trace=trace if traced else None,
                        record={"params": {"batch_size": batch, "images_per_sample": n},
                                "extra": {"framework": self.framework, "settings": settings}
                                if self.framework else {"settings": settings}})

    def build(self, x, y, settings: dict):
        """(epoch, settings): the lesson's trainer set up, epoch() run where it trains."""
        trainer = functools.partial(resolve(self.trainer), *self.args)
        if self.framework == "torch":
            import os

            import torch

            torch.set_num_threads(os.cpu_count() or 1)
            device = "cuda" if self.device == "gpu" else self.device
            _, epoch = trainer(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device),
                               **settings)
            return epoch, {**settings, "threads": torch.get_num_threads()}
        import keras

        with keras_scope(self.device):  # a new scope each time: some can be entered only once
            model, settings, epoch = trainer(x, y, **settings)
        if self.device == "gpu" and not self.report:
            return epoch, settings

        def there():
            with keras_scope(self.device):
                loss = epoch()
            if not self.report:
                return loss
            jax = keras.backend.backend() == "jax"
            devices = model.weights[0].value.devices() if jax else set()
            return {"loss": loss, "jit_compile": model.jit_compile, "device": str(devices),
                    "devices": len(devices) or 1, "backend": keras.backend.backend()}
        return there, settings
