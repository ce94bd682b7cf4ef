"""Reductions: every Numba kernel of the lesson on the CUDA simulator (tiny sizes, blocks of one
and two warps), the exact inputs and the error bound, the softmax and RMSNorm kernels, the
benchmark's checks, the CUDA C programs' argument handling, and (on a GPU) the programs."""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest
from numba import cuda  # module level: the CUDA simulator swaps this name inside kernels

from helpers import HAS_GPU, ROOT, load_benchmark, load_snippet

common = load_snippet("reduction/reduce_common.py")
lesson = load_snippet("reduction/reduce_numba.py")
softmax = load_snippet("reduction/softmax_numba.py")
rmsnorm = load_snippet("reduction/rmsnorm_numba.py")
STEPS = ("atomic", "shared", "shuffle", "vector", "one_pass")


def device_sum(variant: str, x: np.ndarray, threads: int) -> float:
    out = cuda.to_device(np.full(1, np.nan, np.float32))
    lesson.total(variant, cuda.to_device(x), out, threads)
    return float(out.copy_to_host()[0])


@pytest.mark.parametrize("variant", STEPS)
@pytest.mark.parametrize("n", [1, 6, 131])
def test_every_step_adds_every_element_once(variant, n, threads=32):
    # Small whole numbers: every partial sum is exact in float32, whatever the order, so a
    # kernel that skips or repeats an element is off by at least 1.
    x = np.random.default_rng(n).integers(-3, 4, n).astype(np.float32)
    x[-1] = 100.0  # the last element (a leftover of the 16-byte loads when n % 4 != 0) counts
    assert device_sum(variant, x, threads) == float(np.sum(x, dtype=np.float64))


@pytest.mark.parametrize("variant", ("shuffle", "one_pass"))
def test_random_inputs_stay_within_the_bound(variant):
    x = common.make_input(517, seed=3)
    error, bound = common.check_sum(device_sum(variant, x, 64), x, lesson.depth(variant, 517, 64))
    assert error <= bound < 1e-3 * np.abs(x).sum()


def test_one_pass_resets_its_counter_for_the_next_launch():
    x = common.make_input(300, seed=4)
    assert device_sum("one_pass", x, 32) == device_sum("one_pass", x, 32)


def test_read_only_kernel_never_stores():
    out = cuda.to_device(np.full(1, 7.0, np.float32))
    lesson.total("read_vector", cuda.to_device(common.make_input(200)), out, 32)
    assert out.copy_to_host()[0] == 7.0


def test_inputs_are_exact_and_their_float64_sum_is_exact():
    x = common.make_input(10_000, seed=1)
    assert x.dtype == np.float32 and -1 <= x.min() and x.max() < 1
    assert np.all(x * 2.0**23 == np.round(x * 2.0**23))  # on the 2^-23 grid
    assert common.exact_sum(x) == math.fsum(x.astype(np.float64))


def test_error_bound_grows_with_depth_and_ends_where_hu_reaches_one():
    assert common.error_bound(8, 100.0) == pytest.approx(8 * 2.0**-24 * 100.0, rel=1e-6)
    assert common.error_bound(8, 1.0) < common.error_bound(1000, 1.0)
    assert common.error_bound(2**24, 1.0) == math.inf
    with pytest.raises(ValueError, match="more than its bound"):
        common.check_sum(1.0, np.zeros(4, np.float32), depth=2)


def test_depths_follow_the_launch():
    n = 2**20
    assert lesson.depth("atomic", n) == n
    assert lesson.depth("shared", n) == 8 + n // 256
    assert lesson.depth("vector", n) < lesson.depth("shared", n)


@pytest.mark.parametrize("version", softmax.VERSIONS)
def test_softmax_rows_sum_to_one_within_the_bound(version):
    x = np.random.default_rng(2).uniform(-4, 4, (2, 72)).astype(np.float32)
    x[1, 5] = 30.0  # one large entry: the max subtraction keeps exp finite
    x[0, 71] = 5.0  # in the last float4 of the row, which only part of the threads hold
    d_y = cuda.to_device(np.full_like(x, np.nan))  # an element never written fails
    softmax.softmax(version, cuda.to_device(x), d_y, threads=32)
    y = d_y.copy_to_host()
    assert softmax.check(y, x, threads=32) <= softmax.relative_error_bound(72, 34.0, 32)
    assert np.allclose(y.sum(axis=1), 1.0, atol=1e-5)


