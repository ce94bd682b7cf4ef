"""Mandelbrot, registered with the benchmark runner: variants, cases, reference, check, work.

Run it with:  python snippets/bench/run.py mandelbrot --output mandelbrot.json
         (or:  python snippets/mandelbrot/benchmark.py --output mandelbrot.json)
Two options of this topic, before the runner's: --image out.png writes the picture of the set
(the `deep` case, computed on the CPU), --sass out.txt the GPU machine code of the CUDA kernels
(needs an NVIDIA GPU and nvdisasm); given alone, they run no benchmark.
"""

from __future__ import annotations

from bench import cli, run  # first: its Ctrl-C handler covers the imports below

import argparse
import sys
from io import BytesIO

import numpy as np
from bench.runner import Benchmark, Case, Prepared, Variant

import mandelbrot as mb  # the lesson beside this file (a script's own folder is on sys.path)

# --8<-- [start:flops]
# Floating-point operations, counted from the loop body: a completed iteration does
# 3 multiplications (x*x, y*y, x*y) and 5 additions or subtractions (x2 + y2, t + t, + cy,
# x2 - y2, + cx) = 8; a pixel that escapes also does the 3 of its final, failed test.
# The comparison with 4 is not counted.
FLOPS_PER_ITERATION = 8
FLOPS_PER_ESCAPE = 3
# --8<-- [end:flops]
F64_BAR = 1.5e12  # pixel-iterations per second that cuda_f64_fast must reach on the large case
F32_TOLERANCE = 0.1  # float32 may disagree with float64 on this fraction of pixels at most

# --8<-- [start:register]
# The registry: one name per variant, with the label the page shows and its step on the page.
VARIANTS = {
    "python": Variant("pure Python", device="cpu"),
    "numpy": Variant("NumPy (vectorised)", device="cpu"),
    "njit": Variant("Numba @njit (1 core)", device="cpu"),
    "njit_parallel": Variant("Numba @njit(parallel=True)", device="cpu"),
    "cuda_f64": Variant("Numba CUDA float64", step="1"),
    "cuda_f64_fast": Variant("Numba CUDA float64, tuned", step="2"),
    "cuda_f32": Variant("Numba CUDA float32"),
}
CASES = {
    "smoke": Case({"width": 32, "height": 16, "iterations": 20}, default=False),  # seconds, anywhere
    "article": Case({"width": 1536, "height": 1024, "iterations": 20}),
    "deep": Case({"width": 1536, "height": 1024, "iterations": 1000},
                 variants=("njit_parallel", "cuda_f64", "cuda_f64_fast", "cuda_f32"),
                 note="pure Python, NumPy and one-core Numba left out by default (seconds to "
                      "minutes per run; the article case compares them)"),
    "large": Case({"width": 6144, "height": 4096, "iterations": 1000},
                  variants=("njit_parallel", "cuda_f64", "cuda_f64_fast", "cuda_f32"),
                  note="only the best CPU variant (Numba parallel on all cores) runs by default"),
}


def setup(variant: str, p: dict) -> Prepared:
    xs, ys = mb.coordinates(p["width"], p["height"])
    it = p["iterations"]
    if VARIANTS[variant].device == "cpu":
        func = mb.CPU[variant]
        return Prepared(run=lambda: func(xs, ys, it))
    from numba import cuda

    kernel, dtype, threads = mb.KERNELS[variant]
    d_xs, d_ys = cuda.to_device(xs.astype(dtype)), cuda.to_device(ys.astype(dtype))
    d_counts = cuda.device_array((p["height"], p["width"]), dtype=np.int32)
    launch = kernel[mb.blocks_for(p["width"], p["height"], threads), threads]
    return Prepared(run=lambda: mb.mandelbrot_cuda(xs, ys, it, variant),  # copies included
                    kernel=lambda: launch(d_xs, d_ys, it, d_counts),  # device work only
                    fetch=d_counts.copy_to_host)


def reference(p: dict) -> np.ndarray:
    """float64 on all CPU cores; the tests check it against pure Python, pixel for pixel."""
    xs, ys = mb.coordinates(p["width"], p["height"])
    return mb.mandelbrot_njit_parallel(xs, ys, p["iterations"])


def check(variant: str, counts: np.ndarray, ref: np.ndarray) -> dict:
    wrong = mb.differing_fraction(counts, ref) if counts.shape == ref.shape else 1.0
    limit = F32_TOLERANCE if variant == "cuda_f32" else 0.0
    return {"metric": "differing_fraction", "value": wrong, "ok": wrong <= limit}


