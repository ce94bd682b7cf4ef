"""ML accelerators, compilers (docs/accelerators/compilers.md, snippets/compilers/): the XLA demo
in TensorFlow and JAX (both run here), the HLO it writes and the committed HLO files the page
shows, the benchmark registered with the runner, the TorchInductor kernel dump (PyTorch is not
installed in CI: skipped) and what they share (gelu_demo.py). The demos are lessons: their
command lines are plain argparse, not tested here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import types

import numpy as np
import pytest

from helpers import ROOT, SNIPPETS, load_benchmark, load_snippet

_spec = importlib.util.spec_from_file_location("structure_logs", ROOT / "tools/structure_logs.py")
structure_logs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(structure_logs)

XLA_TF = "compilers/xla_tensorflow.py"
XLA_JAX = "compilers/xla_jax.py"
INDUCTOR = "compilers/inductor_torch.py"
HAS_TORCH = importlib.util.find_spec("torch") is not None
NO_TORCH = "PyTorch is not installed in CI (too large a download); the GPU run covers it"

JAX_STYLE_HLO = """HloModule jit_f, is_scheduled=true

FileNames
1 "/home/someone/project/f.py"

FunctionNames
1 "f"

%fused_computation (p0: f32[8]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0)
  ROOT %t = f32[8]{0} tanh(%p0), metadata={op_name="jit(f)/tanh" source_file="/home/someone/project/f.py"}
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  ROOT %tanh_fusion = f32[8]{0} fusion(%x), kind=kLoop, calls=%fused_computation
}
"""


@pytest.fixture(scope="module", autouse=True)
def demo():
    """gelu_demo.py, imported by the demos from beside them (as when a reader runs one)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(SNIPPETS / "compilers"))
        yield importlib.import_module("gelu_demo")


@pytest.mark.parametrize("path", [XLA_TF, XLA_JAX])
def test_xla_demo_runs_checks_and_writes_a_clean_hlo(path, demo, tmp_path, capsys):
    hlo = tmp_path / "hlo.txt"
    assert load_snippet(path).main(["--n", "5000", "--repeats", "3", "--hlo", str(hlo)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("OK:")
    text = hlo.read_text()
    assert demo.count_fusions(text) == 1
    assert "metadata=" not in text and str(ROOT) not in text
    # the freshly generated HLO has the ten element-wise operations the page counts
    counts = structure_logs.hlo_counts(text)  # what tools/structure_logs.py counts
    assert (counts["ops"], counts["kinds"]) == ("6 multiply, 3 add, 1 tanh", "kLoop")


def test_xla_function_matches_the_reference_on_odd_sizes(demo):
    xla_tf, xla_jax = load_snippet(XLA_TF), load_snippet(XLA_JAX)
    for n in (1, 7, 1023):
        x, b = demo.make_inputs(n, seed=n)
        ref = demo.reference(x, b)
        assert np.max(np.abs(xla_tf.compile_it()(x, b).numpy() - ref)) < 1e-5
        assert np.max(np.abs(xla_tf.bias_gelu(x, b).numpy() - ref)) < 1e-5
        assert np.max(np.abs(np.asarray(xla_jax.compile_it()(x, b)) - ref)) < 1e-5
    ref = demo.reference(*demo.make_inputs(9))
    assert demo.max_error([ref], 9) == 0 and demo.max_error([ref, ref + 1e-3], 9) > 9e-4


def test_strip_metadata_and_count_fusions(demo):
    mod = demo
    clean = mod.strip_metadata(JAX_STYLE_HLO)
    assert "FileNames" not in clean and "FunctionNames" not in clean
    assert "/home/someone" not in clean and "metadata" not in clean
    assert "ROOT %t = f32[8]{0} tanh(%p0)\n" in clean
    assert mod.count_fusions(clean) == 1
    assert mod.count_fusions("no fused code here") == 0


@pytest.mark.parametrize("name", ["xla-hlo-tensorflow-cpu.txt", "xla-hlo-jax-h100.txt"])
def test_committed_hlo_shows_one_fused_loop(name):
    text = (ROOT / "docs/data" / name).read_text()
    assert text.startswith("HloModule ")
    assert text.count(" fusion(") == 1 and "kind=kLoop" in text
    assert "metadata=" not in text


BENCHMARK = load_benchmark("compilers").BENCHMARK


def test_benchmark_times_both_frameworks_through_the_runner():
    from bench import runner

    found, notes = runner.run_benchmark(BENCHMARK, ["smoke"], repeats=10, compile_runs=0)
    assert not runner.failures(notes), notes
    by = {m["variant"]: m for m in found}
    assert set(by) == set(BENCHMARK.variants)  # both frameworks are installed here
    for v, m in by.items():
        assert m["error"]["value"] < 1e-5 and m["work"]["first_call_s"] > 0
    assert by["jax_jit"]["bytes"] * 10 == by["jax_eager"]["bytes"]  # fused: one pass, not ten


@pytest.mark.parametrize("variant", list(BENCHMARK.variants))
def test_benchmark_check_rejects_a_wrong_result(variant):
    bench = BENCHMARK
    ref = bench.reference({"n": 64})
    assert bench.check(variant, ref.astype(np.float32), ref)["ok"]
    assert not bench.check(variant, ref + 1e-3, ref)["ok"]


def test_inductor_kernel_parser_finds_triton_and_cpp_kernels(monkeypatch):
    if not HAS_TORCH:  # the parser is plain Python: stand-ins let the lesson import without torch
        fake = types.ModuleType("torch._inductor.utils")
        fake.run_and_get_code = None
        for name in ("torch", "torch._inductor"):
            monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
        monkeypatch.setitem(sys.modules, "torch._inductor.utils", fake)
    mod = load_snippet(INDUCTOR)
    q = "'" * 3
    gpu = (f"k = async_compile.triton('triton_poi_fused_add_mul_tanh_0', {q}\nimport triton\n"
           f"@triton.jit\ndef triton_poi_fused_add_mul_tanh_0(in_ptr0):\n    pass\n{q}, "
           "device_str='cuda')\n")
    assert mod.kernel_sources(gpu) == ["import triton\n@triton.jit\n"
                                       "def triton_poi_fused_add_mul_tanh_0(in_ptr0):\n    pass"]
    cpu = f"k = async_compile.cpp_pybinding(['const float*'], {q}\nextern \"C\" void kernel(){{}}\n{q})"
    assert mod.kernel_sources(cpu) == ['extern "C" void kernel(){}']
    assert mod.kernel_sources("nothing generated") == []


@pytest.mark.skipif(not HAS_TORCH, reason=NO_TORCH)
def test_inductor_dump_runs(tmp_path):
    out = tmp_path / "kernel.txt"
    proc = subprocess.run([sys.executable, str(SNIPPETS / INDUCTOR), "--n", "4096",
                           "--kernels", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.read_text().strip()
