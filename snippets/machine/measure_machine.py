"""Measure your machine: memory bandwidth and matrix-product rates of its CPU and GPU, and a roofline.

CPU: copy and SAXPY bandwidth on all cores (Numba parallel loops) and the FP32 matrix-product
rate (NumPy's BLAS). GPU, when PyTorch or CuPy finds one: device copy and SAXPY bandwidth,
host<->device copies with pageable and pinned memory, and FP32, TF32 and BF16 matrix-product
rates (TF32 and BF16 need PyTorch). Every result is checked before it is timed. It writes a
results file and a roofline chart drawn from the ceilings it measured.

Run:  python snippets/machine/measure_machine.py [--quick] [--out machine.json] [--plot roofline.png]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench import results, system, timing  # noqa: E402
import roofline  # noqa: E402  (snippets/machine/roofline.py)

SIZES = {  # (default, --quick)
    "cpu_stream": (2**26, 2**20),  # float32 elements per array
    "cpu_matmul": (2048, 128),     # n for n x n matrices
    "gpu_stream": (2**28, 2**20),
    "gpu_matmul": (8192, 256),
}
TOLERANCE = {"FP32": 1e-4, "TF32": 1e-2, "BF16": 1e-2}  # relative error of a matrix product
A = 2.0


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly representable values: a*x + y is exact in float32, with or without an FMA."""
    i = np.arange(n, dtype=np.int64)
    return ((i % 1000) * 0.5 - 250).astype(np.float32), ((i % 777) * 0.25).astype(np.float32)


def rel_error(c, ref) -> float:
    ref = np.asarray(ref, dtype=np.float64)
    return float(np.linalg.norm(np.asarray(c, dtype=np.float64) - ref) / np.linalg.norm(ref))


def stream_counts(kind: str, n: int) -> dict:
    # --8<-- [start:counts]
    if kind == "copy":
        return {"bytes": 2 * 4 * n, "flops": 0}      # read 1, write 1 float32
    return {"bytes": 3 * 4 * n, "flops": 2 * n}      # SAXPY: read 2, write 1; multiply + add
    # --8<-- [end:counts]


def matmul_counts(n: int, itemsize: int) -> dict:
    return {"bytes": 3 * n * n * itemsize, "flops": 2 * n**3}  # read A and B, write C once


# ---------------------------------------------------------------- CPU

@njit(parallel=True, cache=True)  # cache: later runs skip compilation
def cpu_copy(src, dst):
    for i in prange(dst.size):
        dst[i] = src[i]


@njit(parallel=True, fastmath=True, cache=True)  # fastmath: a vectorised sum, not one long
# chain of dependent adds (the values are exact in float64, so the order does not matter)
def cpu_read(x):
    total = 0.0
    for i in prange(x.size):
        total += x[i]
    return total


@njit(parallel=True, cache=True)  # cache: later runs skip compilation
def cpu_saxpy(a, x, y):
    for i in prange(y.size):
        y[i] = a * x[i] + y[i]


def measure_cpu(n: int, mm: int, repeats: int) -> list[dict]:
    out = []
    a = np.float32(A)
    x, y = make_inputs(n)
    dst = np.empty_like(x)
    cpu_copy(x, dst)
    want = a * x + y
    cpu_saxpy(a, x, y)
    err = int(np.count_nonzero(dst != x)) + int(np.count_nonzero(y != want))
    err += int(cpu_read(x) != np.sum(x, dtype=np.float64))  # exact: halves, far below 2^53
    if err:
        raise RuntimeError(f"CPU copy/SAXPY: {err} wrong elements")
    check = {"metric": "mismatched_elements", "value": 0}
    threads = numba.get_num_threads()
    how = {"n": n, "dtype": "float32", "threads": threads, "how": "Numba parallel loop"}
    # The CPU's memory roof is the best of its streaming kernels (STREAM's convention): a core
    # streams only as fast as the fetches it keeps in flight allow, which differs between a sum,
    # a copy (whose stores also fetch the line they write) and SAXPY.
    out.append(results.measurement(
        "memory", "read", "cpu", "kernel", timing.time_host(lambda: cpu_read(x), repeats),
        params=how, role="ceiling", error=check, bytes=4 * n, flops=n))
    out.append(results.measurement(
        "memory", "copy", "cpu", "kernel", timing.time_host(lambda: cpu_copy(x, dst), repeats),
        params=how, role="ceiling", error=check, **stream_counts("copy", n)))
    out.append(results.measurement(
        "saxpy", "saxpy", "cpu", "kernel", timing.time_host(lambda: cpu_saxpy(a, x, y), repeats),
        params=how, role="ceiling+point", error=check, **stream_counts("saxpy", n)))
    rng = np.random.default_rng(0)
    ma, mb = (rng.uniform(-1, 1, (mm, mm)).astype(np.float32) for _ in range(2))
    mc = ma @ mb
    e = rel_error(mc[:64], ma[:64].astype(np.float64) @ mb.astype(np.float64))
    if e > TOLERANCE["FP32"]:
        raise RuntimeError(f"CPU FP32 matrix product: relative error {e:.2g}")
    stats = timing.time_host(lambda: np.matmul(ma, mb, out=mc), repeats, warmup=1)
    out.append(results.measurement(
        "matmul", "fp32", "cpu", "kernel", stats, role="ceiling",
        params={"n": mm, "dtype": "float32", "how": "NumPy matmul (BLAS)"},
        error={"metric": "relative_frobenius_error", "value": e}, **matmul_counts(mm, 4)))
    return out


