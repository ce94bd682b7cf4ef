"""ML accelerators, compilers: the XLA demo (TensorFlow here, JAX where installed), the HLO it
writes, and the committed HLO file the page shows."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT, SNIPPETS, load_snippet

sys.path.insert(0, str(SNIPPETS))
from bench.results import load_results  # noqa: E402

XLA_TF = "compilers/xla_tensorflow.py"
XLA_JAX = "compilers/xla_jax.py"

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


@pytest.fixture(scope="module")
def xla_tf():
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    return load_snippet(XLA_TF)


def test_xla_tensorflow_runs_checks_and_writes_hlo_and_results(xla_tf, tmp_path, capsys):
    hlo, out = tmp_path / "hlo.txt", tmp_path / "xla.json"
    assert xla_tf.main(["--n", "5000", "--repeats", "2", "--hlo", str(hlo), "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("OK:")
    text = hlo.read_text()
    assert xla_tf.count_fusions(text) == 1  # all eight element-wise ops in one fusion
    fused = text[text.index("%fused_computation"):text.index("ENTRY")]
    assert "tanh(" in fused and "add(" in fused and "multiply(" in fused
    assert "metadata=" not in text and str(ROOT) not in text
    doc = load_results(out)
    phases = {(m["variant"], m["phase"]) for m in doc["measurements"]}
    assert phases == {("tensorflow_eager", "end_to_end"), ("tensorflow_xla", "compile_first"),
                      ("tensorflow_xla", "end_to_end")}
    assert all(m["error"]["value"] < 1e-5 for m in doc["measurements"])


def test_xla_function_matches_the_reference_on_odd_sizes(xla_tf):
    import numpy as np

    for n in (1, 7, 1023):
        x, b = xla_tf.make_inputs(n, seed=n)
        ref = xla_tf.reference(x, b)
        assert np.max(np.abs(xla_tf.compiled(x, b).numpy() - ref)) < 1e-5
        assert np.max(np.abs(xla_tf.bias_gelu(x, b).numpy() - ref)) < 1e-5


@pytest.mark.parametrize("path", [XLA_TF, XLA_JAX])
def test_strip_metadata_and_count_fusions(path):
    # Both files carry the same helpers; test them without importing TensorFlow or JAX.
    text = (SNIPPETS / path).read_text()
    ns: dict = {"re": __import__("re")}
    for fn in ("count_fusions", "strip_metadata"):
        start = text.index(f"def {fn}")
        exec(text[start:text.index("\n\n\n", start)], ns)
    clean = ns["strip_metadata"](JAX_STYLE_HLO)
    assert "FileNames" not in clean and "FunctionNames" not in clean
    assert "/home/someone" not in clean and "metadata" not in clean
    assert "ROOT %t = f32[8]{0} tanh(%p0)\n" in clean
    assert ns["count_fusions"](clean) == 1
    assert ns["count_fusions"]("no fused code here") == 0


def test_committed_hlo_shows_one_fused_loop():
    text = (ROOT / "docs/data/xla-hlo-tensorflow-cpu.txt").read_text()
    assert text.startswith("HloModule ")
    assert text.count(" fusion(") == 1 and "kind=kLoop" in text
    assert "tanh(" in text[text.index("%fused_computation"):text.index("ENTRY")]
    assert "metadata=" not in text


@pytest.mark.parametrize("args", [["--n", "0"], ["--repeats", "-1"], ["--n", "big"]])
def test_xla_tensorflow_rejects_bad_arguments(xla_tf, capsys, args):
    with pytest.raises(SystemExit) as exc:
        xla_tf.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:")


def test_xla_jax_runs_where_jax_is_installed(tmp_path):
    pytest.importorskip("jax", reason="JAX is not installed on this machine (the GPU run covers it)")
    mod = load_snippet(XLA_JAX)
    hlo = tmp_path / "hlo.txt"
    assert mod.main(["--n", "5000", "--repeats", "2", "--hlo", str(hlo)]) == 0
    assert mod.count_fusions(hlo.read_text()) >= 1
