"""What the fault campaign of 2026-12-06 (issue 49, rounds four and five) found in the tools:
each case failed before its fix. The scored tables: gpu/logs/cpu-2026-12-06/fault-campaign.md
and fault-campaign-round5.md."""

from __future__ import annotations

import json

import pytest

from helpers import ROOT, run_snippet, run_to

ONE_LINE_FULL = "error: cannot write to standard output (/dev/full): No space left on device\n"


@pytest.mark.parametrize("relpath,args", [
    ("../tools/timeline_trace.py", []), ("../tools/structure_logs.py", []),
    ("../tools/mandelbrot_image.py", []), ("bench/run.py", ["mandelbrot"])])
def test_help_to_a_full_device_is_one_line_not_a_silent_success(relpath, args):
    proc = run_to("/dev/full", relpath, *args, "--help")
    assert (proc.returncode, proc.stderr) == (1, ONE_LINE_FULL)
    proc = run_to("closed pipe", relpath, *args, "--help")  # | head: quiet
    assert (proc.returncode, proc.stderr) == (0, "")


def test_mandelbrot_image_with_stdout_full_is_one_line_and_the_image_is_written(tmp_path):
    png = tmp_path / "m.png"
    proc = run_to("/dev/full", "../tools/mandelbrot_image.py", png)
    assert (proc.returncode, proc.stderr) == (1, ONE_LINE_FULL)
    assert png.read_bytes().startswith(b"\x89PNG")


KERNEL = {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 10, "pid": 1, "tid": 1}
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("trace,output,why", [
    ({"traceEvents": [{"ph": "M", "name": "process_name", "args": [1]}]}, None,
     "cannot read the trace {trace}: 'list' object has no attribute 'get'"),
    (DEEP, None, "cannot read the trace {trace}: nested too deeply"),
    ({"traceEvents": [KERNEL]}, {"traces": [1]},
     'cannot add to {output}: its "traces" is not an object'),
    ({"traceEvents": [KERNEL]}, '{"traces":' * 100_000 + "1" + "}" * 100_000,
     "cannot read {output} to add to it: nested too deeply"),
])
def test_timeline_trace_damaged_inputs_are_one_line_and_keep_the_output(tmp_path, trace, output,
                                                                       why):
    paths = {"trace": tmp_path / "trace.json", "output": tmp_path / "timeline.json"}
    for name, content in (("trace", trace), ("output", output)):
        if content is not None:
            paths[name].write_text(content if isinstance(content, str) else json.dumps(content))
    before = paths["output"].read_bytes() if output is not None else None
    proc = run_snippet("../tools/timeline_trace.py", "--label", "x", "--output", paths["output"],
                       *(["--add"] if output is not None else []), paths["trace"])
    assert (proc.returncode, proc.stderr) == (2, f"error: {why.format(**paths)}\n")
    assert (paths["output"].read_bytes() if output is not None
            else paths["output"].exists()) == (before if output is not None else False)


@pytest.mark.parametrize("window", ["1e-310", "1e-7"])
def test_timeline_trace_refuses_a_window_its_file_would_write_as_0_ms(tmp_path, window):
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"traceEvents": [KERNEL]}))
    proc = run_snippet("../tools/timeline_trace.py", "--label", "x", "--output",
                       tmp_path / "t.json", "--window", window, trace)
    assert (proc.returncode, proc.stderr) == (
        2, f"error: --window must be at least 1e-06 s (1 us), got {float(window):g}\n")
    assert not (tmp_path / "t.json").exists()


def test_timeline_trace_add_is_one_run_at_a_time(tmp_path):
    """--add reads the output, adds a trace and renames: a second run at once could drop the
    first one's trace, so a live run's lock is one line and the output is left as it was."""
    import os

    trace, output = tmp_path / "trace.json", tmp_path / "timeline.json"
    trace.write_text(json.dumps({"traceEvents": [KERNEL]}))
    output.write_text(json.dumps({"traces": {"first": {}}}))
    (tmp_path / "timeline.json.lock").write_text(f"{os.getpid()}\n")  # this process: alive
    proc = run_snippet("../tools/timeline_trace.py", "--label", "second", "--add", "--output",
                       output, trace)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"error: another run (process {os.getpid()}) is writing {output}")
    assert json.loads(output.read_text()) == {"traces": {"first": {}}}
    (tmp_path / "timeline.json.lock").unlink()
    proc = run_snippet("../tools/timeline_trace.py", "--label", "second", "--add", "--output",
                       output, trace)
    assert proc.returncode == 0 and set(json.loads(output.read_text())["traces"]) == {"first",
                                                                                     "second"}
    assert not (tmp_path / "timeline.json.lock").exists()


