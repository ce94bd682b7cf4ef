"""ML accelerators, frameworks: the same network in TensorFlow (run here), PyTorch and JAX
(run where installed), Keras 3, and the training-step benchmark."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from conftest import SNIPPETS, load_snippet

sys.path.insert(0, str(SNIPPETS))
from bench.results import load_results  # noqa: E402

TF = "frameworks/train_tensorflow.py"
TORCH = "frameworks/train_pytorch.py"
JAX = "frameworks/train_jax.py"
KERAS = "frameworks/train_keras.py"
BENCH = "frameworks/bench_frameworks.py"


@pytest.fixture(scope="module")
def tfmod():
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    return load_snippet(TF)


def losses(mod, mode, steps=40):
    x, y = mod.make_data()
    trainer = mod.build(mode=mode)
    return [loss for _, loss in mod.train(trainer, x, y, steps, 128, log_every=1)]


def test_tensorflow_modes_do_the_same_arithmetic(tfmod):
    eager = losses(tfmod, "eager")
    for mode in ("function", "xla"):
        np.testing.assert_allclose(losses(tfmod, mode), eager, rtol=2e-4, atol=1e-5)
    assert eager[-1] < 0.7 * eager[0]


def test_tensorflow_script_trains_and_checks_itself(tfmod, capsys):
    assert tfmod.main(["--steps", "100"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "OK: the loss fell and the accuracy passed the threshold"
    assert "TensorFlow" in out and ("(function, cpu)" in out or "(function, gpu)" in out)


def test_tensorflow_script_fails_when_training_does_not_converge(tfmod, capsys):
    assert tfmod.main(["--steps", "1", "--min-accuracy", "1"]) == 1
    assert "error: training did not converge" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--steps", "0"], ["--mode", "turbo"], ["--min-accuracy", "2"],
                                  ["--width", "x"]])
def test_tensorflow_script_rejects_bad_arguments(tfmod, capsys, args):
    with pytest.raises(SystemExit) as exc:
        tfmod.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:")


def test_every_version_starts_from_the_same_data_and_weights(tfmod):
    keras_mod = load_snippet(KERAS)
    x1, y1 = tfmod.make_data()
    x2, y2 = keras_mod.make_data()
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    assert 0.4 < y1.mean() < 0.6  # the two classes are balanced
    for a, b in zip(tfmod.init_weights(64), keras_mod.init_weights(64)):
        np.testing.assert_array_equal(a, b)
    # the other frameworks' copies of these helpers must not drift apart
    src = (SNIPPETS / TF).read_text()
    for path in (TORCH, JAX, KERAS):
        text = (SNIPPETS / path).read_text()
        for fn in ("make_data", "init_weights"):
            body = src[src.index(f"def {fn}"):].split("\n\n\n")[0].split('"""', 2)[2]
            assert body.strip() in text, f"{path}: {fn} differs from {TF}"


def test_keras_on_tensorflow(tfmod, capsys):
    keras_mod = load_snippet(KERAS)
    assert keras_mod.main(["--backend", "tensorflow", "--epochs", "3"]) == 0
    assert "Keras 3" in capsys.readouterr().out


def test_keras_refuses_a_second_backend_in_one_process(tfmod, capsys):
    keras_mod = load_snippet(KERAS)
    keras_mod.import_keras("tensorflow")
    assert keras_mod.main(["--backend", "jax", "--epochs", "1"]) == 1
    err = capsys.readouterr().err
    assert "already running on 'tensorflow'" in err and "Traceback" not in err


def test_pytorch_version_trains():
    pytest.importorskip("torch", reason="PyTorch is not installed on this machine (the GPU run covers it)")
    mod = load_snippet(TORCH)
    assert mod.main(["--steps", "100"]) == 0


def test_jax_version_trains_and_matches_tensorflow(tfmod):
    pytest.importorskip("jax", reason="JAX is not installed on this machine (the GPU run covers it)")
    mod = load_snippet(JAX)
    np.testing.assert_allclose(losses(mod, "jit", 20), losses(tfmod, "function", 20), rtol=1e-3)


def test_benchmark_writes_a_valid_results_file(tfmod, tmp_path, capsys):
    bench = load_snippet(BENCH)
    out = tmp_path / "fw.json"
    assert bench.main(["--frameworks", "tensorflow", "--sizes", "small", "--repeats", "2",
                       "--out", str(out)]) == 0
    doc = load_results(out)
    variants = {(m["variant"], m["phase"]) for m in doc["measurements"]}
    assert variants == {(f"tensorflow_{mode}", phase) for mode in ("eager", "function", "xla")
                        for phase in ("compile_first", "end_to_end")}
    for m in doc["measurements"]:
        assert m["error"]["value"] < 1  # the loss fell during the timed steps
        assert m["flops"] == bench.flops_per_step(64, 128)
    assert json.loads(out.read_text())["benchmark"] == "frameworks"


def test_benchmark_notes_frameworks_that_are_missing(tfmod, capsys, monkeypatch):
    bench = load_snippet(BENCH)
    monkeypatch.setitem(bench.MODULES, "jax", "no_such_module_for_this_test")
    mod, why = bench.load("jax")
    assert mod is None and "not installed" in why and "skipped" in why


@pytest.mark.parametrize("args", [["--frameworks", "caffe"], ["--sizes", "huge"],
                                  ["--repeats", "0"]])
def test_benchmark_rejects_bad_arguments(capsys, args):
    bench = load_snippet(BENCH)
    with pytest.raises(SystemExit) as exc:
        bench.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:")
