"""snippets/hardware/llm_memory.py: the weights + KV cache arithmetic the hardware and
why-CPU pages include, checked against hand-computed values and published configs."""

from __future__ import annotations

import importlib.util
import re
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


def test_default_memory_is_what_the_h200_reports():
    """The default is the H200's memory.total from the project's own results files (MiB, as
    nvidia-smi reports it), not the datasheet's "141 GB" read as 141e9 bytes."""
    text = (ROOT / "docs" / "data" / "doctor-h200.json").read_text()
    reported = {int(m) for m in re.findall(r'"memory_mib":\s*(\d+)', text)}
    assert reported == {llm.H200_MIB}


def test_70b_bf16_weights_fit_one_h200_with_about_9_gib_left():
    bf16 = llm.plan("llama-3.1-70b", "bf16", "bf16", 1, 1, llm.H200_MIB, 4.8, 0.0)
    assert bf16["weights"] == pytest.approx(141.2e9)  # more than 141e9 bytes ...
    assert bf16["weights_alone_fit"] and bf16["gpus"] == 1  # ... but less than 143,771 MiB
    assert 8.8 * llm.GIB < bf16["left"] < 9.0 * llm.GIB
    # the same weights against the datasheet figure taken as bytes (141e9 B = 134,470 MiB) would not fit
    assert not llm.plan("llama-3.1-70b", "bf16", "bf16", 1, 1, 141e9 / llm.MIB, 4.8, 0.0)["weights_alone_fit"]


def test_70b_bf16_with_8_users_needs_two_h200s_but_fp8_needs_one():
    bf16 = llm.plan("llama-3.1-70b", "bf16", "bf16", 8192, 8, llm.H200_MIB, 4.8, 0.0)
    assert bf16["weights_alone_fit"] and bf16["gpus"] == 2
    fp8 = llm.plan("llama-3.1-70b", "fp8", "bf16", 8192, 8, llm.H200_MIB, 4.8, 0.0)
    assert fp8["gpus"] == 1 and fp8["left"] > 0


def test_reserve_and_batch_raise_the_gpu_count():
    l4 = 22888  # MiB: an L4 as EC2 reports it (docs/data/aws-instances.csv)
    small = llm.plan("llama-3.1-8b", "bf16", "bf16", 8192, 1, l4, 1.0, 0.0)
    assert small["gpus"] == 1
    assert llm.plan("llama-3.1-8b", "bf16", "bf16", 8192, 1, l4, 1.0, 8 * 1024)["gpus"] == 2
    assert llm.plan("llama-3.1-8b", "bf16", "bf16", 8192, 64, l4, 1.0, 0.0)["gpus"] > 2


def test_decode_bound_is_bandwidth_over_bytes_and_scales_with_gpus():
    one = llm.decode_bound(100e9, 0.0, 1, 5e12)
    assert one == pytest.approx(50.0)
    assert llm.decode_bound(100e9, 0.0, 2, 5e12) == pytest.approx(2 * one)


@pytest.mark.parametrize("args", [
    ["--batch", "0"], ["--batch", "-3"], ["--batch", "nan"], ["--batch", "1e99"],
    ["--context", "x"], ["--gpu-mib", "nan"], ["--gpu-tbs", "0"], ["--gpu-tbs", "inf"],
    ["--gpu-mib", "inf"], ["--gpu-mib", "1e-310"], ["--reserve-mib", "inf"],
    ["--gpu-mib", "1000", "--reserve-mib", "999.9999"],
    ["--reserve-mib", "200000"], ["--gpu-gb", "141"], ["--model", "gpt-5"], ["--weights", "fp3"],
])
def test_bad_input_is_refused_by_argparse(args):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr  # argparse's usage and its error, no traceback
    assert "Traceback" not in proc.stderr and "error:" in proc.stderr


def test_runs_alone_in_an_empty_folder(tmp_path):
    copy = tmp_path / "llm_memory.py"
    copy.write_text(SCRIPT.read_text())
    proc = subprocess.run([sys.executable, str(copy), "--help"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0 and "KV cache" in proc.stdout
    proc = subprocess.run([sys.executable, str(copy)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and "need 2 GPUs" in proc.stdout


PAGES = ("docs/why/why-cpu-is-not-enough.md", "docs/accelerators/hardware.md",
         "docs/setup/gpus-on-aws.md", "docs/why/cpu-vs-gpu.md")


@pytest.mark.parametrize("page", PAGES)
def test_pages_give_the_h200_memory_the_card_reports(page):
    """The pages that size models against an H200 use the memory it reports, in MiB/GiB, and
    none of them says the 70B model in BF16 does not fit on one."""
    text = (ROOT / page).read_text()
    assert "141 GB per GPU" not in text and "does not fit on\none H200" not in text
    for mib in re.findall(r"(\d{3},\d{3}) MiB", text):
        assert int(mib.replace(",", "")) == llm.H200_MIB, (page, mib)
    for gib in re.findall(r"(?<![\d.])(14\d\.\d) GiB", text):
        assert gib == f"{llm.H200_MIB / 1024:.1f}" or (page.endswith("gpus-on-aws.md") and gib == "141.0"), (page, gib)


@pytest.mark.parametrize("stdout", ["closed", "/dev/full", "closed pipe"])
def test_stdout_closed_full_or_gone_is_one_line_or_quiet_never_a_silent_success(stdout):
    """`>&-` and `> /dev/full` are one line and a non-zero exit (the answer was not given);
    `| head -1` ends quietly, with no BrokenPipeError traceback."""
    from helpers import run_to

    if stdout == "closed":
        proc = subprocess.run(["bash", "-c", f"{sys.executable} {SCRIPT} >&-"],
                              capture_output=True, text=True, timeout=60)
        assert (proc.returncode, proc.stderr) == (
            2, "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
        return
    proc = run_to(stdout, "hardware/llm_memory.py")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ("error: cannot write to standard output: No space left on device\n"
                           if stdout == "/dev/full" else "")
