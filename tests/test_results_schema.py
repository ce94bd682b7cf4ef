"""Every benchmark results file under docs/data/ meets the current results schema
(snippets/bench/results.py): the code's commit, calls_per_sample on every row, at least 10
samples per timed figure, not partial, not a quick check. And the renderers' one loader
(hooks/renderers/run_details.load) enforces the same."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import results
from helpers import ROOT

DATA = ROOT / "docs" / "data"

# JSON files under docs/data/ that are not benchmark results files, and what they are instead,
# named without the card they came from (a file is named for its card: -h100, -h200, ...).
NOT_RESULTS = {
    "doctor.json": "a gpu_doctor report (schema gpu-survival-toolkit/gpu-doctor/1)",
    "keras-history-example.json": "a Keras training history written by snippets/keras/train.py",
    "mandelbrot-gpu-specs.json": "datasheet figures with their sources, not measurements",
    "mandelbrot-ncu.json": "an ncu report's metrics per variant (tools/structure_logs.py)",
    "mandelbrot-sass.loops.json": "SASS loop counts (tools/structure_logs.py)",
    "saxpy-ncu.json": "an ncu report's kernels (tools/structure_logs.py)",
    "matmul-build.json": "ptxas's registers and shared memory (tools/structure_logs.py)",
    "matmul-ncu.json": "an ncu report's metrics (tools/structure_logs.py)",
    "matmul-ncu-numba.json": "an ncu report's metrics (tools/structure_logs.py)",
    "reduction-ncu.json": "an ncu report's kernels (tools/structure_logs.py)",
    "reduction-rows-ncu.json": "an ncu report's metrics (gpu/reduction.sh, structure_logs)",
    "timeline-trace.json": "recorded timelines, their gaps named (tools/timeline_trace.py)",
    "xla-hlo-jax.counts.json": "HLO operation counts (tools/structure_logs.py)",
    "xla-hlo-tensorflow-cpu.counts.json": "HLO operation counts (tools/structure_logs.py)",
}


CARD = re.compile(r"-[a-z]\d{2,4}[a-z]?(?=\.)")  # -h100, -h200, -a100, -l40s


def results_files() -> list[Path]:
    return sorted(p for p in DATA.glob("*.json") if CARD.sub("", p.name) not in NOT_RESULTS)


@pytest.mark.parametrize("path", results_files(), ids=lambda p: p.name)
def test_results_file_meets_the_current_schema(path):
    doc = results.read_results(path, current=True)  # one-line ValueError naming the problem
    assert not doc.get("partial"), f"{path.name} is an interrupted run (partial): measure it again"
    assert not doc.get("quick_check"), f"{path.name} is a quick check (fewer than 10 samples)"
    assert doc["measurements"], f"{path.name} holds no measurements"
    gpus = [g.get("name", "") for g in doc["system"].get("gpus") or []]
    if "-h200" in path.stem:  # the file name is what pages and readers go by
        assert gpus and all("H200" in g for g in gpus), f"{path.name} was measured on {gpus}"
    if path.stem.endswith("-cpu"):
        gpu_rows = [m for m in doc["measurements"] if m["device"] == "gpu"
                    and "simulator" not in m.get("clock", "")]
        assert not gpu_rows, f"{path.name} is named a CPU run but has GPU figures"


@pytest.mark.parametrize("name", sorted(NOT_RESULTS))
def test_files_listed_as_not_results_exist_and_are_not_results(name):
    paths = [p for p in DATA.glob("*.json") if CARD.sub("", p.name) == name]
    assert paths, f"{name} (of any card) is listed in NOT_RESULTS but does not exist: drop it"
    for path in paths:
        doc = json.loads(path.read_text())
        schema = doc.get("schema", "") if isinstance(doc, dict) else ""
        assert not schema.startswith("gpu-survival-toolkit/results/"), (
            f"{path.name} is a results file: remove {name} from NOT_RESULTS")


def test_there_are_results_files_to_check():
    assert len(results_files()) >= 5  # a wrong folder or glob would pass the checks above


# ---- the renderers' loader ----

@pytest.fixture
def loader():
    from renderers.run_details import describe_run, load  # the installed package

    return load, describe_run


def write(docs: Path, name: str, **flags) -> None:
    m = {"case": "c", "variant": "v", "device": "cpu", "phase": "kernel", "median_s": 1.0,
         "min_s": 1.0, "max_s": 1.0, "repeats": 3 if flags.get("quick_check") else 10,
         "calls_per_sample": 1, "clock": "host"}
    system = {"date": "2026-12-01T00:00:00+00:00", "command": "python run.py",
              "host": {"cpu": "Test CPU", "cores": 2}, "gpus": [], "libraries": {},
              "cuda": {"runtime": "12.6", "nvcc": "12.6", "frameworks": {"torch": "12.4"}}}
    results.write_results(docs / name, "b", system, [m], code={"commit": "a" * 40, "dirty": True},
                          variants={"v": {"label": "V", "device": "cpu"}}, **flags)


def test_loader_reads_a_file_and_names_a_missing_one(tmp_path, loader):
    load_results, describe_run = loader
    write(tmp_path, "cpu.json")
    doc = load_results(tmp_path, "cpu.json")
    assert doc["system"]["host"]["cpu"] == "Test CPU"
    text = describe_run(doc)
    assert "commit <code>aaaaaaaaaaaa</code> with uncommitted changes" in text
    assert "CUDA runtime 12.6, nvcc 12.6, torch reports CUDA 12.4" in text
    with pytest.raises(FileNotFoundError, match="gpu.json not found"):
        load_results(tmp_path, "gpu.json")


@pytest.mark.parametrize(("flags", "message"), [({"partial": True}, "interrupted run"),
                                                ({"quick_check": True}, "quick check")])
def test_loader_refuses_partial_runs_and_quick_checks(tmp_path, loader, flags, message):
    load_results, _ = loader
    write(tmp_path, "r.json", **flags)
    with pytest.raises(ValueError, match=message):
        load_results(tmp_path, "r.json")


def test_loader_refuses_a_broken_file_in_one_line(tmp_path, loader):
    load_results, _ = loader
    (tmp_path / "r.json").write_text('{"schema": "gpu-survival-toolkit/results/2"}')
    with pytest.raises(ValueError, match="missing") as err:
        load_results(tmp_path, "r.json")
    assert "\n" not in str(err.value)
