"""Measure your machine (snippets/machine/benchmark.py): the quick CPU run through the runner,
what each figure counts, the checks, the SIMD-lanes snippet, and the committed H200 file."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from helpers import ROOT, SNIPPETS, load_benchmark, load_snippet, run_snippet

SIMD = "machine/simd_lanes.py"


@pytest.fixture(scope="module")
def machine():
    return load_snippet("machine/benchmark.py")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("machine") / "machine.json"
    proc = subprocess.run([sys.executable, str(SNIPPETS / "bench/run.py"), "machine", "--cases",
                           "quick-cpu,quick-cpu-matmul", "--compile-runs", "0", "--output",
                           str(out)], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    from bench.results import load_results

    return load_results(out)


def test_quick_run_measures_every_cpu_ceiling(quick_run):
    from bench import roofline as rl
    ceils = rl.ceilings(quick_run)
    assert set(ceils) == {"cpu"}
    assert set(ceils["cpu"]["peaks"]) == {"FP64", "FP32"}
    assert ceils["cpu"]["bandwidth"] > 0
    assert all(m["error"]["value"] == 0 or m["error"]["metric"] == "relative_frobenius_error"
               for m in quick_run["measurements"])
    [p] = rl.points(quick_run)  # the CPU SAXPY is both a ceiling and a point
    assert p.label == "cpu_saxpy" and p.intensity == pytest.approx(1 / 6)


@pytest.mark.parametrize(("variant", "bytes_", "flops", "role"), [
    ("cpu_read", 4 * 1000, 1000, "ceiling"), ("gpu_copy", 8 * 1000, 0, "ceiling"),
    ("cpu_saxpy", 12 * 1000, 2000, "ceiling+point"), ("gpu_saxpy", 12 * 1000, 2000, "point"),
    ("h2d_pinned", 4 * 1000, 0, "transfer")])
def test_counts_of_the_streaming_figures(machine, variant, bytes_, flops, role):
    c = machine.counts(variant, {"n": 1000}, None)
    assert (c["bytes"], c["flops"], c["role"]) == (bytes_, flops, role)


@pytest.mark.parametrize(("variant", "itemsize", "precision"), [
    ("gpu_fp64", 8, "FP64"), ("gpu_fp32", 4, "FP32"), ("gpu_tf32", 4, "TF32"),
    ("gpu_bf16", 2, "BF16"), ("cpu_fp64", 8, "FP64")])
def test_counts_of_the_matrix_products(machine, variant, itemsize, precision):
    c = machine.counts(variant, {"n": 100}, None)
    assert c["flops"] == 2 * 100**3 and c["bytes"] == 3 * 100 * 100 * itemsize
    assert c["precision"] == precision


def test_check_refuses_a_product_outside_its_tolerance(machine):
    ref = machine.reference({"n": 64})
    good = ref["rows"].copy()
    assert machine.check("cpu_fp64", good, ref)["ok"]
    bad = good * (1 + 1e-3)
    assert not machine.check("cpu_fp64", bad, ref)["ok"]
    assert machine.check("gpu_bf16", bad, ref)["ok"]  # BF16 is allowed a coarser result


def test_check_refuses_a_wrong_saxpy_and_a_short_copy(machine):
    ref = machine.reference({"n": 2**16})
    assert machine.check("cpu_saxpy", ref["saxpy"], ref)["ok"]
    wrong = ref["saxpy"].copy()
    wrong[7] += 1
    assert machine.check("cpu_saxpy", wrong, ref)["value"] == 1
    assert not machine.check("gpu_copy", ref["copy"][:10], ref)["ok"]
    assert machine.check("h2d_pinned", ref["copy"][:10], ref)["ok"]  # end to end checks a prefix


def test_cpu_variants_compute_the_right_thing(machine):
    ref = machine.reference({"n": 2**16})
    for variant in ("cpu_read", "cpu_copy", "cpu_saxpy"):
        out = machine.BENCHMARK.setup(variant, {"n": 2**16}).run()
        assert machine.check(variant, out, ref)["ok"], variant
    mm = machine.reference({"n": 128})
    c = machine.BENCHMARK.setup("cpu_fp32", {"n": 128}).run()
    assert machine.check("cpu_fp32", np.asarray(c), mm)["ok"]


def test_compiled_rows_run_at_the_compile_probe_size(machine):
    # The compile probe sets each compiled row up at probe_params: a case it can run and pass.
    bench, p = machine.BENCHMARK, machine.BENCHMARK.probe_params
    assert bench.compiled
    for variant in bench.compiled:
        assert machine.check(variant, bench.setup(variant, p).run(), machine.reference(p))["ok"]


def test_committed_gpu_file_has_every_ceiling():
    from bench.results import load_results

    from bench import roofline as rl
    doc = load_results(ROOT / "docs/data/machine-h100.json")
    ceils = rl.ceilings(doc)
    assert set(ceils["gpu"]["peaks"]) == {"FP64", "FP32", "TF32", "BF16"}
    assert {m["variant"] for m in doc["measurements"] if m["case"] == "pcie"} == {
        "h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned"}
    assert all(m["error"]["value"] < 0.05 for m in doc["measurements"])


def test_simd_lanes_counts_lanes_the_same_way():
    mod = load_snippet(SIMD)
    assert mod.cpu_lanes(56, 2, 512) == 1792
    assert mod.gpu_lanes(132, 128) == 16896
    out = run_snippet(SIMD)
    assert out.returncode == 0 and "= 1,792 FP32 lanes" in out.stdout and "9.4" in out.stdout


@pytest.mark.parametrize("variant", list(load_benchmark("machine").BENCHMARK.variants))
def test_every_variant_is_measured_and_counted(machine, variant):
    spec = machine.VARIANTS[variant]
    assert any(variant in c.variants for c in machine.CASES.values() if c.default)
    c = machine.counts(variant, {"n": 64}, None)
    assert c["bytes"] > 0 and (c["role"] in ("ceiling", "ceiling+point")) == (spec.group == "ceiling")
