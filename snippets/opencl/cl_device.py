"""List every OpenCL platform and device on this machine, and whether each can compile a kernel.

Run:  python cl_device.py [--device any|gpu|cpu]

OpenCL finds its drivers through an ICD loader: each driver (NVIDIA, AMD, Intel, PoCL for CPUs)
registers a platform, and each platform lists its devices. A device that is listed may still be
unable to compile: PoCL, for one, fails every build on a CPU model its LLVM does not know.
"""

# --8<-- [start:imports]
import argparse
import sys
import warnings

try:
    import pyopencl as cl
except ModuleNotFoundError:  # --help still works; main() says what to install
    cl = None
# --8<-- [end:imports]

FIX_ANY = ("install a driver: for a CPU, PoCL (pip install \"pyopencl[pocl]\") or Intel's CPU "
           "runtime (see the OpenCL section of the platforms page)")
FIX_GPU = "install the GPU driver's OpenCL part (NVIDIA: its OpenCL ICD, libnvidia-opencl)"
# --8<-- [start:probe]
PROBE = "__kernel void probe(__global float *x) { x[get_global_id(0)] += 1.0f; }"


def kind_of(device) -> str:
    return ("gpu" if device.type & cl.device_type.GPU else
            "cpu" if device.type & cl.device_type.CPU else "other")


def describe(device) -> str:
    kind = kind_of(device)
    return (f"{device.name.strip()} [{kind}] on {device.platform.name.strip()}, "
            f"{device.version.strip()}, {device.max_compute_units} compute units, "
            f"{device.global_mem_size // 2**20} MiB")


def compile_problem(device) -> str | None:
    """None if the device's driver compiles a small kernel, else the driver's first error line."""
    ctx = cl.Context([device])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)
            cl.Program(ctx, PROBE).build()
    except cl.RuntimeError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if "error" in line.lower()]
        return lines[-1] if lines else str(exc).strip().splitlines()[0]
    return None
# --8<-- [end:probe]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--device", choices=("any", "gpu", "cpu"), default="any",
                        help="list only devices of this kind; exit 1 if none of them compiles")
    args = parser.parse_args(argv)
    if cl is None:
        print("error: pyopencl is not installed here: pip install pyopencl, plus an OpenCL "
              "driver (see the OpenCL section of the platforms page)", file=sys.stderr)
        return 2
    try:
        try:
            platforms = cl.get_platforms()
        except cl.Error:  # the ICD loader found no driver at all
            platforms = []
        devices = [d for p in platforms for d in p.get_devices()
                   if args.device in ("any", kind_of(d))]
        if not devices:
            what = "device" if args.device == "any" else f"{args.device} device"
            print(f"error: no OpenCL {what} found (platforms: "
                  f"{', '.join(p.name.strip() for p in platforms) or 'none'}); "
                  f"fix: {FIX_GPU if args.device == 'gpu' else FIX_ANY}", file=sys.stderr)
            return 1
        problems = []
        for device in devices:
            problem = compile_problem(device)
            problems.append(problem)
            print(f"{describe(device)}: " + ("compiles" if problem is None else
                                             f"cannot compile ({problem})"))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if None not in problems:
        if any("unknown target CPU" in p for p in problems):  # PoCL's LLVM does not know this CPU
            fix = ("use a CPU runtime that does not need LLVM to know the CPU model, such as "
                   "Intel's (pip install intel-opencl-rt intel-cmplr-lib-rt)")
        else:
            fix = "install a driver that supports this CPU or GPU"
        print(f"error: no OpenCL device here can compile a kernel; fix: {fix} (see the OpenCL "
              "section of the platforms page)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
