"""The picture of the Mandelbrot set on its page: the escape counts of the benchmark's `deep`
case, computed on all CPU cores (the lesson's Numba function), on a log colour scale, the set
itself in black.

    python tools/mandelbrot_image.py docs/assets/images/mandelbrot.png
"""

from __future__ import annotations

import sys
from io import BytesIO
from pathlib import Path

SNIPPETS = Path(__file__).resolve().parents[1] / "snippets"
sys.path[:0] = [str(SNIPPETS), str(SNIPPETS / "mandelbrot")]

from bench import cli  # noqa: E402


def png_bytes(counts, iterations: int) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rgba = plt.get_cmap("magma")(np.log1p(counts.astype(np.float64)) / np.log1p(iterations))
    rgba[counts == iterations] = (0.0, 0.0, 0.0, 1.0)
    png = BytesIO()
    plt.imsave(png, rgba, origin="lower", format="png")
    return png.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = cli.Parser(description=__doc__.splitlines()[0])
    parser.add_argument("png", type=cli.output_path, help="the PNG file to write")
    png = parser.parse_args(argv).png
    if png.suffix.lower() != ".png":
        parser.error(f"{png}: the file name must end in .png")
    import benchmark  # the topic's registry: its deep case is the picture's size

    p = benchmark.CASES["deep"].params
    cli.atomic_write(png, png_bytes(benchmark.reference(p), p["iterations"]))
    cli.show(f"image written to {png}")  # a full stdout is one line (the image is written)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
