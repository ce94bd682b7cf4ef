# --8<-- [start:format]
"""Samples timed outside Python (a CUDA C binary, a framework's own loop), read from its output.

The program prints one line per measurement: the literal prefix ``BENCH `` and one JSON object::

    BENCH {"variant": "cuda_c", "phase": "kernel", "samples_s": [1.1e-4, ...],
           "calls_per_sample": 10, "error": {"metric": "max_abs_error", "value": 0.0, "ok": true},
           "bytes": 1.2e9, "flops": 0, "params": {"n": 100000000}, "extra": {"registers": 32}}

``samples_s`` holds at least ``timing.MIN_REPEATS`` seconds-per-call figures (each the time of
``calls_per_sample`` calls divided by that count). ``bytes``, ``flops``, ``params`` and
``extra`` are optional, and so is ``clock`` (what timed the samples: "cuda-event" when absent,
"opencl-event", "host"...); nothing else is allowed. ``parse`` reads every such line and rejects
the whole output, with a one-line ``ValueError``, at the first line that breaks these rules.
"""
# --8<-- [end:format]

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

from bench.timing import MIN_REPEATS

PREFIX = "BENCH "
PHASES = ("kernel", "end_to_end")
REQUIRED = {"variant", "phase", "samples_s", "calls_per_sample", "error"}
OPTIONAL = {"bytes", "flops", "params", "extra", "clock"}
DEFAULT_CLOCK = "cuda-event"


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _problem(record) -> str:
    """What is wrong with one decoded record ("" when nothing is)."""
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    missing = sorted(REQUIRED - record.keys())
    if missing:
        return f"missing {', '.join(missing)}"
    unknown = sorted(record.keys() - REQUIRED - OPTIONAL)
    if unknown:
        return f"unknown field {', '.join(unknown)} (put extra values under \"extra\")"
    if not isinstance(record["variant"], str) or not record["variant"].strip():
        return "variant must be a non-empty string"
    if record["phase"] not in PHASES:
        return f"phase must be one of {', '.join(PHASES)}, got {record['phase']!r}"
    samples = record["samples_s"]
    if not isinstance(samples, list) or not all(_number(s) and s > 0 for s in samples):
        return "samples_s must be a list of finite positive numbers (seconds per call)"
    if len(samples) < MIN_REPEATS:
        return f"samples_s has {len(samples)} samples, at least {MIN_REPEATS} are needed"
    calls = record["calls_per_sample"]
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
        return f"calls_per_sample must be a whole number >= 1, got {calls!r}"
    error = record["error"]
    if (not isinstance(error, dict) or set(error) != {"metric", "value", "ok"}
            or not isinstance(error["metric"], str) or not _number(error["value"])
            or not isinstance(error["ok"], bool)):
        return 'error must be {"metric": str, "value": finite number, "ok": true/false}'
    for key in ("bytes", "flops"):
        if key in record and not (_number(record[key]) and record[key] >= 0):
            return f"{key} must be a finite number >= 0"
    if "clock" in record and not (isinstance(record["clock"], str) and record["clock"].strip()):
        return "clock must be a non-empty string"
    for key in ("params", "extra"):
        if key in record and not isinstance(record[key], dict):
            return f"{key} must be a JSON object"
    return ""


def parse(stdout: str) -> list[dict]:
    """Every ``BENCH {json}`` record of a program's output, validated; ValueError otherwise."""
    records = []
    for number, line in enumerate(stdout.splitlines(), 1):
        if not line.startswith(PREFIX):
            continue
        try:
            record = json.loads(line[len(PREFIX):], parse_constant=lambda c: float("nan"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"output line {number}: not JSON after {PREFIX.strip()!r} "
                             f"({exc.msg} at column {exc.colno + len(PREFIX)})") from None
        problem = _problem(record)
        if not problem and any((r["variant"], r["phase"]) == (record["variant"], record["phase"])
                               for r in records):
            problem = f"a second record for {record['variant']} {record['phase']}"
        if problem:
            raise ValueError(f"output line {number}: {problem}")
        records.append(record)
    if not records:
        raise ValueError(f"the program printed no {PREFIX.strip()!r} line")
    return records


def cuda_program_output(source: Path, binary: Path, args: list[str]) -> str:
    """Run a CUDA C program, building it from `source` with nvcc first when `binary` is missing
    or older; its standard output, BENCH lines included. RuntimeError (one line) when it fails."""
    if not binary.is_file() or binary.stat().st_mtime < source.stat().st_mtime:
        if shutil.which("nvcc") is None:
            raise RuntimeError(f"{binary} is missing and nvcc is not on PATH to build it")
        binary.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["nvcc", "-O3", "-arch=native", "-o", str(binary), str(source)],
                       check=True, capture_output=True, text=True, timeout=300)
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{binary.name} exited {proc.returncode}: "
                           f"{(proc.stderr.strip().splitlines() or [''])[-1]}")
    return proc.stdout