# ---------------------------------------------------------------- GPU back ends

class TorchGPU:
    name = "PyTorch"

    def __init__(self):
        import torch

        self.torch = torch
        self.device = torch.device("cuda")

    def time(self, fn, repeats, warmup=3) -> timing.Stats:
        return timing.time_torch(self.torch, fn, repeats, warmup)

    def to_device(self, a):
        return self.torch.from_numpy(a).to(self.device)

    def to_host(self, d):
        return d.cpu().numpy()

    def empty_like(self, d):
        return self.torch.empty_like(d)

    def copy(self, dst, src):
        dst.copy_(src)

    def saxpy(self, a, x, y):
        y.add_(x, alpha=a)  # y = y + a*x in one kernel

    def host_buffer(self, n, pinned):
        """(buffer to copy to and from, a NumPy view of the same memory)."""
        t = self.torch.empty(n, dtype=self.torch.float32, pin_memory=pinned)
        return t, t.numpy()

    def matmul(self, n, precision):
        """(run, check) for an n x n product at this precision, or None if unsupported."""
        torch = self.torch
        torch.set_float32_matmul_precision("highest" if precision == "FP32" else "high")
        dtype = torch.bfloat16 if precision == "BF16" else torch.float32
        g = torch.Generator(device=self.device).manual_seed(0)
        a = (torch.rand(n, n, device=self.device, generator=g) * 2 - 1).to(dtype)
        b = (torch.rand(n, n, device=self.device, generator=g) * 2 - 1).to(dtype)
        c = torch.empty(n, n, device=self.device, dtype=dtype)

        def check():
            ref = a[:64].double() @ b.double()
            return float(torch.linalg.norm(c[:64].double() - ref) / torch.linalg.norm(ref))

        return (lambda: torch.matmul(a, b, out=c)), check, a.element_size()

    def finish(self):
        self.torch.set_float32_matmul_precision("highest")


class CupyGPU(TorchGPU):
    name = "CuPy"

    def __init__(self, cp):
        self.cp = cp
        self.kernel = cp.ElementwiseKernel("float32 a, float32 x", "float32 y", "y = a * x + y",
                                           "saxpy")

    def time(self, fn, repeats, warmup=3) -> timing.Stats:
        return timing.time_cupy(self.cp, fn, repeats, warmup)

    def to_device(self, a):
        return self.cp.asarray(a)

    def to_host(self, d):
        return self.cp.asnumpy(d)

    def empty_like(self, d):
        return self.cp.empty_like(d)

    def copy(self, dst, src):
        if isinstance(src, np.ndarray):
            dst.set(src)
        elif isinstance(dst, np.ndarray):
            src.get(out=dst)
        else:
            dst.data.copy_from_device(src.data, src.nbytes)

    def saxpy(self, a, x, y):
        self.kernel(np.float32(a), x, y)

    def host_buffer(self, n, pinned):
        if not pinned:
            a = np.empty(n, np.float32)
        else:
            a = np.frombuffer(self.cp.cuda.alloc_pinned_memory(4 * n), np.float32, n)
        return a, a

    def matmul(self, n, precision):
        if precision != "FP32":
            return None  # CuPy has no bfloat16 arrays; TF32 is a process-wide switch
        cp = self.cp
        rng = cp.random.default_rng(0)
        a, b = (rng.uniform(-1, 1, (n, n), dtype=cp.float32) for _ in range(2))
        c = cp.empty((n, n), dtype=cp.float32)

        def check():
            return rel_error(cp.asnumpy(c[:64]), cp.asnumpy(a[:64]).astype(np.float64)
                             @ cp.asnumpy(b).astype(np.float64))

        return (lambda: cp.matmul(a, b, out=c)), check, 4

    def finish(self):
        pass


