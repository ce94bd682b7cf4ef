"""The roofline: its arithmetic, the check that no measured kernel sits above its roof, the renderers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import ROOT, SNIPPETS, load_snippet


DOCS = ROOT / "docs"
DATA = DOCS / "data"
KERNEL_FILES = ["data/mandelbrot-h100.json", "data/matmul-h100.json"]


@pytest.fixture(scope="module")
def rl():
    from bench import roofline

    return roofline


def test_the_lesson_computes_the_same_roof(rl):
    lesson = load_snippet("machine/roofline.py")
    m = kernel("saxpy", 2e9, 12e9, 0.01)
    assert lesson.attainable(1e12, 50e12, 0.5) == rl.attainable(1e12, 50e12, 0.5) == 5e11
    p, q = lesson.point_from(m), rl.point_from(m)
    assert (p.label, p.intensity, p.rate) == (q.label, q.intensity, q.rate)


@pytest.fixture(scope="module")
def renderers():
    import renderers as package

    return package


def ceiling_doc(bw=1e12, fp32=50e12, tf32=400e12, device="gpu"):
    def m(case, variant, flops, nbytes, t):
        return {"case": case, "variant": variant, "device": device, "phase": "kernel", "role": "ceiling",
                "median_s": t, "min_s": t, "max_s": t, "repeats": 10, "flops": flops, "bytes": nbytes,
                "params": {"n": 1}}
    return {"measurements": [m("memory", "copy", 0, bw, 1.0), m("matmul", "fp32", fp32, 1, 1.0),
                             m("matmul", "tf32", tf32, 1, 1.0)]}


def kernel(variant, flops, nbytes, seconds, device="gpu"):
    return {"case": "k", "variant": variant, "device": device, "phase": "kernel", "median_s": seconds,
            "min_s": seconds, "max_s": seconds, "repeats": 10, "flops": flops, "bytes": nbytes}


def test_roof_is_the_lower_of_bandwidth_and_compute(rl):
    assert rl.attainable(1e12, 50e12, 1 / 6) == pytest.approx(1e12 / 6)  # memory-bound
    assert rl.attainable(1e12, 50e12, 1000) == 50e12  # compute-bound
    assert rl.attainable(1e12, 50e12, 50) == pytest.approx(50e12)  # the ridge point


def test_point_is_flops_over_bytes_and_flops_over_time(rl):
    p = rl.point_from(kernel("saxpy", 2e9, 12e9, 0.01))
    assert p.intensity == pytest.approx(1 / 6) and p.rate == pytest.approx(2e11)


@pytest.mark.parametrize(("variant", "want"), [("cublas_bf16", "BF16"), ("cublas_tf32", "TF32"),
                                               ("cublas_fp32", "FP32"), ("numba/naive", "FP32"),
                                               ("cuda_f64", "FP64"), ("torch_float16", "BF16"),
                                                   ("gpu_fp64", "FP64")])
def test_precision_picks_the_roof(rl, variant, want):
    assert rl.precision_of({"variant": variant}) == want


def test_ceilings_come_from_the_ceiling_rows(rl):
    c = rl.ceilings(ceiling_doc())
    assert c["gpu"]["bandwidth"] == 1e12
    assert c["gpu"]["peaks"] == {"FP32": 50e12, "TF32": 400e12}


def test_check_accepts_a_point_below_its_roof(rl):
    c = rl.ceilings(ceiling_doc())
    good = rl.point_from(kernel("saxpy", 2e9, 12e9, 12e9 / 0.95e12))  # 95% of the bandwidth
    assert rl.check(c, [good]) == []


def test_check_catches_a_deliberately_bad_point(rl):
    # A SAXPY "timed" without waiting for the GPU: 100x too short a time claims 100x the bandwidth.
    c = rl.ceilings(ceiling_doc())
    bad = rl.point_from(kernel("saxpy_no_sync", 2e9, 12e9, 12e9 / 1e12 / 100), source="bad.json")
    problems = rl.check(c, [bad])
    assert len(problems) == 1 and "above its roof" in problems[0] and "saxpy_no_sync" in problems[0]


def test_check_catches_a_flop_count_error_on_the_compute_roof(rl):
    # A matrix product at 45 TFLOP/s (FP32 roof 50) with each multiply-add counted as 4 FLOPs.
    c = rl.ceilings(ceiling_doc())
    n = 8192
    honest = kernel("sgemm", 2 * n**3, 3 * 4 * n * n, 2 * n**3 / 45e12)
    assert rl.check(c, [rl.point_from(honest)]) == []
    doubled = dict(honest, flops=4 * n**3)
    assert rl.check(c, [rl.point_from(doubled)])


def test_check_holds_a_tensor_core_kernel_to_its_own_roof(rl):
    c = rl.ceilings(ceiling_doc())
    fast = kernel("cublas_tf32", 300e12, 1e9, 1.0)  # 300 TFLOP/s: fine for TF32, not for FP32
    assert rl.check(c, [rl.point_from(fast)]) == []
    fast["variant"] = "cublas_fp32"
    assert rl.check(c, [rl.point_from(fast)])


def test_check_reports_a_point_without_a_roof(rl):
    c = rl.ceilings(ceiling_doc())
    p = rl.point_from(kernel("saxpy", 2e9, 12e9, 1.0, device="cpu"))
    assert "no measured FP32 ceiling" in rl.check(c, [p])[0]


def test_points_keep_the_fastest_per_variant_and_skip_ceilings(rl):
    doc = ceiling_doc()
    doc["measurements"] += [kernel("saxpy", 2e3, 12e3, 1e-3), kernel("saxpy", 2e9, 12e9, 0.01),
                            kernel("copy", 0, 8e9, 0.01)]  # no FLOPs: not a roofline point
    [p] = rl.points(doc)
    assert p.label == "saxpy" and p.rate == pytest.approx(2e11)


def test_points_leave_out_the_matmul_tuning_grid(rl):
    doc = ceiling_doc()
    doc["measurements"] += [kernel("cuda_c/warptile", 2e9, 12e6, 0.01),
                            kernel("cuda_c/wt_128x128x16_64x32_2x2_4x4_256_2", 2e9, 12e6, 0.01),
                            kernel("cuda_c/tc_128x128x32_64x64_s3", 2e9, 12e6, 0.01)]
    assert [p.label for p in rl.points(doc)] == ["cuda_c/warptile"]


def test_draw_makes_a_chart(rl):
    c = rl.ceilings(ceiling_doc())
    fig = rl.draw(c, [rl.point_from(kernel("saxpy", 2e9, 12e9, 0.013))])
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and len(ax.lines) >= 3


def machine_file() -> Path:
    return DATA / "machine-h100.json"


def test_float64_kernels_are_held_to_the_fp64_roof(rl):
    m = {"variant": "njit_parallel", "device": "cpu"}
    assert rl.precision_of(m, "mandelbrot") == "FP64"
    assert rl.precision_of(dict(m, variant="cuda_f32"), "mandelbrot") == "FP32"
    assert rl.precision_of({"variant": "cuda_c/tc_1", "extra": {"precision": "bf16"}}) == "BF16"


def test_every_mandelbrot_kernel_is_held_to_the_roof_of_its_format(rl):
    import json  # the float32 kernels (cuda_f32, cuda_f32_chunk) to FP32, the others to FP64

    doc = json.loads((DATA / "mandelbrot-h100.json").read_text())
    for variant in {m["variant"] for m in doc["measurements"] if m["case"] != "compile"}:
        want = "FP32" if "f32" in variant else "FP64"
        assert rl.precision_of({"variant": variant}, "mandelbrot") == want, variant


def test_every_committed_point_is_below_its_roof(rl):
    from bench.results import load_results

    doc = load_results(machine_file())
    others = [(rel, load_results(DOCS / rel)) for rel in KERNEL_FILES if (DOCS / rel).is_file()]
    ceils, pts, _ = rl.combine(doc, others)
    assert set(ceils) == {"cpu", "gpu"} and "FP64" in ceils["gpu"]["peaks"]
    assert pts, "nothing to check"
    assert rl.check(ceils, pts) == []


def test_a_faster_cublas_of_another_run_raises_the_roof(rl):
    doc = ceiling_doc(tf32=100e12)
    other = {"benchmark": "matmul", "measurements": [kernel("cublas_tf32", 2e12, 1e9, 0.01)]}
    ceils, pts, _ = rl.combine(doc, [("matmul", other)])
    assert ceils["gpu"]["peaks"]["TF32"] == pytest.approx(2e14)
    assert rl.check(ceils, pts) == []


def test_chart_labels_do_not_overlap(rl):
    c = rl.ceilings(ceiling_doc())
    pts = [rl.point_from(kernel(f"k{i}", 2e9 * (1 + i / 50), 12e9, 0.013)) for i in range(6)]
    fig = rl.draw(c, pts)
    ax = fig.axes[0]
    r = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(r) for t in ax.texts]
    assert len(boxes) == len(rl.chart_points(pts)) >= 2
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_roofline_renderers_draw_and_list_every_point(renderers):
    args = {"path": "data/machine-h100.json", "kernels": " ".join(KERNEL_FILES)}
    chart = renderers.get("roofline")(DOCS, alt="a roofline", **args)
    assert chart.count("data:image/svg+xml;base64,") == 4  # light and dark, each with a phone copy
    assert chart.count("#only-light") == chart.count("#only-dark") == 1
    table = renderers.get("roofline_points")(DOCS, **args)
    assert "(mandelbrot-h100)" in table and "(matmul-h100)" in table and "(machine run)" in table


def test_roofline_renderer_fails_on_a_point_above_its_roof(renderers, rl, tmp_path):
    import json
    import shutil

    (tmp_path / "data").mkdir()
    shutil.copy(DATA / "machine-h100.json", tmp_path / "data" / "m.json")
    doc = json.loads((DATA / "saxpy-h100.json").read_text())
    for m in doc["measurements"]:
        m["median_s"] /= 100  # timed without waiting for the GPU: 100 times the bandwidth
        m["min_s"], m["max_s"] = m["median_s"], m["median_s"]
    (tmp_path / "data" / "fast.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="above its roof"):
        renderers.get("roofline_points")(tmp_path, path="data/m.json", kernels="data/fast.json")


def test_ridge_points_are_peak_over_bandwidth(renderers, rl):
    from bench.results import load_results

    c = rl.ceilings(load_results(machine_file()))["gpu"]
    out = renderers.get_value("machine.ridges")(DOCS, path="data/machine-h100.json", device="gpu")
    assert f"FP32 {c['peaks']['FP32'] / c['bandwidth']:.1f}" in out


def test_specs_need_a_source_and_a_date(renderers, tmp_path):
    (tmp_path / "specs.csv").write_text("key,item,value,unit,source,as_of\nx,thing,1,B,,2026-01-01\n")
    with pytest.raises(ValueError, match="source"):
        renderers.get("table")(tmp_path, path="specs.csv", where="key=x", cols="value={quantity}")


def test_cpu_memory_roof_is_the_best_streaming_kernel(rl):
    doc = ceiling_doc(bw=10e9, device="cpu")
    doc["measurements"].append(dict(kernel("saxpy", 2e9, 12e9, 12e9 / 14e9, device="cpu"),
                                    role="ceiling+point"))
    c = rl.ceilings(doc)
    assert c["cpu"]["bandwidth"] == pytest.approx(14e9)
    [p] = rl.points(doc)  # a "ceiling+point" row is also plotted
    assert p.label == "saxpy" and rl.check(c, [p]) == []
