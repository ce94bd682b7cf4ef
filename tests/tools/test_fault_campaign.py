"""What the fault campaign of 2026-12-06 (issue 49, round four) found in the tools: each case
failed before its fix. The scored table: gpu/logs/cpu-2026-12-06/fault-campaign.md."""

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
