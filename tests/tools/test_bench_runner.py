"""The benchmark runner (snippets/bench/runner.py, bench/run.py): a toy benchmark script (its
registry and `sys.exit(run.main(BENCHMARK))`, as a script may call it), checked before it is timed, batched, compile-probed in fresh processes; variants timed by
an external program; the CLI's errors, output checks, Ctrl-C and --resume; and the no-GPU path
on the Mandelbrot smoke case."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bench import results, runner
from helpers import HAS_GPU, ROOT, SNIPPETS, load_snippet, repo_with_a_stale_index, run_snippet

CLI = "bench/run.py"
run_cli = load_snippet(CLI)
TOY = textwrap.dedent('''
    import os, subprocess, sys, time
    from bench import run
    from bench.runner import Benchmark, Case, Prepared, Variant
    LINE = ('BENCH {"variant": "%s", "phase": "kernel", "samples_s": [%s], '
            '"calls_per_sample": 4, "error": {"metric": "abs_error", "value": 0.0, "ok": %s}, '
            '"params": {"block": 256}, "flops": 99}')

    def external(p, variant):
        how = os.environ.get("TOY_EXTERNAL", "good")
        if how == "crash":
            return subprocess.run([sys.executable, "-c", "import sys; sys.exit(3)"],
                                  capture_output=True, text=True, check=True).stdout
        samples = ", ".join(["0.001"] * (9 if how == "few" else 10))
        line = LINE % (variant, samples, "false" if how == "wrong" else "true")
        if os.environ.get("TOY_CLOCK"):
            line = line[:-1] + ', "clock": "%s"}' % os.environ["TOY_CLOCK"]
        return "compiling\\n" + line + "\\n"

    def setup(variant, p):
        if "--probe-compile" in sys.argv and os.environ.get("TOY_PROBE"):  # a compile probe
            if os.environ["TOY_PROBE"] == "fail":
                sys.exit("probe crashed")
            time.sleep(60)
        if os.environ.get("TOY_MARKER"):  # proves whether any work was started
            open(os.environ["TOY_MARKER"], "w").close()
        if variant == "wrong":
            return Prepared(run=lambda: p["n"] + 1)
        if variant == "fake_gpu":
            return Prepared(run=lambda: p["n"], kernel=lambda: None, fetch=lambda: p["n"])
        if variant.startswith("ext"):  # ext: a CUDA C binary; ext_host: a CPU program
            return Prepared(external=lambda: external(p, variant))
        if variant == "sleepy":
            time.sleep(float(os.environ.get("TOY_SLEEP", "0")))
        return Prepared(run=lambda: (time.sleep(p["sleep"]), p["n"])[1])

    BENCHMARK = Benchmark(
        name="toy", variants={"good": Variant("good", "cpu"), "wrong": Variant("wrong", "cpu"),
                              "fake_gpu": Variant("fake GPU"), "ext": Variant("external"),
                              "ext_host": Variant("external on the host", "cpu"),
                              "sleepy": Variant("sleepy", "cpu")},
        cases={"small": Case({"n": 3, "sleep": 0.0}, variants=("good", "wrong", "fake_gpu")),
               "slow": Case({"n": 4, "sleep": 0.002}, variants=("good",), note="only good"),
               "hidden": Case({"n": 5, "sleep": 0.0}, default=False)},
        setup=setup, reference=lambda p: p["n"],
        check=lambda v, got, ref: {"metric": "abs_error", "value": abs(got - ref),
                                   "ok": got == ref},
        counts=lambda v, p, ref: {"flops": 2 * p["n"], "bytes": 8, "work": {"items": p["n"]}},
        compiled=("good",), probe_params={"n": 1, "sleep": 0.0})

    if __name__ == "__main__":
        sys.exit(run.main(BENCHMARK))
''')


@pytest.fixture
def toy_file(tmp_path):
    path = tmp_path / "toy_benchmark.py"
    path.write_text(TOY)
    return path


def load_toy(toy_file):
    import importlib.util

    spec = importlib.util.spec_from_file_location("toy_benchmark", toy_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.BENCHMARK


@pytest.fixture
def toy(toy_file, monkeypatch):
    monkeypatch.setattr(runner, "gpu_status", lambda: (False, "GPU variants skipped: test"))
    return load_toy(toy_file)


def run_toy(toy_file, *args, **kwargs):
    """The toy benchmark run as a reader runs a topic's benchmark.py."""
    return subprocess.run([sys.executable, str(toy_file), *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, **kwargs)


def cli_env(**more) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return env | {k: str(v) for k, v in more.items()}


def test_a_registry_names_only_known_variants():
    with pytest.raises(ValueError, match="unknown variants"):
        runner.Benchmark(name="x", variants={"a": runner.Variant("A")},
                         cases={"c": runner.Case({}, variants=("a", "b"))}, setup=None,
                         reference=None, check=None, counts=None)


def test_a_registry_row_that_runs_names_its_lesson():
    from bench import registry

    with pytest.raises(ValueError, match="names no lesson"):
        registry.Benchmark(name="x", variants={"a": registry.Variant("A")}, cases={},
                           reference=None, check=None, counts=None)


def test_results_carry_the_registry_labels(toy):
    ms, _ = runner.run_benchmark(toy, ["small"], ["good"], repeats=10, warmup=0, compile_runs=0)
    doc = results.document("toy", {}, ms, variants=toy.described())
    results.validate(doc, current=True)
    assert doc["variants"]["good"] == {"label": "good", "device": "cpu", "step": "", "group": ""}
    with pytest.raises(ValueError, match="no label for good"):
        results.validate({**doc, "variants": {}}, current=True)


def test_wrong_variant_is_reported_and_not_timed(toy):
    ms, notes = runner.run_benchmark(toy, ["small"], ["good", "wrong"], repeats=10, warmup=1,
                                     compile_runs=0)
    assert {m["variant"] for m in ms} == {"good"}
    assert any("small/wrong failed its correctness check" in n for n in notes)
    assert runner.failures(notes) == [n for n in notes if "small/wrong" in n]


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
    results.validate(results.document("toy", {}, ms, variants=toy.described()), current=True)


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
    assert all(m["calls_per_sample"] >= 1 for m in ms)


def test_external_variant_records_become_measurements(toy, monkeypatch):
    monkeypatch.setattr(runner, "gpu_status", lambda: (True, ""))
    ms, notes = runner.run_benchmark(toy, ["small"], ["ext"], repeats=10, compile_runs=0)
    (m,) = ms
    assert not runner.failures(notes)
    assert m["clock"] == "cuda-event (external)" and m["device"] == "gpu"
    assert m["repeats"] == 10 and m["calls_per_sample"] == 4 and m["median_s"] == 0.001
    assert m["params"] == {"n": 3, "sleep": 0.0, "block": 256}  # case params + the program's
    assert m["flops"] == 99 and m["bytes"] == 8  # the program's count wins over counts()
    assert m["error"] == {"metric": "abs_error", "value": 0.0}


def test_external_records_may_name_their_clock(toy, monkeypatch):
    monkeypatch.setattr(runner, "gpu_status", lambda: (True, ""))
    monkeypatch.setenv("TOY_CLOCK", "opencl-event")
    (m,) = runner.run_benchmark(toy, ["small"], ["ext"], repeats=10, compile_runs=0)[0]
    assert m["clock"] == "opencl-event (external)"


@pytest.mark.parametrize(("how", "message"), [
    ("wrong", "small/ext failed its correctness check (ext kernel: abs_error = 0.0)"),
    ("few", "small/ext failed: its program gave no usable figures (ValueError: output line 2: "
            "samples_s has 9 samples"),
    ("crash", "small/ext failed: its program gave no usable figures (CalledProcessError"),
])
def test_external_variant_failures_become_notes(toy, monkeypatch, how, message):
    monkeypatch.setattr(runner, "gpu_status", lambda: (True, ""))
    monkeypatch.setenv("TOY_EXTERNAL", how)
    ms, notes = runner.run_benchmark(toy, ["small"], ["ext"], repeats=10, compile_runs=0)
    assert ms == []
    (failed,) = runner.failures(notes)
    assert failed.startswith(message) and "\n" not in failed


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
    proc = run_toy(toy_file, "--variants", "good", "--compile-runs", "2",
                       "--output", out_file, env=cli_env())
    assert proc.returncode == 0, proc.stderr
    doc = results.read_results(out_file, current=True)
    phases = {(m["case"], m["phase"]) for m in doc["measurements"]}
    assert {("compile", "compile_first"), ("compile", "compile_cached"),
            ("small", "kernel"), ("slow", "kernel")} <= phases
    assert "hidden" not in {m["case"] for m in doc["measurements"]}  # not a default case
    first = [m for m in doc["measurements"] if m["phase"] == "compile_first"][0]
    assert first["repeats"] == 2 and first["clock"] == "host (fresh process)"
    assert "toy.json" in doc["system"]["command"]
    assert doc["code"]["commit"] and doc["partial"] is False and doc["quick_check"] is False
    sources = doc["code"]["sources"]  # what it ran, hashed: the script and the harness
    assert sources[str(toy_file)] == hashlib.sha256(toy_file.read_bytes()).hexdigest()
    assert {"snippets/bench/runner.py", "snippets/bench/timing.py"} <= sources.keys()
    from bench.system import syntax_digest  # and what each Python source runs, beside it
    assert doc["code"]["syntax"][str(toy_file)] == syntax_digest(toy_file.read_bytes())
    from bench.system import definitions  # and, for the harness's modules, each name's digest
    runner_py = ROOT / "snippets/bench/runner.py"
    assert doc["code"]["definitions"]["snippets/bench/runner.py"] == definitions(
        runner_py.read_bytes()) and str(toy_file) not in doc["code"]["definitions"]
    assert "[" in proc.stderr and "small: good" in proc.stderr  # progress on stderr
    assert proc.stdout.splitlines()[-1] == f"results written to {out_file}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.json", "toy_benchmark.py"]


