"""Attention (snippets/attention/): the fused Triton kernel in Triton's interpreter on NumPy arrays,
the float32 reference it is checked against, the registry's counts, the renderer on a results
file written here, what the page claims of the H200 file, and on a GPU the lessons themselves."""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from helpers import ROOT, load_benchmark, load_snippet, run_snippet

HAS_TRITON = importlib.util.find_spec("triton") is not None
HAS_TORCH_GPU = importlib.util.find_spec("torch") is not None and shutil.which("nvidia-smi")
at = load_snippet("attention/attention_triton.py") if HAS_TRITON else None
needs_triton = pytest.mark.skipif(not HAS_TRITON, reason="triton is not installed here")
RESULTS = ROOT / "docs" / "data" / "attention-h100.json"


@needs_triton
@pytest.mark.parametrize(("b", "h", "n", "d", "causal", "layout"),
                         [(1, 2, 16, 16, 0, "bhnd"), (2, 1, 40, 16, 0, "bhnd"),
                          (1, 2, 40, 32, 1, "bhnd"), (1, 1, 67, 16, 1, "bhnd"),
                          (2, 3, 40, 64, 1, "bnhd"), (1, 2, 24, 128, 0, "bhnd")])
def test_fused_kernel_in_the_interpreter_on_numpy(b, h, n, d, causal, layout):
    """The page's kernel and launch in Triton's interpreter (tests/triton_host.py): sequence
    lengths that end mid-block (the descriptors' zeros and clipped stores must keep each head's
    rows apart), several causal diagonal blocks, tensors stored (B, N, H, d), against the
    float32 reference; zeroed keys (every score equal: a plain mean of V) must fail the check."""
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "triton_host.py"), "attention",
                          *map(str, (b, h, n, d, causal, layout))], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    err, bound, broken = map(float, out.stdout.split())
    assert err <= bound, (err, bound)
    assert broken > 100 * bound


@needs_triton
def test_reference_is_a_softmax_weighted_mean_and_causal_hides_later_keys():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 12, 8)).astype(np.float32) for _ in range(3))
    ones = np.ones_like(v)
    assert np.allclose(at.reference(q, k, ones, False), 1.0, atol=1e-6)  # weights sum to 1
    later = k.copy(), v.copy()
    later[0][:, :, 6:] += 5.0
    later[1][:, :, 6:] -= 3.0
    causal, changed = at.reference(q, k, v, True), at.reference(q, *later, True)
    assert np.allclose(causal[:, :, :6], changed[:, :, :6])  # rows 0..5 never see keys 6..
    assert not np.allclose(causal[:, :, 6:], changed[:, :, 6:])
    assert np.allclose(causal[:, :, 0], v[:, :, 0], atol=1e-6)  # the first query sees one key
    rows = at.sample_rows(12, 5)
    assert np.allclose(at.reference(q, k, v, True, rows), causal[:, :, rows], atol=1e-6)


@needs_triton
def test_sampled_rows_reach_both_ends_and_the_error_catches_a_wrong_result():
    rows = at.sample_rows(16384)
    assert rows[0] == 0 and rows[-1] == 16383 and len(rows) == 256 == len(set(rows))
    assert list(at.sample_rows(5)) == [0, 1, 2, 3, 4]
    want = np.ones((2, 3))
    assert at.relative_error(want * (1 + 2.0**-9), want) < at.tolerance("bf16")
    assert at.relative_error(want * 1.1, want) > at.tolerance("bf16")
    assert at.relative_error(np.full((2, 3), np.nan), want) == math.inf


@needs_triton
def test_lesson_refuses_a_bad_sequence_length_in_one_line():
    out = run_snippet("attention/attention_triton.py", "-5")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "at least 1" in out.stderr.strip().splitlines()[-1]


@needs_triton
def test_registry_counts_the_same_work_for_every_row_and_half_for_causal():
    bench = load_benchmark("attention")
    assert len(bench.CASES) == 20
    for case in bench.CASES.values():
        p = case.params
        assert p["batch"] * p["n"] == 16384 and p["heads"] * p["d"] == 2048
    full, causal = (bench.CASES[c].params for c in ("d128-n4096", "d128-n4096-causal"))
    rows = {v: bench.counts(v, full, None)["flops"] for v in ("triton", "sdpa/flash", "sdpa/math")}
    assert set(rows.values()) == {4 * 4 * 16 * 4096**2 * 128}
    assert bench.counts("sdpa/cudnn", causal, None)["flops"] * 2 == rows["sdpa/flash"]


# --- the renderer, on a results file written here ---------------------------------------------

