"""snippets/aws/choose_instance.py: memory estimates, ranking, and refusals of bad input."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

from pathlib import Path

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


def job(mod, memory, workload, precision=None, hours=1, gpus=None, on_reference=False, **kw):
    return mod.Job(memory, workload, precision, hours, on_reference, gpus, **kw)


def test_ranking_fits_and_is_cheapest_first(mod, instances):
    options, _, _ = mod.rank(instances, job(mod, 60, "training", "bf16", 10, gpus=4))
    by_type = {i.instance_type: i for i in instances}
    assert options
    for o in options:
        i = by_type[o.instance_type]
        assert i.accelerator_count >= 4 and i.accelerator_memory_gib - 1.0 >= 15
        assert "bf16" in i.low_precision and i.status != "retired"
        assert o.total_usd == pytest.approx(i.usd_per_hour * 10, abs=0.006)
        assert o.split == o.gpus_used == 4 and o.gpus_paid == i.accelerator_count
    totals = [o.total_usd for o in options]
    assert totals == sorted(totals)
    # Nothing cheaper that fits was left out.
    fitting = [i for i in instances if i.accelerator_count >= 4 and i.accelerator_memory_gib >= 16
               and "training" in i.workloads and "bf16" in i.low_precision
               and i.status != "retired"]
    assert len(options) == len(fitting)


def test_the_split_is_the_fewest_gpus_that_hold_the_job(mod, instances):
    options, _, _ = mod.rank(instances, job(mod, 100, "inference", "bf16", 10))
    by_type = {o.instance_type: o for o in options}
    assert by_type["g6e.48xlarge"].split == 4 and by_type["g6e.12xlarge"].split == 4  # 25 of 43.7
    assert by_type["p5.48xlarge"].split == 2 and by_type["p5en.48xlarge"].split == 1
    assert "g6e.xlarge" not in by_type and "g6.48xlarge" in by_type  # 12.5 GiB on each of 8 L4
    for o in options:  # the fewest: half as many GPUs would not hold it
        assert o.gib_per_gpu_needed <= o.usable_gib_per_gpu
        assert o.split == 1 or 100 / (o.split // 2) > o.usable_gib_per_gpu
        assert o.gpus_used == o.split  # --instance-hours: one copy, the rest idle
        idle = o.gpus_paid - o.gpus_used
        assert (f"pays for {idle:g} idle GPU" in "; ".join(o.warnings)) == (idle > 0)
        assert o.parallelism == ("one GPU" if o.split == 1 else f"tensor parallel over {o.split}")


def test_a_gpu_slice_serves_a_small_one_gpu_job_only(mod, instances):
    one, _, _ = mod.rank(instances, job(mod, 1.5, "inference", gpus=1))  # an eighth of an L4
    assert one[0].instance_type.startswith("g6f.") and one[0].gpus_used == one[0].gpus_paid
    auto, _, _ = mod.rank(instances, job(mod, 1.5, "inference"))
    assert auto[0].instance_type == one[0].instance_type
    two, _, _ = mod.rank(instances, job(mod, 1.5, "inference", gpus=2))
    assert not any(o.instance_type.startswith("g6f.") for o in two)


def test_retired_only_on_request(mod, instances):
    default, _, _ = mod.rank(instances, job(mod, 10, "training", "fp16", gpus=1))
    assert not any(o.instance_type.startswith("p3.") for o in default)
    everything, _, _ = mod.rank(instances, job(mod, 10, "training", "fp16", gpus=1,
                                               include_retired=True))
    p3 = next(o for o in everything if o.instance_type == "p3.2xlarge")
    assert "retired" in p3.warnings
    assert any(o.instance_type == "p3dn.24xlarge" and "legacy" in "; ".join(o.warnings)
               for o in everything)


def test_bf16_keeps_t4_and_v100_out(mod, instances):
    options, _, _ = mod.rank(instances, job(mod, 10, "inference", "bf16", include_retired=True))
    assert not any(o.accelerator in ("NVIDIA T4", "NVIDIA V100") for o in options)


def test_cli_table_and_json_agree():
    args = ["--data", DATA, "--memory-gib", "30", "--gpus", "2", "--instance-hours", "5",
            "--top", "3"]
    table = run_snippet(CHOOSER, *args)
    data = run_snippet(CHOOSER, *args, "--json")
    assert table.returncode == data.returncode == 0, table.stderr + data.stderr
    doc = json.loads(data.stdout)
    assert len(doc["options"]) == 3 and doc["memory_gib"] == 30 and doc["hours_on"] == "instance"
    lines = table.stdout.splitlines()
    rows = [line.split() for line in lines[lines.index(next(x for x in lines if x.startswith("--"))) + 1:]
            if not line.split()[0].endswith(":")]  # the rows, not the notes ("type: ...")
    assert [r[0] for r in rows] == [o["instance_type"] for o in doc["options"]]
    assert [r[-1] for r in rows] == [f"{o['total_usd']:,.2f}" for o in doc["options"]]


def test_explain_shows_the_formula():
    out = run_snippet(CHOOSER, "--data", DATA, "--params", "7e9", "--precision", "bf16",
                      "--training", "--gpus", "8", "--hours", "10", "--explain")
    assert out.returncode == 0, out.stderr
    assert "2 weights + 2 gradients + 8 Adam moments + 4 fp32 master weights = 16" in out.stdout
    assert "125.17 GiB" in out.stdout and "split over 8 GPUs = 15.65 GiB" in out.stdout


def choose(*args):
    out = run_snippet(CHOOSER, "--data", DATA, *args, "--top", "1000", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


LLAMA_70B_MONTH = ["--model", "llama-3.1-70b", "--precision", "bf16", "--inference", "--context",
                   "8192", "--batch", "8"]


def test_a_70b_model_for_a_month_is_split_not_put_on_one_b300():
    """Issue 45: with --gpus 1 (the old default) the only fit is one of the eight B300s of a
    p6-b300.48xlarge, $102,540 for 720 h; split over the GPUs of one instance it costs far less."""
    one = choose(*LLAMA_70B_MONTH, "--instance-hours", "720", "--gpus", "1")
    old = one["options"][0]
    assert old["instance_type"] == "p6-b300.48xlarge" and round(old["total_usd"]) == 102540
    assert (old["gpus_used"], old["gpus_paid"]) == (1, 8) and "pays for 7 idle GPUs" in old["warnings"]
    for hours in ("--hours", "--instance-hours"):
        doc = choose(*LLAMA_70B_MONTH, hours, "720")
        top = doc["options"][0]
        assert top["total_usd"] < old["total_usd"] / 2 and top["gpus_used"] > 1, top
        for o in doc["options"]:
            assert o["accelerator"] and 0 < o["gpus_used"] <= o["gpus_paid"]
            assert o["split"] * o["copies"] == o["gpus_used"]
            assert o["gib_per_gpu_needed"] == round(doc["memory_gib"] / o["split"], 2)
    assert doc["hours_on"] == "instance"


def spec(name):
    import csv
    with open(ROOT / "docs" / "data" / "accelerator-specs.csv", newline="") as f:
        return next(r for r in csv.DictReader(f) if r["accelerator"] == name)


def test_training_hours_scale_with_the_cards_tensor_throughput():
    doc = choose("--params", "7e9", "--precision", "bf16", "--training", "--hours", "100",
                 "--nvidia-only")
    assert doc["hours_on"] == "NVIDIA H100 SXM" and "tensor" in doc["throughput"]
    by_type = {o["instance_type"]: o for o in doc["options"]}
    h100, l4 = by_type["p5.48xlarge"], by_type["g6.48xlarge"]
    assert h100["gpus_used"] == l4["gpus_used"] == 8
    ratio = float(spec("NVIDIA H100 SXM")["bf16_tflops"]) / float(spec("NVIDIA L4")["bf16_tflops"])
    assert l4["hours"] / h100["hours"] == pytest.approx(ratio, rel=1e-3)
    assert h100["hours"] == pytest.approx(100 / (8 * 0.9 ** 3), abs=0.006)
    small = choose("--params", "1e9", "--precision", "bf16", "--training", "--hours", "100")
    one = next(o for o in small["options"] if o["instance_type"] == "p5.4xlarge")
    assert one["hours"] == 100  # one H100: the reference's own hours
    assert one["total_usd"] == pytest.approx(100 * one["usd_per_hour"])
    assert len({o["hours"] for o in doc["options"]}) > 3
    # Cheapest per hour is not cheapest per job any more: the 8 x L4 is not first.
    assert doc["options"][0]["instance_type"] != "g6.48xlarge"


def test_inference_hours_scale_with_memory_bandwidth_and_fp8_with_fp8_throughput():
    doc = choose("--memory-gib", "30", "--precision", "bf16", "--gpus", "1", "--hours", "10",
                 "--scaling", "1")
    by_type = {o["instance_type"]: o for o in doc["options"]}
    ratio = float(spec("NVIDIA H100 SXM")["bandwidth_gbs"]) / float(spec("NVIDIA L40S")["bandwidth_gbs"])
    assert by_type["g6e.xlarge"]["hours"] == pytest.approx(10 * ratio, abs=0.006)
    assert by_type["g6e.48xlarge"]["hours"] == pytest.approx(10 * ratio / 8, abs=0.006)  # linear
    fp8 = choose("--params", "1e9", "--precision", "fp8", "--training", "--gpus", "1",
                 "--hours", "10")
    l4 = next(o for o in fp8["options"] if o["instance_type"] == "g6.xlarge")
    ratio = float(spec("NVIDIA H100 SXM")["fp8_tflops"]) / float(spec("NVIDIA L4")["fp8_tflops"])
    assert l4["hours"] == pytest.approx(10 * ratio, abs=0.006)


def test_a_gpu_without_a_figure_is_named_not_priced():
    doc = choose("--memory-gib", "30", "--gpus", "1", "--hours", "10")
    reasons = {r["instance_type"]: r["reason"] for r in doc["not_priced"]}
    assert "no memory bandwidth for the NVIDIA A100 in the spec table" == reasons["p4d.24xlarge"]
    assert not any(o["instance_type"] == "p4d.24xlarge" for o in doc["options"])
    same = choose("--memory-gib", "30", "--gpus", "1", "--instance-hours", "10")
    assert any(o["instance_type"] == "p4d.24xlarge" for o in same["options"])
    assert not same["not_priced"]


def test_the_parallelism_is_named_for_the_job():
    """Replicas of a split serve requests side by side (inference) or average their gradients
    every step (training: data parallel); the notes say which, and how many GPUs each holds."""
    words = {"inference": ("tensor parallel over", "replicas"),
             "training": ("FSDP over", "data-parallel replicas")}
    for model, mode in (("llama-3.1-70b", "--inference"), ("llama-3.1-8b", "--training")):
        doc = choose("--model", model, "--precision", "bf16", mode, "--hours", "100")
        split, replicas = words[doc["workload"]]
        seen = set()
        for o in doc["options"]:
            text, n, k = o["parallelism"], o["split"], o["copies"]
            seen.add((n > 1, k > 1))
            assert (f"{split} {n}" in text) == (n > 1), text
            assert (f", {k} {replicas}" in text or f"data parallel over {k}" in text) == (k > 1), text
            if n == 1 and k > 1 and doc["workload"] == "training":
                assert text == f"data parallel over {k}"
        assert (False, True) in seen and (True, True) in seen  # both kinds occur


def test_a_split_over_pcie_is_flagged_from_the_spec_table(mod):
    """A GPU whose spec-table link is "PCIe only" (no NVLink) is flagged when its GPUs must talk:
    a tensor-parallel split for inference, any GPU beyond one for training."""
    specs = mod.load_specs(ROOT / "docs" / "data" / "accelerator-specs.csv")
    pcie = {name for name, row in specs.items() if row["link"] == mod.PCIE_ONLY}
    assert {"NVIDIA L4", "NVIDIA L40S"} <= pcie and "NVIDIA H100 SXM" not in pcie
    for args in (["--model", "llama-3.1-8b", "--training"],
                 ["--model", "llama-3.1-70b", "--context", "8192"],
                 ["--memory-gib", "10"]):
        doc = choose(*args, "--precision", "bf16", "--hours", "10", "--scaling", "0.85")
        talking = 0
        for o in doc["options"]:
            talks = o["split"] if doc["workload"] == "inference" else o["gpus_used"]
            flagged = "no NVLink: over PCIe it scales below the 0.85 per doubling assumed"
            on_pcie = mod.spec_for(o["accelerator"], specs)["link"] == mod.PCIE_ONLY
            assert (flagged in o["warnings"]) == (on_pcie and talks > 1), o
            talking += on_pcie and talks > 1
        assert talking or args[0] == "--memory-gib"  # 10 GiB: no split; replicas do not talk
    unscaled = choose("--model", "llama-3.1-8b", "--training", "--precision", "bf16",
                      "--instance-hours", "10")  # no spec table read: no link known
    assert not any("NVLink" in w for o in unscaled["options"] for w in o["warnings"])


def test_serving_replicas_add_up_and_training_replicas_do_not(mod):
    """Replicas of an inference split serve on their own: their speed adds up, so an instance
    with twice the chips at twice the price costs the same per job. Training replicas sync
    their gradients every step: the loss per doubling applies to every GPU used."""
    specs = mod.load_specs(ROOT / "docs" / "data" / "accelerator-specs.csv")
    ref = specs[mod.REFERENCE]["bandwidth_gbs"]
    serve = choose("--memory-gib", "20", "--hours", "100", "--scaling", "0.8")
    for o in serve["options"]:
        if o["gpus_paid"] < 1:
            continue
        ratio = ref / mod.spec_for(o["accelerator"], specs)["bandwidth_gbs"]
        split_speed = o["split"] * 0.8 ** math.log2(o["split"])
        assert o["hours"] == pytest.approx(100 * ratio / (o["copies"] * split_speed), abs=0.006), o
    by_type = {o["instance_type"]: o for o in serve["options"]}
    assert by_type["inf2.24xlarge"]["copies"] == 6 and by_type["inf2.48xlarge"]["copies"] == 12
    assert by_type["inf2.24xlarge"]["total_usd"] == pytest.approx(
        by_type["inf2.48xlarge"]["total_usd"], abs=0.02)  # the same price per chip
    train = choose("--memory-gib", "20", "--training", "--precision", "bf16", "--hours", "100",
                   "--scaling", "0.8")
    by_type = {o["instance_type"]: o for o in train["options"]}
    small, large = by_type["g6e.xlarge"], by_type["g6e.48xlarge"]  # 1 and 8 L40S
    assert large["hours"] == pytest.approx(small["hours"] / (8 * 0.8 ** 3), abs=0.006)
    assert large["total_usd"] > small["total_usd"]


def test_speedup_is_below_linear_and_grows(mod):
    assert mod.speedup(1, 0.9) == 1 and mod.speedup(2, 0.9) == pytest.approx(1.8)
    assert mod.speedup(8, 1.0) == 8 and mod.speedup(0.25, 0.9) == 0.25
    ups = [mod.speedup(n, 0.9) for n in (1, 2, 4, 8, 12, 16)]
    assert ups == sorted(ups) and all(u < n for u, n in zip(ups[1:], (2, 4, 8, 12, 16)))


def test_the_spec_row_of_each_accelerator(mod):
    specs = mod.load_specs(ROOT / "docs" / "data" / "accelerator-specs.csv")
    assert mod.spec_for("NVIDIA H100", specs) is specs["NVIDIA H100 SXM"]
    assert mod.spec_for("NVIDIA L4", specs) is specs["NVIDIA L4"]  # not the L40S
    assert mod.spec_for("NVIDIA A100", specs) is None


def test_warnings_an_expert_would_give():
    tight = choose("--memory-gib", "21", "--gpus", "1", "--instance-hours", "1", "--nvidia-only")
    g6 = next(o for o in tight["options"] if o["instance_type"] == "g6.xlarge")  # 21.35 usable
    assert "under 10% memory headroom" in g6["warnings"]
    roomy = choose("--memory-gib", "10", "--gpus", "1", "--instance-hours", "1", "--nvidia-only")
    assert not any("headroom" in w for o in roomy["options"] if o["instance_type"] == "g6.xlarge"
                   for w in o["warnings"])
    a10g = next(o for o in roomy["options"] if o["instance_type"] == "g5.xlarge")
    assert not a10g["warnings"]
    scaled = choose("--memory-gib", "10", "--gpus", "1", "--hours", "1", "--nvidia-only")
    a10g = next(o for o in scaled["options"] if o["instance_type"] == "g5.xlarge")
    assert "its memory bandwidth is unconfirmed" in a10g["warnings"]  # the spec table says so
    long = choose("--model", "llama-3.1-8b", "--precision", "bf16", "--context", "131072",
                  "--instance-hours", "1")
    assert any("KV cache (16.00 GiB) is larger than the weights" in w for w in long["warnings"])
    short = choose("--model", "llama-3.1-8b", "--precision", "bf16", "--context", "8192",
                   "--instance-hours", "1")
    assert not short["warnings"]


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
    options, _, _ = mod.rank(instances, job(mod, 125.2, "training", "fp16", gpus=8))
    assert options and not any(o.accelerator == "NVIDIA T4" for o in options)
    no_reserve, _, _ = mod.rank(instances, job(mod, 125.2, "training", "fp16", gpus=8,
                                               reserve_gib=0))
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
    def run(*args):
        return subprocess.run([sys.executable, str(copy), "--memory-gib", "10", "--hours", "1",
                               *args], capture_output=True, text=True, cwd=tmp_path)

    out = run()
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    # The message names a file the reader can fetch: the site serves the tables in data/.
    assert "download aws-instances.csv from the site's data/" in out.stderr and "--data" in out.stderr
    (tmp_path / "aws-instances.csv").write_text(DATA.read_text())
    out = run("--data", "aws-instances.csv")
    assert out.returncode == 2 and "accelerator-specs.csv" in out.stderr and "--specs" in out.stderr
    (tmp_path / "specs.csv").write_text((DATA.parent / "accelerator-specs.csv").read_text())
    out = run("--data", "aws-instances.csv", "--specs", "specs.csv")
    assert out.returncode == 0 and "instances fit" in out.stdout


BAD = "a,b\n1,2\n"


# Each case: the arguments (M8B and P7B stand for a model given by name or by size, in bf16) and
# what the one-line error must say. The number types' wording is the bad-input habit's.
SHORT = {"M8B": "--model llama-3.1-8b --precision bf16", "P7B": "--params 7e9 --precision bf16"}
BAD_INPUT = [
    ("--memory-gib 10 --hours -5", "--hours: must be from 0.001 to 100000.0, got -5"),
    ("--memory-gib 10 --hours 1e308", "--hours: must be from"),
    ("--memory-gib 10 --hours 1e12", "--hours: must be from 0.001 to 100000.0, got 1e12"),
    ("--memory-gib 10 --instance-hours 1e12", "--instance-hours: must be from 0.001"),
    ("--memory-gib 10 --hours 1 --instance-hours 1", "not allowed with"),
    ("--memory-gib 10 --hours 1 --scaling 1.5", "--scaling: must be from 0.5 to 1.0"),
    ("--memory-gib 10 --hours 1 --specs /nonexistent/x.csv", "accelerator-specs.csv"),
    ("--memory-gib 10 --hours 1 --specs /", "error: "),
    ("--memory-gib 5000 --hours 1", "no instance fits 5000.00 GiB on up to 8 GPUs (625.00 GiB each, + 1 GiB reserve)"),
    ("--memory-gib 2000 --hours 1 --nvidia-only",
     "p6-b300.48xlarge would fit but no memory bandwidth for the NVIDIA B300"),
    ("--memory-gib 10 --hours inf", "--hours: must be from"),
    ("--memory-gib 0 --hours 1", "--memory-gib: must be from 0.001"),
    ("--memory-gib ten --hours 1", "--memory-gib: not a number: 'ten'"),
    ("--memory-gib nan --hours 1", "--memory-gib: must be from"),
    ("--memory-gib 10", "--hours (on one NVIDIA H100 SXM) or --instance-hours is needed"),
    ("--params 7e9 --precision fp12 --hours 1", "invalid choice: 'fp12'"),
    ("--params 7e9 --hours 1", "need --precision"),
    ("--params 1e20 --precision bf16 --hours 1", "--params: must be from 1.0 to 10000000000000.0"),
    ("--params 7e9 --precision int4 --training --hours 1", "int8/int4"),
    ("--memory-gib 10 --hours 1 --gpus 1.5", "--gpus: not a whole number"),
    ("--memory-gib 10 --hours 1 --gpus 64", "one instance"),
    ("--hours 1", "one of the arguments"),
    ("--memory-gib 5000 --hours 1 --gpus 8", "fits 8 x 625.00 GiB (+ 1 GiB reserve) for inference; closest: p6-b300.48xlarge"),
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
    ("--memory-gib 10 --hours 1 --data /nonexistent/x.csv", "pass its path with --data"),
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


@pytest.mark.parametrize("content", ["", BAD, "NOTNUM"])
def test_a_damaged_spec_table_is_a_one_line_error(tmp_path, content):
    path = tmp_path / "specs.csv"
    specs = (DATA.parent / "accelerator-specs.csv").read_text()
    path.write_text(specs.replace(",3350,", ",fast,", 1) if content == "NOTNUM" else content)
    out = run_snippet(CHOOSER, "--data", DATA, "--specs", path, "--memory-gib", "10", "--hours", "1")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert ("'fast' is not a number" if content == "NOTNUM" else "missing columns") in out.stderr


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



def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    """Interrupted while it waits for its table (a FIFO nobody writes): one line, status 130."""
    import signal
    import time
    fifo = tmp_path / "table.csv"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, str(SNIPPETS / CHOOSER), "--data", str(fifo),
                             "--memory-gib", "10", "--instance-hours", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not waits_for_a_writer(proc.pid):
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "interrupted\n" and out == ""


def waits_for_a_writer(pid: int) -> bool | None:
    """True once the process sits in open() of a FIFO (Linux: its wait channel says so); None
    where /proc cannot tell (the test then waits out its deadline)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text() == "wait_for_partner"
    except OSError:
        return None


def test_closed_stdout_is_one_line_not_a_silent_success():
    proc = subprocess.run(["bash", "-c", f"{sys.executable} {SNIPPETS / CHOOSER} --memory-gib 10 "
                           "--hours 1 >&-"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr == (
        "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