def warp_iterations(ref: np.ndarray, threads: tuple[int, int]) -> int:
    """Iterations the warps run: a warp of 32 threads loops until its slowest pixel is done, so
    it costs 32 x that pixel's count. A block of (bx, by) threads forms its warps from 32/bx
    consecutive rows of bx pixels. Pixels outside the image (partial blocks) count as 0."""
    bx, by = threads
    rows = 32 // bx
    h = -(-ref.shape[0] // by) * by
    w = -(-ref.shape[1] // bx) * bx
    padded = np.zeros((h, w), dtype=np.int64)
    padded[:ref.shape[0], :ref.shape[1]] = ref
    return 32 * int(padded.reshape(h // rows, rows, w // bx, bx).max(axis=(1, 3)).sum())


def counts(variant: str, p: dict, ref: np.ndarray) -> dict:
    pixel_iterations = int(ref.sum(dtype=np.int64))
    escaped = int(np.count_nonzero(ref < p["iterations"]))
    itemsize = 4 if variant == "cuda_f32" else 8
    work = {"pixel_iterations": pixel_iterations, "pixels": int(ref.size)}
    if variant in mb.KERNELS:  # for the lane efficiency: pixel_iterations / warp_iterations
        work["warp_iterations"] = warp_iterations(ref, mb.KERNELS[variant][2])
    return {"flops": FLOPS_PER_ITERATION * pixel_iterations + FLOPS_PER_ESCAPE * escaped,
            "bytes": ref.size * 4 + (p["width"] + p["height"]) * itemsize,  # counts + coordinates
            "work": work}


BENCHMARK = Benchmark(
    name="mandelbrot", variants=VARIANTS, cases=CASES, setup=setup, reference=reference,
    check=check, counts=counts,
    compiled=("njit", "njit_parallel", "cuda_f64_fast", "cuda_f32"),
    probe_params={"width": 64, "height": 32, "iterations": 20})
# --8<-- [end:register]


def png_bytes(counts: np.ndarray, iterations: int) -> bytes:
    """A PNG of the set: escape counts on a log colour scale, the set itself in black."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shade = np.log1p(counts.astype(np.float64)) / np.log1p(iterations)
    rgba = plt.get_cmap("magma")(shade)
    rgba[counts == iterations] = (0.0, 0.0, 0.0, 1.0)
    png = BytesIO()
    plt.imsave(png, rgba, origin="lower", format="png")
    return png.getvalue()


def sass_text() -> str:
    """The SASS (GPU machine code) of the CUDA kernels, each compiled by a launch at 64 x 64."""
    parts = []
    for variant, (kernel, _, _) in mb.KERNELS.items():
        mb.compute(variant, 64, 64, 20)
        for signature in kernel.overloads:
            parts.append(f"===== {variant} {kernel.py_func.__name__}\n"
                         f"{kernel.inspect_sass(signature)}\n")
    return "".join(parts)


def output_ending(suffix: str):
    """argparse type: a writable file whose name ends in `suffix`, checked before any work."""
    def parse(text: str):
        if not text.lower().endswith(suffix):
            raise argparse.ArgumentTypeError(f"{text}: the file name must end in {suffix}")
        return cli.output_path(text)
    return parse


OPTIONS = cli.Parser(prog="benchmark mandelbrot", add_help=False,
                     usage="%(prog)s [--image PNG] [--sass TXT] [the runner's options below]")
OPTIONS.add_argument("--image", type=output_ending(".png"), metavar="PNG",
                     help="write a PNG of the set (the deep case, computed on the CPU)")
OPTIONS.add_argument("--sass", type=output_ending(".txt"), metavar="TXT",
                     help="write the SASS of the CUDA kernels (needs a GPU and nvdisasm)")


def main(argv: list[str] | None = None) -> int:
    args, rest = OPTIONS.parse_known_args(argv)
    if {"-h", "--help"} & set(rest):
        OPTIONS.print_help()
    if args.sass:
        from numba import config, cuda

        if config.ENABLE_CUDASIM or not cuda.is_available():
            OPTIONS.error("--sass needs an NVIDIA GPU (not the CUDA simulator)")
    status = run.main(BENCHMARK, rest) if rest or not (args.image or args.sass) else 0
    if args.image:
        p = CASES["deep"].params
        cli.atomic_write(args.image, png_bytes(reference(p), p["iterations"]))
        print(f"image written to {args.image}")
    if args.sass:
        cli.atomic_write(args.sass, sass_text())
        print(f"SASS written to {args.sass}")
    return status


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
