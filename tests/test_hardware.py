"""snippets/hardware/llm_memory.py: the weights + KV cache arithmetic the hardware and
why-CPU pages include, checked against hand-computed values and published configs."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from helpers import ROOT

SCRIPT = ROOT / "snippets/hardware/llm_memory.py"
spec = importlib.util.spec_from_file_location("llm_memory", SCRIPT)
llm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(llm)


def test_kv_cache_formula_matches_llama3_8b_at_128k():
    m = llm.MODELS["llama-3.1-8b"]
    per_token = llm.kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], "bf16")
    assert per_token == 2 * 32 * 8 * 128 * 2  # 131,072 bytes
    assert 17.0e9 < per_token * 131072 < 17.5e9  # "about 17 GB" at 128k tokens


def test_70b_bf16_does_not_fit_one_h200_but_fp8_does():
    bf16 = llm.plan("llama-3.1-70b", "bf16", "bf16", 1, 1, 141.0, 4.8, 0.0)
    assert bf16["weights"] > 141e9 and not bf16["weights_alone_fit"] and bf16["gpus"] == 2
    fp8 = llm.plan("llama-3.1-70b", "fp8", "bf16", 8192, 8, 141.0, 4.8, 0.0)
    assert fp8["gpus"] == 1 and fp8["left"] > 0


def test_reserve_and_batch_raise_the_gpu_count():
    small = llm.plan("llama-3.1-8b", "bf16", "bf16", 8192, 1, 24.0, 1.0, 0.0)
    assert small["gpus"] == 1
    assert llm.plan("llama-3.1-8b", "bf16", "bf16", 8192, 1, 24.0, 1.0, 8.5)["gpus"] == 2
    assert llm.plan("llama-3.1-8b", "bf16", "bf16", 8192, 64, 24.0, 1.0, 0.0)["gpus"] > 2


def test_decode_bound_is_bandwidth_over_bytes_and_scales_with_gpus():
    one = llm.decode_bound(100e9, 0.0, 1, 5e12)
    assert one == pytest.approx(50.0)
    assert llm.decode_bound(100e9, 0.0, 2, 5e12) == pytest.approx(2 * one)


@pytest.mark.parametrize("args", [
    ["--batch", "0"], ["--batch", "-3"], ["--batch", "nan"], ["--batch", "1e99"],
    ["--context", "x"], ["--gpu-gb", "nan"], ["--gpu-gb", "inf"], ["--gpu-tbs", "0"],
    ["--reserve-gb", "200"], ["--model", "gpt-5"], ["--weights", "fp3"],
])
def test_bad_input_is_one_line_and_exit_2(args):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_runs_alone_in_an_empty_folder(tmp_path):
    copy = tmp_path / "llm_memory.py"
    copy.write_text(SCRIPT.read_text())
    proc = subprocess.run([sys.executable, str(copy), "--help"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0 and "KV cache" in proc.stdout
    proc = subprocess.run([sys.executable, str(copy)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and "need 2 GPUs" in proc.stdout
