"""A topic's registry: the rows a page shows, each naming the lesson it measures.

`Variant` is the runner's row (label, CPU or GPU, step, group) with `measure`: the lesson,
through an adapter of bench.adapters. `Benchmark` holds the rows, the cases, the `inputs`
every row of a case starts from, the reference, the check and the counts; bench.runner times
it as it times any benchmark (through `setup`, which here hands each row to its adapter), so
the timing code is the same for every topic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from bench import runner
from bench.runner import Case, Prepared  # noqa: F401 - a registry imports them from here

__all__ = ["Benchmark", "Case", "Prepared", "Variant", "exact", "same_elements", "stream",
           "stream_counts", "elementwise", "per_case", "within", "lesson_check", "UNCHECKED"]


# --8<-- [start:api]
@dataclass(frozen=True)
class Variant(runner.Variant):
    """One row of a page: label, device ("cpu" or "gpu"), step, group, runs, and the lesson."""
    measure: Any = None  # an adapter of bench.adapters around the lesson it measures


@dataclass
class Benchmark:
    name: str
    variants: dict[str, Variant]  # key -> row: the topic's registry
    cases: dict[str, Case]
    reference: Callable[[dict], Any]  # the trusted result for a case
    check: Callable[[str, Any, Any], dict]  # (variant, result, reference) -> {"metric", "value", "ok"}
    counts: Callable[[str, dict, Any], dict]  # (variant, params, reference) -> flops/bytes/work
    inputs: Callable[[dict], tuple] = lambda params: ()  # host arrays every row of a case starts from
    compiled: tuple[str, ...] = ()  # variants compiled on first call: their compile time is probed
    probe_params: dict = field(default_factory=dict)  # a tiny case for compile-time probes
# --8<-- [end:api]

    def __post_init__(self):
        for key, v in self.variants.items():
            if v.runs and v.measure is None:
                raise ValueError(f"{self.name}: variant {key} names no lesson (measure=...)")
        runner.Benchmark.__post_init__(self)  # devices and the cases' variants
        self._inputs_for = None
        counts = self.counts

        def counted(variant: str, params: dict, ref) -> dict:  # + a first call timed apart
            got = counts(variant, params, ref)
            first = getattr(self.variants[variant].measure, "first_call_s", None)
            if first is None:
                return got
            return {**got, "work": {**got.get("work", {}), "first_call_s": first(params)}}
        self.counts = counted

    def setup(self, key: str, params: dict) -> Prepared:
        """What the runner times for one row and one case: its adapter around the lesson."""
        frozen = json.dumps(params, sort_keys=True)
        if self._inputs_for != frozen:  # every row of a case shares them; the last case's go
            self._inputs = self._inputs_for = None
            self._inputs, self._inputs_for = self.inputs(params), frozen
        return self.variants[key].measure.prepare(self._inputs, params)

    runnable = runner.Benchmark.runnable
    device = runner.Benchmark.device
    described = runner.Benchmark.described


def same_elements(result, want: np.ndarray) -> dict:
    """The check of a row whose result must equal `want` element for element."""
    result = np.asarray(result)
    wrong = int(np.count_nonzero(result != want)) if result.shape == want.shape else want.size
    return {"metric": "mismatched_elements", "value": wrong, "ok": wrong == 0}


def exact(result, want) -> dict:
    """The check of a row whose result must equal `want`: an array element for element, or a
    number (a sum of exactly representable values, exact in any order)."""
    if isinstance(want, float):
        return {"metric": "abs_error", "value": abs(result - want), "ok": result == want}
    return same_elements(result, want)


UNCHECKED = {"metric": "none (reads only)", "value": 0, "ok": True}  # a row that computes nothing


def within(result: float, want: float, bound: float) -> dict:
    """The check of a number that may differ from `want` by at most `bound` (a rounding bound)."""
    error = abs(float(result) - want)
    return {"metric": "abs_error", "value": error, "ok": error <= bound,
            "bound": bound if np.isfinite(bound) else None}


def lesson_check(metric: str, check: Callable, *args) -> dict:
    """The record of a lesson's own check, which returns its figure or raises ValueError."""
    try:
        return {"metric": metric, "value": check(*args), "ok": True}
    except ValueError as exc:
        return {"metric": metric, "value": float("nan"), "ok": False, "why": str(exc)}


def per_case(make: Callable[[dict], Any]) -> Callable[[dict], Any]:
    """`make(params)`, made once per case (the last case's kept): a reference and every row of
    the case share it."""
    kept: dict = {}

    def made(params: dict):
        key = json.dumps(params, sort_keys=True)
        if key not in kept:
            kept.clear()
            kept[key] = make(params)
        return kept[key]
    return made


# Element-wise rows on float32 arrays (SAXPY and the ceilings it is held to): what each kind
# computes from x and y, and the bytes it moves and FLOPs it does per element.
PER_ELEMENT = {"saxpy": (12, 2), "copy": (8, 0), "read": (4, 1)}  # read 2, write 1: 12 bytes


def stream(a, x: np.ndarray, y: np.ndarray) -> dict:
    """The reference of every kind: SAXPY (a*x + y), a copy of x, the sum of x (in float64)."""
    return {"saxpy": a * x + y, "copy": x, "read": float(np.sum(x, dtype=np.float64))}


def stream_counts(kind: str, n: int) -> dict:
    nbytes, flops = PER_ELEMENT[kind]
    return {"bytes": nbytes * n, "flops": flops * n}


def elementwise(a, make_inputs: Callable, kind: Callable[[str], str]) -> dict:
    """The reference, check and counts of a page of element-wise rows of size `n`:
    `make_inputs(n)` gives x and y, `kind(variant)` what a row computes ("saxpy", "copy" or
    "read"), and each row must equal its kind's reference exactly. Every row of a case starts
    from the same x and y, pinned on a GPU machine."""
    from bench.adapters import pinned

    return {"inputs": lambda p: tuple(pinned(a) for a in make_inputs(p["n"])),
            "reference": lambda p: stream(a, *make_inputs(p["n"])),
            "check": lambda variant, result, ref: exact(result, ref[kind(variant)]),
            "counts": lambda variant, p, ref: stream_counts(kind(variant), p["n"])}
