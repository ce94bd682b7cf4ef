"""Cats vs dogs on the CPU: the CNN learns generated data, resumes after a stop, reloads, predicts,
under the TensorFlow and the JAX backends (the H200 runs use JAX)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

from helpers import ROOT, SNIPPETS, load_benchmark, load_snippet, run_snippet

TRAIN, PREDICT, MAKE, MODEL = (f"keras/{name}.py" for name in (
    "train", "predict", "make_dataset", "model"))
HAS_JAX = importlib.util.find_spec("jax") is not None
NEEDS_JAX = pytest.mark.skipif(not HAS_JAX, reason="jax is not installed (pip install jax)")
NEEDS_TORCH = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="torch is not installed here (pip install torch)")
BACKENDS = ["tensorflow", pytest.param("jax", marks=NEEDS_JAX),
            pytest.param("torch", marks=NEEDS_TORCH)]
# Tests whose subject does not depend on the backend run once, on the one that starts fastest
# (a process under JAX never imports TensorFlow).
ANY = "jax" if HAS_JAX else "tensorflow"
pytestmark = pytest.mark.filterwarnings(  # raised inside Keras' TensorFlow backend, not here
    "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning")
IMAGES, SIZE, BATCH = 100, 32, 16  # per class; 160 train + 40 validation images


@pytest.fixture(autouse=True)
def beside_the_scripts(monkeypatch):
    """model.py is imported by train.py from its own folder, as when a reader runs the script."""
    monkeypatch.syspath_prepend(str(SNIPPETS / "keras"))


def call(relpath: str, *args) -> tuple[int, str, str]:
    """main() of a snippet in this process (TensorFlow starts once per test session)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = load_snippet(relpath).main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


