"""LLM decode: the lesson's shape is Llama 3.1 8B's as the why-cpu-is-not-enough page sizes it; the
measured KV cache matches that page's arithmetic within 1 %; the page's table and figures come
from the results file; the lesson's check (where torch is installed); on a GPU, the bar."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, SNIPPETS, load_snippet

LESSON = SNIPPETS / "decode/llama_decode.py"
RESULTS = Path(os.environ.get("DECODE_RESULTS") or ROOT / "docs/data/decode-h100.json")
WHY = ROOT / "docs/why/why-cpu-is-not-enough.md"
MIB = 2**20


def lesson_shape() -> dict:
    """The lesson's Config defaults, read from its source (the lesson needs torch to import)."""
    tree = ast.parse(LESSON.read_text())
    config = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Config")
    return {n.target.id: ast.literal_eval(n.value) for n in config.body
            if isinstance(n, ast.AnnAssign)}


def parameters(c: dict) -> int:
    """Every weight of a Llama of shape `c`: embedding, layers (fused QKV, output, fused gate/up,
    down, two norms), final norm, untied LM head."""
    qkv = (c["heads"] + 2 * c["kv_heads"]) * c["head_dim"] * c["hidden"]
    layer = qkv + c["heads"] * c["head_dim"] * c["hidden"] + 3 * c["hidden"] * c["ffn"] \
        + 2 * c["hidden"]
    return 2 * c["vocab"] * c["hidden"] + c["layers"] * layer + c["hidden"]


def page_kv_mib_per_token() -> float:
    """What the why page prints for Llama 3.1 8B's KV cache per token (llm_memory.py's output)."""
    text = WHY.read_text()
    block = text[text.index("--model llama-3.1-8b"):]
    return float(re.search(r"KV cache per token:\s+([\d.]+) MiB", block).group(1))


# ---------------------------------------------------------------- the shape and the arithmetic

def test_lesson_shape_is_llama_3_1_8b_as_the_memory_script_has_it():
    c, model = lesson_shape(), load_snippet("hardware/llm_memory.py").MODELS["llama-3.1-8b"]
    assert (c["layers"], c["kv_heads"], c["head_dim"]) == (
        model["layers"], model["kv_heads"], model["head_dim"])
    assert c["hidden"] == c["heads"] * c["head_dim"]
    assert parameters(c) == pytest.approx(model["params"], rel=0.01)


def test_page_kv_arithmetic_is_the_lessons_cache_per_token():
    c = lesson_shape()
    per_token = 2 * c["layers"] * c["kv_heads"] * c["head_dim"] * 2  # K and V, BF16
    assert page_kv_mib_per_token() == pytest.approx(per_token / MIB, rel=0.01)


def test_why_page_links_the_decode_page():
    assert "../kernels/decode.md" in WHY.read_text()


@pytest.fixture(scope="module")
def measured():
    if not RESULTS.is_file():
        pytest.skip(f"{RESULTS.name} not yet measured (gpu/decode.sh writes it)")
    from bench.results import load_results

    return load_results(RESULTS)


def test_measured_kv_cache_matches_the_page_within_1_percent(measured):
    rows = [m for m in measured["measurements"] if "kv_cache" in m.get("extra", {})]
    assert rows, "no step row records its cache"
    for m in rows:
        e = m["extra"]
        tokens = m["params"]["batch"] * e["kv_positions"]
        for key in ("kv_cache", "kv_cache_allocated"):  # tensor nbytes; the allocator's count
            assert e[key] / tokens / MIB == pytest.approx(page_kv_mib_per_token(), rel=0.01), \
                (m["case"], m["variant"], key)
        assert e["config"] == {**lesson_shape(), **e["config"]}


# ---------------------------------------------------------------- the page's renderer

