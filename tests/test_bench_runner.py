"""The benchmark runner (snippets/bench/runner.py, bench/run.py): a toy benchmark registered from
a file, checked before it is timed, batched, compile-probed in fresh processes; the CLI's errors;
and the no-GPU path on the Mandelbrot smoke case."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from conftest import HAS_GPU, SNIPPETS, load_snippet, run_snippet

sys.path.insert(0, str(SNIPPETS))
from bench import results, runner  # noqa: E402

CLI = "bench/run.py"
run_cli = load_snippet(CLI)
TOY = textwrap.dedent('''
    import sys, time
    sys.path.insert(0, {snippets!r})
    from bench.runner import Benchmark, Case, Prepared, register

    def setup(variant, p):
        if variant == "wrong":
            return Prepared(run=lambda: p["n"] + 1)
        if variant == "fake_gpu":
            return Prepared(run=lambda: p["n"], kernel=lambda: None, fetch=lambda: p["n"])
        return Prepared(run=lambda: (time.sleep(p["sleep"]), p["n"])[1])

    register(Benchmark(
        name="toy", variants={{"good": "cpu", "wrong": "cpu", "fake_gpu": "gpu"}},
        cases={{"small": Case({{"n": 3, "sleep": 0.0}}),
                "slow": Case({{"n": 4, "sleep": 0.002}}, variants=("good",), note="only good"),
                "hidden": Case({{"n": 5, "sleep": 0.0}}, default=False)}},
        setup=setup, reference=lambda p: p["n"],
        check=lambda v, got, ref: {{"metric": "abs_error", "value": abs(got - ref),
                                     "ok": got == ref}},
        counts=lambda v, p, ref: {{"flops": 2 * p["n"], "bytes": 8, "work": {{"items": p["n"]}}}},
        compiled=("good",), probe_params={{"n": 1, "sleep": 0.0}}))
''')


@pytest.fixture
def toy_file(tmp_path):
    path = tmp_path / "toy_benchmark.py"
    path.write_text(TOY.format(snippets=str(SNIPPETS)))
    return path


@pytest.fixture
def toy(toy_file, monkeypatch):
    monkeypatch.setattr(runner, "gpu_status", lambda: (False, "GPU variants skipped: test"))
    return runner.load(str(toy_file))


def test_load_by_path_registers_the_benchmark(toy):
    assert toy.name == "toy" and runner.REGISTRY["toy"] is toy
    assert toy.module.endswith("toy_benchmark.py")


def test_load_rejects_unknown_names():
    with pytest.raises(LookupError, match="no benchmark"):
        runner.load("no_such_benchmark")


def test_wrong_variant_is_reported_and_not_timed(toy):
    ms, notes = runner.run_benchmark(toy, ["small"], ["good", "wrong"], repeats=10, warmup=1,
                                     compile_runs=0)
    assert {m["variant"] for m in ms} == {"good"}
    assert any("small/wrong failed its correctness check" in n for n in notes)


def test_measurements_carry_stats_counts_and_error(toy):
    ms, notes = runner.run_benchmark(toy, ["slow"], repeats=10, warmup=0, min_sample_s=0.01,
                                     compile_runs=0)
    (m,) = ms
    assert m["repeats"] == 10 and m["phase"] == "kernel" and m["device"] == "cpu"
    assert m["min_s"] <= m["median_s"] <= m["max_s"] and m["median_s"] >= 0.002
    assert m["calls_per_sample"] >= 2  # a 2 ms call is batched up to the 10 ms sample
    assert m["flops"] == 8 and m["work"] == {"items": 4}
    assert m["error"] == {"metric": "abs_error", "value": 0}
    assert "slow: only good" in notes
    results.validate({"schema": results.SCHEMA, "benchmark": "toy", "system": {},
                      "measurements": ms})


def test_gpu_variants_are_skipped_with_a_reason(toy):
    ms, notes = runner.run_benchmark(toy, ["small"], repeats=10, warmup=0, compile_runs=0)
    assert "fake_gpu" not in {m["variant"] for m in ms}
    assert "GPU variants skipped: test" in notes


def test_gpu_variant_gets_kernel_and_end_to_end(toy, monkeypatch):
    monkeypatch.setattr(runner, "gpu_status", lambda: (True, ""))
    monkeypatch.setattr(runner.timing, "time_cuda", runner.timing.time_host)
    ms, _ = runner.run_benchmark(toy, ["small"], ["fake_gpu"], repeats=10, warmup=0,
                                 compile_runs=0)
    assert [(m["device"], m["phase"]) for m in ms] == [("gpu", "kernel"), ("gpu", "end_to_end")]


def test_fewer_than_ten_repeats_are_flagged(toy):
    _, notes = runner.run_benchmark(toy, ["small"], ["good"], repeats=3, warmup=0,
                                    compile_runs=0)
    assert any("not for publication" in n for n in notes)


def test_calls_per_sample():
    assert runner.calls_per_sample(0.5, 0.02) == 1
    assert runner.calls_per_sample(0.001, 0.02) == 20
    assert runner.calls_per_sample(0.0, 0.02) == 1000


def test_cli_writes_a_valid_results_file_with_compile_times(toy_file, tmp_path):
    out_file = tmp_path / "toy.json"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = run_snippet(CLI, toy_file, "--variants", "good", "--compile-runs", "2",
                       "--output", out_file, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = results.load_results(out_file)
    phases = {(m["case"], m["phase"]) for m in doc["measurements"]}
    assert {("compile", "compile_first"), ("compile", "compile_cached"),
            ("small", "kernel"), ("slow", "kernel")} <= phases
    assert "hidden" not in {m["case"] for m in doc["measurements"]}  # not a default case
    first = [m for m in doc["measurements"] if m["phase"] == "compile_first"][0]
    assert first["repeats"] == 2 and first["clock"] == "host (fresh process)"
    assert "toy.json" in doc["system"]["command"]
    assert "[" in proc.stderr and "small: good" in proc.stderr  # progress on stderr
    assert proc.stdout.splitlines()[-1] == f"results written to {out_file}"


def test_cli_exits_1_when_a_variant_fails_its_check(toy_file, tmp_path):
    proc = run_snippet(CLI, toy_file, "--cases", "small", "--variants", "good,wrong",
                       "--compile-runs", "0", "--output", tmp_path / "t.json")
    assert proc.returncode == 1
    assert "failed its correctness check" in proc.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["nothing_here", "--output", "x.json"], "no benchmark"),
    (["mandelbrot", "--variants", "cuda_f16", "--output", "x.json"], "unknown variant"),
    (["mandelbrot", "--cases", "huge", "--output", "x.json"], "unknown case"),
    (["mandelbrot", "--repeats", "0", "--output", "x.json"], "must be positive"),
    (["mandelbrot", "--compile-runs", "-1"], "must be 0 or more"),
    (["mandelbrot"], "--output is required"),
])
def test_cli_rejects_bad_arguments(args, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        run_cli.main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_mandelbrot_without_gpu_runs_cpu_and_says_why(tmp_path):
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out_file = tmp_path / "m.json"
    proc = run_snippet(CLI, "mandelbrot", "--cases", "smoke", "--variants", "numpy,cuda_f64",
                       "--compile-runs", "0", "--output", out_file, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out_file.read_text())
    assert {m["variant"] for m in doc["measurements"]} == {"numpy"}
    assert any("no CUDA GPU found" in n for n in doc["notes"])
    m = doc["measurements"][0]
    assert m["work"]["pixel_iterations"] > 0 and m["error"]["value"] == 0.0