# Round five (gpu/logs/cpu-2026-12-06/fault-campaign-round5.md): each case failed before its fix.

IN_THE_RENAME = (  # a Ctrl-C that lands inside the rename onto the output (the rename is done)
    "import os, runpy, signal, sys\n"
    "real, target = os.replace, sys.argv[1]\n"
    "def replace(src, dst, **kw):\n"
    "    real(src, dst, **kw)\n"
    "    if os.path.basename(dst) == target:\n"
    "        os.kill(os.getpid(), signal.SIGINT)\n"
    "os.replace = replace\n"
    "sys.argv = sys.argv[2:]\n"
    "sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as `python FILE` does\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def ctrl_c_in_the_rename(target: str, relpath: str, *args) -> "subprocess.CompletedProcess":
    import subprocess
    import sys

    from helpers import SNIPPETS

    return subprocess.run([sys.executable, "-c", IN_THE_RENAME, target, str(SNIPPETS / relpath),
                           *map(str, args)], capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_ctrl_c_inside_the_final_rename_of_a_bench_cli_tool_says_the_output_is_whole(tmp_path):
    trace, output = tmp_path / "trace.json", tmp_path / "timeline.json"
    trace.write_text(json.dumps({"traceEvents": [KERNEL]}))
    proc = ctrl_c_in_the_rename("timeline.json", "../tools/timeline_trace.py", "--label", "x",
                                "--output", output, trace)
    assert (proc.returncode, proc.stderr) == (
        130, f"interrupted (Ctrl-C) after {output} was written whole\n")
    assert "x" in json.loads(output.read_text())["traces"]


def test_ctrl_c_inside_the_rename_of_an_icd_file_says_it_was_written(tmp_path):
    proc = ctrl_c_in_the_rename("intel-cpu.icd", "opencl/register_intel_cpu.py", "--dir",
                                tmp_path / "icd", "--optional")
    written = tmp_path / "icd" / "intel-cpu.icd"
    if not written.exists():  # no Intel runtime in this Python: nothing of its own to rename
        pytest.skip("register_intel_cpu writes no intel-cpu.icd here")
    assert proc.returncode == 130 and proc.stderr.startswith("interrupted (") and \
        proc.stderr.endswith(f"{written} written whole before it)\n"), proc.stderr  # the
    # system's own .icd files, copied first, are named before it


def test_ctrl_c_while_a_later_output_is_written_names_the_earlier_ones(tmp_path):
    """bench.cli.run_main names what atomic_write finished before the Ctrl-C, in one line."""
    import signal

    from bench import cli

    first, second = tmp_path / "a.json", tmp_path / "b.json"

    def main(argv):
        cli.atomic_write(first, "{}")
        os.kill(os.getpid(), signal.SIGINT)
        cli.atomic_write(second, "{}")
        return 0

    import os
    import contextlib
    import io

    err = io.StringIO()
    cli.WRITTEN.clear()
    with contextlib.redirect_stderr(err):
        code = cli.run_main(main)
    cli.WRITTEN.clear()
    assert (code, err.getvalue()) == (130, f"interrupted (Ctrl-C) after {first} was written "
                                           "whole\n")


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -5])
def test_timeline_trace_refuses_durations_that_are_not_finite_or_negative(tmp_path, value):
    trace, output = tmp_path / "trace.json", tmp_path / "timeline.json"
    trace.write_text(json.dumps({"traceEvents": [KERNEL | {"dur": value}]}))
    proc = run_snippet("../tools/timeline_trace.py", "--label", "x", "--output", output, trace)
    assert (proc.returncode, proc.stderr) == (
        2, f"error: cannot read the trace {trace}: event 'k' has a start or duration that is not "
           "a finite number of 0 or more\n")
    assert not output.exists()


