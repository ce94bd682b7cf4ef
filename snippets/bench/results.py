"""Results files: one JSON document per benchmark run, read by the site at build time.

Schema (``"schema": "gpu-survival-toolkit/results/2"``)::

    {
      "schema": "gpu-survival-toolkit/results/2",
      "benchmark": "mandelbrot",            # which benchmark wrote it
      "code": {"commit": "3f2c...", "dirty": false,    # git commit of the code ("unknown"
                                            # outside git; dirty: uncommitted changes, or null)
               "sources": {"snippets/mandelbrot/mandelbrot.py": "9a1c..."}},  # sha256 of each
                                            # source file the run executed (bench.system)
      "system": {...},                      # bench.system.describe_system(): date, command,
                                            # host CPU and cores, GPUs, driver, CUDA (driver,
                                            # runtime, nvcc, what frameworks report), libraries
      "quick_check": false,                 # true: fewer than 10 samples, not for publication
      "partial": false,                     # true: an interrupted run (run.py writes these
                                            # beside the output as <name>.partial.json)
      "notes": ["..."],                     # what was skipped and why, anything a reader must know
      "variants": {                         # the benchmark's registry: every variant measured,
        "cuda_f64": {"label": "CUDA, float64", "device": "gpu", "step": "3", "group": ""}
      },                                    # with the label a reader sees (renderers use these)
      "measurements": [
        {
          "case": "article",                # workload name
          "variant": "cuda_f64",            # implementation
          "device": "gpu",                  # "cpu" or "gpu"
          "phase": "kernel",                # "kernel", "end_to_end", "compile_first", ...
          "params": {"width": 1536, ...},   # problem size
          "median_s": 0.0012, "min_s": ..., "max_s": ...,   # seconds per call
          "repeats": 10,                    # samples (>= 10 for timed phases)
          "calls_per_sample": 1,            # calls timed together in one sample
          "clock": "cuda-event", "spread": 1.03,
          "bytes": 12345,                   # bytes moved (optional)
          "flops": 0,                       # floating-point operations (optional)
          "work": {"pixel_iterations": 1},  # workload-specific units (optional)
          "extra": {"registers": 32},       # anything else worth keeping (optional)
          "sm_clock": {"median": 1980, "min": 1965, "max": 1980, "readings": 10,
                       "read": "each sample"},  # GPU rows: NVML's SM clock (MHz) while timed
          "l2": {"flushed": false, "bytes": 52428800, "fits": false},  # GPU rows: was the L2
                                            # flushed between samples; do the bytes fit in it
          "error": {"metric": "mismatched_fraction", "value": 0.0}   # correctness, checked first
        }
      ]
    }

The rule the site states, "the median of at least 10 samples", is enforced here: a timed
measurement with fewer than ``timing.MIN_REPEATS`` repeats is rejected unless the whole file is
marked ``quick_check``. Compile-time phases are exempt: each of their samples is a fresh process.
Files of the first schema (``results/1``, no commit and no calls per sample) are still read,
under their old rules, until each is measured again; ``validate(doc, current=True)`` refuses them.
"""

from __future__ import annotations

import json
import re
import math
import os
from pathlib import Path

from bench.cli import atomic_write
from bench.timing import MIN_REPEATS

SCHEMA = "gpu-survival-toolkit/results/2"
LEGACY = ("gpu-survival-toolkit/results/1",)
REQUIRED = ("case", "variant", "device", "phase", "median_s", "min_s", "max_s", "repeats")
REQUIRED_NOW = REQUIRED + ("calls_per_sample", "clock")
UNTIMED_PHASES = ("compile_first", "compile_cached", "context_init")  # fresh-process samples


def measurement(case: str, variant: str, device: str, phase: str, stats, **fields) -> dict:
    """A measurement record from a timing.Stats (or a plain dict with the same keys)."""
    timing = stats.to_dict() if hasattr(stats, "to_dict") else dict(stats)
    return {"case": case, "variant": variant, "device": device, "phase": phase, **timing, **fields}


