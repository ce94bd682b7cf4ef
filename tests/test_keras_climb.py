"""The climb (snippets/keras/climb.py, climb_torch.py, its rows in benchmark.py, the harness's
rounds and traces, and the climb page's renderers): the FLOP count, the steps' settings, the
layers that replace Keras's, the rounds and the steal rule on a fake steal counter, the registry
run on this CPU at a tiny size, the trace reduction, and the tables rendered from the committed
H200 results. The climb.py demo itself
(every step of the climb trained on tiny images under JAX) runs in tests/test_snippets_standalone.py."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time

import pytest

from bench import timing
from helpers import ROOT, SNIPPETS, load_benchmark

CLIMB, TORCH = "keras/climb.py", "keras/climb_torch.py"
FIRST = "data/keras-climb-h100.json"  # the climb page reads this file alone
HISTORY = "../gpu/logs/h200-2026-12-02b/train/train-history.json"


@pytest.fixture(autouse=True)
def beside_the_scripts(monkeypatch):
    monkeypatch.syspath_prepend(str(SNIPPETS / "keras"))


# climb.py is imported in a process of its own: it asks for the JAX backend, and this session
# may have started Keras on TensorFlow already.
PROBE = """
import json, numpy as np, jax, jax.numpy as jnp, keras
from climb import OneResample, PoolByReshape, STEPS, settings, train_flop_per_image
x = np.random.default_rng(0).normal(size=(2, 30, 30, 4)).astype("float32")
pool = keras.layers.MaxPooling2D(2)
f = lambda layer: (lambda v: layer(jax.nn.relu(v)).sum())
flat = np.full((3, 16, 16, 3), 7.0, "float32")
image = np.zeros((3, 16, 16, 3), "float32"); image[:, 2:6, 2:6] = 255
try:
    settings("fast"); unknown = "accepted"
except KeyError as exc:
    unknown = str(exc)
print(json.dumps({
    "flop": train_flop_per_image(64), "steps": list(STEPS),
    "settings": {step: settings(step) for step in STEPS}, "unknown": unknown,
    "plain": settings("xla", augment=False)["augment"],
    "pool_same": bool(np.array_equal(PoolByReshape()(x), pool(x))),
    "pool_grad_same": bool(np.array_equal(jax.grad(f(PoolByReshape()))(jnp.asarray(x)),
                                          jax.grad(f(pool))(jnp.asarray(x)))),
    "flat_stays_flat": bool(np.allclose(OneResample(seed=1)(flat, training=True), 7.0, atol=1e-4)),
    "moves": not np.allclose(OneResample(seed=1)(image, training=True), image),
    "inference_untouched": bool(np.array_equal(OneResample()(image, training=False), image))}))