# As if not installed: the import fails and sys.modules never holds the name (Keras checks that).
HIDE_TF = """
import os, runpy, sys
class Hidden:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "torch"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hidden())
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def backend_run(backend: str, relpath: str, *args, hide_tf: bool = False) -> tuple[int, str, str]:
    """A snippet as a reader runs it, under KERAS_BACKEND=backend (one backend per process);
    with hide_tf, as on a machine without TensorFlow and PyTorch (HIDE_TF)."""
    env = {**os.environ, "KERAS_BACKEND": backend, "JAX_PLATFORMS": "cpu",
           "TF_CPP_MIN_LOG_LEVEL": "2"}
    if hide_tf:
        done = subprocess.run([sys.executable, "-c", HIDE_TF, str(SNIPPETS / relpath),
                               *map(str, args)], capture_output=True, text=True, env=env,
                              timeout=600, cwd=ROOT)
    else:
        done = run_snippet(relpath, *map(str, args), env=env, timeout=600)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module", params=BACKENDS)
def runs(request, tmp_path_factory):
    """Train 3 epochs (a run stopped after epoch 3), then rerun asking for 6. Under JAX the
    first run has TensorFlow hidden (test_train_runs_on_jax_without_tensorflow)."""
    backend = request.param
    root = tmp_path_factory.mktemp(f"cats-vs-dogs-{backend}")
    load_snippet(MAKE).write_dataset(root / "data", images=IMAGES, size=SIZE)
    common = [root / "data", "--output-dir", root / "run", "--image-size", SIZE,
              "--batch-size", BATCH]
    first = backend_run(backend, TRAIN, *common, "--epochs", 3, hide_tf=backend == "jax")
    after_first = json.loads((root / "run" / "history.json").read_text())["epochs"]
    second = backend_run(backend, TRAIN, *common, "--epochs", 6)
    history = json.loads((root / "run" / "history.json").read_text())
    return {"root": root, "first": first, "second": second, "after_first": after_first,
            "history": history, "backend": backend}


def test_first_run_trains_epochs_1_to_3(runs):
    code, out, err = runs["first"]
    assert code == 0, err
    assert [f"Epoch {i}/3" in out for i in (1, 2, 3)] == [True] * 3
    assert [e["epoch"] for e in runs["after_first"]] == [1, 2, 3]


def test_rerun_resumes_and_runs_only_epochs_4_to_6(runs):
    code, out, err = runs["second"]
    assert code == 0, err
    assert "resuming after epoch 3" in out
    assert [f"Epoch {i}/6" in out for i in range(1, 7)] == [False] * 3 + [True] * 3
    epochs = runs["history"]["epochs"]
    assert [e["epoch"] for e in epochs] == [1, 2, 3, 4, 5, 6]
    assert epochs[:3] == runs["after_first"]  # the finished epochs were not redone


def test_optimizer_state_survives_the_restart(runs):
    import keras

    last = keras.models.load_model(runs["root"] / "run" / "last.keras")
    steps_per_epoch = math.ceil(IMAGES * 2 * 0.8 / BATCH)
    assert int(last.optimizer.iterations.numpy()) == 6 * steps_per_epoch


def test_model_learned_well_above_chance(runs):
    best = max(e["val_accuracy"] for e in runs["history"]["epochs"])
    assert best >= 0.8, runs["history"]["epochs"]
    assert "reloads and scores val_accuracy" in runs["second"][1]  # train.py's own check


def test_history_names_the_backend(runs):
    assert runs["history"]["backend"] == runs["backend"]


def test_predict_labels_unseen_images(runs):
    fresh = runs["root"] / "fresh"
    load_snippet(MAKE).write_dataset(fresh, images=10, size=SIZE, seed=99)
    code, out, err = backend_run(runs["backend"], PREDICT, runs["root"] / "run" / "best.keras",
                                 fresh)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 21 and all(": cat (P(dog) = " in x or ": dog (P(dog) = " in x
                                    for x in lines[:20])
    agree, total = (int(w) for w in lines[-1].split()[0:3:2])
    assert total == 20 and agree >= 16, out


def test_predict_threshold_is_the_articles(runs):
    mod = load_snippet(PREDICT)

    class Fixed:  # a stand-in model with known outputs
        input_shape = (None, SIZE, SIZE, 3)

        def predict(self, batch, **kwargs):
            return np.array([[0.5], [0.4999]])[: len(batch)]

    paths = sorted((runs["root"] / "data" / "cats").iterdir())[:2]
    images = [mod.load_rgb(path)[0] for path in paths]
    assert [label for label, _ in mod.predict(Fixed(), images)] == ["dog", "cat"]


def test_saved_model_reloads_and_predicts_the_same(tmp_path):
    import keras

    model_mod = load_snippet(MODEL)
    keras.utils.set_random_seed(3)
    model = model_mod.compile_model(model_mod.build_model(SIZE))
    x = np.random.default_rng(0).uniform(0, 255, (8, SIZE, SIZE, 3)).astype("float32")
    model.fit(x, np.arange(8) % 2, epochs=1, verbose=0)
    model.save(tmp_path / "m.keras")
    again = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))
    assert int(again.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy())


def test_model_is_the_articles_with_stride_1():
    _, out, _ = call(MODEL, "--image-size", 64)
    assert "OK: convolution output (62, 62, 32), 3,937,409 parameters" in out


def test_article_spelling_now_means_stride_3():
    import keras

    layer = keras.layers.Convolution2D(32, 3, 3)  # the article's Convolution2D(32, 3, 3)
    assert layer.strides == (3, 3)
    assert layer.compute_output_shape((None, 64, 64, 3)) == (None, 21, 21, 32)


def test_benchmark_runs_on_the_runner(tmp_path):
    from bench.results import read_results

    from bench import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run.main(load_benchmark("keras").BENCHMARK, [
            "--cases", "cpu-smoke", "--repeats", "2", "--warmup", "0", "--compile-runs", "0",
            "--output", str(tmp_path / "r.json")])
    assert code == 0, out.getvalue() + err.getvalue()
    doc = read_results(tmp_path / "r.json")
    rows = [m for m in doc["measurements"] if m["case"] == "cpu-smoke"]
    assert [(m["variant"], m["device"]) for m in rows] == [("cpu-float32", "cpu")]
    assert rows[0]["work"]["images"] == 1 and rows[0]["calls_per_sample"] % 64 == 0  # per image
    assert math.isfinite(rows[0]["error"]["value"])
    assert doc["quick_check"] is True
    assert doc["variants"]["cpu-float32"]["label"] == "CPU, float32"  # the registry's label


def test_benchmark_check_catches_a_step_without_xla():
    bench = load_benchmark("keras")
    ref = bench.reference({"settings": {"xla": True, "augment": True}})
    good = {"loss": 0.6, "jit_compile": True, "device": "{CudaDevice(id=0)}", "devices": 1,
            "backend": "jax"}  # check() is plain Python: no JAX needed
    assert not bench.check("gpu-float32", {**good, "jit_compile": False}, ref)["ok"]
    assert not bench.check("cpu-float32", good, ref)["ok"]  # trained on the wrong device
    assert not bench.check("gpu2-float32", good, ref)["ok"]  # one device, not two
    two = {**good, "device": "{CudaDevice(id=0), CudaDevice(id=1)}", "devices": 2}
    assert bench.check("gpu2-float32", two, ref)["ok"]
    assert bench.check("gpu-float32", good, ref)["ok"]
    assert not bench.check("gpu-float32", {**good, "loss": float("nan")}, ref)["ok"]


DATA_PARALLEL = """
import dataclasses, importlib.util, sys
spec = importlib.util.spec_from_file_location("kb", sys.argv[1])
kb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kb)
params = kb.CASES["cpu-smoke"].params
row = dataclasses.replace(kb.VARIANTS["gpu2-float32"].measure, device="cpu2")  # as gpu2 does
result = row.prepare(kb.images(params["images"], params["image_size"]), params).run()
print(result["devices"], kb.check("cpu2-float32", result, kb.reference(params))["ok"])
"""


@NEEDS_JAX
def test_benchmark_data_parallel_path_on_two_fake_cpus():
    # The path the two-GPU case takes (keras.distribution.DataParallel), on two CPU "devices".
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
           "PYTHONPATH": os.pathsep.join([str(SNIPPETS), str(SNIPPETS / "keras")])}
    done = subprocess.run([sys.executable, "-c", DATA_PARALLEL, str(SNIPPETS / "keras/benchmark.py")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2", "True"]


@pytest.fixture(scope="module")
def renderers():
    import sys

    import renderers

    return renderers


def test_history_chart_renders_the_committed_example(renderers):
    html = renderers.get("keras_history")(ROOT / "docs", path="data/keras-history-example.json",
                                          alt="the curves")
    assert html.startswith('<figure class="data-chart">') and 'alt="the curves"' in html
    assert "data:image/svg+xml;base64," in html
    best = renderers.get_value("cell")(ROOT / "docs", "data/keras-history-example.json",
                                       "{val_accuracy:.3f}", sort="-val_accuracy", key="epochs")
    assert best == "1.000"




@NEEDS_JAX
def test_train_runs_on_jax_without_tensorflow(runs):
    """The JAX runs' first run had TensorFlow and PyTorch hidden: train.py needs neither."""
    if runs["backend"] != "jax":
        pytest.skip("the first JAX run is the one without TensorFlow")
    code, out, err = runs["first"]
    assert code == 0, err[-2000:]
    assert "backend jax" in out and "reloads and scores" in out


