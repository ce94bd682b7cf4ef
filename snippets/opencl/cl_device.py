"""List every OpenCL platform and device on this machine, and whether each can compile a kernel.

Run:  python cl_device.py [--device any|gpu|cpu]

OpenCL finds its drivers through an ICD loader: each driver (NVIDIA, AMD, Intel, PoCL for CPUs)
registers a platform, and each platform lists its devices. A device that is listed may still be
unable to compile: PoCL, for one, fails every build on a CPU model its LLVM does not know.

vector_add_saxpy.py imports its device handling from this file (pick_device, build, check_fits):
keep the two side by side.
"""

# --8<-- [start:imports]
import os
import signal
import sys


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

import argparse
import warnings

try:
    import pyopencl as cl
except ModuleNotFoundError:  # --help still works; main() says what to install
    cl = None
# --8<-- [end:imports]

NOT_INSTALLED = ("error: pyopencl is not installed here: pip install pyopencl, plus an OpenCL "
                 "driver (see the OpenCL section of the platforms page)")


# --8<-- [start:pick]
INTEL_CPU = "such as Intel's (pip install intel-opencl-rt intel-cmplr-lib-rt)"
REGISTER = "see the OpenCL section of the platforms page"


class OpenCLProblem(RuntimeError):
    """No usable OpenCL device, or the driver cannot compile: the message names cause and fix."""

    driver_error = ""  # a failed build: the driver's own error line


def kind_of(device) -> str:
    return ("gpu" if device.type & cl.device_type.GPU else
            "cpu" if device.type & cl.device_type.CPU else "other")


def find_devices(kind: str = "any") -> list:
    """Every OpenCL device of this kind: "gpu", "cpu", or "any" (GPUs first)."""
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # the ICD loader found no driver at all
        platforms = []
    found = [d for p in platforms for d in p.get_devices() if kind in ("any", kind_of(d))]
    if not found:
        names = ", ".join(p.name.strip() for p in platforms) or "none"
        what = "device" if kind == "any" else f"{kind} device"
        fix = ("install the GPU driver's OpenCL part (NVIDIA: its OpenCL ICD, libnvidia-opencl)"
               if kind == "gpu" else
               f"install an OpenCL driver, for a CPU PoCL or Intel's CPU runtime, {REGISTER}")
        raise OpenCLProblem(f"no OpenCL {what} (platforms found: {names}); fix: {fix}")
    return sorted(found, key=lambda d: kind_of(d) != "gpu")


def pick_device(kind: str = "any"):
    """The first OpenCL device of this kind (a GPU, when "any" finds one)."""
    return find_devices(kind)[0]


def build(ctx, source: str):
    """Compile OpenCL C for the context's device, at run time, by its driver."""
    try:
        with warnings.catch_warnings():  # a successful build may still print a log
            warnings.simplefilter("ignore", cl.CompilerWarning)
            return cl.Program(ctx, source).build()
    except cl.RuntimeError as exc:  # BUILD_PROGRAM_FAILURE, with the driver's log
        problem = OpenCLProblem(explain_build_failure(ctx.devices[0], str(exc)))
        problem.driver_error = first_error(str(exc))
        raise problem from None


def first_error(log: str) -> str:
    """The first line of a driver's build log that names an error (else its first line)."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")


def explain_build_failure(device, log: str) -> str:
    """One line: why the driver could not compile, and what to do about it."""
    if "unknown target CPU" in log:  # PoCL asked LLVM for this CPU's name and got none
        return (f"{device.platform.name.strip()} cannot compile for this CPU: its LLVM does not "
                f"know the CPU model ({first_error(log)}); fix: use a CPU runtime that does, "
                f"{INTEL_CPU}, {REGISTER}")
    return (f"the OpenCL driver could not compile the kernel for {device.name.strip()} "
            f"({first_error(log)}); fix: try another device with --device, or update the driver")


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
# --8<-- [end:pick]


# --8<-- [start:probe]
PROBE = "__kernel void probe(__global float *x) { x[get_global_id(0)] += 1.0f; }"


def describe(device) -> str:
    return (f"{device.name.strip()} [{kind_of(device)}] on {device.platform.name.strip()}, "
            f"{device.version.strip()}, {device.max_compute_units} compute units, "
            f"{device.global_mem_size // 2**20} MiB")


def compile_problem(device) -> str | None:
    """None if the device's driver compiles a small kernel, else the driver's error line."""
    try:
        build(cl.Context([device]), PROBE)
    except OpenCLProblem as exc:
        return exc.driver_error
    return None
# --8<-- [end:probe]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--device", choices=("any", "gpu", "cpu"), default="any",
                        help="list only devices of this kind; exit 1 if none of them compiles")
    args = parser.parse_args(argv)
    if cl is None:
        print(NOT_INSTALLED, file=sys.stderr)
        return 2
    try:
        devices = find_devices(args.device)
    except OpenCLProblem as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    problems = []
    for device in devices:
        problems.append(compile_problem(device))
        print(f"{describe(device)}: " + ("compiles" if problems[-1] is None else
                                         f"cannot compile ({problems[-1]})"))
    if None not in problems:
        if any("unknown target CPU" in p for p in problems):  # PoCL's LLVM does not know this CPU
            fix = f"use a CPU runtime that does not need LLVM to know the CPU model, {INTEL_CPU}"
        else:
            fix = "install a driver that supports this CPU or GPU"
        print(f"error: no OpenCL device here can compile a kernel; fix: {fix} ({REGISTER})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
