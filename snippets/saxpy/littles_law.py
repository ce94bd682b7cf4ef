"""Little's law for a streaming kernel: the bytes that must be in flight to reach a bandwidth,
and the bytes a full SM has in flight with 4-byte and with 16-byte accesses.

To stream at bandwidth B from memory whose latency is L, about B x L bytes must be requested
and not yet delivered at every moment (Little's law: items in a system = rate x time in it).
Spread over the SMs, that is what each SM must keep in flight; an SM has at most so many
threads, and each thread only the loads it issues before it needs their results.

Run:  python littles_law.py [--bandwidth 3.35e12] [--sms 132] [--threads-per-sm 2048]
Defaults: NVIDIA H100 SXM datasheet bandwidth (https://www.nvidia.com/en-us/data-center/h100/),
132 SMs and 2,048 resident threads per SM (NVIDIA Hopper architecture and the CUDA programming
guide, compute capability 9.0); all as of 2026-11-29.
"""

import argparse


# --8<-- [start:law]
def bytes_needed(bandwidth: float, latency_s: float) -> float:
    """Little's law: bytes in flight = bandwidth x latency."""
    return bandwidth * latency_s


# Loads a thread issues before it uses their results, and the bytes each one moves.
ACCESSES = {
    "one float per thread (x[i], y[i])": (2, 4),
    "four floats per trip, 4-byte loads": (8, 4),
    "one float4 per thread (16-byte loads)": (2, 16),
}


def bytes_in_flight_per_sm(loads: int, width: int, threads_per_sm: int) -> int:
    """At most: every resident thread with all its independent loads outstanding."""
    return loads * width * threads_per_sm
# --8<-- [end:law]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     usage=argparse.SUPPRESS)  # an error is one line
    parser.add_argument("--bandwidth", type=float, default=3.35e12,
                        help="memory bandwidth in bytes/s (default 3.35e12: H100 datasheet)")
    parser.add_argument("--sms", type=int, default=132, help="SMs, default 132")
    parser.add_argument("--threads-per-sm", type=int, default=2048,
                        help="resident threads per SM (default 2048)")
    parser.add_argument("--latency-ns", type=float, nargs="+",
                        default=[500, 1000],
                        help="memory latencies under load to try, in ns (default 500 1000)")
    args = parser.parse_args()
    if not all(0 < v < float("inf") for v in (args.bandwidth, args.sms, args.threads_per_sm,
                                                *args.latency_ns)):
        parser.error("every value must be a positive, finite number")
    print(f"To stream {args.bandwidth / 1e12:g} TB/s over {args.sms} SMs:")
    for ns in args.latency_ns:
        need = bytes_needed(args.bandwidth, ns * 1e-9)
        print(f"  latency {ns:g} ns: {need / 1e6:.1f} MB in flight, "
              f"{need / args.sms / 1024:.1f} KiB per SM")
    print(f"In flight per SM with {args.threads_per_sm} threads, at most:")
    for what, (loads, width) in ACCESSES.items():
        have = bytes_in_flight_per_sm(loads, width, args.threads_per_sm)
        print(f"  {what}: {loads} x {width} B per thread = {have / 1024:.0f} KiB")