def test_cli_marks_a_run_with_few_repeats_as_a_quick_check(toy_file, tmp_path):
    proc = run_toy(toy_file, "--cases", "small", "--variants", "good", "--repeats", "3",
                       "--compile-runs", "0", "--output", tmp_path / "q.json", env=cli_env())
    assert proc.returncode == 0, proc.stderr
    assert results.read_results(tmp_path / "q.json")["quick_check"] is True


@pytest.mark.parametrize("how", ["wrong", "few"])
def test_cli_exits_1_when_a_variant_fails(toy_file, tmp_path, how):
    proc = run_toy(toy_file, "--cases", "small", "--variants", "good,wrong,ext_host",
                       "--compile-runs", "0", "--output", tmp_path / "t.json",
                       env=cli_env(TOY_EXTERNAL=how))
    assert proc.returncode == 1
    assert "small/wrong failed its correctness check" in proc.stdout
    assert "small/ext_host failed" in proc.stdout
    assert results.read_results(tmp_path / "t.json")["measurements"]  # what worked is kept


OUT = ["--output", "{tmp}/x.json"]
BAD_ARGUMENTS = [  # (the benchmark's options, a piece of the one-line error they must give)
    # names and numbers
    (["--variants", "cuda_f16", *OUT], "unknown variant"),
    (["--cases", "huge", *OUT], "unknown case"),
    (["--cases", ","], "at least one name"),
    (["--repeats", "0", *OUT], "must be from 1 to"),
    (["--repeats", "1e9"], "not a whole number"),
    (["--repeats", "100001"], "must be from 1 to 100000"),
    (["--min-sample", "nan"], "must be finite"),
    (["--min-sample", "-1"], "above 0"),
    (["--compile-runs", "-1"], "must be from 0 to"),
    # the output file
    ([], "--output is required"), (["--output", "{tmp}"], "is a folder"),
    (["--output", "{tmp}/missing/x.json"], "does not exist"),
    (["--output", "/proc/x.json"], "cannot create files in /proc"),
]


