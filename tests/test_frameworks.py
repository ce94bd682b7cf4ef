"""ML accelerators, frameworks (docs/accelerators/frameworks.md, snippets/frameworks/): the same
network in TensorFlow and JAX (run here), PyTorch (skipped: not installed in CI), Keras 3 on
TensorFlow and JAX, data-parallel/FSDP/bf16 training in JAX, the task they share (task.py), the
benchmark registered with the runner. The samples are lessons: their command lines are plain
argparse, not tested here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from helpers import ROOT, SNIPPETS, load_benchmark, load_snippet

TF, TORCH, JAX, KERAS = (f"frameworks/train_{name}.py" for name in
                         ("tensorflow", "pytorch", "jax", "keras"))
PAR_JAX, PAR_TORCH = "frameworks/parallel_jax.py", "frameworks/parallel_pytorch.py"
NO_TORCH = "PyTorch is not installed in CI (too large a download); the GPU run covers it"
HAS_TORCH = importlib.util.find_spec("torch") is not None


@pytest.fixture(scope="module", autouse=True)
def task():
    """task.py, imported by the scripts from beside them (as when a reader runs one)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(SNIPPETS / "frameworks"))
        yield importlib.import_module("task")


# the training files, each imported once per module (TensorFlow starts once)
tfmod = pytest.fixture(scope="module")(lambda task: load_snippet(TF))
jaxmod = pytest.fixture(scope="module")(lambda task: load_snippet(JAX))


def losses(task, mod, mode, steps=40):
    x, y = task.make_data()
    return [loss for _, loss in task.train(mod.Trainer(mode=mode), x, y, steps, 128, log_every=1)]