"""


@pytest.fixture(scope="module")
def probe():
    if importlib.util.find_spec("jax") is None:
        pytest.skip("needs jax")
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=SNIPPETS / "keras", env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_flop_count_is_the_layers_multiply_adds(probe):
    conv = 62 * 62 * 32 * 27  # multiply-adds: 62x62 outputs, 32 filters of 3x3x3
    dense = 31 * 31 * 32 * 128 + 128 * 1
    forward = 2 * (conv + dense)
    # weight gradients (one forward each) + input gradients of all but the first layer
    assert probe["flop"] == forward + forward + 2 * dense == 36_903_168


def test_each_step_keeps_the_changes_above_it(probe):
    first, last = probe["settings"]["default"], probe["settings"]["batch4096"]
    assert not any(v for k, v in first.items() if k not in ("batch", "spe", "augment"))
    assert first["batch"] == 256 and last["batch"] == 4096
    assert all(last[k] for k in ("xla", "uint8", "resident", "bf16", "scan", "resample", "pool"))
    resident = probe["settings"]["resident"]
    assert resident["spe"] == 8 and not resident["bf16"]
    assert probe["plain"] is False and "no step" in probe["unknown"]


def test_every_row_is_in_the_registry(probe):
    """Each climb step is one row naming climb.py's trainer at that step, and the climb case
    times its rows in rounds."""
    bench = load_benchmark("keras")
    steps = {v.step: v.measure.args[0] for k, v in bench.VARIANTS.items()
             if v.group == "climb"}
    assert [steps[str(i)] for i in range(1, len(probe["steps"]) + 1)] == probe["steps"]
    climb = bench.CASES["climb"]
    groups = {bench.VARIANTS[k].group for k in climb.variants}  # one process: every row compared
    assert groups == {"climb", "augmentation", "anchor", "cpu"}, groups
    assert {f"climb-{s}" for s in probe["steps"]} | {"torch-compile", "torch-graphs"} <= set(climb.variants)
    assert climb.rounds.rounds >= 3 and climb.rounds.steal_limit == timing.STEAL_LIMIT


def fake_rows(names, ran, slow="", result=0.25):
    def row(name):
        def epoch():
            ran.append(name)
            time.sleep(0.002 if name == slow else 0.0)
            return result
        return epoch
    return {name: row(name) for name in names}


def test_rounds_have_a_floor_a_warm_up_and_the_cpu_rows_last():
    """Each round of a row runs >= per_round calls and >= round_s seconds; at least warm_s
    seconds of uncounted calls of each row first; the second group's rounds after the first's."""
    ran = []
    groups = [fake_rows(["climb-xla", "climb-scan"], ran, slow="climb-xla"),
              fake_rows(["cpu-keras-xla"], ran)]
    spec = timing.Rounds(rounds=3, per_round=4, round_s=0.03, warm_s=0.05)
    got = timing.time_rounds(groups, spec, say=lambda text: None, host=lambda: None)
    for row, r in got.items():
        rounds = r["rounds"]
        assert [g["round"] for g in rounds] == [1, 2, 3]
        assert all(len(g["samples_s"]) >= 4 and g["seconds"] >= 0.03 for g in rounds)
        assert len(r["samples_s"]) == sum(len(g["samples_s"]) for g in rounds)
        assert all(g["counted"] and g["steal"] is None for g in rounds)  # no /proc/stat
        warm_up = ran.count(row) - len(r["samples_s"])
        # >= warm_s, not one call: 0.05 s of 0.002-s calls (3 even if each sleep took 8x)
        assert warm_up >= (3 if row == "climb-xla" else 1)
        assert r["last"] == 0.25
    assert len(got["climb-xla"]["rounds"][0]["samples_s"]) >= 10  # the floor, not the count
    first_cpu = ran.index("cpu-keras-xla")
    assert set(ran[first_cpu:]) == {"cpu-keras-xla"}


def steal_counter(lost):
    """A fake /proc/stat: (steal, total) jiffies, read before and after each round; `lost`:
    the steal jiffies of each round in run order, of 100 a round."""
    lost, reads = iter(lost), {"n": 0, "steal": 0}

    def host_times():
        reads["n"] += 1
        if reads["n"] % 2 == 0:  # the read after a round
            reads["steal"] += next(lost)
        return reads["steal"], 100 * reads["n"]
    return host_times


def test_a_round_the_hypervisor_disturbed_is_set_aside_and_run_again():
    """STEAL_LIMIT: a round whose steal share is above it runs again, at most `retries` times;
    the set-aside round stays in the record and its samples are not counted."""
    # in run order (a1, a1 again, b1, a2, b2 three times) a's first round and every try of b's
    # second lose 5 % to steal, every other round none
    spec = timing.Rounds(rounds=2, per_round=2, round_s=0.0, warm_s=0.0, retries=2)
    got = timing.time_rounds([fake_rows(["a", "b"], [])], spec, say=lambda text: None,
                             host=steal_counter([5, 0, 0, 0, 5, 5, 5]))
    a, b = got["a"], got["b"]
    assert [(g["round"], g["counted"]) for g in a["rounds"]] == [(1, False), (1, True), (2, True)]
    assert a["rounds"][0]["steal"] == 0.05 > timing.STEAL_LIMIT and len(a["samples_s"]) == 4
    # three tries of b's round 2 are all disturbed: the last one counts (retries=2), marked
    assert [(g["round"], g["counted"]) for g in b["rounds"]] == [
        (1, True), (2, False), (2, False), (2, True)]
    assert b["rounds"][-1]["steal"] > timing.STEAL_LIMIT and len(b["samples_s"]) == 4


def test_the_run_sets_aside_at_most_its_budget():
    """`budget`: set-aside rounds in the whole run; past it a disturbed round counts."""
    spec = timing.Rounds(rounds=3, per_round=1, round_s=0.0, warm_s=0.0, retries=2, budget=2)
    got = timing.time_rounds([fake_rows(["a", "b"], [])], spec, say=lambda text: None,
                             host=steal_counter([5] * 12))
    marks = [g["counted"] for r in got.values() for g in r["rounds"]]
    assert marks.count(False) == 2 and len(marks) == 2 + 6


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The climb-smoke case (two rows at 16 x 16, batch 8, two rounds of five epochs) run by
    the runner on this CPU."""
    if importlib.util.find_spec("jax") is None:
        pytest.skip("needs jax")
    out = tmp_path_factory.mktemp("climb") / "climb.json"
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([sys.executable, str(SNIPPETS / "bench/run.py"), "keras", "--cases",
                           "climb-smoke", "--compile-runs", "0", "--output",
                           str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_registry_runs_the_climb_in_rounds_on_the_cpu(smoke, renderers):
    from bench.results import read_results

    doc = read_results(smoke)
    rows = {m["variant"]: m for m in doc["measurements"]}
    assert set(rows) == {"climb-batch4096", "cpu-keras-xla"}
    for key, m in rows.items():
        extra = m["extra"]
        assert m["calls_per_sample"] == 64 and m["params"]["batch_size"] == 8
        assert m["flops"] == 3 * (2 * 14 * 14 * 32 * 27 + 2 * 7 * 7 * 32 * 128 + 256) \
            - 2 * 14 * 14 * 32 * 27  # train_flop_per_image(16)
        assert [r["round"] for r in extra["rounds"] if r["counted"]] == [1, 2]
        assert len(extra["rounds_images_per_s"]) == 2 and m["repeats"] == 10
        assert extra["settings"]["batch"] == 8 and "trace" not in extra
    assert rows["climb-batch4096"]["extra"]["settings"]["scan"]  # every change of the climb
    assert rows["cpu-keras-xla"]["device"] == "cpu"
    assert any("interleaved rounds" in n for n in doc["notes"])
    table = renderers.get("keras_climb")(smoke.parent, path=smoke.name, groups="climb,cpu")
    assert len(table.strip().splitlines()) == 4  # the header, its rule, a row each


def test_pooling_and_resampling_layers_match_keras(probe):
    assert probe["pool_same"] and probe["pool_grad_same"]  # forward and gradient, to the bit
    assert probe["flat_stays_flat"], "a flat image stays flat (reflected edges)"
    assert probe["moves"] and probe["inference_untouched"]


def test_trace_reduction_adds_up():
    from bench.traces import breakdown as reduce
    events = [("conv", 0, 40), ("pool", 30, 30), ("MemcpyH2D", 100, 20), ("conv", 200, 40)]
    got = reduce(events, wall_us=400, steps=2, launches=4)
    assert got["kernels_ms"] == pytest.approx(0.05)  # 0-60 and 200-240, the overlap counted once
    assert got["copies_ms"] == pytest.approx(0.01)
    assert got["busy_ms"] == pytest.approx(0.06) and got["idle_ms"] == pytest.approx(0.14)
    assert got["top"][0] == ["conv", 0.04] and got["launches_per_step"] == 2


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="torch is not in the CPU test environment; climb_torch.py runs on the GPU")
def test_torch_counterpart_demo_trains():
    done = subprocess.run([sys.executable, str(SNIPPETS / TORCH)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("loss "), done.stderr[-2000:]


@pytest.fixture(scope="module")
def renderers():
    import renderers

    return renderers


def test_climb_table_comes_from_the_results_file(renderers):
    docs = ROOT / "docs"
    doc = json.loads((docs / FIRST).read_text())
    rate = {m["variant"]: 1 / m["median_s"] for m in doc["measurements"]}
    table = renderers.get("keras_climb")(docs, path=FIRST, groups="climb,anchor,cpu")
    lines = table.strip().splitlines()
    shown = [k for k, v in doc["variants"].items()
             if v["group"] in ("climb", "anchor", "cpu") and k in rate]
    assert len(lines) == 2 + len(shown)  # the header, its rule, one row each
    second = next(line for line in lines if line.startswith("| 2 |"))
    assert f"**{rate['climb-xla']:,.0f}**" in second
    assert second.endswith(f"| {rate['climb-xla'] / rate['climb-default']:.2f}× |")
    value = renderers.get_value
    assert renderers.get_value("cell")(docs, FIRST, "{per_s[images]:,.0f}",
                                       "variant=climb-batch4096") \
        == f"{rate['climb-batch4096']:,.0f}"  # as the page asks for a rate
    ratio = rate["climb-batch4096"] / rate["torch-compile"]
    assert value("keras.over")(docs, "climb-batch4096", "torch-compile", path=FIRST) == f"{ratio:.1f}×"
    spread = {m["variant"]: max(r) / min(r) for m in doc["measurements"]
              for r in [m["extra"]["rounds_images_per_s"]]}
    widest = max(spread, key=spread.get)
    assert value("keras.rounds")(docs, "widest", path=FIRST).startswith(f"{spread[widest]:.2f} (“")
    assert value("keras.rounds")(docs, "within15", path=FIRST) == \
        f"{sum(v <= 1.15 for v in spread.values())} of {len(spread)} rows within 1.15"


def test_step_time_table_adds_up(renderers):
    docs = ROOT / "docs"
    table = renderers.get("keras_step_time")(docs, path=FIRST,
                                             variants="climb-resample,torch-compile")
    rows = [line.split(" | ") for line in table.strip().splitlines()[2:]]
    assert len(rows) == 2
    for cells in rows:
        step, kernels, idle = float(cells[2]), float(cells[3]), float(cells[5])
        assert kernels <= step and 0 <= idle <= step


def test_train_history_facts(renderers):
    docs = ROOT / "docs"
    history = json.loads((docs / HISTORY).read_text())
    fact = renderers.get_value("keras.history")
    seconds = sorted(e["seconds"] for e in history["epochs"][1:])
    median = seconds[len(seconds) // 2] if len(seconds) % 2 else sum(
        seconds[len(seconds) // 2 - 1:len(seconds) // 2 + 1]) / 2
    assert fact(docs, path=HISTORY, fact="steady") == f"{history['images']['train'] / median:,.0f}"
    first = renderers.get_value("cell")(docs, HISTORY, "{seconds:.1f}", key="epochs")
    assert first == f"{history['epochs'][0]['seconds']:.1f}"


def test_the_pages_reading_of_the_noisy_rows_holds():
    """climb.md's Noise paragraph: the rows outside 1.15 are steps 1 to 3 and step 2 without
    augmentation, all host-bound (the GPU busy under 80 % of a step), and PyTorch's CPU row
    (no GPU: no busy share); no round lost more than
    the steal limit (none set aside), so steal explains none; every row with the GPU busy at
    least 80 % of a step agrees within 1.05, but PyTorch's batch-1,024 row (its Python loop),
    which stays within 1.15."""
    doc = json.loads((ROOT / "docs/data/keras-climb-h100.json").read_text())
    limit, outside = timing.STEAL_LIMIT, {}
    for m in doc["measurements"]:
        rounds = [r for r in m["extra"]["rounds"] if r["counted"]]
        rates = [r["images_per_s"] for r in rounds]
        busy = m["extra"].get("trace", {}).get("gpu_busy")
        if max(rates) / min(rates) > 1.15:
            outside[m["variant"]] = busy
        if busy is not None and busy >= 0.8:
            bound = 1.15 if m["variant"] == "torch-compile" else 1.05
            assert max(rates) / min(rates) <= bound, m["variant"]
        assert all(r["counted"] and r["steal"] <= limit for r in m["extra"]["rounds"]), m["variant"]
    assert set(outside) == {"climb-default", "climb-xla", "climb-uint8", "plain-xla",
                            "cpu-torch"}, outside
    assert outside.pop("cpu-torch") is None and all(b < 0.8 for b in outside.values()), outside


def test_climb_on_another_backend_is_one_line():
    """An exported KERAS_BACKEND wins over climb.py's default; its demo then needs JAX and says
    so in one line (it used to train a step and end in a JAX traceback). Keras's numpy backend
    stands in for TensorFlow here: it starts in a second, and the check is the same."""
    proc = subprocess.run([sys.executable, str(SNIPPETS / CLIMB)], capture_output=True, text=True,
                          timeout=120, cwd=SNIPPETS / "keras",
                          env={**os.environ, "KERAS_BACKEND": "numpy"})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "climb.py runs on JAX, not numpy: run it with KERAS_BACKEND=jax"