def test_softmax_bound_counts_each_rounding_of_numerator_and_sum():
    """exp's error (2 ulp from the correctly rounded result: up to 5u) and the rounding of
    x - max reach the numerator and the sum's terms alike; a reciprocal and a product add 2u: at
    least 12u beyond the sum's depth, and 2u per unit of spread."""
    u = 2.0**-24
    depth = 1 + 5  # 32 columns on 32 threads: one serial add, five levels
    assert softmax.relative_error_bound(32, 0.0, 32) >= (depth + 2 * 5 + 2) * u
    assert softmax.relative_error_bound(32, 3.0, 32) - softmax.relative_error_bound(32, 2.0, 32) \
        == pytest.approx(2 * u)


def test_softmax_check_catches_a_wrong_row():
    x = np.random.default_rng(5).uniform(-1, 1, (2, 8)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    y[1] = y[1][::-1]
    with pytest.raises(ValueError, match="more than its bound"):
        softmax.check(y, x)


@pytest.mark.parametrize("version", ["held", "vector"])
def test_held_softmax_refuses_rows_longer_than_it_holds(version):
    x = cuda.to_device(np.zeros((1, 16 * 32 + 4), np.float32))
    with pytest.raises(ValueError, match="rows longer than 512"):
        softmax.softmax(version, x, cuda.device_array_like(x), threads=32)


def test_rmsnorm_matches_float64_within_its_bound_and_writes_every_element():
    rng = np.random.default_rng(6)
    x = rng.uniform(-4, 4, (3, 68)).astype(np.float32)
    x[2] = 0.0  # a zero row: eps keeps the root finite, and every output must be exactly 0
    w = rng.uniform(0.5, 1.5, 68).astype(np.float32)
    d_y = cuda.to_device(np.full_like(x, np.nan))
    rmsnorm.rmsnorm(cuda.to_device(x), cuda.to_device(w), d_y, threads=32)
    y = d_y.copy_to_host()
    assert rmsnorm.check(y, x, w, threads=32) <= rmsnorm.relative_error_bound(68, 32)
    assert np.all(y[2] == 0)
    assert np.allclose(np.sqrt(np.mean((y[:2] / w) ** 2, axis=1)), 1.0, rtol=1e-5)


def test_rmsnorm_check_catches_a_wrong_element_and_a_missing_one():
    rng = np.random.default_rng(7)
    x, w = rng.uniform(-1, 1, (2, 8)).astype(np.float32), np.ones(8, np.float32)
    y = rmsnorm.reference(x, w).astype(np.float32)
    assert rmsnorm.check(y, x, w) <= rmsnorm.relative_error_bound(8)
    for wrong in (y * np.float32(1 + 2**-10), np.where(np.arange(8) == 3, np.nan, y)):
        with pytest.raises(ValueError, match="more than its bound"):
            rmsnorm.check(wrong.astype(np.float32), x, w)


def test_rmsnorm_bound_halves_the_sums_error_through_the_root():
    u = 2.0**-24
    deeper = rmsnorm.relative_error_bound(64, 32) - rmsnorm.relative_error_bound(32, 32)
    assert deeper == pytest.approx(u / 2)  # one more serial add per thread, halved by the root
    assert rmsnorm.relative_error_bound(32, 32) >= (6 + 3) / 2 * u + 6 * u


@pytest.mark.parametrize("args", [["2", "63"], ["2", "8192"], ["0", "8"], ["x"]])
def test_rmsnorm_lesson_refuses_a_bad_shape_in_one_line(args):
    from helpers import run_snippet

    out = run_snippet("reduction/rmsnorm_numba.py", *args, env={**__import__("os").environ,
                                                                "NUMBA_ENABLE_CUDASIM": "1"})
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_benchmark_checks_hold_sums_to_their_bounds():
    bench = load_benchmark("reduction")
    x = common.make_input(4096)
    ref = {"x": x, "exact": common.exact_sum(x), "abs_sum": float(np.abs(x).sum())}
    good = bench.check("numba_vector", ref["exact"] + 1e-6, ref)
    bad = bench.check("numba_vector", ref["exact"] + 1.0, ref)
    assert good["ok"] and not bad["ok"] and bad["bound"] < 1.0
    assert bench.check("cuda_c_read_vector", None, ref)["ok"]
    assert bench.counts("numba_vector", {"n": 4096}, ref)["bytes"] == 4 * 4096
    steps = {v.step for v in bench.VARIANTS.values() if v.step}
    assert steps == {"1", "2", "3", "4", "5"}


def test_benchmark_holds_softmax_and_rmsnorm_rows_to_their_bounds():
    bench = load_benchmark("reduction")
    p = {"n": 3, "cols": 16, "op": "rmsnorm"}
    ref = bench.reference(p)
    x, (w,) = ref["x"], ref["w"]
    good = rmsnorm.reference(x, w).astype(np.float32)
    assert bench.check("torch_rmsnorm", good, ref)["ok"]
    assert not bench.check("numba_rmsnorm", good * np.float32(1.001), ref)["ok"]
    assert bench.check("torch_copy", x.copy(), ref)["ok"] and not bench.check("torch_copy", good, ref)["ok"]
    assert bench.counts("numba_rmsnorm", p, ref)["bytes"] == 8 * 3 * 16 + 4 * 16
    assert bench.counts("torch_copy", p, ref)["bytes"] == 8 * 3 * 16
    soft = {"n": 2, "cols": 8, "op": "softmax"}
    ref = bench.reference(soft)
    e = np.exp(ref["x"] - ref["x"].max(axis=1, keepdims=True))
    assert bench.check("torch_softmax", (e / e.sum(axis=1, keepdims=True)).astype(np.float32), ref)["ok"]
    assert not bench.check("numba_softmax_vector", e.astype(np.float32), ref)["ok"]


def test_benchmark_runs_the_c_table_of_each_case_and_names_every_row_it_reports():
    bench = load_benchmark("reduction")
    table = bench.VARIANTS["cuda_c_rows"].measure
    for op in ("softmax", "rmsnorm"):
        rows = table.kernels({"op": op})
        assert set(rows) == {f"cuda_c_{op}_{t}" for t in (128, 256, 512)} | {"cuda_c_copy"}
        assert {bench.VARIANTS[k].group for k in rows} == {op, "copy"}
        assert "cuda_c_rows" in bench.CASES[op].variants
    for name, case in bench.CASES.items():  # every C table can name its rows for its case
        for variant in case.variants:  # (the sums' cases have no "op": rows.cu is not theirs)
            kernels = getattr(bench.VARIANTS[variant].measure, "kernels", None)
            assert kernels is None or kernels(case.params), (name, variant)
    source = (ROOT / "snippets/reduction/rows.cu").read_text()
    reported = set(__import__("re").findall(r'\{"(cuda_c_\w+)"', source))
    assert reported == {k for k, v in bench.VARIANTS.items() if k.startswith("cuda_c_") and
                        v.group in ("softmax", "rmsnorm", "copy")}


# ---------------------------------------------------------------- CUDA C

@pytest.fixture(scope="module")
def cuda_binary(nvcc_build):
    return nvcc_build("reduction/reduce.cu", "-arch=sm_90")  # for Hopper, as gpu/reduction.sh


def test_cuda_c_fails_loudly_without_a_gpu(cuda_binary):
    if HAS_GPU:
        pytest.skip("this machine has a GPU; the gpu test covers it")
    out = subprocess.run([str(cuda_binary)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and out.stderr.startswith("CUDA error: cudaError")
    assert "OK" not in out.stdout


@pytest.mark.parametrize("args", [["1000"], ["-5"], ["--bench"]])
def test_cuda_c_lesson_takes_no_arguments(cuda_binary, args):
    out = subprocess.run([str(cuda_binary), *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.startswith("error:") and out.stdout == ""
    assert out.stderr.count("\n") == 1


@pytest.mark.gpu
def test_cuda_c_on_the_gpu(cuda_binary):
    out = subprocess.run([str(cuda_binary)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "OK: every sum within its bound" in out.stdout


@pytest.fixture(scope="module")
def rows_binary(nvcc_build):
    return nvcc_build("reduction/rows.cu", "-arch=sm_90")


def test_cuda_c_rows_takes_no_arguments_and_fails_loudly_without_a_gpu(rows_binary):
    out = subprocess.run([str(rows_binary), "4096"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and out.stdout == ""
    if not HAS_GPU:
        out = subprocess.run([str(rows_binary)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and out.stderr.startswith("CUDA error: cudaError")


@pytest.mark.gpu
def test_cuda_c_rows_on_the_gpu(rows_binary):
    out = subprocess.run([str(rows_binary)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "OK: every row within its bound" in out.stdout and out.stdout.count("WRONG") == 0


# ---------------------------------------------------------------- the committed results

def committed(name: str) -> dict:
    from bench.results import load_results

    path = ROOT / "docs/data" / name
    if not path.is_file():
        pytest.skip(f"docs/data/{name} is not measured yet")
    return load_results(path)


@pytest.mark.parametrize("toolkit", ["cuda_c", "numba"])
def test_committed_best_sum_reaches_the_bar_of_the_read_ceiling_in_every_round(toolkit):
    # Issue 34's bar: the best sum at >= 90 % of the fastest read-only kernel of its round.
    from bench.results import share_of_best

    ratios = share_of_best(committed("reduction-h100.json"), "read")
    for case in ("gpu-1", "gpu-2"):
        best = max(ratios[case][f"{toolkit}_{step}"] for step in ("vector", "one_pass"))
        assert best >= 0.90, (case, toolkit, best)


def test_renderers_show_every_step_and_every_fp8_row():
    import renderers

    docs = ROOT / "docs"
    table = renderers.get("reduction_table")(docs, "data/reduction-h100.json", case="gpu-1",
                                             predictions="data/reduction-predictions.csv")
    steps = [line.split("|")[1].strip() for line in table.splitlines()[2:]]
    assert sorted(s for s in steps if s != "–") == ["1", "1", "2", "2", "3", "3", "4", "4", "5", "5"]
    assert "atomic adds to one address" in table  # step 1's prediction, from the CSV
    from renderers.page import render_markdown

    lines = map(str.strip, (docs / "accelerators/hardware.md").read_text().splitlines())  # a folded block indents its lines
    line = next(l for l in lines
                if l.startswith("<!-- render table path=data/fp8-h100.json"))
    fp8_rows = [l for l in render_markdown(line, docs, "hardware.md").splitlines() if l.startswith("| ")]
    assert len(fp8_rows) == 1 + 9 and all(" – " not in l for l in fp8_rows)
    share = renderers.get_value("cell")(docs, "data/reduction-h100.json", "{gbs:/{top[gbs]}:pct}",
                                        "case=gpu-1 phase=kernel group=read", "-gbs",
                                        join="top=case={case} phase=kernel group=read")
    assert share == "100.0&nbsp;%"  # the fastest read-only kernel is its own ceiling


def test_row_renderers_name_the_best_of_ours_and_turn_ncu_bytes_into_a_rate(tmp_path):
    import json
    import re
    import shutil

    import renderers

    (tmp_path / "data").mkdir()
    shutil.copy(ROOT / "docs/data/reduction-h100.json", tmp_path / "data")
    of_copy = renderers.get_value("reduction.of_copy")
    doc = json.loads((tmp_path / "data/reduction-h100.json").read_text())
    ours = {m["variant"] for m in doc["measurements"] if m["case"] == "softmax"
            and m["variant"].startswith(("numba_", "cuda_c_"))
            and doc["variants"][m["variant"]]["group"] == "softmax"}
    shares = {v: of_copy(tmp_path, v, "softmax", path="data/reduction-h100.json") for v in ours}
    best = of_copy(tmp_path, "best", "softmax", path="data/reduction-h100.json")
    number = lambda text: float(re.search(r"([\d.]+)&nbsp;%", text)[1])  # noqa: E731
    assert number(best) == max(map(number, shares.values()))
    assert best.startswith(doc["variants"][max(shares, key=lambda v: number(shares[v]))]["label"])
    metrics = {"dram__bytes_read.sum": 3e9, "dram__bytes_write.sum": 1e9, "gpu__time_duration.sum": 2e-3,
               "dram__throughput.avg.pct_of_peak_sustained_elapsed": 41.5,
               "sm__warps_active.avg.pct_of_peak_sustained_active": 97.0}
    (tmp_path / "data/ncu.json").write_text(json.dumps({"raw": "x", "rows": [
        {"kernel": "softmax_rows", "metrics": metrics}]}))
    row = renderers.get("reduction_ncu")(tmp_path, "data/ncu.json").splitlines()[2]
    assert [c.strip() for c in row.strip("| ").split("|")] == [
        "`softmax_rows`", "3,000", "1,000", "2,000.0", "2,000", "41.5&nbsp;%", "97&nbsp;%"]