def run(path, *args, env=None, timeout=600):
    return subprocess.run([sys.executable, str(SNIPPETS / path), *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)


def test_tensorflow_modes_do_the_same_arithmetic(task, tfmod):
    eager = losses(task, tfmod, "eager")
    for mode in ("function", "xla"):
        np.testing.assert_allclose(losses(task, tfmod, mode), eager, rtol=2e-4, atol=1e-5)
    assert eager[-1] < 0.7 * eager[0]


def test_tensorflow_script_trains_and_checks_itself(tfmod, capsys):
    assert tfmod.main(["--steps", "100"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "OK: the loss fell and the accuracy passed the threshold"
    assert "TensorFlow" in out and ("(function, cpu)" in out or "(function, gpu)" in out)


def test_tensorflow_script_fails_when_training_does_not_converge(tfmod, capsys):
    assert tfmod.main(["--steps", "1", "--min-accuracy", "1"]) == 1
    assert "error: training did not converge" in capsys.readouterr().err


def test_jax_modes_agree_and_match_tensorflow(task, tfmod, jaxmod):
    jit = losses(task, jaxmod, "jit", 20)
    np.testing.assert_allclose(losses(task, jaxmod, "eager", 20), jit, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(jit, losses(task, tfmod, "function", 20), rtol=1e-3)


def test_jax_script_trains_and_checks_itself(jaxmod, capsys):
    assert jaxmod.main(["--steps", "100"]) == 0
    out = capsys.readouterr().out
    assert "JAX" in out and "(jit, " in out and out.splitlines()[-1].startswith("OK:")


def test_every_version_learns_the_same_task_from_the_same_start(task, tfmod):
    x, y = task.make_data()
    assert x.shape == (4096, 2) and x.dtype == y.dtype == np.float32
    assert 0.4 < y.mean() < 0.6  # the two classes are balanced
    np.testing.assert_array_equal(y, x[:, 0] * x[:, 1] > 0)
    weights = task.init_weights(64)
    assert [w.shape for w in weights] == [(2, 64), (64,), (64, 64), (64,), (64, 1), (1,)]
    assert all(np.abs(w).max() <= np.sqrt(6 / sum(w.shape)) for w in weights[0::2])  # Glorot
    assert not any(b.any() for b in weights[1::2])  # zero biases
    for a, b in zip(weights, task.init_weights(64)):
        np.testing.assert_array_equal(a, b)  # the same start on every call
    # TensorFlow's variables hold exactly these numbers
    for variable, w in zip(tfmod.Trainer().params, weights):
        np.testing.assert_array_equal(variable.numpy(), w)
    # and every script takes them from task.py instead of a copy of its own that could drift
    for path in (TF, TORCH, JAX, KERAS, PAR_JAX, PAR_TORCH):
        text = (SNIPPETS / path).read_text()
        assert "import task" in text and "def make_data" not in text and "def init_weights" not in text


def test_start_loss_is_every_frameworks_loss_before_training(task, tfmod, jaxmod):
    """task.start_loss (the benchmark's reference), in float64 NumPy, is the loss each trainer
    computes on its starting weights, to float32 rounding."""
    x, y = task.make_data()
    start = task.start_loss(64, x, y)
    assert 0.6 < start < 0.8
    for mod in (tfmod, jaxmod):
        trainer = mod.Trainer(width=64)
        assert abs(trainer.evaluate(*trainer.put(x, y))[0] - start) < 1e-5
    assert abs(task.start_loss(64, x, 1 - y) - start) > 1e-3  # it depends on the labels


def test_check_fails_unless_the_loss_fell_and_the_accuracy_passed(task, capsys):
    assert task.check("X", (0.7, 0.5), (0.1, 0.9), 0.85) == 0
    assert task.check("X", (0.7, 0.5), (0.8, 0.9), 0.85) == 1  # the loss rose
    assert task.check("X", (0.7, 0.5), (0.1, 0.8), 0.85) == 1  # accuracy below the threshold
    out = capsys.readouterr()
    assert out.out.count("OK:") == 1 and out.err.count("error: training did not converge") == 2


def test_keras_on_tensorflow(task, tfmod, capsys):
    keras_mod = load_snippet(KERAS)
    assert keras_mod.main(["--backend", "tensorflow", "--epochs", "3"]) == 0
    assert "Keras 3" in capsys.readouterr().out
    keras = keras_mod.import_keras("tensorflow")
    for got, want in zip(keras_mod.build_model(keras).get_weights(), task.init_weights(64)):
        np.testing.assert_array_equal(got, want)  # the same start as the native versions


def test_keras_on_jax_in_its_own_process():
    """The command docs/accelerators/frameworks.md shows (its block is skipped: this runs it)."""
    proc = run(KERAS, "--backend", "jax", "--epochs", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "on jax" in proc.stdout and proc.stdout.strip().endswith("threshold")


def test_keras_refuses_a_second_backend_in_one_process(tfmod):
    keras_mod = load_snippet(KERAS)
    keras_mod.import_keras("tensorflow")
    with pytest.raises(RuntimeError, match="already running on 'tensorflow'"):
        keras_mod.main(["--backend", "jax", "--epochs", "1"])


def test_data_parallel_and_fsdp_match_one_device_in_jax():
    proc = run(PAR_JAX, "--steps", "60")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = {line.split("  ")[0].strip() + " " + line.split()[2]: line
             for line in proc.stdout.splitlines() if "final loss" in line}
    assert len(lines) == 6, proc.stdout
    nbytes = {k: int(v.rsplit(" ", 1)[1].replace(",", "")) for k, v in lines.items()}
    n_dev = int(proc.stdout.split(":")[1].split()[0])
    assert n_dev >= 2  # the script's own XLA_FLAGS gave it several CPU devices
    # fully sharded: device 0 keeps about 1/n of the parameters; data parallel keeps them all
    assert nbytes["data parallel float32"] == nbytes["one device float32"]
    assert nbytes["fully sharded float32"] < 0.6 * nbytes["data parallel float32"]
    assert proc.stdout.strip().splitlines()[-1].startswith("OK:")


def test_parallel_jax_sharding_rule():
    par = load_snippet(PAR_JAX)
    assert par.param_spec((64, 64), "fsdp", 8) == par.P("data")
    assert par.param_spec((2, 64), "fsdp", 8) == par.P(None, "data")
    assert par.param_spec((1,), "fsdp", 8) == par.P()  # nothing divides: replicated
    assert par.param_spec((64, 64), "replicated", 8) == par.P()


@pytest.mark.skipif(not HAS_TORCH, reason=NO_TORCH)
@pytest.mark.parametrize("mode", ["eager", "compile", "compile_step", "reduce_overhead"])
def test_pytorch_version_trains(mode):
    proc = run(TORCH, "--steps", "100", "--mode", mode)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.skipif(not HAS_TORCH, reason=NO_TORCH)
def test_pytorch_amp_ddp_and_onnx(tmp_path):
    args = ["--steps", "40"]
    if importlib.util.find_spec("onnxscript"):
        args += ["--onnx", str(tmp_path / "model.onnx")]
    proc = run(PAR_TORCH, *args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "DDP, 2 processes" in proc.stdout


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH, reason=NO_TORCH)
def test_pytorch_on_the_gpu(tmp_path):
    """On the GPU machine (gpu/frameworks.sh): train_pytorch.py in every mode and
    parallel_pytorch.py (autocast, DDP, ONNX export) on the CUDA device, each checking itself."""
    for mode in ("eager", "compile", "compile_step", "reduce_overhead"):
        proc = run(TORCH, "--steps", "100", "--mode", mode)
        assert proc.returncode == 0 and "cuda" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    args = ["--steps", "40"]
    if importlib.util.find_spec("onnxscript"):
        args += ["--onnx", str(tmp_path / "model.onnx")]
    proc = run(PAR_TORCH, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]


# ---- the benchmark, through the runner ----------------------------------------------------

def test_benchmark_runs_only_installed_frameworks_and_times_first_calls(tfmod, jaxmod):
    from bench import runner

    bench = load_benchmark("frameworks").BENCHMARK
    installed = bench.cases["small"].variants
    assert {"jax_eager", "jax_jit", "tensorflow_eager", "tensorflow_function",
            "tensorflow_xla"} <= set(installed)
    assert any(v.startswith("pytorch_") for v in installed) == HAS_TORCH
    found, notes = runner.run_benchmark(bench, ["smoke"], ["jax_jit", "tensorflow_xla"],
                                        repeats=10, compile_runs=0)
    assert not runner.failures(notes), notes
    assert {m["variant"] for m in found} == {"jax_jit", "tensorflow_xla"}
    for m in found:
        assert m["params"]["steps_per_call"] == 20
        assert m["work"]["first_call_s"] > 0 and m["median_s"] > 0
        assert m["error"]["metric"] == "batch_loss_over_start_loss" and m["error"]["value"] < 1.05


@pytest.mark.parametrize("variant", list(load_benchmark("frameworks").BENCHMARK.variants))
def test_benchmark_check_catches_a_blow_up(variant):
    bench = load_benchmark("frameworks").BENCHMARK
    start = bench.reference(bench.cases["smoke"].params)
    assert 0.6 < start < 0.8  # the starting loss of the shared weights
    assert not bench.check(variant, float("nan"), start)["ok"]
    assert not bench.check(variant, 2 * start, start)["ok"]
    assert bench.check(variant, 0.9 * start, start)["ok"]


@pytest.mark.parametrize("args", [["--batch", "101"], ["--devices", "999"]])
def test_parallel_jax_checks_its_devices_in_a_fresh_process(args):
    proc = run(PAR_JAX, *args, timeout=300)  # fresh: the script sets up its CPU devices
    assert proc.returncode == 2, (proc.stdout, proc.stderr[-1500:])
    assert "Traceback" not in proc.stderr and "error: --" in proc.stderr
