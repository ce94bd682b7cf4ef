"""snippets/aws/choose_instance.py: memory estimates, ranking, and refusals of bad input."""

from __future__ import annotations

import json

import pytest

from conftest import load_snippet, run_snippet

CHOOSER = "aws/choose_instance.py"


@pytest.fixture(scope="module")
def mod():
    return load_snippet(CHOOSER)


@pytest.fixture(scope="module")
def instances(mod):
    return mod.load_instances()


@pytest.mark.parametrize(("precision", "expected"), [("fp32", 16), ("bf16", 16), ("fp16", 16),
                                                     ("fp8", 14)])
def test_adam_bytes_per_parameter(mod, precision, expected):
    assert mod.training_bytes_per_param(precision) == expected


def test_memory_estimates(mod):
    assert mod.estimate_memory_gib(2**30, "bf16", False, 1.0) == 2
    assert mod.estimate_memory_gib(2**30, "int4", False, 1.2) == pytest.approx(0.6)
    assert mod.estimate_memory_gib(7e9, "bf16", True, 1.0) == pytest.approx(7e9 * 16 / 2**30)
    with pytest.raises(ValueError, match="int8"):
        mod.estimate_memory_gib(7e9, "int8", True, 1.2)


def test_ranking_fits_and_is_cheapest_first(mod, instances):
    options, _ = mod.rank(instances, 60, 4, 10, "training", "bf16")
    by_type = {i.instance_type: i for i in instances}
    assert options
    for o in options:
        i = by_type[o.instance_type]
        assert i.accelerator_count >= 4 and i.accelerator_memory_gib >= 15
        assert "bf16" in i.low_precision and i.status != "retired"
        assert o.total_usd == pytest.approx(i.usd_per_hour * 10, abs=0.006)
    totals = [o.total_usd for o in options]
    assert totals == sorted(totals)
    # Nothing cheaper that fits was left out.
    fitting = [i for i in instances if i.accelerator_count >= 4 and i.accelerator_memory_gib >= 15
               and "training" in i.workloads and "bf16" in i.low_precision
               and i.status != "retired"]
    assert len(options) == len(fitting)


def test_a_gpu_slice_serves_a_small_one_gpu_job_only(mod, instances):
    one, _ = mod.rank(instances, 2, 1, 1, "inference")
    assert one[0].instance_type.startswith("g6f.")
    two, _ = mod.rank(instances, 2, 2, 1, "inference")
    assert not any(o.instance_type.startswith("g6f.") for o in two)


def test_retired_only_on_request(mod, instances):
    default, _ = mod.rank(instances, 10, 1, 1, "training", "fp16")
    assert not any(o.instance_type.startswith("p3.") for o in default)
    everything, _ = mod.rank(instances, 10, 1, 1, "training", "fp16", include_retired=True)
    assert any(o.instance_type == "p3.2xlarge" for o in everything)


def test_bf16_keeps_t4_and_v100_out(mod, instances):
    options, _ = mod.rank(instances, 10, 1, 1, "inference", "bf16", include_retired=True)
    assert not any(o.accelerator in ("NVIDIA T4", "NVIDIA V100") for o in options)


def test_cli_table_and_json_agree():
    args = ["--memory-gib", "30", "--gpus", "2", "--hours", "5", "--top", "3"]
    table = run_snippet(CHOOSER, *args)
    data = run_snippet(CHOOSER, *args, "--json")
    assert table.returncode == data.returncode == 0, table.stderr + data.stderr
    doc = json.loads(data.stdout)
    assert len(doc["options"]) == 3 and doc["memory_gib"] == 30
    first = doc["options"][0]["instance_type"]
    assert table.stdout.splitlines()[3].split()[1] == first


def test_explain_shows_the_formula():
    out = run_snippet(CHOOSER, "--params", "7e9", "--precision", "bf16", "--training",
                      "--gpus", "8", "--hours", "10", "--explain")
    assert out.returncode == 0, out.stderr
    assert "2 weights + 2 gradients + 8 Adam moments + 4 fp32 master weights = 16" in out.stdout
    assert "125.17 GiB" in out.stdout and "15.65 GiB" in out.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--memory-gib", "10", "--hours", "-5"], "--hours: must be greater than 0"),
    (["--memory-gib", "0", "--hours", "1"], "--memory-gib: must be greater than 0"),
    (["--memory-gib", "ten", "--hours", "1"], "expected a number"),
    (["--memory-gib", "nan", "--hours", "1"], "must be greater than 0"),
    (["--params", "7e9", "--precision", "fp12", "--hours", "1"], "invalid choice: 'fp12'"),
    (["--params", "7e9", "--hours", "1"], "--params needs --precision"),
    (["--params", "7e9", "--precision", "int4", "--training", "--hours", "1"], "int8/int4"),
    (["--memory-gib", "10", "--hours", "1", "--gpus", "1.5"], "whole number"),
    (["--memory-gib", "10", "--hours", "1", "--gpus", "64"], "one instance"),
    (["--hours", "1"], "one of the arguments"),
    (["--memory-gib", "5000", "--hours", "1", "--gpus", "8"], "closest: p6-b300.48xlarge"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    out = run_snippet(CHOOSER, *args)
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr
    assert out.stdout == ""


def test_help():
    out = run_snippet(CHOOSER, "--help")
    assert out.returncode == 0 and "--memory-gib" in out.stdout
