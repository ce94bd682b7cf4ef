"""snippets/aws/choose_instance.py: memory estimates, ranking, and refusals of bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT, SNIPPETS, load_snippet, run_snippet, FULL, run_to

CHOOSER = "aws/choose_instance.py"
DATA = ROOT / "docs" / "data" / "aws-instances.csv"


@pytest.fixture(scope="module")
def mod():
    return load_snippet(CHOOSER)


@pytest.fixture(scope="module")
def instances(mod):
    return mod.load_instances(DATA)


@pytest.mark.parametrize(("precision", "expected"), [("fp32", 16), ("bf16", 16), ("fp16", 16),
                                                     ("fp8", 14)])
def test_adam_bytes_per_parameter(mod, precision, expected):
    assert mod.training_bytes_per_param(precision) == expected


def test_memory_estimates(mod):
    assert mod.estimate_memory_gib(2**30, "bf16", False, 1.0) == 2
    assert mod.estimate_memory_gib(2**30, "int4", False, 1.2) == pytest.approx(0.6)
    assert mod.estimate_memory_gib(7e9, "bf16", True, 1.0) == pytest.approx(7e9 * 16 / 2**30)
    with pytest.raises(ValueError, match="int8"):
        mod.estimate_memory_gib(7e9, "int8", True, 1.2)


def test_ranking_fits_and_is_cheapest_first(mod, instances):
    options, _ = mod.rank(instances, 60, 4, 10, "training", "bf16")
    by_type = {i.instance_type: i for i in instances}
    assert options
    for o in options:
        i = by_type[o.instance_type]
        assert i.accelerator_count >= 4 and i.accelerator_memory_gib - 1.0 >= 15
        assert "bf16" in i.low_precision and i.status != "retired"
        assert o.total_usd == pytest.approx(i.usd_per_hour * 10, abs=0.006)
    totals = [o.total_usd for o in options]
    assert totals == sorted(totals)
    # Nothing cheaper that fits was left out.
    fitting = [i for i in instances if i.accelerator_count >= 4 and i.accelerator_memory_gib >= 16
               and "training" in i.workloads and "bf16" in i.low_precision
               and i.status != "retired"]
    assert len(options) == len(fitting)


def test_a_gpu_slice_serves_a_small_one_gpu_job_only(mod, instances):
    one, _ = mod.rank(instances, 1.5, 1, 1, "inference")  # an eighth of an L4 less the reserve
    assert one[0].instance_type.startswith("g6f.")
    two, _ = mod.rank(instances, 1.5, 2, 1, "inference")
    assert not any(o.instance_type.startswith("g6f.") for o in two)


def test_retired_only_on_request(mod, instances):
    default, _ = mod.rank(instances, 10, 1, 1, "training", "fp16")
    assert not any(o.instance_type.startswith("p3.") for o in default)
    everything, _ = mod.rank(instances, 10, 1, 1, "training", "fp16", include_retired=True)
    assert any(o.instance_type == "p3.2xlarge" for o in everything)


def test_bf16_keeps_t4_and_v100_out(mod, instances):
    options, _ = mod.rank(instances, 10, 1, 1, "inference", "bf16", include_retired=True)
    assert not any(o.accelerator in ("NVIDIA T4", "NVIDIA V100") for o in options)


def test_cli_table_and_json_agree():
    args = ["--data", DATA, "--memory-gib", "30", "--gpus", "2", "--hours", "5", "--top", "3"]
    table = run_snippet(CHOOSER, *args)
    data = run_snippet(CHOOSER, *args, "--json")
    assert table.returncode == data.returncode == 0, table.stderr + data.stderr
    doc = json.loads(data.stdout)
    assert len(doc["options"]) == 3 and doc["memory_gib"] == 30
    first = doc["options"][0]["instance_type"]
    assert table.stdout.splitlines()[3].split()[1] == first


def test_explain_shows_the_formula():
    out = run_snippet(CHOOSER, "--data", DATA, "--params", "7e9", "--precision", "bf16",
                      "--training", "--gpus", "8", "--hours", "10", "--explain")
    assert out.returncode == 0, out.stderr
    assert "2 weights + 2 gradients + 8 Adam moments + 4 fp32 master weights = 16" in out.stdout
    assert "125.17 GiB" in out.stdout and "15.65 GiB" in out.stdout


def test_kv_cache_formula(mod):
    # 2 x layers x KV heads x head dim x tokens x sequences x bytes: Llama 3.1 8B at 128k in bf16.
    assert mod.kv_cache_bytes(32, 8, 128, 131072, 1, 2) == 2**34
    assert mod.kv_cache_bytes(32, 8, 128, 1000, 4, 1) == 2 * 32 * 8 * 128 * 1000 * 4


# Parameter totals published on each model's Hugging Face page (safetensors metadata), read
# 2026-12-01: counting them from the config shapes must give the same number exactly.
@pytest.mark.parametrize(("name", "published"), [
    ("llama-3.1-8b", 8_030_261_248), ("llama-3.1-70b", 70_553_706_496),
    ("mistral-7b-v0.3", 7_248_023_552), ("qwen2.5-7b", 7_615_616_512),
    ("qwen2.5-72b", 72_706_203_648)])
def test_presets_count_their_published_parameters(mod, name, published):
    assert mod.count_params(mod.MODELS[name]) == published
    assert mod.MODELS[name].source.startswith("https://huggingface.co/")


def test_lora_rank_16_on_llama_3_8b(mod):
    # PEFT's print_trainable_parameters() for r=16 on q,k,v,o,gate,up,down of Llama 3 8B.
    assert mod.lora_params(mod.MODELS["llama-3.1-8b"], 16) == 41_943_040


def memory_only(*args):
    out = run_snippet(CHOOSER, *args, "--memory-only")
    assert out.returncode == 0, out.stderr
    return out.stdout


def gib(text):
    return float(text.split("memory = ")[1].split(" = ")[1].split()[0])


def test_worked_example_kv_cache_at_128k():
    out = memory_only("--model", "llama-3.1-8b", "--precision", "bf16", "--context", "131072")
    assert "= 17.18 GB (16.00 GiB)" in out
    batch4 = memory_only("--model", "llama-3.1-8b", "--precision", "bf16", "--context", "131072",
                         "--batch", "4")
    assert "= 68.72 GB" in batch4
    fp8 = memory_only("--model", "llama-3.1-8b", "--precision", "bf16", "--context", "131072",
                      "--kv-precision", "fp8")
    assert "= 8.59 GB" in fp8


def test_same_kv_cache_from_a_shape_as_from_the_preset():
    preset = memory_only("--model", "llama-3.1-8b", "--precision", "bf16", "--context", "8192")
    shape = memory_only("--params", "8030261248", "--precision", "bf16", "--layers", "32",
                        "--kv-heads", "8", "--head-dim", "128", "--context", "8192")
    assert gib(preset) == gib(shape)


def test_full_vs_lora_vs_qlora_on_a_24_gb_gpu(mod, instances):
    sizes = {m: gib(memory_only("--model", "llama-3.1-8b", "--precision", "bf16", f"--{m}"))
             for m in ("training", "lora", "qlora")}
    assert sizes["qlora"] < sizes["lora"] < sizes["training"]
    a10g = next(i for i in instances if i.instance_type == "g5.xlarge")
    usable = mod.usable_gib(a10g, 1.0)
    assert sizes["lora"] < usable and sizes["qlora"] < usable < sizes["training"]


def test_a_t4_is_not_ranked_for_a_job_that_needs_all_its_memory(mod, instances):
    # 15.65 GiB per GPU: under a T4's nominal 16 GiB but over 16 - 1 GiB of reserve.
    options, _ = mod.rank(instances, 125.2, 8, 1, "training", "fp16")
    assert options and not any(o.accelerator == "NVIDIA T4" for o in options)
    no_reserve, _ = mod.rank(instances, 125.2, 8, 1, "training", "fp16", reserve_gib=0)
    assert any(o.accelerator == "NVIDIA T4" for o in no_reserve)


def test_json_is_strict_and_finite():
    out = run_snippet(CHOOSER, "--data", DATA, "--memory-gib", "3", "--hours", "100000", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert all(o["total_usd"] < 1e9 for o in doc["options"])


def test_memory_only_needs_no_table(tmp_path):
    out = run_snippet(CHOOSER, "--model", "qwen2.5-7b", "--precision", "bf16", "--context", "32768",
                      "--memory-only", "--data", tmp_path / "missing.csv")
    assert out.returncode == 0 and "KV cache = 2 x 28 layers x 4 KV heads" in out.stdout


def test_standalone_copy_reads_the_table_it_is_given(tmp_path):
    copy = tmp_path / "choose_instance.py"
    copy.write_text((ROOT / "snippets" / CHOOSER).read_text())
    run = subprocess.run([sys.executable, str(copy), "--memory-gib", "10", "--hours", "1"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and "pass --data" in run.stderr and "Traceback" not in run.stderr
    (tmp_path / "aws-instances.csv").write_text(DATA.read_text())
    run = subprocess.run([sys.executable, str(copy), "--data", "aws-instances.csv",
                          "--memory-gib", "10", "--hours", "1"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0 and "instances fit" in run.stdout


BAD = "a,b\n1,2\n"


# Each case: the arguments (M8B and P7B stand for a model given by name or by size, in bf16) and
# what the one-line error must say. The number types' wording is the bad-input habit's.
SHORT = {"M8B": "--model llama-3.1-8b --precision bf16", "P7B": "--params 7e9 --precision bf16"}
BAD_INPUT = [
    ("--memory-gib 10 --hours -5", "--hours: must be from 0.001 to 100000.0, got -5"),
    ("--memory-gib 10 --hours 1e308", "--hours: must be from"),
    ("--memory-gib 10 --hours inf", "--hours: must be from"),
    ("--memory-gib 0 --hours 1", "--memory-gib: must be from 0.001"),
    ("--memory-gib ten --hours 1", "--memory-gib: not a number: 'ten'"),
    ("--memory-gib nan --hours 1", "--memory-gib: must be from"),
    ("--memory-gib 10", "--hours is needed"),
    ("--params 7e9 --precision fp12 --hours 1", "invalid choice: 'fp12'"),
    ("--params 7e9 --hours 1", "need --precision"),
    ("--params 1e20 --precision bf16 --hours 1", "--params: must be from 1.0 to 10000000000000.0"),
    ("--params 7e9 --precision int4 --training --hours 1", "int8/int4"),
    ("--memory-gib 10 --hours 1 --gpus 1.5", "--gpus: not a whole number"),
    ("--memory-gib 10 --hours 1 --gpus 64", "one instance"),
    ("--hours 1", "one of the arguments"),
    ("--memory-gib 5000 --hours 1 --gpus 8", "closest: p6-b300.48xlarge"),
    ("--model llama-9 --precision bf16 --hours 1", "invalid choice: 'llama-9'"),
    ("--model llama-3.1-8b --params 7e9 --hours 1", "not allowed with"),
    ("M8B --context 0 --hours 1", "--context: must be from 1 to"),
    ("M8B --context 1e9 --hours 1", "--context: not a whole number"),
    ("M8B --context 999999999 --hours 1", "--context: must be from 1 to 100000000"),
    ("M8B --context 8 --batch -1 --hours 1", "--batch: must be from 1"),
    ("M8B --context 8 --training --hours 1", "--context sizes the KV cache of inference"),
    ("P7B --context 8 --hours 1", "--context needs the model's shape"),
    ("P7B --layers 32 --hours 1", "add --context"),
    ("P7B --layers x --hours 1", "--layers: not a whole number"),
    ("P7B --kv-heads 0 --hours 1", "--kv-heads: must be from 1"),
    ("P7B --head-dim 1e5 --hours 1", "--head-dim: not a whole number"),
    ("M8B --kv-precision int3 --hours 1", "invalid choice: 'int3'"),
    ("P7B --lora --hours 1", "needs --trainable-fraction"),
    ("P7B --lora --trainable-fraction 1.5 --hours 1", "--trainable-fraction: must be from"),
    ("M8B --lora --lora-rank 0 --hours 1", "--lora-rank: must be from 1"),
    ("--model llama-3.1-8b --precision int4 --qlora --hours 1", "4-bit NF4"),
    ("M8B --lora --qlora --hours 1", "not allowed with"),
    ("--memory-gib 10 --lora --hours 1", "--memory-gib is the total"),
    ("--memory-gib 10 --hours 1 --reserve-gib -1", "--reserve-gib: must be from 0.0 to 64.0"),
    ("--memory-gib 10 --hours 1 --reserve-gib nan", "--reserve-gib: must be from"),
    ("--memory-gib 10 --hours 1 --overhead 0.5", "--overhead: must be from 1.0"),
    ("--memory-gib 10 --hours 1 --data /nonexistent/x.csv", "pass --data"),
    ("--memory-gib 10 --hours 1 --data /", "error: "),
]


@pytest.mark.parametrize(("line", "message"), BAD_INPUT)
def test_bad_input_is_one_line_and_exit_2(line, message):
    args = " ".join(SHORT.get(word, word) for word in line.split()).split()
    full = args if "--data" in args else ["--data", DATA, *args]
    out = run_snippet(CHOOSER, *full)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize(("content", "message"), [
    ("", "missing columns"),
    (BAD, "missing columns"),
    (None, "not a text CSV file"),
    ("CORRUPT", "not YYYY-MM-DD"),
    ("INF", "finite and positive"),
    ("ZERO", "finite and positive"),
])
def test_damaged_tables_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "table.csv"
    text = DATA.read_text()
    if content is None:
        path.write_bytes(b"\xff\xfe\x00garbage\x9c" * 50)
    elif content == "CORRUPT":
        path.write_text(text.replace(",2026-07-20,", ",2026-13-xx,", 1))
    elif content == "INF":
        header, first, rest = text.split("\n", 2)
        cells = first.split(",")
        cells[7] = "inf"
        path.write_text("\n".join([header, ",".join(cells), rest]))
    elif content == "ZERO":
        header, first, rest = text.split("\n", 2)
        cells = first.split(",")
        cells[7], cells[8] = "0", "0"
        path.write_text("\n".join([header, ",".join(cells), rest]))
    else:
        path.write_text(content)
    out = run_snippet(CHOOSER, "--data", path, "--memory-gib", "10", "--hours", "1")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr


def test_help():
    out = run_snippet(CHOOSER, "--help")
    assert out.returncode == 0 and "--memory-gib" in out.stdout
    assert "--data" in out.stdout and "--context" in out.stdout and "--qlora" in out.stdout




@pytest.mark.parametrize("stdout", ["/dev/full", "closed pipe"])
@pytest.mark.parametrize("args", [["--hours", "1"], ["--hours", "1", "--json"], ["--memory-only"]])
def test_a_full_device_or_a_closed_pipe_is_one_line_or_quiet(stdout, args):
    proc = run_to(stdout, CHOOSER, "--memory-gib", "10", *args)
    assert proc.returncode == 1
    assert proc.stderr == (FULL if stdout == "/dev/full" else "")  # | head: a quiet end