def write_results(docs, naive_peaks, beyond):
    from bench import results, timing

    variants = {"naive": ("naive", ""), "triton": ("ours", ""), "sdpa/flash": ("flash", "library"),
                "sdpa/cudnn": ("cudnn", "library")}
    speed = {"naive": 100.0, "triton": 400.0, "sdpa/flash": 350.0, "sdpa/cudnn": 500.0}
    found = []
    for i, n in enumerate((1024, 4096, 16384)):
        p = {"n": n, "d": 128, "causal": False, "batch": 16384 // n, "heads": 16}
        flops = 4 * p["batch"] * 16 * n * n * 128
        for v in variants:
            if v == "sdpa/cudnn" and n == 16384:
                continue  # refused, as the case's note says
            extra = {"peak_bytes": naive_peaks[i]} if v == "naive" else {}
            if v == "naive" and n == 16384:
                extra["beyond"] = beyond
            s = flops / (speed[v] * 1e12)
            found.append(results.measurement(
                f"d128-n{n}", v, "gpu", "kernel", timing.Stats(s, s, s, 10, "cuda-event"),
                params=p, flops=flops, extra=extra, error={"metric": "rel", "value": 1e-3 * (i + 1)}))
    results.write_results(docs / "data" / "attention-h100.json", "attention", {}, found,
                          ["d128-n16384: sdpa/cudnn unavailable: head dim too large; sdpa/x "
                           "unavailable: y"],
                          variants={k: {"label": l, "device": "gpu", "step": "", "group": g}
                                    for k, (l, g) in variants.items()})


def test_renderer_shares_memory_and_refusals(tmp_path):
    import renderers

    peaks = [2**30, 4 * 2**30, 16 * 2**30]
    write_results(tmp_path, peaks, [[32768, 32 * 2**30], [65536, "CUDA out of memory."]])
    path, get = "data/attention-h100.json", renderers.get_value
    assert get("attention.fastest")(tmp_path, "d128-n1024", path=path) == "cudnn"
    assert get("attention.share")(tmp_path, "triton", "d128-n1024", path=path) == "80 %"
    assert get("attention.share")(tmp_path, "triton", "d128-n16384", path=path) == "114 %"
    assert get("attention.tflops")(tmp_path, "naive", "d128-n4096", path=path) == "100"
    assert get("attention.oom")(tmp_path, path=path) == "65,536"
    assert get("attention.peak")(tmp_path, "32768", path=path) == "32.0"
    assert get("attention.error")(tmp_path, path=path) == "3.0e-03"
    table = renderers.get("attention_table")(tmp_path, path)
    last = table.splitlines()[-1]
    assert last.startswith("| 16,384 ") and "refused" in last and "114 %" in last
    memory = renderers.get("attention_memory")(tmp_path, path).splitlines()
    assert [r.split("|")[1].strip() for r in memory[2:]] == ["1,024", "4,096", "16,384", "32,768",
                                                             "65,536"]
    assert "out of memory" in memory[-1] and "16.00" in memory[4]
    write_results(tmp_path, peaks, [[32768, 2**35]])
    with pytest.raises(ValueError, match="never ran out"):
        get("attention.oom")(tmp_path, path=path)


# --- what the page claims of the H200 results file -------------------------------------------

@pytest.mark.skipif(not RESULTS.is_file(), reason="no H200 results file yet (gpu/attention.sh)")
def test_h100_file_ours_meets_the_bar_and_naive_memory_grows_as_n_squared():
    import renderers

    docs, path = ROOT / "docs", "data/attention-h100.json"
    share = float(renderers.get_value("attention.share")(docs, "triton", path=path).rstrip(" %"))
    assert share >= 70, f"ours at N=4096, d=128: {share} % of the fastest SDPA backend"
    from renderers.attention import naive_memory
    from renderers.run_details import load

    for n, peak in naive_memory(load(docs, path)):
        if isinstance(peak, int):  # between one and four N x N BF16 matrices of every head
            scores = max(1, 16384 // n) * 16 * n * n * 2
            assert scores <= peak <= 4 * scores, (n, peak / scores)


# --- on a GPU -------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not (HAS_TRITON and HAS_TORCH_GPU), reason="needs triton, torch, a GPU")
@pytest.mark.parametrize("args", [["1024"], ["2000", "--head-dim", "128", "--causal"]])
def test_fused_kernel_on_the_gpu(args):
    out = run_snippet("attention/attention_triton.py", *args, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "OK" in out.stdout and "bf16" in out.stdout


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH_GPU, reason="needs torch and an NVIDIA GPU")
def test_torch_lesson_on_the_gpu():
    out = run_snippet("attention/attention_torch.py", timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "naive: relative error" in out.stdout and "out of memory" in out.stdout
