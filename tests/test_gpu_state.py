"""The harness records the GPU's state beside every GPU timing (issue 34 item 4): the SM clock
read at each event-timed sample, or sampled while a host-timed or external run goes, and
whether the L2 was flushed and whether the problem fits in it. It reads; it never sets."""

from __future__ import annotations

import itertools

import pytest

from bench import gpu_state, results, runner, timing


class FakeEvent:
    clock = itertools.count()

    def record(self):
        self.t = next(FakeEvent.clock)

    def synchronize(self):
        pass


def test_event_timing_reads_the_clock_at_each_sample(monkeypatch):
    readings = iter([1980, 1755, 1980, 1980, 1965, 1980, 1980, 1980, 1980, 1980])
    monkeypatch.setattr(gpu_state, "sm_clock_mhz", lambda: next(readings))
    stats = timing.time_events(lambda: None, FakeEvent, lambda a, b: (b.t - a.t) * 1.0,
                               lambda: None, repeats=10, warmup=0)
    assert stats.sm_clock == {"median": 1980, "min": 1755, "max": 1980, "readings": 10,
                              "read": "each sample"}
    assert stats.to_dict()["sm_clock"]["min"] == 1755
    # per-call division keeps the clock
    assert runner.per_call(stats, 4).sm_clock == stats.sm_clock


def test_without_nvml_there_is_no_clock(monkeypatch):
    monkeypatch.setattr(gpu_state, "sm_clock_mhz", lambda: None)
    stats = timing.time_events(lambda: None, FakeEvent, lambda a, b: 1.0, lambda: None,
                               repeats=10, warmup=0)
    assert stats.sm_clock is None and "sm_clock" not in stats.to_dict()


def test_sampler_collects_readings_until_the_block_ends(monkeypatch):
    monkeypatch.setattr(gpu_state, "sm_clock_mhz", lambda: 1830)
    with gpu_state.Sampler(interval_s=0.001) as sampler:
        import time
        time.sleep(0.03)
    assert len(sampler.readings) >= 2 and set(sampler.readings) == {1830}
    n = len(sampler.readings)
    time.sleep(0.01)
    assert len(sampler.readings) == n  # stopped with the block


@pytest.mark.parametrize("moved, l2, fits", [(10**6, 50 * 2**20, True),
                                             (10**9, 50 * 2**20, False),
                                             (10**9, None, None)])
def test_gpu_conditions_say_whether_the_data_fit_in_the_l2(monkeypatch, moved, l2, fits):
    monkeypatch.setattr(gpu_state, "l2_bytes", lambda: l2)
    stats = timing.summarize([1.0] * 10, "host")
    got = runner.gpu_conditions(stats, [1500, 1600, 1700], {"bytes": moved})
    assert got["l2"] == {"flushed": False, "bytes": l2, "fits": fits}
    assert got["sm_clock"]["median"] == 1600 and got["sm_clock"]["read"] == "every 5 ms"


def test_schema_refuses_a_malformed_clock_or_l2():
    good = results.measurement("c", "v", "gpu", "kernel", timing.summarize([1.0] * 10, "host"),
                               calls_per_sample=1)
    doc = results.document("t", {}, [dict(good, sm_clock=None, l2={"flushed": False})],
                           variants={"v": {"label": "V", "device": "gpu"}}, code={"commit": "x",
                                                                                  "dirty": False})
    assert doc["measurements"][0]["l2"]["flushed"] is False
    for bad in ({"sm_clock": {"median": "fast"}}, {"l2": {"fits": True}}):
        with pytest.raises(ValueError, match="sm_clock|l2"):
            results.validate(dict(doc, measurements=[dict(good, **bad)]))


def test_settings_without_a_driver_are_empty(monkeypatch):
    monkeypatch.setattr(gpu_state, "_nvml", lambda: None)
    assert gpu_state.settings() == {} and gpu_state.sm_clock_mhz() is None


# The harness began recording the GPU's state at this commit's date; every GPU results file
# measured since must carry it (issue 34: "every GPU results file written after this change
# carries clocks").
SINCE = "2026-12-02T03:15"


def gpu_results_files():
    import json
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[1] / "docs" / "data").glob("*.json")):
        doc = json.loads(path.read_text())
        if str(doc.get("schema", "")).startswith("gpu-survival-toolkit/results/") and any(
                m["device"] == "gpu" for m in doc["measurements"]):
            yield path.name, doc


@pytest.mark.parametrize("name, doc", list(gpu_results_files()), ids=lambda v: v if isinstance(v, str) else "")
def test_gpu_results_measured_since_the_change_carry_clocks(name, doc):
    if doc["system"]["date"] < SINCE:
        pytest.skip(f"{name} was measured before the harness recorded clocks")
    timed = [m for m in doc["measurements"] if m["device"] == "gpu"
             and m["phase"] not in runner.results.UNTIMED_PHASES]
    assert doc["system"].get("gpu_settings"), f"{name}: no record of the card's settings"
    lacking = [f"{m['case']}/{m['variant']} {m['phase']}" for m in timed
               if not m.get("sm_clock") or "l2" not in m]
    assert not lacking, f"{name}: GPU rows without the SM clock or the L2 record: {lacking[:5]}"


def test_the_clock_check_fires_on_a_row_without_its_clock():
    name, doc = next((n, d) for n, d in gpu_results_files() if d["system"]["date"] >= SINCE)
    rows = [dict(m) for m in doc["measurements"]]
    row = next(m for m in rows if m["device"] == "gpu" and m.get("sm_clock"))
    row["sm_clock"] = None
    with pytest.raises(AssertionError, match="without the SM clock"):
        test_gpu_results_measured_since_the_change_carry_clocks(name, dict(doc, measurements=rows))
