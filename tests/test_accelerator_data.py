"""ML accelerators: the sourced data files, the committed results, the renderers that turn
them into tables, and the GPU script's no-GPU path."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT, SNIPPETS

import renderers  # noqa: E402
from bench.results import load_results  # noqa: E402

DOCS = ROOT / "docs"
DATA = DOCS / "data"
NUMERIC = ("memory_gib", "bandwidth_gbs", "link_gbs", "fp32_tflops", "bf16_tflops", "fp8_tflops",
           "fp4_tflops", "power_w")


def rows(name: str) -> list[dict]:
    with (DATA / name).open(newline="") as f:
        return list(csv.DictReader(f))


def directives(page: str, needle: str) -> list[dict]:
    """The arguments of each `<!-- render table ... -->` line of a page whose file (its `path=`,
    or the file the page's front matter binds) or arguments hold `needle`."""
    from mkdocs.utils.meta import get_data
    from renderers.page import DIRECTIVE, bindings, parse_args

    markdown, meta = get_data((DOCS / page).read_text())
    bound = bindings(meta.get("data"))
    found = []
    for m in map(DIRECTIVE.match, (line.strip() for line in markdown.splitlines())):
        if not (m and m["name"] == "table"):
            continue
        kwargs = parse_args(m["args"])[1]
        path = kwargs.get("path", "")
        kwargs["path"] = path if "/" in path else bound.get(path, bound.get("", path))
        if needle in m["args"] or needle in kwargs["path"]:
            found.append(kwargs)
    return found


def table(page: str, needle: str, docs=DOCS, **override) -> str:
    """The page's first table directive that holds `needle`, rendered (with `override`)."""
    return renderers.get("table")(docs, **{**directives(page, needle)[0], **override})


@pytest.mark.parametrize("name", ["accelerator-specs.csv", "ml-compilers.csv",
                                  "ml-cloud-services.csv", "llm-serving.csv"])
def test_every_row_has_a_source_and_a_date(name):
    for i, row in enumerate(rows(name), start=2):
        assert re.search(r"https?://", row["source"]), (name, i)
        assert re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", row["as_of"]), (name, i, row["as_of"])
        assert all(v is not None and v.strip() != "" for k, v in row.items()
                   if k not in NUMERIC + ("unconfirmed", "notes")), (name, i)


def test_spec_table_covers_the_required_accelerators():
    names = " | ".join(r["accelerator"] for r in rows("accelerator-specs.csv"))
    for needle in ("H100", "H200", "B200", "L4", "L40S", "A10G", "T4", "MI300X", "MI325X",
                   "TPU v5e", "TPU v5p", "TPU v6e", "Trainium |", "Trainium2", "Inferentia2",
                   "Gaudi 2", "Gaudi 3", "(CPU)", "B300", "MI355X", "TPU7x", "Trainium3"):
        assert needle in names + " |", needle


def test_spec_values_are_numbers_and_unconfirmed_names_real_columns():
    for r in rows("accelerator-specs.csv"):
        for col in NUMERIC:
            if r[col].strip():
                assert float(r[col]) > 0, (r["accelerator"], col)
        for col in filter(None, r["unconfirmed"].split(";")):
            assert col in NUMERIC, (r["accelerator"], col)
            assert r[col].strip(), f"{r['accelerator']}: {col} marked unconfirmed but empty"
        assert r["memory_gib"] and r["bandwidth_gbs"] and r["bf16_tflops"] or r["accelerator"] in (
            "NVIDIA T4", "NVIDIA B300", "AMD Instinct MI355X")  # notes say why


def test_memory_is_in_gib_throughout():
    """One unit in the memory column: GiB. Vendors that write "GB" for HBM (NVIDIA's "141GB") give
    a binary capacity: the H200 this site measured reports NVIDIA's figure as GiB, within one
    (a decimal 141 GB would be 131.3 GiB); Google and AWS write GiB, kept as they state it."""
    import json

    by = {r["accelerator"]: r for r in rows("accelerator-specs.csv")}
    measured_gib = json.loads((DATA / "doctor-h200.json").read_text())["facts"]["nvidia_smi"]["gpus"][0]["memory_mib"] / 1024
    assert abs(float(by["NVIDIA H200 SXM"]["memory_gib"]) - measured_gib) < 1
    assert by["AMD Instinct MI300X"]["memory_gib"] == by["Google TPU7x (Ironwood)"]["memory_gib"]
    assert not any("converted to GB)" in r["notes"] for r in by.values())


def test_low_precision_doubles_the_rate_where_both_are_published():
    for r in rows("accelerator-specs.csv"):
        if r["fp8_tflops"] and r["bf16_tflops"] and r["kind"] != "TPU" or "TPU7x" in r["accelerator"]:
            assert float(r["fp8_tflops"]) >= float(r["bf16_tflops"]), r["accelerator"]


def test_spec_figures_agree_with_each_other():
    by = {r["accelerator"]: r for r in rows("accelerator-specs.csv")}
    h100, h200 = by["NVIDIA H100 SXM"], by["NVIDIA H200 SXM"]
    assert h100["bf16_tflops"] == h200["bf16_tflops"]  # same chip, more memory
    assert float(h200["bandwidth_gbs"]) > float(h100["bandwidth_gbs"])
    for r in by.values():  # a BF16 matrix unit is never slower than FP32
        if r["fp32_tflops"] and r["bf16_tflops"]:
            assert float(r["bf16_tflops"]) >= float(r["fp32_tflops"]), r["accelerator"]


def test_compiler_map_covers_the_article_and_states_a_status():
    by = {r["name"].split(" (")[0]: r for r in rows("ml-compilers.csv")}
    for name in ("XLA", "MLIR", "LLVM", "Apache TVM", "Triton", "torch.compile", "nvFuser",
                 "Glow", "PlaidML", "torch.export + AOTInductor", "TensorRT", "ONNX Runtime",
                 "OpenVINO", "IREE"):
        assert name in by, name
    assert by["PlaidML"]["status"] == "unmaintained"
    assert "github.com/plaidml/plaidml" in by["PlaidML"]["source"]  # the repository, not news
    assert by["Glow"]["status"] == "unmaintained"
    assert {r["status"] for r in by.values()} <= {"maintained", "archived", "unmaintained",
                                                  "moved out of PyTorch"}


def test_cloud_table_compares_the_three_services():
    capabilities = {r["capability"] for r in rows("ml-cloud-services.csv")}
    for needle in ("Training jobs", "Real-time endpoints", "Many models on one endpoint",
                   "Mixed instance types in one job", "Long-running training clusters",
                   "Serverless inference", "Asynchronous inference",
                   "Models as a service (no hosting)"):
        assert needle in capabilities
    table = rows("ml-cloud-services.csv")
    assert all(r["sagemaker"] and r["vertex_ai"] and r["azure_ml"] for r in table)
    assert not any("docs/data/" in r["source"] for r in table)  # sources are primary pages
    by = {r["capability"]: r for r in table}
    assert "MI300X" in by["Custom accelerators"]["azure_ml"]
    assert by["Mixed instance types in one job"]["vertex_ai"].startswith("yes")


def test_llm_servers_are_sourced_with_their_status():
    table = {r["name"]: r for r in rows("llm-serving.csv")}
    assert set(table) == {"vLLM", "SGLang", "TensorRT-LLM"}
    for r in table.values():
        assert "release" in r["status"] and "pypi.org/project/" in r["source"]


def test_hlo_op_count_is_counted_from_the_committed_hlo():
    for name in ("xla-hlo-tensorflow-cpu", "xla-hlo-jax-h100"):
        hlo = lambda fact: renderers.get_value("cell")(DOCS, f"data/{name}.counts.json", f"{{{fact}}}", key=".")  # noqa: E731
        assert (hlo("total"), hlo("ops"), hlo("fusions"), hlo("kinds")) \
            == ("10", "6 multiply, 3 add, 1 tanh", "1", "kLoop")


def test_an_hlo_file_without_its_counts_fails_the_build(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data/x.txt").write_text("HloModule m\nENTRY %m { ROOT %a = f32[] add(%b, %c) }\n")
    with pytest.raises(FileNotFoundError, match="x.counts.json"):  # tools/structure_logs.py not run
        renderers.get_value("cell")(tmp_path, "data/x.counts.json", "{total}", key=".")


def test_fact_tables_put_sources_in_footnotes():
    for page, name, prefix in (("accelerators/compilers.md", "ml-compilers.csv", "cc"),
                               ("accelerators/compilers.md", "llm-serving.csv", "srv"),
                               ("accelerators/cloud.md", "ml-cloud-services.csv", "cloud")):
        html = table(page, name)
        lines = [line for line in html.splitlines() if line.startswith("| ")]
        assert lines[0].count(" | ") <= 3, (name, lines[0])  # four columns at most
        assert not any("](http" in line for line in lines), name  # links live in footnotes
        assert f"\n[^{prefix}-1]: " in html and "(as of " in html


def test_spec_renderer_gives_narrow_tables_with_one_footnote_per_row():
    found = [renderers.get("table")(DOCS, **args)
             for args in directives("accelerators/hardware.md", "accelerator-specs.csv")]
    tables, notes = found[:3], found[3]
    assert len(found) == 4
    html = "\n".join(tables) + notes
    n = len(rows("accelerator-specs.csv"))
    for i in range(1, n + 1):
        assert html.count(f"[^spec-{i}]") == 4  # three tables plus the definition
        assert f"\n[^spec-{i}]: " in "\n" + notes
    for block in tables:  # no table wider than five columns
        header = next(line for line in block.splitlines() if line.startswith("| "))
        assert header.count(" | ") <= 4, header
    mi325 = next(line for line in html.splitlines() if "MI325X" in line and "| 1000" in line)
    assert "| 1000\\* |" in mi325
    v5e = next(line for line in html.splitlines() if line.startswith("[^spec-") and "TPU v5e" in line)
    assert "[docs.cloud.google.com/v5e](https://docs.cloud.google.com/tpu/docs/v5e)" in v5e
    assert "(as of 2026-11)" in v5e


def test_source_links_are_told_apart_by_their_page():
    h100 = renderers.table.source_links("https://www.nvidia.com/en-us/data-center/h100/")
    h200 = renderers.table.source_links("https://www.nvidia.com/en-us/data-center/h200/")
    assert h100 != h200 and "nvidia.com/h100" in h100
    assert "stas00/ml-engineering" in renderers.table.source_links(
        "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md")


def test_cpu_gap_is_computed_from_the_spec_file():
    html = renderers.get("cpu_gap")(DOCS, path="data/accelerator-specs.csv", gpu="NVIDIA H100 SXM",
                                    cpus="AMD EPYC 9654 (CPU)|Intel Xeon Platinum 8480+ (CPU)")
    by = {r["accelerator"]: r for r in rows("accelerator-specs.csv")}
    epyc = float(by["NVIDIA H100 SXM"]["bf16_tflops"]) / float(by["AMD EPYC 9654 (CPU)"]["bf16_tflops"])
    assert f"| {epyc:.0f}× |" in html and "AMX tiles" in html and "AVX-512 only" in html
    assert 60 <= epyc <= 70  # the "60 to 70 times" holds only for a CPU without AMX


def test_renderers_fail_on_a_missing_source(tmp_path):
    (tmp_path / "data").mkdir()
    bad = tmp_path / "data" / "x.csv"
    bad.write_text("name,layer,what_it_does,status,status_detail,source,as_of\n"
                   "X,a,b,maintained,c,,2026-01\n")
    with pytest.raises(ValueError, match="no source"):
        table("accelerators/compilers.md", "ml-compilers.csv", tmp_path, path="data/x.csv")
    bad.write_text(bad.read_text().replace(",,2026-01", ",https://example.org,last year"))
    with pytest.raises(ValueError, match="as-of"):
        table("accelerators/compilers.md", "ml-compilers.csv", tmp_path, path="data/x.csv")


def test_timing_renderers_show_measured_rows_and_name_a_missing_gpu_file():
    html = table("accelerators/frameworks.md", "frameworks-tensorflow-cpu.json")
    assert "| tensorflow xla | small: 64 × 128 |" in html
    steps = renderers.get_value("cell")(DOCS, "data/frameworks-tensorflow-cpu.json", "{steps_per_call}",
                                        sort="-steps_per_call")
    assert steps == "20"
    doc = load_results(DATA / "frameworks-tensorflow-cpu.json")
    m = next(m for m in doc["measurements"] if m["variant"] == "tensorflow_xla"
             and m["params"]["size"] == "small")
    row = next(line for line in html.splitlines() if line.startswith("| tensorflow xla | small"))
    per_step_ms = m["median_s"] / 20 * 1e3
    assert f"| {per_step_ms:,.3f} |" in row  # the warm column is per step, not per call
    with pytest.raises(FileNotFoundError):
        table("accelerators/frameworks.md", "frameworks-h100.json", path="data/frameworks-h100.json-missing")
    html = table("accelerators/platforms.md", "opencl-intel-cpu.json")
    assert "vector_add" in html and "saxpy" in html
    hlo = renderers.get("text_file")(DOCS, path="data/xla-hlo-tensorflow-cpu.txt")
    assert hlo.startswith("```text") and "fusion(" in hlo


@pytest.mark.parametrize("script", ["gpu/frameworks.sh", "gpu/compilers.sh"])
def test_gpu_scripts_stop_with_one_line_without_a_gpu(tmp_path, script):
    """Without nvidia-smi on PATH the topic scripts measure nothing (no CPU figures labelled
    H200), say so in one line and exit 1, whatever frameworks are installed."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not available")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("dirname", "timeout"):  # what the scripts need before the GPU check
        (bindir / tool).symlink_to(shutil.which(tool))
    env = dict(os.environ, RESULTS_DIR=str(tmp_path), PATH=str(bindir))
    proc = subprocess.run([shutil.which("bash"), str(ROOT / script)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"{script}: no NVIDIA GPU here (nvidia-smi not found); nothing measured"]
    assert list(tmp_path.iterdir()) == [bindir]  # nothing written


def test_the_frameworks_page_prose_matches_the_committed_cpu_run():
    """The page says how the TensorFlow modes compare on the CPU machine: re-measuring and
    getting another picture must send someone to edit the sentence. (It named a winner at one
    size twice; each next run reversed it, inside the two rows' spread.) It names this run's
    reading and calls it noise, citing two repeats that overlapped at both sizes."""
    page = " ".join((DOCS / "accelerators/frameworks.md").read_text().split())
    assert ("In this run XLA was the faster at the small size (its slowest sample below "
            "`tf.function`'s fastest) and the two rows' samples overlap at the medium size") in page
    doc = load_results(DATA / "frameworks-tensorflow-cpu.json")
    by = {(m["variant"], m["params"]["size"]): m for m in doc["measurements"]}
    fn, xla = by["tensorflow_function", "small"], by["tensorflow_xla", "small"]
    assert xla["max_s"] < fn["min_s"]
    fn, xla = by["tensorflow_function", "medium"], by["tensorflow_xla", "medium"]
    assert fn["min_s"] <= xla["max_s"] and xla["min_s"] <= fn["max_s"]
    for repeat in ("fw-rep1.json", "fw-rep2.json"):  # the repeats the page cites
        doc = load_results(ROOT / "gpu/logs/h100-2026-12-06h/cpu" / repeat)
        by = {(m["variant"], m["params"]["size"]): m for m in doc["measurements"]}
        for size in ("small", "medium"):
            fn, xla = by["tensorflow_function", size], by["tensorflow_xla", size]
            assert fn["min_s"] <= xla["max_s"] and xla["min_s"] <= fn["max_s"], (repeat, size)


def test_fp32_column_is_vector_fp32_in_every_row():
    """One definition: vector FP32. AMD's ROCm MI300X table gives Vector FP32 = Matrix FP32 =
    163.4 TFLOPS (256 FLOPs/clock/CU, packed FP32); 81.7 is its Vector FP64, not FP32."""
    specs = {r["accelerator"]: r for r in rows("accelerator-specs.csv")}
    mi300x = specs["AMD Instinct MI300X"]
    assert float(mi300x["fp32_tflops"]) == 163.4
    assert "rocm.docs.amd.com" in mi300x["source"] and "fp32_tflops" not in mi300x["unconfirmed"]
    assert "packed fp32" in mi300x["notes"].lower()
    mi325x = specs["AMD Instinct MI325X"]  # the same chip and CU count: the same vector rate,
    assert float(mi325x["fp32_tflops"]) == float(mi300x["fp32_tflops"])  # read from a third party:
    assert "fp32_tflops" in mi325x["unconfirmed"]  # flagged on the page
    for name in ("AWS Trainium", "AWS Trainium2", "AWS Trainium3", "AWS Inferentia2", "Intel Gaudi 3"):
        assert not specs[name]["fp32_tflops"].strip(), name  # engine not stated: in the notes
    md = table("accelerators/hardware.md", "FP32 (vector)")
    assert "FP32 (vector)" in md


@pytest.mark.parametrize("name", ["NVIDIA H100 SXM", "NVIDIA H200 SXM", "NVIDIA B200", "NVIDIA L40S",
                                  "NVIDIA L4"])
def test_nvidia_fp8_is_twice_bf16_where_given(name):
    """Hopper, Ada and Blackwell run FP8 at twice the dense BF16 rate. H100 and H200 have
    NVIDIA's figure; B200, L40S and L4 have it from copies of NVIDIA's tables, flagged until
    NVIDIA's own page is read."""
    r = {r["accelerator"]: r for r in rows("accelerator-specs.csv")}[name]
    assert r["fp8_tflops"].strip(), name
    if name not in ("NVIDIA H100 SXM", "NVIDIA H200 SXM"):
        assert "fp8_tflops" in r["unconfirmed"], name
    assert float(r["fp8_tflops"]) == pytest.approx(2 * float(r["bf16_tflops"]), rel=0.02)


def test_b200_fp4_is_twice_its_fp8_where_given():
    r = {r["accelerator"]: r for r in rows("accelerator-specs.csv")}["NVIDIA B200"]
    assert float(r["fp4_tflops"]) == 2 * float(r["fp8_tflops"])
