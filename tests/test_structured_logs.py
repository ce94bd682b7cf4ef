"""The JSON that tools/structure_logs.py wrote from raw tool output (HLO, ncu, SASS) matches
its raw file today, and its parsers refuse a file with nothing to count."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("structure_logs", ROOT / "tools/structure_logs.py")
structure_logs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(structure_logs)


@pytest.mark.parametrize("path", sorted(structure_logs.structured()), ids=lambda p: p.name)
def test_committed_json_matches_its_raw_file(path):
    assert path.is_file(), f"run: python tools/structure_logs.py ({path.name} is missing)"
    assert path.read_text() == structure_logs.dump(structure_logs.structured()[path])


def test_each_kind_of_raw_file_is_structured():
    names = {p.name for p in structure_logs.structured()}
    assert {"xla-hlo-jax-h200.counts.json", "saxpy-ncu-h200.json",
            "mandelbrot-sass-h200.loops.json"} <= names


def test_the_parsers_refuse_a_file_with_nothing_to_count():
    with pytest.raises(ValueError, match="no fused"):
        structure_logs.hlo_counts("HloModule m\nENTRY %m { ROOT %a = f32[] add(%b, %c) }\n")
    with pytest.raises(ValueError, match="no kernels"):
        structure_logs.ncu_kernels("==PROF== nothing profiled\n")
    hlo = structure_logs.hlo_counts((ROOT / "docs/data/xla-hlo-jax-h200.txt").read_text())
    assert (hlo["total"], hlo["ops"], hlo["kinds"]) == (10, "6 multiply, 3 add, 1 tanh", "kLoop")
