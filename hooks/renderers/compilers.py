"""The ML-compilers page: the XLA runs' table (one per results file of `run.py xla`)."""

from pathlib import Path

from . import renderer
from .table import table


@renderer("xla_times")
def xla_times(docs_dir: Path, path: str) -> str:
    """First call (compile) and warm median of each variant, with the run's details."""
    return table(docs_dir, path, run="1", align="lllrrr",
                 cols="variant={label};size={n:,} elements;device={device};first call (ms)={work[first_call_s]:ms};warm, median (ms)={per_step:ms};max/min={spread:.2f}")
