"""ML accelerators, frameworks (docs/accelerators/frameworks.md, snippets/frameworks/): the same
network in TensorFlow and JAX (run here), PyTorch (skipped: not installed in CI), Keras 3 on
TensorFlow and JAX, data-parallel/FSDP/bf16 training in JAX, the benchmark registered with the
runner, and every sample's command line (missing framework, bad input, Ctrl-C)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import ROOT, SNIPPETS, load_snippet

TF = "frameworks/train_tensorflow.py"
TORCH = "frameworks/train_pytorch.py"
JAX = "frameworks/train_jax.py"
KERAS = "frameworks/train_keras.py"
PAR_JAX = "frameworks/parallel_jax.py"
PAR_TORCH = "frameworks/parallel_pytorch.py"
NO_TORCH = "PyTorch is not installed in CI (too large a download); the H200 run covers it"
HAS_TORCH = importlib.util.find_spec("torch") is not None


@pytest.fixture(scope="module")
def tfmod():
    return load_snippet(TF)


@pytest.fixture(scope="module")
def jaxmod():
    return load_snippet(JAX)


def losses(mod, mode, steps=40):
    x, y = mod.make_data()
    trainer = mod.build(mode=mode)
    return [loss for _, loss in mod.train(trainer, x, y, steps, 128, log_every=1)]


def run(path, *args, env=None, timeout=600):
    return subprocess.run([sys.executable, str(SNIPPETS / path), *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)


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


def test_jax_modes_agree_and_match_tensorflow(tfmod, jaxmod):
    jit = losses(jaxmod, "jit", 20)
    np.testing.assert_allclose(losses(jaxmod, "eager", 20), jit, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(jit, losses(tfmod, "function", 20), rtol=1e-3)


def test_jax_script_trains_and_checks_itself(jaxmod, capsys):
    assert jaxmod.main(["--steps", "100"]) == 0
    out = capsys.readouterr().out
    assert "JAX" in out and "(jit, " in out and out.splitlines()[-1].startswith("OK:")


def test_every_version_starts_from_the_same_data_and_weights(tfmod):
    keras_mod = load_snippet(KERAS)
    x1, y1 = tfmod.make_data()
    x2, y2 = keras_mod.make_data()
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    assert 0.4 < y1.mean() < 0.6  # the two classes are balanced
    for a, b in zip(tfmod.init_weights(64), keras_mod.init_weights(64)):
        np.testing.assert_array_equal(a, b)
    # the other copies of these helpers (each teaching file is standalone) must not drift apart
    src = (SNIPPETS / TF).read_text()
    for path in (TORCH, JAX, KERAS, PAR_JAX, PAR_TORCH):
        text = (SNIPPETS / path).read_text()
        for fn in ("make_data", "init_weights"):
            body = src[src.index(f"def {fn}"):].split("\n\n\n")[0].split('"""', 2)[2]
            assert body.strip() in text, f"{path}: {fn} differs from {TF}"


def test_keras_on_tensorflow(tfmod, capsys):
    keras_mod = load_snippet(KERAS)
    assert keras_mod.main(["--backend", "tensorflow", "--epochs", "3"]) == 0
    assert "Keras 3" in capsys.readouterr().out