def test_ctrl_c_inside_the_last_epochs_final_rename_says_the_training_is_done(tmp_path):
    """It said "interrupted after epoch 1 (the last one saved): run the same command to resume"
    for a run whose every epoch was written whole."""
    from helpers import load_snippet

    load_snippet("keras/make_dataset.py").write_dataset(tmp_path / "data", images=4, size=32)
    out = tmp_path / "run"
    proc = ctrl_c_in_the_rename("last.keras", "keras/train.py", tmp_path / "data",
                                "--output-dir", out, "--epochs", "1", "--image-size", "16")
    assert proc.returncode == 130 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f"interrupted (Ctrl-C) after the last epoch, 1, was written whole to {out} (the reload "
        "self-check did not run)")
    assert len(json.loads((out / "history.json").read_text())["epochs"]) == 1


@pytest.mark.parametrize("major", ["-1", "Infinity", "NaN", '"12"'])  # JSON text
def test_replay_of_a_wheel_with_a_damaged_cuda_major_names_it(tmp_path, major):
    """It said "not a doctor report ('NoneType' object is not subscriptable)"."""
    report = json.loads((ROOT / "docs/data/doctor-h200.json").read_text())
    wheel = {"name": "cupy-cuda12x", "version": "13.0.0", "cuda_major": 12}
    report["facts"]["wheels"] = [wheel]
    text = json.dumps(report).replace('"cuda_major": 12', f'"cuda_major": {major}')
    (tmp_path / "r.json").write_text(text)
    proc = run_snippet("doctor/gpu_doctor.py", "--replay", tmp_path / "r.json")
    shown = {"Infinity": "inf", "NaN": "nan", '"12"': "'12'"}.get(major, major)
    assert (proc.returncode, proc.stderr) == (
        2, f"error: --replay {tmp_path / 'r.json'}: not a doctor report (pip wheel cupy-cuda12x: "
           f"cuda_major {shown} is not a CUDA major version)\n")


def test_the_commit_asked_of_git_under_a_file_size_limit_leaves_no_lock(tmp_path):
    """bench.system.code_version's `git status` rewrote a stale index; under `ulimit -f` git died
    writing .git/index.lock and left it: every later commit in the checkout failed."""
    import os
    import subprocess
    import sys

    from helpers import SNIPPETS, repo_with_a_stale_index

    repo_with_a_stale_index(tmp_path)  # its index larger than the limit below
    code = ("import resource, sys\n"
            "from pathlib import Path\n"
            "from bench import system\n"
            "system.HERE = Path(sys.argv[1])\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
            "print(system.code_version()['dirty'])\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_GIT")}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, env={**env, "PYTHONPATH": str(SNIPPETS)})
    assert proc.stdout == "False\n", proc.stderr
    assert not (tmp_path / ".git" / "index.lock").exists()


def test_ctrl_c_inside_the_rename_is_named_when_other_threads_take_the_signal(tmp_path,
                                                                              monkeypatch):
    """With SIGINT blocked only in the main thread, a process with other threads (Numba's, in
    mandelbrot_image) took the signal in one of them: Python raised KeyboardInterrupt in the
    main thread before the rename was recorded, and the line said a bare "interrupted"."""
    import contextlib
    import io
    import os
    import signal
    import threading
    import time

    from bench import cli

    output = tmp_path / "a.json"
    real = os.replace

    def replace(src, dst, **kw):
        real(src, dst, **kw)
        os.kill(os.getpid(), signal.SIGINT)  # to the process: any thread not blocking it
        time.sleep(0.2)  # still in the rename when the other thread has run the handler

    monkeypatch.setattr(os, "replace", replace)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            code = cli.run_main(lambda argv: cli.atomic_write(output, "{}") and 0)
    finally:
        stop.set()
        other.join()
    assert (code, err.getvalue()) == (130, f"interrupted (Ctrl-C) after {output} was written "
                                           "whole\n")
