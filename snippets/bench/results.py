"""Results files: one JSON document per benchmark run, read by the site at build time.

Schema (``"schema": "gpu-survival-toolkit/results/1"``)::

    {
      "schema": "gpu-survival-toolkit/results/1",
      "benchmark": "mandelbrot",            # which runner wrote it
      "system": {...},                      # bench.system.describe_system(): date, command,
                                            # host CPU and cores, GPUs, driver, CUDA, libraries
      "notes": ["..."],                     # what was skipped and why, anything a reader must know
      "measurements": [
        {
          "case": "article",                # workload name
          "variant": "cuda_f64",            # implementation
          "device": "gpu",                  # "cpu" or "gpu"
          "phase": "kernel",                # "kernel", "end_to_end", "compile_first", "compile_cached"
          "params": {"width": 1536, ...},   # problem size
          "median_s": 0.0012, "min_s": ..., "max_s": ..., "repeats": 10,
          "clock": "cuda-event", "spread": 1.03,
          "bytes": 12345,                   # bytes moved (optional)
          "flops": 0,                       # floating-point operations (optional)
          "work": {"pixel_iterations": 1},  # workload-specific units (optional)
          "error": {"metric": "mismatched_fraction", "value": 0.0}   # correctness, checked first
        }
      ]
    }
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

SCHEMA = "gpu-survival-toolkit/results/1"
REQUIRED = ("case", "variant", "device", "phase", "median_s", "min_s", "max_s", "repeats")


def measurement(case: str, variant: str, device: str, phase: str, stats, **fields) -> dict:
    """A measurement record from a timing.Stats (or a plain dict with the same keys)."""
    timing = stats.to_dict() if hasattr(stats, "to_dict") else dict(stats)
    return {"case": case, "variant": variant, "device": device, "phase": phase, **timing, **fields}


def validate(doc: dict) -> None:
    """Raise ValueError if a results document breaks the schema."""
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    for key in ("benchmark", "system", "measurements"):
        if key not in doc:
            raise ValueError(f"missing {key!r}")
    for i, m in enumerate(doc["measurements"]):
        missing = [k for k in REQUIRED if k not in m]
        if missing:
            raise ValueError(f"measurement {i} lacks {missing}")
        times = (m["min_s"], m["median_s"], m["max_s"])
        if not all(isinstance(t, (int, float)) and math.isfinite(t) and t >= 0 for t in times):
            raise ValueError(f"measurement {i} has a bad time: {times}")
        if not m["min_s"] <= m["median_s"] <= m["max_s"]:
            raise ValueError(f"measurement {i}: min <= median <= max does not hold: {times}")


def write_results(path: str | os.PathLike, benchmark: str, system: dict,
                  measurements: list[dict], notes: list[str] | None = None) -> Path:
    doc = {"schema": SCHEMA, "benchmark": benchmark, "system": system,
           "notes": notes or [], "measurements": measurements}
    validate(doc)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)  # never leave a half-written results file behind
    return path


def load_results(path: str | os.PathLike) -> dict:
    doc = json.loads(Path(path).read_text())
    validate(doc)
    return doc