def synthetic(copy_s: float, steps: dict[tuple[int, str], float], weights=16e9, kv=1e8) -> dict:
    """A valid results file (another topic's, as a template) holding a 1 GiB copy and step rows
    of the given times, `weights` + batch x `kv` bytes each."""
    doc = json.loads((ROOT / "docs/data/fp8-h100.json").read_text())
    base = doc["measurements"][0]
    row = lambda case, variant, s, nbytes, params, **kw: {  # noqa: E731
        **base, "case": case, "variant": variant, "device": "gpu", "phase": "kernel",
        "median_s": s, "min_s": s, "max_s": s, "bytes": nbytes, "params": params, **kw}
    doc["benchmark"] = "decode"
    doc["variants"] = {v: {"label": f"label of {v}", "device": "gpu", "step": "", "group": ""}
                       for _, v in steps}
    doc["variants"]["torch_copy"] = {"label": "copy", "device": "gpu", "step": "", "group": "copy"}
    doc["measurements"] = [row("copy", "torch_copy", copy_s, 8 * 2**28, {"n": 2**28})] + [
        row(f"batch-{b}", v, s, weights + b * kv, {"batch": b, "context": 1024},
            work={"first_call_s": 1.0}, extra={"weights": weights, "kv_cache": b * kv,
                                               "kv_cache_allocated": b * kv, "kv_positions": 1025})
        for (b, v), s in steps.items()]
    return doc


@pytest.fixture
def docs(tmp_path):
    (tmp_path / "data").mkdir()

    def write(doc):
        (tmp_path / "data/decode.json").write_text(json.dumps(doc))
        return tmp_path
    return write


@pytest.fixture(scope="module")
def renderers():
    import renderers as package

    return package


def test_table_holds_each_row_against_the_bound_of_the_same_run(docs, renderers):
    copy_s = 8 * 2**28 / 4000e9  # 4,000 GB/s
    steps = {(1, "eager"): 0.010, (1, "compiled_graph"): (16e9 + 1e8) / 4000e9 / 0.8,
             (8, "eager"): 0.020}
    out = renderers.get("decode_table")(docs(synthetic(copy_s, steps)), path="data/decode.json")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "label of" in line]
    assert len(rows) == 3
    best = next(r for r in rows if "label of compiled_graph" in r)
    assert "| 80.0&nbsp;% |" in best
    assert f"| {4000e9 / (16e9 + 1e8):,.0f} |" in best  # the bound, tokens/s at batch 1


def test_values_name_the_best_row_and_the_cache(docs, renderers):
    steps = {(1, "eager"): 0.010, (1, "compiled_graph"): 0.005, (64, "eager"): 0.02}
    root = docs(synthetic(8 * 2**28 / 4000e9, steps))
    value = lambda name, *a: renderers.get_value(name)(root, *a, path="data/decode.json")  # noqa
    assert value("decode.best", "label", "1") == "label of compiled_graph"
    assert value("decode.best", "tokens", "1") == "200"
    assert value("decode.row", "tokens", "eager", "64") == f"{64 / 0.02:,.0f}"
    assert value("decode.copy") == "4,000"
    assert value("decode.cache", "per_token_mib", "64") == f"{1e8 / 1025 / MIB:.3f}"
    with pytest.raises(KeyError):
        value("decode.best", "tokns", "1")  # a misspelt field fails the build


def test_the_committed_run_is_unsteady_only_where_the_page_says():
    """decode.md: the compiled step without a graph had samples far apart at batch 1 and 8 (slowest
    over fastest above 1.5), every graph row held within a percent of itself."""
    from bench.results import load_results

    doc = load_results(ROOT / "docs/data/decode-h100.json")
    spread = {(m["variant"], m["params"].get("batch")): m["spread"]
              for m in doc["measurements"] if m["phase"] == "kernel"}
    assert spread["compiled", 1] > 1.5 and spread["compiled", 8] > 1.5
    assert all(s < 1.01 for (v, _), s in spread.items() if "graph" in v)


