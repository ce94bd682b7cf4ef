"""Cats vs dogs on the CPU: the CNN learns generated data, resumes after a stop, reloads, predicts."""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys

import numpy as np
import pytest

from conftest import ROOT, load_snippet

TRAIN = "keras/train.py"
PREDICT = "keras/predict.py"
MAKE = "keras/make_dataset.py"
MODEL = "keras/model.py"
BENCH = "keras/bench_training.py"
pytestmark = pytest.mark.filterwarnings(  # raised inside Keras' TensorFlow backend, not here
    "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning")
IMAGES, SIZE, BATCH = 100, 32, 16  # per class; 160 train + 40 validation images


def call(relpath: str, *args) -> tuple[int, str, str]:
    """main() of a snippet in this process (TensorFlow starts once per test session)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = load_snippet(relpath).main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Train 3 epochs (a run stopped after epoch 3), then rerun asking for 6."""
    root = tmp_path_factory.mktemp("cats-vs-dogs")
    load_snippet(MAKE).write_dataset(root / "data", images=IMAGES, size=SIZE)
    common = [root / "data", "--output-dir", root / "run", "--image-size", SIZE,
              "--batch-size", BATCH]
    first = call(TRAIN, *common, "--epochs", 3)
    after_first = json.loads((root / "run" / "history.json").read_text())["epochs"]
    second = call(TRAIN, *common, "--epochs", 6)
    history = json.loads((root / "run" / "history.json").read_text())
    return {"root": root, "first": first, "second": second, "after_first": after_first,
            "history": history}


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


def test_predict_labels_unseen_images(runs):
    fresh = runs["root"] / "fresh"
    load_snippet(MAKE).write_dataset(fresh, images=10, size=SIZE, seed=99)
    code, out, err = call(PREDICT, runs["root"] / "run" / "best.keras", fresh)
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

    images = sorted((runs["root"] / "data" / "cats").iterdir())[:2]
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
    code, out, _ = call(MODEL, "--image-size", 64)
    assert code == 0 and "OK: convolution output (62, 62, 32), 3,937,409 parameters" in out


def test_article_spelling_now_means_stride_3():
    import keras

    layer = keras.layers.Convolution2D(32, 3, 3)  # the article's Convolution2D(32, 3, 3)
    assert layer.strides == (3, 3)
    assert layer.compute_output_shape((None, 64, 64, 3)) == (None, 21, 21, 32)


def test_benchmark_writes_a_valid_results_file(tmp_path):
    sys.path.insert(0, str(ROOT / "snippets"))
    from bench.results import load_results

    code, out, err = call(BENCH, "--images", 128, "--batch-sizes", 16, 32, "--repeats", 2,
                          "--warmup", 0, "--image-size", SIZE, "--scaling",
                          "-o", tmp_path / "r.json")
    assert code == 0, out + err
    doc = load_results(tmp_path / "r.json")
    timed = [m for m in doc["measurements"] if m["phase"] == "end_to_end"]
    assert [m["params"]["batch_size"] for m in timed] == [16, 32]
    assert all(m["device"] == "cpu" and m["work"]["images_per_s"] > 0 for m in timed)
    assert any("scaling not measured" in n for n in doc["notes"])
    code, out, _ = call(BENCH, "--merge", tmp_path / "r.json", tmp_path / "r.json",
                        "-o", tmp_path / "all.json")
    assert code == 0 and len(load_results(tmp_path / "all.json")["measurements"]) == 8


@pytest.fixture(scope="module")
def renderers():
    sys.path.insert(0, str(ROOT / "hooks"))
    import renderers

    return renderers


def test_history_chart_renders_the_committed_example(renderers):
    html = renderers.get("keras_history")(ROOT / "docs", path="data/keras-history-example.json")
    assert html.startswith('<figure class="data-chart"><img alt="Training and validation')
    assert "data:image/svg+xml;base64," in html


def test_throughput_table_ratios(renderers, tmp_path):
    def row(device, devices, batch, seconds):
        return {"case": "train_epoch", "variant": f"v{device}{devices}", "device": device,
                "phase": "end_to_end", "median_s": seconds, "min_s": seconds,
                "max_s": seconds, "repeats": 10, "work": {"images": 1000},
                "params": {"batch_size": batch, "devices": devices, "backend": "jax",
                           "images_per_epoch": 1000},
                "error": {"metric": "x", "value": 0.0}}

    doc = json.loads((ROOT / "docs/data/keras-training.json").read_text())
    doc["system"]["gpus"] = [{"name": "Test GPU"}]
    doc["measurements"] = [row("cpu", 1, 32, 1.0), row("gpu", 1, 32, 0.1),
                           row("gpu", 2, 32, 0.08)]
    (tmp_path / "r.json").write_text(json.dumps(doc))
    table = renderers.get("keras_throughput")(tmp_path, path="r.json")
    assert "| 1 × GPU | 32 | 1,000 × 10 | **10,000** |" in table
    assert "Keras backend jax" in table
    assert "| 10.0× | 1.00× |" in table and "| 12.5× | 1.25× |" in table
    assert "No GPU figures yet" not in table
    committed = renderers.get("keras_throughput")(ROOT / "docs", path="data/keras-training.json")
    assert "| CPU |" in committed


def test_damaged_jpeg_found_during_training_is_named(tmp_path):
    # The header is intact, so the up-front check passes; TensorFlow fails to decode the pixels.
    load_snippet(MAKE).write_dataset(tmp_path / "data", images=6, size=SIZE)
    damaged = tmp_path / "data" / "cats" / "cat.3.jpg"
    data = damaged.read_bytes()
    damaged.write_bytes(data[: len(data) * 2 // 3])
    code, _, err = call(TRAIN, tmp_path / "data", "--output-dir", tmp_path / "run",
                        "--image-size", SIZE, "--epochs", 1)
    assert code == 1
    assert err == f"error: TensorFlow could not decode {damaged}; delete or replace it\n"