def find_gpu(backend: str):
    """(back end or None, what was found): PyTorch first (it has BF16), then CuPy."""
    reasons = []
    if backend in ("auto", "torch"):
        try:
            import torch

            if torch.cuda.is_available():
                return TorchGPU(), torch.cuda.get_device_name(0)
            reasons.append("PyTorch sees no CUDA GPU")
        except ImportError:
            reasons.append("PyTorch is not installed")
    if backend in ("auto", "cupy"):
        try:
            import cupy as cp

            cp.cuda.runtime.getDeviceCount()
            name = cp.cuda.runtime.getDeviceProperties(0)["name"]
            return CupyGPU(cp), name.decode() if isinstance(name, bytes) else name
        except ImportError:
            reasons.append("CuPy is not installed")
        except Exception as exc:  # a CUDA error: no driver, no device
            reasons.append(f"CuPy finds no GPU ({type(exc).__name__})")
    return None, "; ".join(reasons)


def measure_gpu(gpu, n: int, mm: int, repeats: int) -> tuple[list[dict], list[str]]:
    out, notes = [], []
    x, y = make_inputs(n)
    d_x, d_y = gpu.to_device(x), gpu.to_device(y)
    d_dst = gpu.empty_like(d_x)
    gpu.copy(d_dst, d_x)
    gpu.saxpy(A, d_x, d_y)
    err = int(np.count_nonzero(gpu.to_host(d_dst) != x))
    err += int(np.count_nonzero(gpu.to_host(d_y) != np.float32(A) * x + y))
    if err:
        raise RuntimeError(f"GPU copy/SAXPY: {err} wrong elements")
    check = {"metric": "mismatched_elements", "value": 0}
    params = {"n": n, "dtype": "float32", "how": gpu.name}
    out.append(results.measurement("memory", "copy", "gpu", "kernel",
                                   gpu.time(lambda: gpu.copy(d_dst, d_x), repeats), params=params,
                                   role="ceiling", error=check, **stream_counts("copy", n)))
    out.append(results.measurement("saxpy", "saxpy", "gpu", "kernel",
                                   gpu.time(lambda: gpu.saxpy(A, d_x, d_y), repeats), params=params,
                                   error=check, **stream_counts("saxpy", n)))
    for pinned in (False, True):
        host, view = gpu.host_buffer(n, pinned)
        view[:] = x
        memory = "pinned" if pinned else "pageable"
        for case, fn in (("h2d", lambda: gpu.copy(d_dst, host)),
                         ("d2h", lambda: gpu.copy(host, d_dst))):
            stats = gpu.time(fn, repeats, warmup=1)
            out.append(results.measurement("pcie", f"{case}_{memory}", "gpu", "transfer", stats,
                                           params=params, bytes=4 * n, flops=0))
        if np.count_nonzero(view != x):
            raise RuntimeError(f"a host<->device copy with {memory} memory returned wrong data")
    for precision in roofline.PRECISIONS:
        job = gpu.matmul(mm, precision)
        if job is None:
            notes.append(f"{precision} matrix product not measured: the {gpu.name} back end "
                         "cannot run it (install PyTorch)")
            continue
        run, check_fn, itemsize = job
        run()
        e = check_fn()
        if e > TOLERANCE[precision]:
            raise RuntimeError(f"GPU {precision} matrix product: relative error {e:.2g}")
        stats = gpu.time(run, repeats)
        out.append(results.measurement(
            "matmul", precision.lower(), "gpu", "kernel", stats, role="ceiling",
            params={"n": mm, "precision": precision, "how": gpu.name},
            error={"metric": "relative_frobenius_error", "value": e}, **matmul_counts(mm, itemsize)))
    gpu.finish()
    return out, notes


# ---------------------------------------------------------------- report

