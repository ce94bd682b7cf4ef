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

__all__ = ["Benchmark", "Case", "Prepared", "Variant", "same_elements"]


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
