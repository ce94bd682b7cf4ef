"""FP32 lanes of a server CPU and of a GPU, counted the same way: one lane = one "core".

GPU vendors count every FP32 unit as a "CUDA core". Counted the same way, a CPU core with two
AVX-512 FMA units has 2 x 16 = 32 FP32 lanes.

Run:  python simd_lanes.py [--cpu-cores 56] [--fma-units 2] [--simd-bits 512] [--sms 132]
      [--fp32-per-sm 128]
Defaults: Intel Xeon Platinum 8480+ (56 cores, two AVX-512 FMA units per core: Intel's product
page, https://www.intel.com/content/www/us/en/products/sku/231746/intel-xeon-platinum-8480-processor-105m-cache-2-00-ghz/specifications.html)
and NVIDIA H100/H200 SXM (132 SMs of 128 FP32 units: "NVIDIA Hopper Architecture In-Depth",
https://developer.nvidia.com/blog/nvidia-hopper-architecture-in-depth/); as of 2026-11-29.
"""

import os
import signal
import sys


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)


# --8<-- [start:imports]
import argparse
# --8<-- [end:imports]


# --8<-- [start:lanes]
def cpu_lanes(cores: int, fma_units: int, simd_bits: int) -> int:
    return cores * fma_units * (simd_bits // 32)  # float32 values per SIMD register


def gpu_lanes(sms: int, fp32_per_sm: int) -> int:
    return sms * fp32_per_sm
# --8<-- [end:lanes]


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


COUNT = number(int, 1, 1_000_000)  # every option: a whole number from 1 to a million


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--cpu-cores", type=COUNT, default=56)
    parser.add_argument("--fma-units", type=COUNT, default=2, help="FMA units per core")
    parser.add_argument("--simd-bits", type=int, default=512, choices=(128, 256, 512))
    parser.add_argument("--sms", type=COUNT, default=132)
    parser.add_argument("--fp32-per-sm", type=COUNT, default=128)
    args = parser.parse_args(argv)
    cpu = cpu_lanes(args.cpu_cores, args.fma_units, args.simd_bits)
    gpu = gpu_lanes(args.sms, args.fp32_per_sm)
    print(f"CPU: {args.cpu_cores} cores x {args.fma_units} FMA units x {args.simd_bits // 32} "
          f"lanes = {cpu:,} FP32 lanes")
    print(f"GPU: {args.sms} SMs x {args.fp32_per_sm} FP32 units = {gpu:,} FP32 lanes")
    print(f"GPU / CPU: {gpu / cpu:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