def summary(measurements: list[dict]) -> list[tuple[str, str]]:
    rows = []
    for m in measurements:
        dev = m["device"].upper()
        if m["case"] == "matmul":
            what = f"{dev} {m['variant'].upper()} matrix product, n = {m['params']['n']}"
            value = f"{m['flops'] / m['median_s'] / 1e12:.3f} TFLOP/s"
        else:
            name = {"saxpy": "SAXPY"}.get(m["case"], m["variant"].replace("_", " "))
            what = f"{dev} {name} bandwidth, {m['params']['n']:,} floats"
            value = f"{m['bytes'] / m['median_s'] / 1e9:.1f} GB/s"
        rows.append((what, value))
    return rows


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 10:
        raise argparse.ArgumentTypeError(f"must be at least 10, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: checks that everything works in seconds (figures are "
                        "not representative)")
    parser.add_argument("--repeats", type=positive_int, default=10,
                        help="timed repeats per figure, at least 10 (default 10)")
    parser.add_argument("--backend", choices=("auto", "torch", "cupy", "none"), default="auto",
                        help="GPU library (default auto: PyTorch, else CuPy); none: CPU only")
    parser.add_argument("--out", type=Path, default=Path("machine.json"),
                        help="results file to write (default machine.json)")
    parser.add_argument("--plot", type=Path, default=Path("roofline.png"),
                        help="roofline chart to write (default roofline.png)")
    parser.add_argument("--kernels", type=Path, nargs="*", default=[],
                        help="other results files whose kernels (with flops and bytes) to plot "
                        "and check against this run's roofs")
    parser.add_argument("--note", action="append", default=[],
                        help="a note to record in the results file (repeatable)")
    args = parser.parse_args(argv)
    size = {k: v[1 if args.quick else 0] for k, v in SIZES.items()}

    measurements = measure_cpu(size["cpu_stream"], size["cpu_matmul"], args.repeats)
    gpu_failed = ""
    notes = [f"CPU bandwidth on {numba.get_num_threads()} threads (Numba parallel loops); bytes "
             "count what the program reads and writes (a CPU may also read each written line "
             "first, which is not counted)"]
    notes += args.note
    if args.quick:
        notes.append("--quick: small sizes, not representative of the machine")
    gpu, found = (None, "--backend none") if args.backend == "none" else find_gpu(args.backend)
    if gpu is None:
        notes.append(f"No GPU found ({found}): measured the CPU only")
    else:
        try:  # a GPU failure must not lose the CPU figures
            gpu_rows, gpu_notes = measure_gpu(gpu, size["gpu_stream"], size["gpu_matmul"],
                                              args.repeats)
            measurements += gpu_rows
            notes += gpu_notes
        except Exception as exc:
            gpu_failed = f"GPU measurements failed: {type(exc).__name__}: {exc}"
            notes.append(gpu_failed)
            print(f"error: {gpu_failed}", file=sys.stderr)
    doc = results.write_results(args.out, "machine", system.describe_system(),
                                measurements, notes)
    ceils = roofline.ceilings(results.load_results(doc))
    pts = roofline.points(results.load_results(doc), source="this run")
    for path in args.kernels:
        if not path.is_file():
            print(f"note: {path} does not exist: not plotted", file=sys.stderr)
            continue
        pts += [p for p in roofline.points(results.load_results(path), source=path.stem)
                if p.device in ceils]
    fig = roofline.draw(ceils, pts, title=f"Roofline: {system.cpu_model()}"
                        + (f" + {found}" if gpu is not None else ""))
    fig.savefig(args.plot, dpi=120, bbox_inches="tight")

    if gpu is None:
        print(f"No GPU found ({found}): measured the CPU only.")
    else:
        print(f"GPU: {found} (measured with {gpu.name})")
    for what, value in summary(measurements):
        print(f"{what:52s} {value:>16s}")
    for device, c in sorted(ceils.items()):
        ridge = c["peaks"]["FP32"] / c["bandwidth"]
        print(f"{device.upper()} ridge point (FP32): {ridge:.1f} FLOP/byte: kernels below it are "
              "limited by memory")
    problems = roofline.check(ceils, pts)
    for p in problems:  # at --quick sizes the data sit in cache: a warning, not an error
        print(f"{'warning' if args.quick else 'error'}: {p}", file=sys.stderr)
    print(f"wrote {args.out} and {args.plot}")
    return 1 if gpu_failed or (problems and not args.quick) else 0


if __name__ == "__main__":
    sys.exit(main())
