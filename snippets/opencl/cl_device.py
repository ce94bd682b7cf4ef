"""List every OpenCL platform and device on this machine, and whether each can compile a kernel.

Run:  python cl_device.py

OpenCL finds its drivers through an ICD loader: each driver (NVIDIA, AMD, Intel, PoCL for CPUs)
registers a platform, and each platform lists its devices. A device that is listed may still be
unable to compile: PoCL, for one, fails every build on a CPU model its LLVM does not know.

vector_add_saxpy.py imports its device handling from this file (pick_device, build):
keep the two side by side.
"""

# --8<-- [start:imports]
import sys
import warnings

import pyopencl as cl
# --8<-- [end:imports]

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


if __name__ == "__main__":  # list every device, and whether its driver compiles a kernel
    try:
        devices = find_devices("any")
    except OpenCLProblem as exc:
        sys.exit(f"error: {exc}")
    problems = [compile_problem(device) for device in devices]
    for device, problem in zip(devices, problems):
        print(f"{describe(device)}: " + ("compiles" if problem is None else
                                         f"cannot compile ({problem})"))
    if None not in problems:
        sys.exit(f"error: no OpenCL device here can compile a kernel; fix: use a CPU runtime "
                 f"that does not need LLVM to know the CPU model, {INTEL_CPU} ({REGISTER})")
