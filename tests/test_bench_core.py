"""The shared benchmark core under snippets/bench/: timing, system description, results files."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import SNIPPETS

sys.path.insert(0, str(SNIPPETS))
from bench import results, system, timing  # noqa: E402


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
    path = results.write_results(tmp_path / "r.json", "demo", {"date": "x"}, [m], ["a note"])
    doc = results.load_results(path)
    assert doc["measurements"][0]["variant"] == "noop" and doc["notes"] == ["a note"]
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("breakage", [
    lambda d: d.update(schema="other/1"),
    lambda d: d.pop("system"),
    lambda d: d["measurements"][0].pop("median_s"),
    lambda d: d["measurements"][0].update(min_s=2.0),       # min above median
    lambda d: d["measurements"][0].update(max_s=float("nan")),
])
def test_results_validation_rejects_broken_documents(breakage):
    doc = {"schema": results.SCHEMA, "benchmark": "b", "system": {}, "measurements": [
        {"case": "c", "variant": "v", "device": "cpu", "phase": "kernel",
         "median_s": 1.0, "min_s": 0.5, "max_s": 1.5, "repeats": 10}]}
    results.validate(doc)
    breakage(doc)
    with pytest.raises(ValueError):
        results.validate(doc)


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