@pytest.mark.parametrize(("args", "message"), BAD_ARGUMENTS)
def test_cli_rejects_bad_arguments(args, message, toy, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        run_cli.main(toy, [a.format(tmp=tmp_path) for a in args])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize(("topic", "message"), [
    ("nothing_here", "no benchmark 'nothing_here'"), ("../bench", "no benchmark"),
    ("--cases", "usage: run.py TOPIC")])
def test_run_py_names_a_topic_or_says_which_exist(topic, message):
    proc = run_snippet(CLI, topic)
    assert proc.returncode == 2 and message in proc.stderr and proc.stderr.count("\n") == 1


def test_run_py_runs_the_topic_benchmark_script():
    proc = run_snippet(CLI, "mandelbrot", "--cases", "nope", "--output", "/tmp/x.json")
    assert proc.returncode == 2 and "unknown case nope" in proc.stderr, proc.stderr


@pytest.mark.parametrize("where", ["{tmp}/missing/x.json", "{tmp}", "/proc/x.json"])
def test_cli_checks_the_output_before_any_work(toy_file, tmp_path, where):
    marker = tmp_path / "loaded"
    proc = run_toy(toy_file, "--output", where.format(tmp=tmp_path),
                       env=cli_env(TOY_MARKER=marker))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr and not marker.exists()  # no work was started


def test_ctrl_c_keeps_the_earlier_file_and_resume_finishes(toy_file, tmp_path):
    out_file = tmp_path / "prior.json"
    out_file.write_text('{"earlier": "complete results"}\n')
    partial = tmp_path / "prior.partial.json"
    args = [sys.executable, str(toy_file), "--cases", "small,slow",
            "--variants", "good,sleepy", "--compile-runs", "0", "--output", str(out_file)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=cli_env(TOY_SLEEP=60))
    try:
        deadline = time.monotonic() + 120
        while not partial.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)  # small/good is measured, then small/sleepy sleeps in its setup
        assert partial.exists(), proc.stderr.read() if proc.poll() is not None else "no partial"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err.splitlines()[-1].startswith("interrupted (Ctrl-C): 1 finished variant(s) kept")
    assert "Traceback" not in err
    assert out_file.read_text() == '{"earlier": "complete results"}\n'  # untouched
    kept = results.read_results(partial, current=True)
    assert kept["partial"] is True and kept["completed"] == [["small", "good"]]
    (first,) = kept["measurements"]

    proc = subprocess.run(args + ["--resume"], capture_output=True, text=True, cwd=ROOT,
                          env=cli_env(TOY_SLEEP=0), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "kept from the partial file" in proc.stderr
    doc = results.read_results(out_file, current=True)
    assert doc["partial"] is False and "completed" not in doc
    assert first in doc["measurements"]  # kept as measured, not run again
    assert {(m["case"], m["variant"]) for m in doc["measurements"]} == {
        ("small", "good"), ("small", "sleepy"), ("slow", "good"), ("slow", "sleepy")}
    assert not partial.exists()


def test_resume_refuses_a_foreign_or_broken_partial_file(toy_file, tmp_path, capsys):
    out_file = tmp_path / "r.json"
    partial = tmp_path / "r.partial.json"
    for content, message in [("{", "not JSON"), (json.dumps(results.document("other", {}, [], variants={})),
                                                 "not a partial run of toy")]:
        partial.write_text(content)
        with pytest.raises(SystemExit) as exit_:
            run_cli.main(load_toy(toy_file), ["--output", str(out_file), "--resume"])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and message in err and err.count("\n") == 1


def test_mandelbrot_without_gpu_runs_cpu_and_says_why(tmp_path):
    """Also the compile probes of a topic run through run.py: fresh `run.py` processes."""
    if HAS_GPU:
        pytest.skip("this machine has a GPU")
    out_file = tmp_path / "m.json"
    proc = run_snippet(CLI, "mandelbrot", "--cases", "smoke", "--variants", "numpy,njit,cuda_f64",
                       "--compile-runs", "1", "--output", out_file, env=cli_env())
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out_file.read_text())
    assert {(m["variant"], m["phase"]) for m in doc["measurements"]} >= {
        ("njit", "compile_first"), ("njit", "compile_cached")}
    doc["measurements"] = [m for m in doc["measurements"] if m["variant"] != "njit"]
    assert {m["variant"] for m in doc["measurements"]} == {"numpy"}
    assert any("no CUDA GPU found" in n for n in doc["notes"])
    m = doc["measurements"][0]
    assert m["work"]["pixel_iterations"] > 0 and m["error"]["value"] == 0.0


