"""The roofline: the fastest a kernel of a given arithmetic intensity can run on a machine.

A kernel that does F floating-point operations while moving B bytes has an arithmetic intensity
I = F / B. A machine that moves at most BW bytes/s and computes at most P FLOP/s runs it at most
at min(P, BW * I) FLOP/s. snippets/bench/roofline.py applies this to measured results files.
"""

# --8<-- [start:imports]
from dataclasses import dataclass
# --8<-- [end:imports]


@dataclass
class Point:
    label: str
    intensity: float  # FLOP per byte
    rate: float  # FLOP/s


# --8<-- [start:roof]
def attainable(bandwidth: float, peak: float, intensity: float) -> float:
    """The roof: the fastest a kernel of this arithmetic intensity can run (FLOP/s)."""
    return min(peak, bandwidth * intensity)


def point_from(m: dict) -> Point:
    """A measured kernel as a roofline point: intensity = flops / bytes, rate = flops / time."""
    return Point(m["variant"], m["flops"] / m["bytes"], m["flops"] / m["median_s"])
# --8<-- [end:roof]


if __name__ == "__main__":
    # SAXPY on 2**28 float32 values (2 FLOP, 12 bytes each) on a machine with 4 TB/s and
    # 50 TFLOP/s (round figures, not a measurement), timed at 0.85 ms.
    n = 2**28
    saxpy = point_from({"variant": "saxpy", "flops": 2 * n, "bytes": 12 * n, "median_s": 0.85e-3})
    roof = attainable(4e12, 50e12, saxpy.intensity)
    print(f"{saxpy.label}: {saxpy.intensity:.3f} FLOP/byte, {saxpy.rate / 1e9:.0f} GFLOP/s, "
          f"{100 * saxpy.rate / roof:.0f} % of its roof ({roof / 1e9:.0f} GFLOP/s)")
    print(f"ridge point: {50e12 / 4e12:.1f} FLOP/byte")
