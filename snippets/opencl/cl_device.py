"""Find an OpenCL device: list every platform and device, or pick one by kind.

Run:  python snippets/opencl/cl_device.py            (list what OpenCL sees here)
      python snippets/opencl/cl_device.py --device gpu

OpenCL finds its drivers through an ICD loader: each vendor (NVIDIA, AMD, Intel, PoCL for
CPUs) registers a platform, and each platform lists its devices. `pick_device` prefers the
kind you ask for and says clearly when no such device exists.
"""

from __future__ import annotations

import argparse
import sys

import pyopencl as cl

KINDS = ("any", "gpu", "cpu")


class NoDevice(RuntimeError):
    """No OpenCL device of the requested kind (or no OpenCL platform at all)."""


def platforms() -> list:
    try:
        return cl.get_platforms()
    except cl.Error:  # clGetPlatformIDs fails with PLATFORM_NOT_FOUND_KHR when no ICD is installed
        return []


def kind_of(device) -> str:
    if device.type & cl.device_type.GPU:
        return "gpu"
    if device.type & cl.device_type.CPU:
        return "cpu"
    return "other"


def all_devices() -> list:
    return [(p, d) for p in platforms() for d in p.get_devices()]


# --8<-- [start:pick]
def pick_device(kind: str = "any"):
    """The first device of the given kind ("gpu", "cpu" or "any": GPUs first)."""
    found = all_devices()
    if kind == "any":
        found.sort(key=lambda pd: kind_of(pd[1]) != "gpu")  # GPUs first, then the rest
    else:
        found = [pd for pd in found if kind_of(pd[1]) == kind]
    if not found:
        names = ", ".join(p.name for p in platforms()) or "none"
        raise NoDevice(f"no OpenCL {kind} device (platforms found: {names})")
    return found[0][1]


def make_queue(device, profiling: bool = False):
    ctx = cl.Context([device])
    props = cl.command_queue_properties.PROFILING_ENABLE if profiling else 0
    return ctx, cl.CommandQueue(ctx, properties=props)
# --8<-- [end:pick]


def describe(device) -> str:
    return (f"{device.name.strip()} [{kind_of(device)}] on {device.platform.name.strip()}, "
            f"{device.version.strip()}, {device.max_compute_units} compute units, "
            f"{device.global_mem_size // 2**20} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--device", choices=KINDS, default=None,
                        help="pick one device of this kind instead of listing all")
    args = parser.parse_args(argv)

    if args.device is None:
        found = all_devices()
        if not found:
            print("error: no OpenCL platform found (no ICD installed)", file=sys.stderr)
            return 1
        for _, device in found:
            print(describe(device))
        return 0
    try:
        device = pick_device(args.device)
    except NoDevice as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(describe(device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
