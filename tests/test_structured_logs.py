"""The JSON that tools/structure_logs.py wrote from raw tool output (HLO, ncu, SASS) matches
its raw file today, and its parsers refuse a file with nothing to count."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("structure_logs", ROOT / "tools/structure_logs.py")
structure_logs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(structure_logs)


@pytest.mark.parametrize("path", sorted(structure_logs.structured()), ids=lambda p: p.name)
def test_committed_json_matches_its_raw_file(path):
    assert path.is_file(), f"run: python tools/structure_logs.py ({path.name} is missing)"
    assert path.read_text() == structure_logs.dump(structure_logs.structured()[path])


def test_each_kind_of_raw_file_is_structured():
    names = {p.name for p in structure_logs.structured()}
    assert {"xla-hlo-jax-h100.counts.json", "saxpy-ncu-h100.json",
            "mandelbrot-sass-h100.loops.json"} <= names


def test_the_parsers_refuse_a_file_with_nothing_to_count():
    with pytest.raises(ValueError, match="no fused"):
        structure_logs.hlo_counts("HloModule m\nENTRY %m { ROOT %a = f32[] add(%b, %c) }\n")
    with pytest.raises(ValueError, match="no kernels"):
        structure_logs.ncu_kernels("==PROF== nothing profiled\n")
    hlo = structure_logs.hlo_counts((ROOT / "docs/data/xla-hlo-jax-h100.txt").read_text())
    assert (hlo["total"], hlo["ops"], hlo["kinds"]) == (10, "6 multiply, 3 add, 1 tanh", "kLoop")


def copied_tool(tmp_path):
    """The tool in a copy of the tree holding the raw files it needs and the matmul build's JSON."""
    import shutil

    (tmp_path / "tools").mkdir()
    shutil.copy(ROOT / "tools/structure_logs.py", tmp_path / "tools")
    for rel in [*structure_logs.NCU, "docs/data/matmul-build-h100.txt",
                "docs/data/matmul-build-h100.json"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path / "tools/structure_logs.py"


def run_tool(tool, *args, limit: int | None = None):
    import os
    import resource
    import subprocess
    import sys

    def size_limit():  # `ulimit -f`, as on a nearly full disk
        if limit:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "snippets")}
    return subprocess.run([sys.executable, str(tool), *args], capture_output=True, text=True,
                          env=env, timeout=120, preexec_fn=size_limit)


def test_a_write_that_fails_keeps_the_earlier_file(tmp_path):
    tool = copied_tool(tmp_path)
    build = tmp_path / "docs/data/matmul-build-h100.json"
    before = build.read_bytes()
    assert len(before) > 4096
    proc = run_tool(tool, limit=4096)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == f"error: cannot write {build}: File too large\n"
    assert build.read_bytes() == before
    assert not [p for p in build.parent.iterdir() if p.name.endswith(".tmp")]


def test_help_writes_nothing(tmp_path):
    tool = copied_tool(tmp_path)
    (tmp_path / "docs/data/matmul-build-h100.json").unlink()
    proc = run_tool(tool, "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage:")
    assert not list(tmp_path.rglob("*.json"))


def test_mandelbrot_ncu_sections_name_their_variant():
    launch = ("  mandelbrot_kernel_chunked[abi:v1](Array<double, 1, C, mutable, aligned>) (192, 64, 1)"
              "x(8, 16, 1), Context 1, Stream 7, Device 0, CC 9.0\n")
    metric = "    sm__inst_executed_pipe_fp64.sum                 inst      {:,}\n"
    report = ("===== cuda_f64_chunk\n" + launch + metric.format(1200) + launch + metric.format(7)
              + "===== cuda_f32\nncu failed for cuda_f32\n===== cuda_f32_chunk\n" + launch
              + metric.format(3))
    # the first launch of each section; a section with no launch is left out
    assert structure_logs.variant_profiles(report) == {
        "cuda_f64_chunk": {"sm__inst_executed_pipe_fp64.sum": 1200.0},
        "cuda_f32_chunk": {"sm__inst_executed_pipe_fp64.sum": 3.0}}
    with pytest.raises(ValueError, match="no profiled launch"):
        structure_logs.variant_profiles("===== cuda_f32\nncu failed for cuda_f32\n")