def closed_pipe():
    """A pipe whose reader has gone, as `| head -1` leaves it: writes get EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("limit", ["file size", "full disk"])
def test_a_full_disk_is_one_line_and_keeps_the_earlier_output(toy_file, tmp_path, limit):
    import resource

    folder = tmp_path / "out"
    folder.mkdir()
    if limit == "full disk":
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs needs root")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder], check=True)
    try:
        out_file = folder / "r.json"
        out_file.write_text("earlier\n")
        if limit == "full disk":
            with open(folder / "filler", "wb", buffering=0) as f, pytest.raises(OSError):
                while True:
                    f.write(b"x" * 4096)
        cap = (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))) \
            if limit == "file size" else None
        proc = run_toy(toy_file, "--cases", "small", "--variants", "good", "--compile-runs", "0",
                       "--output", out_file, env=cli_env(), preexec_fn=cap)
        assert proc.returncode == 1, proc.stderr
        last = proc.stderr.splitlines()[-1]
        # the first file the run writes names itself: its lock, or its partial results
        assert any(last.startswith(f"error: cannot write {folder / name}: ")
                   for name in ("r.json.lock", "r.partial.json")), last
        assert "Traceback" not in proc.stderr
        assert out_file.read_text() == "earlier\n"
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["r.json"] + (["filler"] if limit == "full disk" else []))
    finally:
        if limit == "full disk":
            subprocess.run(["umount", folder], check=True)


@pytest.mark.parametrize("stdout", ["full device", "closed pipe"])
def test_stdout_to_a_full_device_or_a_closed_pipe_is_one_line(toy_file, tmp_path, stdout):
    out_file = tmp_path / "r.json"
    target = open("/dev/full", "w") if stdout == "full device" else closed_pipe()
    proc = subprocess.run([sys.executable, str(toy_file), "--cases", "small", "--variants",
                           "good", "--compile-runs", "0", "--output", str(out_file)],
                          stdout=target, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                          env=cli_env(), timeout=300)
    os.close(target) if isinstance(target, int) else target.close()
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert proc.returncode == 1
    last = proc.stderr.splitlines()[-1]
    if stdout == "full device":
        assert last == ("error: cannot write to standard output (/dev/full): No space left on "
                        f"device; the results are in {out_file}")
    else:
        assert not last.startswith("error")  # a reader that stopped reading: quiet
    results.read_results(out_file, current=True)  # written whole before the summary


def partial_doc(toy, **change) -> dict:
    ms, _ = runner.run_benchmark(toy, ["small"], ["good"], repeats=10, warmup=0, compile_runs=0)
    doc = results.document("toy", {}, ms, partial=True, variants=toy.described(),
                           completed=[["small", "good"]], case_params={"small": {"n": 3, "sleep": 0.0}})
    return doc | change


@pytest.mark.parametrize(("change", "message"), [
    ({"completed": 5}, "completed must be a list of [case, variant] pairs"),
    ({"completed": [["small"]]}, "completed must be a list of [case, variant] pairs"),
    ({"completed": [[1, 2]]}, "completed must be a list of [case, variant] pairs"),
    ({"completed": ["ab"]}, "completed must be a list of [case, variant] pairs"),
    ({"completed": [[["small"], "good"]]}, "completed must be a list of [case, variant] pairs"),
    ({"case_params": []}, "case_params must map each case to its parameters"),
    ({"case_params": {"small": 3}}, "case_params must map each case to its parameters"),
    ({"measurements": ["x"]}, "measurement 0 is not an object"),
    ({"measurements": 3}, "measurements must be a list"),
    ({"notes": [1]}, "notes must be a list of strings"),
    ({"code": {"commit": "x", "dirty": None, "sources": {"a.py": "f00"}}},
     "code.sources must map each source file to its sha256"),
    ({"code": {"commit": "x", "dirty": None, "sources": {}, "syntax": {"a.py": "0" * 64}}},
     "code.syntax must map source files of code.sources to a sha256"),
    ({"code": {"commit": "x", "dirty": None, "sources": {"a.py": "0" * 64},
               "definitions": {"a.py": {"f": "0" * 64}}}},
     "code.definitions must map source files of code.sources to {name: 16 hex digits}"),
    ({"code": {"commit": "x", "dirty": None, "sources": {"snippets/bench/runner.py": "0" * 64}}},
     "was measured by other code (snippets/bench/runner.py changed since)"),
    ({"completed": [["small", "good"], ["small", "wrong"]]},
     "says small/wrong was measured but holds no row of it"),
    ({"completed": [["small", "good"], ["compile", "*"]]},
     "says the compile times were measured but holds none"),
])
def test_resume_validates_every_field_of_the_partial_file(toy, tmp_path, capsys, change,
                                                          message):
    out_file = tmp_path / "r.json"
    (tmp_path / "r.partial.json").write_text(json.dumps(partial_doc(toy, **change)))
    capsys.readouterr()  # the progress of measuring the partial file's contents
    with pytest.raises(SystemExit) as exit_:
        run_cli.main(toy, ["--output", str(out_file), "--resume", "--compile-runs", "0"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and err.count("\n") == 1, err
    assert not out_file.exists()


def test_finish_writes_the_partial_as_it_stands_and_names_what_it_lacks(toy, tmp_path, capsys):
    """An interrupted run whose machine is gone: its partial file made final, measuring nothing,
    keeping its own machine, date and commit, with a note naming every pair it lacks."""
    out_file, partial = tmp_path / "r.json", tmp_path / "r.partial.json"
    kept = partial_doc(toy, code={"commit": "f" * 40, "dirty": False},
                       system={"date": "2026-01-02T03:04:05+00:00", "gpus": []})
    partial.write_text(json.dumps(kept))
    capsys.readouterr()
    assert run_cli.main(toy, ["--output", str(out_file), "--finish", "--cases", "small"]) == 0
    doc = results.read_results(out_file, current=True)
    assert doc["partial"] is False and doc["measurements"] == kept["measurements"]
    assert doc["code"] == kept["code"] and doc["system"] == kept["system"]  # not this machine's
    (said,) = [n for n in doc["notes"] if "run.py --finish" in n]
    lacking = [f"small/{v}" for v in toy.cases["small"].variants or toy.runnable() if v != "good"]
    assert said.endswith("not measured: " + ", ".join(
        lacking + (["the compile times"] if toy.compiled else [])))
    assert not partial.exists()
    with pytest.raises(SystemExit) as exit_:  # nothing left to finish: one line, exit 2
        run_cli.main(toy, ["--output", str(out_file), "--finish"])
    assert exit_.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_:  # finish or resume, not both
        run_cli.main(toy, ["--output", str(out_file), "--finish", "--resume"])
    assert exit_.value.code == 2 and "not allowed with" in capsys.readouterr().err


def wait_until(proc, file: str, text: str) -> None:
    """Until /proc/<pid>/<file> mentions text (the process has got that far), or it ends."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with open(f"/proc/{proc.pid}/{file}", "rb") as f:
                if text in f.read().decode(errors="replace"):
                    return
        except OSError:
            pass
        time.sleep(0.002)


