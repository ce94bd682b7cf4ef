"""The shared benchmark core under snippets/bench/: timing (host, CUDA and OpenCL events), the
external-program format, system description with the code's commit, results files and the
10-sample rule, and the shared argument types of the harness's commands."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import subprocess
import sys
import types

import pytest

from bench import cli, external, results, system, timing


def test_time_host_orders_min_median_max():
    calls = []
    stats = timing.time_host(lambda: calls.append(1), repeats=11, warmup=3)
    assert len(calls) == 14  # warm-up calls are made but not timed
    assert stats.repeats == 11 and stats.clock == "host"
    assert 0 <= stats.min_s <= stats.median_s <= stats.max_s
    assert stats.spread >= 1.0


@pytest.mark.parametrize(("repeats", "warmup"), [(0, 1), (5, -1)])
def test_time_host_rejects_bad_counts(repeats, warmup):
    with pytest.raises(ValueError):
        timing.time_host(lambda: None, repeats=repeats, warmup=warmup)


def test_time_cuda_runs_on_simulator_or_gpu():
    from numba import cuda
    import numpy as np

    d = cuda.to_device(np.zeros(8, dtype=np.float32))
    stats = timing.time_cuda(lambda: d.copy_to_host(), repeats=3, warmup=1)
    from numba import config

    expected = "host (CUDA simulator)" if config.ENABLE_CUDASIM else "cuda-event"
    assert stats.repeats == 3 and stats.clock == expected and stats.min_s >= 0


def test_system_description_never_raises_without_tools(monkeypatch):
    monkeypatch.setenv("PATH", "")
    desc = system.describe_system()
    assert desc["gpus"] == []
    assert desc["host"]["cores"] >= 1 and desc["libraries"]["python"]
    json.dumps(desc)  # serialisable


def test_results_round_trip(tmp_path):
    stats = timing.time_host(lambda: None, repeats=10, warmup=0)
    m = results.measurement("tiny", "noop", "cpu", "kernel", stats, work={"items": 1})
    path = results.write_results(tmp_path / "r.json", "demo", {"date": "x"}, [m], ["a note"],
                                 variants={"noop": {"label": "no-op", "device": "cpu"}})
    doc = results.load_results(path)
    assert doc["measurements"][0]["variant"] == "noop" and doc["notes"] == ["a note"]
    assert doc["measurements"][0]["calls_per_sample"] == 1
    assert doc["schema"] == results.SCHEMA and doc["code"]["commit"]
    assert doc["quick_check"] is False and doc["partial"] is False
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


LABELS = {"v": {"label": "V", "device": "cpu"}}  # the registry a results file carries


def good_doc() -> dict:
    return {"schema": results.SCHEMA, "benchmark": "b", "code": {"commit": "abc", "dirty": False},
            "system": {}, "notes": [], "variants": {"v": {"label": "V", "device": "cpu"}},
            "measurements": [
                {"case": "c", "variant": "v", "device": "cpu", "phase": "kernel",
                 "median_s": 1.0, "min_s": 0.5, "max_s": 1.5, "repeats": 10,
                 "calls_per_sample": 1, "clock": "host"}]}


@pytest.mark.parametrize("breakage", [
    lambda d: d.update(schema="other/1"),
    lambda d: d.pop("system"),
    lambda d: d["variants"].pop("v"),  # a measured variant without its label
    lambda d: d["variants"]["v"].update(label=""),
    lambda d: d.pop("code"),                                  # no commit of the code
    lambda d: d.update(code={"commit": "abc", "dirty": "yes"}),
    lambda d: d.update(notes="a note"),
    lambda d: d.update(partial="no"),
    lambda d: d["measurements"][0].pop("median_s"),
    lambda d: d["measurements"][0].pop("calls_per_sample"),
    lambda d: d["measurements"][0].update(calls_per_sample=0),
    lambda d: d["measurements"][0].update(device="tpu"),
    lambda d: d["measurements"][0].update(min_s=2.0),       # min above median
    lambda d: d["measurements"][0].update(max_s=float("nan")),
    lambda d: d["measurements"][0].update(repeats=9),       # the 10-sample rule
    lambda d: d["measurements"][0].update(bytes=-1),
    lambda d: d["measurements"][0].update(error={"value": 0}),
])
def test_results_validation_rejects_broken_documents(breakage):
    doc = good_doc()
    results.validate(doc, current=True)
    breakage(doc)
    with pytest.raises(ValueError):
        results.validate(doc)


def test_fewer_than_ten_samples_only_in_a_quick_check(tmp_path):
    doc = good_doc()
    doc["measurements"][0]["repeats"] = 3
    with pytest.raises(ValueError, match="at least 10"):
        results.validate(doc)
    doc["quick_check"] = True
    results.validate(doc)
    compile_row = dict(good_doc()["measurements"][0], phase="compile_first", repeats=2)
    results.validate(dict(good_doc(), measurements=[compile_row]))  # fresh processes: exempt
    stats = timing.Stats(1.0, 1.0, 1.0, 3, "host")
    m = results.measurement("c", "v", "cpu", "kernel", stats)
    with pytest.raises(ValueError):
        results.write_results(tmp_path / "r.json", "b", {}, [m], variants=LABELS)
    assert not (tmp_path / "r.json").exists()  # validated before anything is written
    results.write_results(tmp_path / "r.json", "b", {}, [m], quick_check=True, variants=LABELS)


def test_first_schema_files_are_read_but_not_current():
    doc = good_doc()
    doc["schema"] = results.LEGACY[0]
    for key in ("code", "notes"):
        doc.pop(key)
    doc["measurements"][0].pop("calls_per_sample")
    results.validate(doc)
    with pytest.raises(ValueError, match="expected"):
        results.validate(doc, current=True)


@pytest.mark.parametrize(("content", "message"), [
    (b"", "not JSON"), (b"\xff\xfe\x00garbage", "not a text file"), (b"[1, 2]", "one JSON object"),
    (b'{"schema": "gpu-survival-toolkit/gpu-doctor/1"}', "schema is"),
])
def test_reading_a_bad_file_gives_one_line(tmp_path, content, message):
    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as err:
        results.read_results(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_code_version_in_git_outside_and_named_by_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCH_GIT_COMMIT", raising=False)
    here = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=system.HERE)
    if here.returncode == 0:
        # The environment wins over git: a GPU machine's copy can carry a stale .git.
        monkeypatch.setenv("BENCH_GIT_COMMIT", "0123abcd" * 5)
        assert system.code_version()["commit"] == "0123abcd" * 5
        monkeypatch.delenv("BENCH_GIT_COMMIT")
        assert system.code_version()["commit"] == here.stdout.strip()
        assert system.code_version()["dirty"] in (True, False)
    monkeypatch.setattr(system, "HERE", str(tmp_path))  # not a git checkout
    monkeypatch.delenv("BENCH_GIT_COMMIT", raising=False)
    assert system.code_version() == {"commit": "unknown", "dirty": None}
    monkeypatch.setenv("BENCH_GIT_COMMIT", "0123abcd" * 5)
    monkeypatch.setenv("BENCH_GIT_DIRTY", "1")
    assert system.code_version() == {"commit": "0123abcd" * 5, "dirty": True}
    monkeypatch.setenv("BENCH_GIT_COMMIT", "not a sha; rm -rf /")
    assert system.code_version()["commit"] == "unknown"


def test_framework_cuda_versions_come_from_imported_frameworks(monkeypatch):
    fake_torch = types.SimpleNamespace(version=types.SimpleNamespace(cuda="12.6"))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    assert system.framework_cuda()["torch"] == "12.6"
    desc = system.describe_system(check_cuda=False)
    assert desc["cuda"]["frameworks"]["torch"] == "12.6" and "nvcc" in desc["cuda"]


def test_time_events_divides_by_calls_and_warms_up():
    # Fake events on a fake clock that advances 2 ms per call of the timed function.
    clock = {"ms": 0.0}
    calls, syncs = [], []

    class Event:
        def record(self):
            self.at = clock["ms"]

        def synchronize(self):
            pass

    def fn():
        calls.append(1)
        clock["ms"] += 2.0

    stats = timing.time_events(fn, Event, lambda s, e: e.at - s.at, lambda: syncs.append(1),
                               repeats=10, warmup=2, calls=5)
    assert len(calls) == 2 + 10 * 5 and syncs == [1]
    assert stats.median_s == stats.min_s == stats.max_s == pytest.approx(0.002)
    assert stats.clock == "cuda-event" and stats.repeats == 10
    with pytest.raises(ValueError):
        timing.time_events(fn, Event, lambda s, e: 0.0, lambda: None, calls=0)


def test_summarize_carries_calls_per_sample():
    stats = timing.summarize([3.0, 1.0, 2.0], "cuda-event (external)", calls_per_sample=7)
    assert (stats.median_s, stats.min_s, stats.max_s, stats.repeats) == (2.0, 1.0, 3.0, 3)
    assert stats.to_dict()["calls_per_sample"] == 7
    with pytest.raises(ValueError):
        timing.summarize([], "host")


class FakeQueue:
    def __init__(self, profiling=True):
        import pyopencl as cl

        self.properties = cl.command_queue_properties.PROFILING_ENABLE if profiling else 0
        self.finished = 0

    def finish(self):
        self.finished += 1


def test_time_opencl_reads_profiling_events_first_start_to_last_end():
    clock = {"ns": 0}

    class Event:  # 3 ms of device time per call, 1 ms gap between calls
        def __init__(self):
            clock["ns"] += 1_000_000
            self.profile = types.SimpleNamespace(start=clock["ns"], end=clock["ns"] + 3_000_000)
            clock["ns"] += 3_000_000

        def wait(self):
            pass

    queue = FakeQueue()
    stats = timing.time_opencl(queue, Event, repeats=10, warmup=2, calls=4)
    # per sample: first start to last end = 4 x 3 ms + 3 gaps of 1 ms = 15 ms, over 4 calls
    assert stats.median_s == pytest.approx(0.015 / 4)
    assert stats.clock == "opencl-event" and stats.calls_per_sample == 4 and stats.repeats == 10
    with pytest.raises(ValueError, match="PROFILING_ENABLE"):
        timing.time_opencl(FakeQueue(profiling=False), Event)
    with pytest.raises(TypeError, match="event"):
        timing.time_opencl(queue, lambda: None, repeats=1, warmup=0)


def test_time_opencl_on_a_real_device():
    cl = pytest.importorskip("pyopencl")
    import numpy as np

    import warnings

    warnings.simplefilter("ignore", cl.CompilerWarning)  # the driver's build log, not a problem
    try:
        ctx = cl.Context(devices=[cl.get_platforms()[0].get_devices()[0]])
        queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        program = cl.Program(ctx, "__kernel void inc(__global float *a) "
                                  "{ a[get_global_id(0)] += 1.0f; }").build()
    except (cl.Error, IndexError) as exc:
        pytest.skip(f"no usable OpenCL device: {exc}")
    a = np.zeros(4096, np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    inc = cl.Kernel(program, "inc")
    stats = timing.time_opencl(queue, lambda: inc(queue, a.shape, None, buf),
                               repeats=10, warmup=1, calls=2)
    cl.enqueue_copy(queue, a, buf)
    assert np.all(a == 1 + 10 * 2)  # every call ran: 1 warm-up + 10 samples x 2 calls
    assert 0 < stats.min_s <= stats.median_s <= stats.max_s < 1.0


def bench_line(**change) -> str:
    record = {"variant": "cuda_c", "phase": "kernel", "samples_s": [1e-4] * 10,
              "calls_per_sample": 5, "error": {"metric": "max_abs_error", "value": 0.0, "ok": True},
              "bytes": 1200, "params": {"n": 100}, "extra": {"registers": 32}}
    record.update(change)
    return "BENCH " + json.dumps({k: v for k, v in record.items() if v is not None})


def test_external_parse_reads_every_bench_line():
    out = "\n".join(["building...", bench_line(), "timing done",
                     bench_line(phase="end_to_end", extra=None, bytes=None)])
    records = external.parse(out)
    assert [r["phase"] for r in records] == ["kernel", "end_to_end"]
    assert records[0]["extra"] == {"registers": 32} and records[0]["calls_per_sample"] == 5


@pytest.mark.parametrize(("output", "message"), [
    ("no figures here\n", "no 'BENCH' line"),
    ("BENCH {not json", "not JSON"),
    ("BENCH [1, 2]", "JSON object"),
    (bench_line(samples_s=[1e-4] * 9), "at least 10"),
    (bench_line(samples_s=[1e-4] * 9 + [-1.0]), "positive"),
    (bench_line(samples_s=[1e-4] * 9 + ["1"]), "positive"),
    (bench_line().replace("0.0001]", "NaN]"), "positive"),
    (bench_line(phase="warmup"), "phase"),
    (bench_line(calls_per_sample=0), "calls_per_sample"),
    (bench_line(calls_per_sample=2.5), "calls_per_sample"),
    (bench_line(error={"metric": "e", "value": 0.0}), "error"),
    (bench_line(error=None), "missing error"),
    (bench_line(variant=""), "variant"),
    (bench_line(bytes=-5), "bytes"),
    (bench_line(params=[1]), "params"),
    (bench_line(registers=32), "unknown field registers"),
    (bench_line(clock=""), "clock"),
    (bench_line() + "\n" + bench_line(), "a second record"),
])
def test_external_parse_rejects_with_one_line(output, message):
    with pytest.raises(ValueError, match=message) as err:
        external.parse(output)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("make", "text", "ok"), [
    (cli.positive_int(100), "7", 7), (cli.positive_int(100), "0", None),
    (cli.positive_int(100), "-3", None), (cli.positive_int(100), "101", None),
    (cli.positive_int(100), "1e3", None), (cli.positive_int(100), "ten", None),
    (cli.positive_int(100), "99999999999999999999999", None),
    (cli.non_negative_int(5), "0", 0), (cli.non_negative_int(5), "-1", None),
    (cli.positive_float(10.0), "0.5", 0.5), (cli.positive_float(10.0), "0", None),
    (cli.positive_float(10.0), "nan", None), (cli.positive_float(10.0), "inf", None),
    (cli.positive_float(10.0), "1e308", None), (cli.positive_float(10.0), "x", None),
    (cli.name_list, "a, b", ["a", "b"]), (cli.name_list, " , ", None),
])
def test_cli_argument_types_have_bounds(make, text, ok):
    if ok is None:
        with pytest.raises(argparse.ArgumentTypeError):
            make(text)
    else:
        assert make(text) == ok


def test_cli_output_checks_and_atomic_write(tmp_path):
    assert cli.check_output(tmp_path / "r.json") == tmp_path / "r.json"
    assert not list(tmp_path.iterdir())  # the write probe leaves nothing behind
    for bad, message in [(tmp_path, "is a folder"), (tmp_path / "no" / "r.json", "does not exist"),
                         ("/proc/r.json", "cannot create files in /proc")]:
        with pytest.raises(ValueError, match=message):
            cli.check_output(bad)
    target = tmp_path / "r.json"
    target.write_text("old")

    with pytest.raises(TypeError):
        cli.atomic_write(target, 12345)  # fails while writing: the old content survives
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.json"]
    cli.atomic_write(target, "new")
    assert target.read_text() == "new"
    assert cli.partial_path(target) == tmp_path / "r.partial.json"


@pytest.mark.parametrize("writer", ["bench/cli.py:atomic_write", "doctor/gpu_doctor.py",
                                    "aws/refresh_prices.py", "opencl/register_intel_cpu.py"])
def test_a_pipe_or_a_device_is_written_in_place_not_replaced(tmp_path, writer):
    """Every atomic writer of the project, given a FIFO (as /dev/stdout or /dev/null would be):
    the data goes through it and it is still a FIFO. Renaming a file over it would replace it,
    and as root that replaces /dev/null itself."""
    import stat
    import threading

    from helpers import load_snippet

    write = (cli.atomic_write if writer.startswith("bench/")
             else load_snippet(writer).write_atomically)
    fifo, got = tmp_path / "out", []
    os.mkfifo(fifo)
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    write(fifo, "through the pipe\n")
    reader.join(timeout=10)
    assert got == ["through the pipe\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary file left


@pytest.mark.parametrize("writer", ["bench/cli.py:atomic_write", "doctor/gpu_doctor.py",
                                    "aws/refresh_prices.py", "opencl/register_intel_cpu.py"])
def test_two_runs_writing_one_file_use_their_own_temporary_files(tmp_path, monkeypatch, writer):
    """A second run writes the same file while the first is between its write and its rename:
    a shared temporary name would be renamed away under the first ("No such file")."""
    from helpers import load_snippet

    module = cli if writer.startswith("bench/") else load_snippet(writer)
    write = cli.atomic_write if writer.startswith("bench/") else module.write_atomically
    target, seen, real_replace = tmp_path / "report.json", [], os.replace

    def replace(src, dst):
        seen.append(Path(src).name)
        if len(seen) == 1:
            write(target, "second\n")
        real_replace(src, dst)

    monkeypatch.setattr(module.os, "replace", replace)
    write(target, "first\n")
    assert len(set(seen)) == 2 and target.read_text() == "first\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_atomic_write_writes_through_a_symlink(tmp_path):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "r.json"
    target.write_text("old")
    link = tmp_path / "r.json"
    link.symlink_to("data/r.json")  # relative, as a repository's links are
    cli.atomic_write(cli.check_output(link), "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["r.json"]


def test_atomic_write_failure_is_one_line_naming_the_path(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("old")

    def full(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(cli.os, "replace", full)
    with pytest.raises(OSError) as err:
        cli.atomic_write(target, "new")
    assert str(err.value) == f"cannot write {target}: No space left on device"
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.json"]

    def main(argv):
        cli.atomic_write(target, "new")
    assert cli.run_main(main, []) == 1


def test_cli_run_main_turns_ctrl_c_into_one_line_and_130(capsys):
    def main(argv):
        raise KeyboardInterrupt

    assert cli.run_main(main, []) == 130
    assert capsys.readouterr().err == "interrupted (Ctrl-C)\n"
