"""Array addition in OpenCL through pyopencl: the CUDA array-addition kernel, ported.

Run:  python vector_add.py [N] [--device any|gpu|cpu] [--verbose]
Needs pyopencl and one OpenCL driver: a GPU's, or a CPU runtime (PoCL: pip install
"pyopencl[pocl]"; Intel's: pip install intel-opencl-rt intel-cmplr-lib-rt, registered with
register_intel_cpu.py).
"""

# --8<-- [start:imports]
import argparse
import os
import sys
import warnings

import numpy as np
try:
    import pyopencl as cl
except ModuleNotFoundError:  # --help still works; main() says what to install
    cl = None
# --8<-- [end:imports]

MAX_N = 2**31 - 1

SOURCE = r"""
// --8<-- [start:kernel]
__kernel void vector_add(__global const float *a, __global const float *b,
                         __global float *c, const long n) {
    // The global index of this work-item: CUDA's blockIdx.x * blockDim.x + threadIdx.x.
    long i = get_global_id(0);
    if (i < n) {  // the global size is rounded up to a whole number of work-groups
        c[i] = a[i] + b[i];
    }
}
// --8<-- [end:kernel]
"""

# --8<-- [start:pick]
REGISTER = "see the OpenCL section of the platforms page"


class OpenCLProblem(RuntimeError):
    """No usable OpenCL device, or the driver cannot compile: the message names cause and fix."""


def pick_device(kind: str = "any"):
    """The first OpenCL device of this kind: "gpu", "cpu", or "any" (GPUs first)."""
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # the ICD loader found no driver at all
        platforms = []
    found = [d for p in platforms for d in p.get_devices()]
    found.sort(key=lambda d: not d.type & cl.device_type.GPU)  # GPUs first
    if kind != "any":
        wanted = cl.device_type.GPU if kind == "gpu" else cl.device_type.CPU
        found = [d for d in found if d.type & wanted]
    if not found:
        names = ", ".join(p.name.strip() for p in platforms) or "none"
        what = "device" if kind == "any" else f"{kind} device"
        fix = ("install the GPU driver's OpenCL part (NVIDIA: its OpenCL ICD)" if kind == "gpu"
               else f"install an OpenCL driver, for a CPU PoCL or Intel's CPU runtime, {REGISTER}")
        raise OpenCLProblem(f"no OpenCL {what} (platforms found: {names}); fix: {fix}")
    return found[0]


def build(ctx, source: str):
    """Compile OpenCL C for the context's device, at run time, by its driver."""
    try:
        with warnings.catch_warnings():  # a successful build may still print a log
            warnings.simplefilter("ignore", cl.CompilerWarning)
            return cl.Program(ctx, source).build()
    except cl.RuntimeError as exc:  # BUILD_PROGRAM_FAILURE, with the driver's log
        raise OpenCLProblem(explain_build_failure(ctx.devices[0], str(exc))) from None


def explain_build_failure(device, log: str) -> str:
    """One line: why the driver could not compile, and what to do about it."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    first = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")
    if "unknown target CPU" in log:  # PoCL asked LLVM for this CPU's name and got none
        return (f"{device.platform.name.strip()} cannot compile for this CPU: its LLVM does not "
                f"know the CPU model ({first}); fix: use a CPU runtime that does, such as Intel's "
                f"(pip install intel-opencl-rt intel-cmplr-lib-rt), {REGISTER}")
    return (f"the OpenCL driver could not compile the kernel for {device.name.strip()} ({first}); "
            "fix: try another device with --device, or update the driver")
# --8<-- [end:pick]


def check_fits(device, n: int, arrays: int = 3) -> None:
    """Refuse sizes the device or the host cannot hold, before allocating anything."""
    nbytes = 4 * n
    if nbytes > device.max_mem_alloc_size:
        raise OpenCLProblem(f"N = {n} needs {nbytes / 2**20:.0f} MiB per buffer; "
                            f"{device.name.strip()} allows {device.max_mem_alloc_size / 2**20:.0f} "
                            "MiB: choose a smaller N")
    free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if 2 * arrays * nbytes > free:  # host arrays, and buffers in host memory on a CPU device
        raise OpenCLProblem(f"N = {n} needs about {2 * arrays * nbytes / 2**30:.1f} GiB of host "
                            f"memory, {free / 2**30:.1f} GiB is free: choose a smaller N")


# --8<-- [start:host]
LOCAL_SIZE = 256  # work-items per work-group: OpenCL's name for threads per block


def add_on_device(queue, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ctx = queue.context
    program = build(ctx, SOURCE)  # compiled at run time by the driver
    mf = cl.mem_flags
    d_a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)  # copy to the device
    d_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    d_c = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    global_size = -(-a.size // LOCAL_SIZE) * LOCAL_SIZE  # round up, like ceil(N / 256) blocks
    kernel = cl.Kernel(program, "vector_add")
    kernel(queue, (global_size,), (LOCAL_SIZE,), d_a, d_b, d_c, np.int64(a.size))
    c = np.empty_like(a)
    cl.enqueue_copy(queue, c, d_c)  # blocking copy back: waits for the kernel
    return c
# --8<-- [end:host]


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.int64)
    return (i + 1).astype(np.float32), (i + 7).astype(np.float32)


def format_result(c: np.ndarray) -> str:
    shown = c if c.size <= 10 else np.concatenate([c[:3], c[-3:]])
    words = [f"{x:.0f}" for x in shown]
    if c.size > 10:
        words.insert(3, "...")
    return "C = A + B: " + " ".join(words)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_N:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_N}, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    device = pick_device(args.device)
    if args.verbose:
        print(f"device: {device.name.strip()} on {device.platform.name.strip()}")
    check_fits(device, args.n)
    ctx = cl.Context([device])  # keep a reference: the queue alone may not keep it alive
    queue = cl.CommandQueue(ctx)
    a, b = make_inputs(args.n)
    c = add_on_device(queue, a, b)
    print(format_result(c))
    bad = np.flatnonzero(c != a + b)  # the same float32 additions, done by NumPy
    if bad.size:
        print(f"error: {bad.size} of {c.size} elements are wrong (first at index {bad[0]})",
              file=sys.stderr)
        return 1
    print(f"OK: all {c.size} elements match")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("n", nargs="?", type=positive_int, default=6,
                        help="number of elements (default 6: A = 1..6, B = 7..12)")
    parser.add_argument("--device", choices=("any", "gpu", "cpu"), default="any",
                        help="which kind of OpenCL device to use (default: a GPU if any)")
    parser.add_argument("--verbose", action="store_true", help="print the device used")
    args = parser.parse_args(argv)
    if cl is None:
        print("error: pyopencl is not installed here: pip install pyopencl, plus an OpenCL "
              "driver (see the OpenCL section of the platforms page)", file=sys.stderr)
        return 2
    try:
        return run(args)
    except OpenCLProblem as exc:
        print(f"error: {exc}", file=sys.stderr)
    except cl.Error as exc:  # any other driver error: its first line, not a traceback
        print(f"error: OpenCL: {str(exc).strip().splitlines()[0]}", file=sys.stderr)
    except MemoryError:
        print(f"error: not enough memory for N = {args.n}: choose a smaller N", file=sys.stderr)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