@pytest.mark.parametrize("after", [0.0, 0.15])  # numpy, the lesson and numba load
def test_ctrl_c_while_the_imports_load_is_one_line_and_130(tmp_path, after):
    out_file = tmp_path / "m.json"
    out_file.write_text("earlier\n")
    proc = subprocess.Popen([sys.executable, str(SNIPPETS / "bench" / "run.py"), "mandelbrot",
                             "--cases", "smoke", "--compile-runs", "0", "--output", str(out_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=cli_env(), start_new_session=True)
    wait_until(proc, "maps", "numpy")  # numpy's libraries are loading: imports under way
    time.sleep(after)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C does: the whole process group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.splitlines()[-1].startswith("interrupted"), err
    assert len([line for line in err.splitlines() if not line.startswith("[")]) == 1, err
    assert out_file.read_text() == "earlier\n"


@pytest.mark.parametrize("how", ["probe fails", "Ctrl-C", "SIGTERM"])
def test_compile_probes_leave_no_cache_folders(toy_file, tmp_path, how):
    temp = tmp_path / "tmp"
    temp.mkdir()
    args = [sys.executable, str(toy_file), "--cases", "small", "--variants", "good",
            "--compile-runs", "2", "--output", str(tmp_path / "r.json")]
    env = cli_env(TMPDIR=temp, TOY_PROBE="fail" if how == "probe fails" else "sleep")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env, start_new_session=True)
    if how != "probe fails":
        deadline = time.monotonic() + 120
        while not list(temp.glob("numba-cache-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the probe is asleep in its setup
        if how == "Ctrl-C":
            os.killpg(proc.pid, signal.SIGINT)
        else:  # a job scheduler's stop: the runner, not its probe (which dies with it)
            os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err
    assert list(temp.iterdir()) == []
    if how != "probe fails":
        assert proc.returncode == 130 and err.splitlines()[-1].startswith("interrupted"), err
    else:  # the compile times are a failed measurement; the rest is written
        assert proc.returncode == 1, err
        assert "compile/good failed: compile probe failed" in out
        assert results.read_results(tmp_path / "r.json", current=True)["measurements"]


def test_run_all_checks_out_and_topics_before_any_work(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    marker = tmp_path / "ran"
    for tool in ("nvidia-smi", "python3"):  # nothing may be run: either would leave the marker
        (bin_ / tool).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (bin_ / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}"}
    out = tmp_path / "out"
    out.mkdir()
    for where, topics, message in [(tmp_path / "missing", ["saxpy"], "is not a folder"),
                                   (out, ["saxpy", "no_such_topic"], "no topic no_such_topic")]:
        proc = subprocess.run(["bash", str(ROOT / "gpu" / "run_all.sh"), *topics],
                              capture_output=True, text=True, env=env | {"OUT": str(where)},
                              timeout=60)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and "nothing was run" in proc.stderr
    assert not marker.exists() and list(out.iterdir()) == []


def test_resume_of_a_deeply_nested_partial_is_one_line(toy, tmp_path, capsys):
    (tmp_path / "r.partial.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SystemExit) as exit_:
        run_cli.main(toy, ["--output", str(tmp_path / "r.json"), "--resume"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "is damaged" in err and err.count("\n") == 1, err


def test_one_run_per_results_file(toy, tmp_path, capsys):
    out_file = tmp_path / "r.json"
    lock = tmp_path / "r.json.lock"
    lock.write_text(f"{os.getpid()}\n")  # a live process holds it
    args = ["--output", str(out_file), "--cases", "small", "--variants", "good",
            "--compile-runs", "0"]
    assert run_cli.main(toy, args) == 2
    err = capsys.readouterr().err
    assert f"another run (process {os.getpid()}) is writing {out_file}" in err
    assert err.count("\n") == 1 and not out_file.exists()
    lock.write_text("999999999\n")  # its process is gone: taken over
    assert run_cli.main(toy, args) == 0 and out_file.exists() and not lock.exists()


def test_a_device_as_output_keeps_no_partial_file_beside_it(toy_file):
    from bench import cli

    assert cli.partial_path("/dev/null") is None
    proc = run_toy(toy_file, "--output", "/dev/null", "--cases", "small", "--variants", "good",
                   "--compile-runs", "0", env=cli_env())
    assert proc.returncode == 0, proc.stderr
    assert not os.path.exists("/dev/null.partial.json") and not os.path.exists("/dev/null.lock")


@pytest.mark.parametrize("stderr", ["/dev/full", "closed pipe"])  # a full log disk; 2>&1 | head
def test_progress_lines_that_cannot_be_written_cost_nothing(toy_file, tmp_path, stderr):
    out_file = tmp_path / "r.json"
    read, write = os.pipe()
    os.close(read)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, str(toy_file), "--output", str(out_file),
                               "--cases", "small", "--variants", "good", "--compile-runs", "0"],
                              stdout=subprocess.DEVNULL,
                              stderr=full if stderr == "/dev/full" else write, timeout=300,
                              cwd=ROOT, env=cli_env())
    os.close(write)
    assert proc.returncode == 0
    results.read_results(out_file, current=True)


def fake_tree(tmp_path, topics: dict[str, str]) -> Path:
    """A copy of gpu/run_all.sh beside topic scripts `{name: body}`, as in the repository."""
    gpu = tmp_path / "tree" / "gpu"
    gpu.mkdir(parents=True)
    shutil.copy(ROOT / "gpu" / "run_all.sh", gpu)
    for name, body in topics.items():
        (gpu / f"{name}.sh").write_text(body)
    return gpu / "run_all.sh"


def run_all(script: Path, out: Path, *topics: str, limit: int | None = None,
            commit: str = "0" * 40):
    import resource

    def size_limit():  # `ulimit -f`: what the run writes stops there, as on a nearly full disk
        if limit:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    env = {**os.environ, "OUT": str(out), "PYTHONPATH": str(ROOT / "snippets"),
           "BENCH_GIT_COMMIT": commit}
    return subprocess.run(["bash", str(script), *topics], capture_output=True, text=True,
                          env=env, timeout=60, preexec_fn=size_limit)


def test_run_all_keeps_the_earlier_archive_when_packing_fails(tmp_path):
    script = fake_tree(tmp_path, {
        "small": 'echo measured > "$RESULTS_DIR/small.json"\n',
        "big": 'head -c 300000 /dev/urandom > "$RESULTS_DIR/big.bin"\n'})  # cannot compress
    out = tmp_path / "out"
    out.mkdir()
    assert run_all(script, out, "small").returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == ["results.tgz", "summary.txt"]
    proc = run_all(script, out, "big", limit=100_000)
    assert proc.returncode == 1, proc.stderr
    assert f"error: cannot write {out}/results.tgz (the earlier one is as it was)" in proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporary left either
    kept = Path(proc.stderr.rsplit("results are in ", 1)[1].strip())
    assert (kept / "big" / "big.bin").exists()  # what the run measured is still there
    shutil.rmtree(kept)


def test_run_all_exits_non_zero_when_a_topic_fails_after_packing_the_rest(tmp_path):
    script = fake_tree(tmp_path, {"good": 'echo measured > "$RESULTS_DIR/good.json"\n',
                                  "bad": "echo 'no GPU' >&2; exit 3\n"})
    out = tmp_path / "out"
    out.mkdir()
    proc = run_all(script, out, "bad", "good")
    assert proc.returncode == 1 and "1 topic(s) failed: bad" in proc.stderr, proc.stderr
    listing = subprocess.run(["tar", "tzf", str(out / "results.tgz")], capture_output=True,
                             text=True, check=True).stdout.split()
    assert "./good/good.json" in listing and "./bad/log.txt" in listing
    assert "bad: exit 3" in (out / "summary.txt").read_text()


def test_closed_stdout_is_one_line_before_any_work(toy_file, tmp_path):
    out_file = tmp_path / "r.json"
    proc = subprocess.run(["bash", "-c", f"{sys.executable} {toy_file} --output {out_file} "
                           "--cases small --variants good --compile-runs 0 >&-"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=cli_env())
    assert proc.returncode == 1 and proc.stderr == (
        "error: standard output is closed; give it a file (> FILE) or /dev/null\n"), proc.stderr
    assert not out_file.exists()


def test_ctrl_c_during_the_final_rename_says_the_results_were_written(toy, tmp_path, capsys,
                                                                       monkeypatch):
    from bench import cli

    out_file = tmp_path / "r.json"
    real_replace = os.replace

    def replace_then_ctrl_c(src, dst):  # the key pressed while rename() runs
        real_replace(src, dst)
        if Path(dst).name == "r.json":
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(cli.os, "replace", replace_then_ctrl_c)
    code = run_cli.main(toy, ["--output", str(out_file), "--cases", "small", "--variants",
                              "good", "--compile-runs", "0"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 130 and err == (
        f"interrupted (Ctrl-C) after the results were written whole to {out_file}"), err
    results.read_results(out_file, current=True)  # whole, and final
    assert not list(tmp_path.glob("r.*.json")) and not list(tmp_path.glob("*.lock"))


@pytest.mark.parametrize("how", ["--resume", "--finish"])
def test_rows_a_partial_does_not_mark_measured_are_dropped_not_doubled(toy, tmp_path, capsys,
                                                                       how):
    """A variant that failed after some rows (or a damaged `completed`) leaves rows of a pair
    not marked done: --resume measured it again beside them (each row twice in a file marked
    complete), --finish kept them under a note saying the pair was not measured."""
    out_file = tmp_path / "r.json"
    (tmp_path / "r.partial.json").write_text(json.dumps(partial_doc(toy, completed=[])))
    capsys.readouterr()
    code = run_cli.main(toy, ["--output", str(out_file), how, "--cases", "small",
                              "--variants", "good", "--compile-runs", "0"])
    assert code == 0
    doc = results.read_results(out_file, current=True)
    rows = [(m["case"], m["variant"], m["phase"]) for m in doc["measurements"]]
    assert len(rows) == len(set(rows)), rows
    if how == "--finish":  # its note says small/good was not measured: no row says otherwise
        assert rows == [] and any("not measured: small/good" in n for n in doc["notes"])
    assert ("holds rows of small/good without marking it measured: they are not kept"
            in capsys.readouterr().err)


def test_run_all_asking_git_for_the_commit_leaves_no_lock_in_the_checkout(tmp_path):
    """`git status` refreshes the index when files were touched, writing .git/index.lock: under a
    file-size limit git died there and left the lock, and every later git command in the
    checkout (commit, stash) failed with "index.lock: File exists"."""
    script = fake_tree(tmp_path, {"small": 'echo measured > "$RESULTS_DIR/small.json"\n'})
    tree = script.parents[1]
    repo_with_a_stale_index(tree)  # its index larger than the limit below
    out = tmp_path / "out"
    out.mkdir()
    proc = run_all(script, out, "small", limit=4096, commit="")
    assert proc.returncode == 0, proc.stderr
    assert not (tree / ".git" / "index.lock").exists()