def test_keras_on_jax_in_its_own_process():
    proc = run(KERAS, "--backend", "jax", "--epochs", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "on jax" in proc.stdout and proc.stdout.strip().endswith("threshold")


def test_keras_refuses_a_second_backend_in_one_process(tfmod, capsys):
    keras_mod = load_snippet(KERAS)
    keras_mod.import_keras("tensorflow")
    assert keras_mod.main(["--backend", "jax", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert "already running on 'tensorflow'" in err and "Traceback" not in err


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


def test_parallel_jax_sharding_rule(jaxmod):
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

def test_benchmark_registers_only_installed_frameworks_and_times_first_calls(tfmod, jaxmod):
    from bench import results, runner

    bench = runner.load(str(SNIPPETS / "frameworks/benchmark.py"))
    assert {"jax_eager", "jax_jit", "tensorflow_eager", "tensorflow_function",
            "tensorflow_xla"} <= set(bench.variants)
    assert any(v.startswith("pytorch_") for v in bench.variants) == HAS_TORCH
    found, notes = runner.run_benchmark(bench, ["smoke"], ["jax_jit", "tensorflow_xla"],
                                        repeats=10, compile_runs=0)
    assert not runner.failures(notes), notes
    assert {m["variant"] for m in found} == {"jax_jit", "tensorflow_xla"}
    for m in found:
        assert m["params"]["steps_per_call"] == 20
        assert m["work"]["first_call_s"] > 0 and m["median_s"] > 0
        assert m["error"]["metric"] == "batch_loss_over_start_loss" and m["error"]["value"] < 1.05
    assert results  # the module the runner writes through


def test_benchmark_check_catches_a_blow_up():
    from bench import runner

    bench = runner.load(str(SNIPPETS / "frameworks/benchmark.py"))
    start = bench.reference(bench.cases["smoke"].params)
    assert 0.6 < start < 0.8  # the starting loss of the shared weights
    assert not bench.check("jax_jit", float("nan"), start)["ok"]
    assert not bench.check("jax_jit", 2 * start, start)["ok"]
    assert bench.check("jax_jit", 0.9 * start, start)["ok"]


# ---- command lines: missing framework, bad input, Ctrl-C ----------------------------------

SAMPLES = {TF: "tensorflow", JAX: "jax", TORCH: "torch", KERAS: "keras", PAR_JAX: "jax",
           PAR_TORCH: "torch", "compilers/xla_jax.py": "jax",
           "compilers/xla_tensorflow.py": "tensorflow", "compilers/inductor_torch.py": "torch"}
BLOCK = """import sys, runpy
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
sys.argv = [{path!r}] + {args!r}
runpy.run_path({path!r}, run_name="__main__")
"""


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_help_works_and_a_run_names_what_to_install_without_the_framework(path):
    blocked = {SAMPLES[path], "jax", "torch", "tensorflow"} if SAMPLES[path] != "keras" else {
        "tensorflow", "jax", "torch", "keras"}
    full = str(SNIPPETS / path)
    helped = subprocess.run([sys.executable, "-c", BLOCK.format(blocked=blocked, path=full,
                                                                args=["--help"])],
                            capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "usage:" in helped.stdout, helped.stderr[-1000:]
    ran = subprocess.run([sys.executable, "-c", BLOCK.format(blocked=blocked, path=full, args=[])],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2, (ran.stdout, ran.stderr[-1000:])
    assert "Traceback" not in ran.stderr and len(ran.stderr.strip().splitlines()) == 1
    assert "pip install" in ran.stderr


BAD = [(TF, ["--steps", "0"]), (TF, ["--mode", "turbo"]), (TF, ["--min-accuracy", "2"]),
       (JAX, ["--width", "x"]), (JAX, ["--steps", "-5"]), (JAX, ["--min-accuracy", "nan"]),
       (KERAS, ["--epochs", "0"]), (KERAS, ["--backend", "caffe"]),
       (PAR_JAX, ["--devices", "0"]), (PAR_JAX, ["--steps", "1e9"])]


@pytest.mark.parametrize("path,args", BAD)
def test_bad_input_is_one_line_and_exit_2(path, args, capsys):
    mod = load_snippet(path)  # in-process: the frameworks are imported once
    with pytest.raises(SystemExit) as exc:
        mod.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:")


@pytest.mark.parametrize("args", [["--batch", "101"], ["--devices", "999"]])
def test_parallel_jax_checks_its_devices_in_a_fresh_process(args):
    proc = run(PAR_JAX, *args, timeout=300)  # fresh: the script sets up its CPU devices
    assert proc.returncode == 2, (proc.stdout, proc.stderr[-1500:])
    assert "Traceback" not in proc.stderr
    assert len([line for line in proc.stderr.splitlines() if line.startswith("error:")]) == 1


def test_ctrl_c_exits_130_with_one_line():
    proc = subprocess.Popen([sys.executable, str(SNIPPETS / JAX), "--mode", "eager",
                             "--steps", "1000000"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(12)  # imports done, training under way (it prints only at the end)
    assert proc.poll() is None, "the run ended before it was interrupted"
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-1500:]
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "interrupted"