# A real Ctrl-C (SIGINT) the moment best.keras (or its staged copy) has been written, before
# last.keras and history.json: the three files must still describe the same epochs.
SIGINT_AT_BEST = """
import os, runpy, signal, sys
real_replace = os.replace
def replace(src, dst):
    real_replace(src, dst)
    if os.path.basename(dst).startswith("best") and not os.environ.get("SENT"):
        os.environ["SENT"] = "1"
        os.kill(os.getpid(), signal.SIGINT)
os.replace = replace
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def agreeing_files(out) -> int:
    """The epochs that history.json, last.keras and best.keras all describe."""
    import hashlib

    doc = json.loads((out / "history.json").read_text())
    epochs = doc["epochs"]
    best = max(epochs, key=lambda e: e["val_accuracy"])["epoch"]
    for name, epoch in (("last.keras", len(epochs)), ("best.keras", best)):
        record = doc["models"][name]
        assert record["epoch"] == epoch, (name, record, epochs)
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == record["sha256"], name
    return len(epochs)


def test_ctrl_c_between_the_saves_leaves_files_that_agree(runs, tmp_path):
    if runs["backend"] != ANY:
        pytest.skip("the save order does not depend on the backend")
    out = tmp_path / "run"
    env = {**os.environ, "KERAS_BACKEND": ANY, "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2"}
    args = [str(runs["root"] / "data"), "--output-dir", str(out), "--image-size", str(SIZE),
            "--batch-size", str(BATCH), "--epochs", "2"]
    done = subprocess.run([sys.executable, "-c", SIGINT_AT_BEST, str(SNIPPETS / TRAIN), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 130, done.stderr[-2000:]
    said = done.stderr.strip().splitlines()[-1]
    assert "Traceback" not in done.stderr and said.startswith("interrupted after epoch ")
    assert agreeing_files(out) == int(said.split()[3])  # the epoch the message names
    resumed = backend_run(ANY, TRAIN, *args)
    assert resumed[0] == 0, resumed[2]
    assert agreeing_files(out) == 2


def test_full_disk_is_one_line_and_keeps_the_saved_epochs(runs, tmp_path):
    if runs["backend"] != ANY:
        pytest.skip("the write path does not depend on the backend")
    out = tmp_path / "run"
    shutil.copytree(runs["root"] / "run", out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def small_disk():  # writes past 1 MB fail with EFBIG, as on a full disk with ENOSPC
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    env = {**os.environ, "KERAS_BACKEND": ANY, "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = run_snippet(TRAIN, runs["root"] / "data", "--output-dir", out, "--image-size", SIZE,
                       "--batch-size", BATCH, "--epochs", 7, env=env, timeout=600,
                       preexec_fn=small_disk)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: cannot write {out / 'last.next.keras'}: File too large"), last
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing changed or left
    assert agreeing_files(out) == 6


def test_a_reader_gone_from_stdout_does_not_stop_the_training(runs, tmp_path):
    """`train.py ... | head -1`: the progress lines go nowhere, the epochs are trained and saved."""
    if runs["backend"] != ANY:
        pytest.skip("stdout does not depend on the backend")
    from helpers import run_to

    out = tmp_path / "run"
    shutil.copytree(runs["root"] / "run", out)
    env = {**os.environ, "KERAS_BACKEND": ANY, "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = run_to("closed pipe", TRAIN, runs["root"] / "data", "--output-dir", out,
                  "--image-size", SIZE, "--batch-size", BATCH, "--epochs", 7, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert agreeing_files(out) == 7