def _whole(value, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_measurement(i: int, m, current: bool, quick: bool) -> None:
    if not isinstance(m, dict):
        raise ValueError(f"measurement {i} is not an object")
    missing = [k for k in (REQUIRED_NOW if current else REQUIRED) if k not in m]
    if missing:
        raise ValueError(f"measurement {i} lacks {missing}")
    times = (m["min_s"], m["median_s"], m["max_s"])
    if not all(_number(t) and t >= 0 for t in times):
        raise ValueError(f"measurement {i} has a bad time: {times}")
    if not m["min_s"] <= m["median_s"] <= m["max_s"]:
        raise ValueError(f"measurement {i}: min <= median <= max does not hold: {times}")
    if not current:
        return
    where = f"measurement {i} ({m['case']}/{m['variant']} {m['phase']})"
    if m["device"] not in ("cpu", "gpu"):
        raise ValueError(f"{where}: device must be cpu or gpu, got {m['device']!r}")
    if not _whole(m["repeats"], 1) or not _whole(m["calls_per_sample"], 1):
        raise ValueError(f"{where}: repeats and calls_per_sample must be whole numbers >= 1")
    if m["phase"] not in UNTIMED_PHASES and m["repeats"] < MIN_REPEATS and not quick:
        raise ValueError(f"{where}: median of {m['repeats']} samples; at least {MIN_REPEATS} "
                         "are required (or mark the file quick_check)")
    for key in ("bytes", "flops"):
        if key in m and not (_number(m[key]) and m[key] >= 0):
            raise ValueError(f"{where}: {key} must be a finite number >= 0")
    clock = m.get("sm_clock")
    if clock is not None and not (isinstance(clock, dict) and all(
            _number(clock.get(k)) for k in ("median", "min", "max"))):
        raise ValueError(f"{where}: sm_clock must hold median, min and max in MHz (or be null)")
    if "l2" in m and not (isinstance(m["l2"], dict) and m["l2"].get("flushed") in (True, False)):
        raise ValueError(f"{where}: l2 must say whether it was flushed")
    error = m.get("error")
    if error is not None and not (isinstance(error, dict) and "metric" in error
                                  and "value" in error):
        raise ValueError(f"{where}: error must hold metric and value")


def validate(doc: dict, current: bool = False) -> None:
    """Raise ValueError if a results document breaks the schema.

    With `current`, only the current schema is accepted (files of the first schema are refused).
    """
    if not isinstance(doc, dict):
        raise ValueError("a results file holds one JSON object")
    schema = doc.get("schema")
    if schema != SCHEMA and (current or schema not in LEGACY):
        raise ValueError(f"schema is {schema!r}, expected {SCHEMA!r}")
    now = schema == SCHEMA
    for key in ("benchmark", "system", "measurements") + (("code", "notes") if now else ()):
        if key not in doc:
            raise ValueError(f"missing {key!r}")
    if not isinstance(doc["measurements"], list):
        raise ValueError("measurements must be a list")
    quick = False
    if now:
        code = doc["code"]
        if not (isinstance(code, dict) and isinstance(code.get("commit"), str)
                and code.get("dirty") in (True, False, None)):
            raise ValueError('code must be {"commit": str, "dirty": true/false/null}')
        sources = code.get("sources", {})
        if not (isinstance(sources, dict) and all(
                isinstance(k, str) and isinstance(v, str) and len(v) == 64 for k, v in sources.items())):
            raise ValueError("code.sources must map each source file to its sha256 (hex)")
        syntax = code.get("syntax", {})
        if not (isinstance(syntax, dict) and all(
                isinstance(v, str) and len(v) == 64 and k in sources for k, v in syntax.items())):
            raise ValueError("code.syntax must map source files of code.sources to a sha256")
        defs = code.get("definitions", {})
        if not (isinstance(defs, dict) and all(
                k in sources and isinstance(v, dict) and all(
                    isinstance(n, str) and isinstance(d, str) and re.fullmatch("[0-9a-f]{16}", d)
                    for n, d in v.items()) for k, v in defs.items())):
            raise ValueError("code.definitions must map source files of code.sources to "
                             "{name: 16 hex digits}")
        if not isinstance(doc["system"], dict):
            raise ValueError("system must be an object")
        if not (isinstance(doc["notes"], list) and all(isinstance(n, str) for n in doc["notes"])):
            raise ValueError("notes must be a list of strings")
        for flag in ("quick_check", "partial"):
            if doc.get(flag, False) not in (True, False):
                raise ValueError(f"{flag} must be true or false")
        quick = doc.get("quick_check", False)
    for i, m in enumerate(doc["measurements"]):
        _check_measurement(i, m, now, quick)
    if now:
        _check_variants(doc)


def _check_variants(doc: dict) -> None:
    variants = doc.get("variants")
    if not isinstance(variants, dict):
        raise ValueError("variants must map each variant to its label (the benchmark's registry)")
    for key, v in variants.items():
        if not (isinstance(v, dict) and isinstance(v.get("label"), str) and v["label"]
                and v.get("device") in ("cpu", "gpu")):
            raise ValueError(f"variants: {key!r} needs a label and a device (cpu or gpu)")
    unnamed = sorted({m["variant"] for m in doc["measurements"]} - variants.keys())
    if unnamed:
        raise ValueError(f"variants: no label for {', '.join(unnamed)}")


def document(benchmark: str, system: dict, measurements: list[dict],
             notes: list[str] | None = None, *, quick_check: bool = False, partial: bool = False,
             code: dict | None = None, **more) -> dict:
    """A validated results document (see the module docstring)."""
    from bench.system import code_version

    core = {"schema", "benchmark", "code", "system", "quick_check", "partial", "notes",
            "measurements"}  # "variants" comes in `more`: it is required, and validated
    if core & more.keys():
        raise ValueError(f"extra fields may not replace {sorted(core & more.keys())}")
    doc = {"schema": SCHEMA, "benchmark": benchmark, "code": code or code_version(),
           "system": system, "quick_check": quick_check, "partial": partial,
           "notes": notes or [], "measurements": measurements, **more}
    validate(doc)
    return doc


def write_results(path: str | os.PathLike, benchmark: str, system: dict,
                  measurements: list[dict], notes: list[str] | None = None, *,
                  quick_check: bool = False, partial: bool = False, code: dict | None = None,
                  **more) -> Path:
    """Validate, then write atomically (never a half-written results file)."""
    doc = document(benchmark, system, measurements, notes, quick_check=quick_check,
                   partial=partial, code=code, **more)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(path, json.dumps(doc, indent=1) + "\n")


def read_results(path: str | os.PathLike, current: bool = False) -> dict:
    """Read and validate a results file; ValueError (one line) for anything unreadable."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    try:
        validate(doc, current=current)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return doc


# --8<-- [start:ceiling]
def share_of_best(doc: dict, group: str, phase: str = "kernel") -> dict[str, dict[str, float]]:
    """{case: {variant: bandwidth / the case's best in `group`}}, GPU rows of `phase`.

    One ceiling per case (a round): the fastest of every variant the registry puts in `group`
    (for SAXPY, "copy": cudaMemcpy through CUDA C, Numba and CuPy, PyTorch's copy_, the copy
    kernels), whoever made it, measured in the same run.
    """
    ceiling = {k for k, v in doc["variants"].items() if v.get("group") == group}
    rows = [m for m in doc["measurements"] if m["device"] == "gpu" and m["phase"] == phase
            and m.get("bytes") and m["median_s"] > 0]
    out: dict[str, dict[str, float]] = {}
    for case in dict.fromkeys(m["case"] for m in rows):
        mine = [m for m in rows if m["case"] == case]
        best = max((m["bytes"] / m["median_s"] for m in mine if m["variant"] in ceiling),
                   default=0.0)
        if best:
            out[case] = {m["variant"]: m["bytes"] / m["median_s"] / best for m in mine}
    return out
# --8<-- [end:ceiling]


def load_results(path: str | os.PathLike) -> dict:
    """Read and validate a results file (either schema); raises OSError or ValueError."""
    return read_results(path)