def test_a_file_without_a_copy_row_has_no_bound(docs, renderers):
    doc = synthetic(1.0, {(1, "eager"): 0.01})
    doc["measurements"] = doc["measurements"][1:]
    doc["variants"].pop("torch_copy")
    with pytest.raises(ValueError, match="no copy row"):
        renderers.get("decode_table")(docs(doc), path="data/decode.json")


# ---------------------------------------------------------------- the lesson (needs torch)

def test_lesson_demo_checks_cached_steps_against_the_full_forward():
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed here; gpu/decode.sh runs the lesson")
    out = subprocess.run([sys.executable, str(LESSON)], capture_output=True, text=True,
                         timeout=600, cwd=LESSON.parent)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines()[-1] == "OK: every cached step matches the full forward pass"


def test_lesson_refuses_arguments():
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed here")
    out = subprocess.run([sys.executable, str(LESSON), "5"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1


# The split-KV kernel in Triton's interpreter (CPU tensors, float32) against the CPU path's SDPA
# with the mask: one and three sequences, positions 0 (one key: every split but the first empty),
# 33 and 69 (the cache's last) of 70, tiles of 16 keys (5 tiles at most), 1, 3 and 8 splits (8:
# some splits have no tile at any position). It prints one JSON list of (batch, pos, splits,
# relative error).
SPLITKV_CHECK = """
import json, torch, llama_decode as ld
torch.manual_seed(0)
errors, n = [], 70
for batch in (1, 3):
    q = torch.randn(batch, 2, 4, 32)
    k, v = torch.randn(batch, 2, n, 32), torch.randn(batch, 2, n, 32)
    for pos in (0, 33, 69):
        at = torch.tensor([pos])
        ref = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=torch.arange(n).view(1, n) <= at)
        for splits in (1, 3, 8):
            out = ld.splitkv_attention(q, k, v, at, splits, block_n=16)
            errors.append((batch, pos, splits, ((out - ref).norm() / ref.norm()).item()))
print(json.dumps(errors))
"""


def test_splitkv_kernel_matches_sdpa_with_the_mask_in_tritons_interpreter():
    missing = [m for m in ("torch", "triton") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed here; gpu/decode.sh runs the kernel")
    out = subprocess.run([sys.executable, "-c", SPLITKV_CHECK], capture_output=True, text=True,
                         timeout=300, cwd=LESSON.parent,
                         env={**os.environ, "TRITON_INTERPRET": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    errors = json.loads(out.stdout.splitlines()[-1])
    assert len(errors) == 2 * 3 * 3
    for batch, pos, splits, error in errors:
        assert error <= 1e-5, (batch, pos, splits, error)


# ---------------------------------------------------------------- on a GPU: the bar

def shares_of_bound(doc: dict, batch: int) -> dict[str, float]:
    """{step form: tokens/s over its bound} at one batch: the bound is batch x the fastest copy's
    bytes per second / the bytes the step reads (read here from the file alone: the GPU machine
    runs this without the site's packages)."""
    kernel = [m for m in doc["measurements"] if m["phase"] == "kernel"]
    copies = [m for m in kernel if doc["variants"][m["variant"]]["group"] == "copy"]
    bandwidth = max(m["bytes"] / m["median_s"] for m in copies)
    return {m["variant"]: (batch / m["median_s"]) / (batch * bandwidth / m["bytes"])
            for m in kernel if m["case"] == f"batch-{batch}"}


def test_shares_of_bound_from_a_file():
    doc = synthetic(8 * 2**28 / 4000e9, {(1, "eager"): (16e9 + 1e8) / 4000e9 / 0.5})
    assert shares_of_bound(doc, 1) == {"eager": pytest.approx(0.5)}


@pytest.mark.gpu
def test_bar_best_batch_1_row_at_least_70_percent_of_its_bound(measured):
    shares = shares_of_bound(measured, 1)
    for variant, share in shares.items():
        print(f"\n{variant}: {share:.1%} of its bound")
    assert shares and max(shares.values()) >= 0.70
