"""Which AWS GPU instance should a job run on, and what will it cost?

Give the GPU memory the job needs, or a model (its size and precision, or a named preset whose
shape comes from its published config) from which the memory is estimated: weights, the KV cache
of inference at a given context and batch, or the state of full fine-tuning, LoRA or QLoRA. Give
the hours the job takes on one reference GPU (an H100 SXM); get the instances that fit, cheapest
job first. The chooser splits the job over 1, 2, 4 or 8 GPUs of one instance (the fewest whose
memory holds it) and runs replicas of that split on the instance's other GPUs; each candidate's
hours are the reference hours scaled by its GPUs' throughput for the job (dense tensor FLOPS at
the job's precision for training, memory bandwidth for decode-bound inference) and by how many
GPUs it uses, at a stated loss per doubling of GPUs that exchange data (a split, training
replicas; serving replicas add up). --instance-hours gives hours on the instance
instead (a service that runs a month), not scaled. Each GPU keeps a reserve (CUDA context,
library workspaces) that the job cannot use.

It reads two tables that the site serves beside its GPUs-on-AWS page (data/aws-instances.csv and
data/accelerator-specs.csv, under the site's address); pass them with --data and --specs.
--memory-only needs neither, --instance-hours no spec table.

    python choose_instance.py --model llama-3.1-8b --precision bf16 --context 131072 --memory-only
    python choose_instance.py --data aws-instances.csv --specs accelerator-specs.csv \\
        --model llama-3.1-70b --precision bf16 --context 8192 --batch 8 --hours 720
"""

# --8<-- [start:imports]
from __future__ import annotations

import os
import signal
import sys


WRITTEN = []  # the files this run has written whole (write_atomically)


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130;
    the line names any output already written whole."""
    done = f" ({', '.join(WRITTEN)} written whole before it)" if WRITTEN else ""
    os.write(2, f"interrupted{done}\n".encode())
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

import argparse
import csv
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
# --8<-- [end:imports]

DATA = Path("docs/data/aws-instances.csv")  # relative to the current folder: pass --data elsewhere
SPECS = Path("docs/data/accelerator-specs.csv")  # the per-GPU throughput figures: --specs
SITE_DATA = "data/ folder (linked from its GPUs-on-AWS page)"
GIB = 1024**3
GB = 1e9

REQUIRED = ["family", "instance_type", "accelerator", "accelerator_count", "accelerator_memory_gib",
            "vcpus", "memory_gib", "on_demand_usd_per_hour", "usd_per_accelerator_hour",
            "low_precision", "role", "workloads", "status", "price_source", "price_as_of",
            "spec_source", "spec_as_of"]
ROLES = {"training", "inference", "graphics"}
STATUSES = {"current", "legacy", "retired"}
DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


# --8<-- [start:models]
@dataclass(frozen=True)
class Model:
    """A decoder-only transformer's shape, as its config.json states it."""
    layers: int          # num_hidden_layers
    hidden: int          # hidden_size
    intermediate: int    # intermediate_size (the MLP's inner width)
    heads: int           # num_attention_heads
    kv_heads: int        # num_key_value_heads (grouped-query attention: fewer than heads)
    head_dim: int        # hidden_size / num_attention_heads unless the config says otherwise
    vocab: int           # vocab_size
    tied: bool           # tie_word_embeddings: one matrix for input embedding and output head
    qkv_bias: bool       # biases on the q, k and v projections (Qwen2)
    source: str


HF = "https://huggingface.co/{}/blob/main/config.json"
# Shapes from each model's config.json on Hugging Face, read 2026-12-01.
MODELS = {
    "llama-3.1-8b": Model(32, 4096, 14336, 32, 8, 128, 128256, False, False,
                          HF.format("meta-llama/Llama-3.1-8B") + " (2024-07)"),
    "llama-3.1-70b": Model(80, 8192, 28672, 64, 8, 128, 128256, False, False,
                           HF.format("meta-llama/Llama-3.1-70B") + " (2024-07)"),
    "mistral-7b-v0.3": Model(32, 4096, 14336, 32, 8, 128, 32768, False, False,
                             HF.format("mistralai/Mistral-7B-v0.3") + " (2024-05)"),
    "qwen2.5-7b": Model(28, 3584, 18944, 28, 4, 128, 152064, False, True,
                        HF.format("Qwen/Qwen2.5-7B") + " (2024-09)"),
    "qwen2.5-72b": Model(80, 8192, 29568, 64, 8, 128, 152064, False, True,
                         HF.format("Qwen/Qwen2.5-72B") + " (2024-09)"),
}


def count_params(m: Model) -> int:
    """Parameters of a Llama-style decoder: attention (q, k, v, o), gated MLP (gate, up, down),
    two RMSNorms per layer, the final norm, the embedding and (unless tied) the output head."""
    q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
    attention = m.hidden * q + 2 * m.hidden * kv + q * m.hidden + (q + 2 * kv if m.qkv_bias else 0)
    mlp = 3 * m.hidden * m.intermediate
    per_layer = attention + mlp + 2 * m.hidden
    return m.layers * per_layer + m.hidden + m.vocab * m.hidden * (1 if m.tied else 2)


def lora_params(m: Model, rank: int) -> int:
    """LoRA adapters of rank r on all seven linear layers of every block: r x (d_in + d_out) each."""
    q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
    dims = [(m.hidden, q), (m.hidden, kv), (m.hidden, kv), (q, m.hidden),
            (m.hidden, m.intermediate), (m.hidden, m.intermediate), (m.intermediate, m.hidden)]
    return m.layers * rank * sum(a + b for a, b in dims)
# --8<-- [end:models]


# --8<-- [start:kv]
def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, context: int, batch: int,
                   bytes_per_value: float) -> float:
    """Keys and values (the 2) for every layer, KV head and token of every sequence."""
    return 2 * layers * kv_heads * head_dim * context * batch * bytes_per_value
# --8<-- [end:kv]


# --8<-- [start:memory]
# Bytes per parameter for the weights in each precision.
BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
ADAM_MOMENTS = 8  # two fp32 moments (m and v) per parameter
MASTER = 4        # fp32 master copy of the weights, kept when the weights are in lower precision
ADAPTER = 16      # a LoRA adapter parameter: fp32 weight 4 + gradient 4 + Adam moments 8
NF4 = 4.127 / 8   # QLoRA: 4-bit NormalFloat weights + double-quantised constants (0.127 bit)


def training_bytes_per_param(precision: str) -> float:
    """Weights + gradients (same precision) + two Adam moments + fp32 master weights if < fp32."""
    if precision in ("int8", "int4"):
        raise ValueError(f"full training with Adam is not done in {precision}; "
                         "use fp32, bf16, fp16 or fp8 (int8/int4 are for inference)")
    w = BYTES[precision]
    return w + w + ADAM_MOMENTS + (MASTER if w < 4 else 0)


def model_state_bytes(params: float, precision: str, mode: str, trainable: float = 0) -> float:
    """What the model itself occupies, before activations and KV cache.
    mode: inference (weights), full (Adam, everything trained), lora (frozen weights in
    `precision` + trained adapters), qlora (frozen weights in 4-bit NF4 + trained adapters)."""
    if mode == "inference":
        return params * BYTES[precision]
    if mode == "full":
        return params * training_bytes_per_param(precision)
    base = NF4 if mode == "qlora" else BYTES[precision]
    return params * base + trainable * ADAPTER


def estimate_memory_gib(params: float, precision: str, training: bool, overhead: float) -> float:
    """GPU memory in total, without a KV cache: model state x overhead (activations, workspace)."""
    state = model_state_bytes(params, precision, "full" if training else "inference")
    return state * overhead / GIB
# --8<-- [end:memory]


@dataclass(frozen=True)
class Instance:
    family: str
    instance_type: str
    accelerator: str
    accelerator_count: float  # < 1 for a fraction of one GPU (G6f, Gr6f)
    accelerator_memory_gib: float
    vcpus: int
    memory_gib: float
    usd_per_hour: float
    usd_per_accelerator_hour: float
    low_precision: tuple[str, ...]
    role: str
    workloads: tuple[str, ...]
    status: str
    price_as_of: str
    unconfirmed: tuple[str, ...] = ()  # fields no primary source confirmed (status, specs, ...)


def load_instances(path: Path = DATA) -> list[Instance]:
    """Read and validate the data file; raise ValueError naming the first bad row."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: not the instance table (missing columns "
                                 f"{', '.join(missing)})")
            rows = list(reader)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text CSV file") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: damaged CSV ({exc})") from None
    out, seen = [], set()
    for n, r in enumerate(rows, start=2):
        where = f"{path.name} line {n} ({r.get('instance_type') or '?'})"
        empty = [c for c in REQUIRED if not (r.get(c) or "").strip()]
        if empty:
            raise ValueError(f"{where}: empty {', '.join(empty)}")
        if r["instance_type"] in seen:
            raise ValueError(f"{where}: duplicate instance type")
        seen.add(r["instance_type"])
        try:
            count, mem = float(r["accelerator_count"]), float(r["accelerator_memory_gib"])
            price, per_acc = float(r["on_demand_usd_per_hour"]), float(r["usd_per_accelerator_hour"])
            vcpus, ram = int(r["vcpus"]), float(r["memory_gib"])
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        numbers = (count, mem, price, per_acc, vcpus, ram)
        if not all(math.isfinite(x) and x > 0 for x in numbers):
            raise ValueError(f"{where}: counts, sizes and prices must be finite and positive")
        if abs(per_acc - price / count) > 0.00051:  # the file rounds to 4 decimals
            raise ValueError(f"{where}: usd_per_accelerator_hour {per_acc} != {price} / {count:g}")
        if r["role"] not in ROLES or r["status"] not in STATUSES:
            raise ValueError(f"{where}: role must be one of {sorted(ROLES)}, "
                             f"status one of {sorted(STATUSES)}")
        for c in ("price_as_of", "spec_as_of"):
            if not DATE.match(r[c]):
                raise ValueError(f"{where}: {c} {r[c]!r} is not YYYY-MM-DD")
        out.append(Instance(r["family"], r["instance_type"], r["accelerator"], count, mem, vcpus,
                            ram, price, per_acc, tuple(r["low_precision"].split(";")), r["role"],
                            tuple(r["workloads"].split(";")), r["status"], r["price_as_of"],
                            tuple(f.strip() for f in (r.get("unconfirmed") or "").split(";")
                                  if f.strip())))
    if not out:
        raise ValueError(f"{path}: no rows")
    return out


# --8<-- [start:specs]
REFERENCE = "NVIDIA H100 SXM"  # --hours are hours on one of these
SPLITS = (1, 2, 4, 8)          # GPUs of one instance a job may be split over
# The spec table's figure that sets a job's speed: memory bandwidth for inference (each decoded
# token reads every weight once), dense tensor throughput at the job's precision for training.
FIGURE = {"inference": "bandwidth_gbs", "fp32": "fp32_tflops", "bf16": "bf16_tflops",
          "fp16": "bf16_tflops", "fp8": "fp8_tflops"}
PCIE_ONLY = "PCIe only"  # the spec table's link for a GPU without NVLink: splits scale worse
FIGURE_NAME = {"bandwidth_gbs": "memory bandwidth", "fp32_tflops": "FP32 throughput",
               "bf16_tflops": "dense BF16/FP16 tensor throughput",
               "fp8_tflops": "dense FP8 tensor throughput"}


def load_specs(path: Path = SPECS) -> dict[str, dict]:
    """{accelerator: {column: figure or None, "link": interconnect, "unconfirmed": set of
    columns}} from the spec table
    (blank cells are figures nobody published; ValueError naming the first bad row)."""
    need = ["accelerator", "source", "as_of", *sorted(set(FIGURE.values()))]
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in need if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: not the accelerator spec table (missing columns "
                                 f"{', '.join(missing)})")
            rows = list(reader)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text CSV file") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: damaged CSV ({exc})") from None
    specs = {}
    for n, r in enumerate(rows, start=2):
        row = {"unconfirmed": {c.strip() for c in (r.get("unconfirmed") or "").split(";")},
               "link": (r.get("link") or "").strip()}
        for c in set(FIGURE.values()):
            text = (r[c] or "").strip()
            try:
                row[c] = float(text) if text else None
            except ValueError:
                raise ValueError(f"{path.name} line {n} ({r['accelerator']}): {c} {text!r} "
                                 "is not a number") from None
            if row[c] is not None and not (math.isfinite(row[c]) and row[c] > 0):
                raise ValueError(f"{path.name} line {n} ({r['accelerator']}): {c} must be "
                                 "finite and positive")
        specs[r["accelerator"]] = row
    if REFERENCE not in specs:
        raise ValueError(f"{path}: no row for the reference GPU, {REFERENCE}")
    return specs


def spec_for(accelerator: str, specs: dict[str, dict]) -> dict | None:
    """The spec row of an instance's accelerator: the same name, or the only row that names
    its variant ("NVIDIA H100" is "NVIDIA H100 SXM")."""
    if accelerator in specs:
        return specs[accelerator]
    variants = [k for k in specs if k.startswith(accelerator + " ")]
    return specs[variants[0]] if len(variants) == 1 else None


def speedup(gpus: float, scaling: float) -> float:
    """How many times one GPU's speed `gpus` GPUs reach: `scaling` of the speed-up kept per
    doubling (1 would be linear); a slice of one GPU runs at its share."""
    return gpus * scaling ** math.log2(gpus) if gpus > 1 else gpus
# --8<-- [end:specs]


# --8<-- [start:rank]
@dataclass(frozen=True)
class Option:
    instance_type: str
    accelerator: str
    accelerators: str  # what the instance has, e.g. "8 x 80 GiB"
    gpus_paid: float   # the instance's accelerators (a fraction for a slice of one)
    gpus_used: float   # split x copies
    split: int         # GPUs one copy of the job is split over
    copies: int        # replicas of the split side by side (more than 1 with --hours only)
    parallelism: str   # how the job is split, in words
    gib_per_gpu_needed: float
    usable_gib_per_gpu: float  # the accelerator's memory less the per-GPU reserve
    usd_per_hour: float
    hours: float       # on this instance
    total_usd: float
    status: str
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Job:
    memory_gib: float        # in all, for one copy of the job
    workload: str            # training or inference
    precision: str | None
    hours: float
    on_reference: bool       # hours on one REFERENCE GPU (True) or on the instance (False)
    gpus: int | None = None  # a fixed split; None: the fewest of SPLITS that fit
    scaling: float = 0.9
    reserve_gib: float = 1.0
    include_retired: bool = False
    nvidia_only: bool = False


def usable_gib(inst: Instance, reserve_gib: float) -> float:
    """Memory a job can allocate on one accelerator: its size less the CUDA context, library
    workspaces and what the driver keeps (the reserve)."""
    return inst.accelerator_memory_gib - reserve_gib


def split_for(inst: Instance, job: Job) -> int | None:
    """The fewest GPUs of this instance whose memory holds the job (or the fixed --gpus)."""
    tries = [job.gpus] if job.gpus else [n for n in SPLITS if n <= max(inst.accelerator_count, 1)]
    for n in tries:
        slice_ok = inst.accelerator_count >= n or (n == 1 and inst.accelerator_count < 1)
        if slice_ok and usable_gib(inst, job.reserve_gib) >= job.memory_gib / n:
            return n
    return None


def usable(inst: Instance, workload: str, precision: str | None, include_retired: bool,
           nvidia_only: bool) -> bool:
    """Can this instance run the workload at all (before memory)?"""
    if inst.status == "retired" and not include_retired:
        return False
    if nvidia_only and not inst.accelerator.startswith("NVIDIA"):
        return False
    if workload not in inst.workloads:
        return False
    # bf16, fp16 and fp8 need hardware support; fp32 runs anywhere; int8/int4 weights are
    # dequantised by the inference kernels, so they do not need native support either.
    return precision not in ("bf16", "fp16", "fp8") or precision in inst.low_precision


def figure_column(job: Job) -> str:
    return FIGURE["inference" if job.workload == "inference" else job.precision or "bf16"]


def parallelism_of(workload: str, n: int, copies: int) -> str:
    """How one instance runs the job: a split over n GPUs (tensor parallel for inference, FSDP
    for training), and copies of it side by side (serving replicas, or data-parallel replicas
    that average their gradients every step)."""
    if workload == "inference":
        split = f"tensor parallel over {n}" if n > 1 else "one GPU each" if copies > 1 else "one GPU"
        return split + (f", {copies} replicas" if copies > 1 else "")
    if n == 1:
        return f"data parallel over {copies}" if copies > 1 else "one GPU"
    return f"FSDP over {n}" + (f", {copies} data-parallel replicas" if copies > 1 else "")


def option(inst: Instance, job: Job, n: int, specs: dict | None) -> Option | str:
    """The instance running the job split over n GPUs, or why it cannot be priced."""
    count = inst.accelerator_count
    copies = max(int(count // n), 1) if job.on_reference else 1
    used = n * copies if count >= 1 else count
    warnings = []
    hours = job.hours
    if job.on_reference:
        column = figure_column(job)
        spec = spec_for(inst.accelerator, specs)
        if not spec or spec[column] is None:
            return f"no {FIGURE_NAME[column]} for the {inst.accelerator} in the spec table"
        ratio = specs[REFERENCE][column] / spec[column]
        # Serving replicas never talk, so they add up; training replicas sync every step.
        serving = job.workload == "inference" and count >= 1
        hours = job.hours * ratio / (copies * speedup(n, job.scaling) if serving
                                     else speedup(used, job.scaling))
        if column in spec["unconfirmed"]:
            warnings.append(f"its {FIGURE_NAME[column]} is unconfirmed")
        talks = n if job.workload == "inference" else used  # training syncs every replica
        if talks > 1 and spec["link"] == PCIE_ONLY:
            warnings.append(f"no NVLink: over PCIe it scales below the {job.scaling:g} per "
                            "doubling assumed")
    per_gpu, room = job.memory_gib / n, usable_gib(inst, job.reserve_gib)
    if room - per_gpu < 0.1 * room:
        warnings.append("under 10% memory headroom")
    if count >= 1 and count > used:
        warnings.append(f"pays for {count - used:g} idle GPU{'s' * (count - used > 1)}")
    if inst.status != "current":
        warnings.append(inst.status + (" (status unconfirmed)" if "status" in inst.unconfirmed
                                       else ""))
    parallelism = parallelism_of(job.workload, n, copies)
    return Option(inst.instance_type, inst.accelerator,
                  f"{count:g} x {inst.accelerator_memory_gib:g} GiB", count, used, n, copies,
                  parallelism, round(per_gpu, 2), round(room, 2), inst.usd_per_hour,
                  round(hours, 2), round(inst.usd_per_hour * hours, 2), inst.status,
                  tuple(warnings))


def rank(instances: list[Instance], job: Job, specs: dict | None = None
         ) -> tuple[list[Option], list[Instance], dict[str, str]]:
    """Options that fit, cheapest job first; the usable candidates (for 'closest'); and the
    instances that fit but cannot be priced, with the reason."""
    candidates = [i for i in instances if usable(i, job.workload, job.precision,
                                                 job.include_retired, job.nvidia_only)]
    options, unpriced = [], {}
    for inst in candidates:
        n = split_for(inst, job)
        if n is None:
            continue
        made = option(inst, job, n, specs)
        if isinstance(made, str):
            unpriced[inst.instance_type] = made
        else:
            options.append(made)
    options.sort(key=lambda o: (o.total_usd, o.instance_type))
    return options, candidates, unpriced
# --8<-- [end:rank]


def closest(candidates: list[Instance], gpus: int) -> Instance | None:
    """The instance with the most memory per accelerator among those with enough of them,
    or, if none has enough accelerators, the one with the most accelerator memory in total."""
    enough = [i for i in candidates if i.accelerator_count >= gpus]
    if enough:
        return max(enough, key=lambda i: (i.accelerator_memory_gib, -i.usd_per_hour))
    if candidates:
        return max(candidates, key=lambda i: (i.accelerator_count * i.accelerator_memory_gib,
                                              -i.usd_per_hour))
    return None


def short(accelerator: str) -> str:
    return accelerator.removeprefix("NVIDIA ").removeprefix("AWS ")


def table(options: list[Option]) -> str:
    """The options, cheapest first, then a note for each one with something to know."""
    head = ["instance", "used/paid", "GiB/GPU", "usable", "$/hour", "hours", "job $"]
    rows = [[o.instance_type, f"{o.gpus_used:g}/{o.gpus_paid:g} {short(o.accelerator)}",
             f"{o.gib_per_gpu_needed:.2f}", f"{o.usable_gib_per_gpu:.2f}",
             f"{o.usd_per_hour:.4f}", f"{o.hours:,.2f}", f"{o.total_usd:,.2f}"] for o in options]
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    right = {2, 3, 4, 5, 6}

    def line(cells):
        return "  ".join(c.rjust(w) if k in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    notes = [f"{o.instance_type}: {o.parallelism}" + "".join(f"; {w}" for w in o.warnings)
             for o in options if o.warnings or o.parallelism != "one GPU"]
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows), *notes])


def number(kind, low, high):
    """An argparse type: a `kind` (int or float) from low to high; anything else is a one-line error."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'a whole number' if kind is int else 'a number'}: {text!r}") from None
        if not low <= value <= high:  # false for nan too
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {text}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Estimate the GPU memory a model needs (weights, KV cache, fine-tuning state) "
                    "and rank the AWS instances that fit by what the job costs "
                    "(on-demand, us-east-1, from the instance table).")
    need = p.add_mutually_exclusive_group(required=True)
    need.add_argument("--memory-gib", type=number(float, 0.001, 1e6),
                      help="GPU memory the job needs in total, GiB")
    need.add_argument("--params", type=number(float, 1.0, 1e13),
                      help="model size in parameters (7e9 for 7B); needs --precision")
    need.add_argument("--model", choices=sorted(MODELS),
                      help="a model whose shape (and so parameters and KV cache) comes from its "
                           "published config; needs --precision")
    p.add_argument("--precision", choices=sorted(BYTES),
                   help="precision of the weights (with --params/--model), or of the compute "
                        "(with --memory-gib: keeps instances without it out)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--inference", action="store_true", help="inference (the default)")
    mode.add_argument("--training", action="store_true",
                      help="full fine-tuning or training with Adam (every parameter trained)")
    mode.add_argument("--lora", action="store_true",
                      help="LoRA: frozen weights in --precision, trained low-rank adapters")
    mode.add_argument("--qlora", action="store_true",
                      help="QLoRA: frozen weights in 4-bit NF4, trained low-rank adapters")
    p.add_argument("--lora-rank", type=number(int, 1, 4096), default=16,
                   help="adapter rank on all linear layers, with --model (default 16)")
    p.add_argument("--trainable-fraction", type=number(float, 1e-9, 1.0),
                   help="share of parameters the adapters add, with --params and --lora/--qlora "
                        "(your PEFT library prints it: print_trainable_parameters())")
    shape = p.add_argument_group("model shape, for the KV cache with --params")
    shape.add_argument("--layers", type=number(int, 1, 1000), help="num_hidden_layers")
    shape.add_argument("--kv-heads", type=number(int, 1, 1024), help="num_key_value_heads")
    shape.add_argument("--head-dim", type=number(int, 1, 4096),
                       help="head dimension (hidden_size / num_attention_heads)")
    p.add_argument("--context", type=number(int, 1, 100_000_000),
                   help="tokens per sequence held in the KV cache (prompt + output), inference")
    p.add_argument("--batch", type=number(int, 1, 100_000), default=1,
                   help="sequences served at once (default 1)")
    p.add_argument("--kv-precision", choices=["fp32", "bf16", "fp16", "fp8"], default="bf16",
                   help="precision of the KV cache (default bf16)")
    p.add_argument("--gpus", type=number(int, 1, 1024),
                   help="GPUs on one instance the job is split over (default: the fewest of "
                        "1, 2, 4 or 8 that hold it, on each instance)")
    p.add_argument("--reserve-gib", type=number(float, 0.0, 64.0), default=1.0,
                   help="memory per GPU the job cannot use: CUDA context, library workspaces "
                        "(default 1.0)")
    hours = p.add_mutually_exclusive_group()
    hours.add_argument("--hours", type=number(float, 0.001, 100_000.0),
                       help=f"hours the job takes on one {REFERENCE} (as if it held the job); "
                            "each instance's hours are scaled from them (needed unless "
                            "--memory-only or --instance-hours)")
    hours.add_argument("--instance-hours", type=number(float, 0.001, 100_000.0),
                       help="hours the instance runs, whatever its GPUs (a service up for a "
                            "month: 720); not scaled")
    p.add_argument("--scaling", type=number(float, 0.5, 1.0), default=0.9,
                   help="share of the speed-up kept per doubling of GPUs that exchange data: "
                        "a split, training replicas (default 0.9; 1 is linear)")
    p.add_argument("--overhead", type=number(float, 1.0, 100.0), default=1.2,
                   help="factor on the model state and KV cache for activations, workspace and "
                        "allocator slack (default 1.2)")
    p.add_argument("--memory-only", action="store_true",
                   help="print the memory estimate and stop (no instance table needed)")
    p.add_argument("--data", type=Path, default=DATA,
                   help="the instance table, aws-instances.csv (the site serves it in "
                        f"{SITE_DATA}; default: {DATA} under the current folder)")
    p.add_argument("--specs", type=Path, default=SPECS,
                   help="the accelerator spec table, accelerator-specs.csv, for scaling --hours "
                        f"(served beside the instance table; default: {SPECS})")
    p.add_argument("--top", type=number(int, 1, 1000), default=10, help="rows to show (default 10)")
    p.add_argument("--include-retired", action="store_true", help="also rank retired instances")
    p.add_argument("--nvidia-only", action="store_true",
                   help="leave out AWS Inferentia/Trainium (they need the Neuron SDK, not CUDA)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--explain", action="store_true", help="show how the memory was estimated")
    p.error = lambda message: p.exit(2, f"error: {message}\n")
    return p


# --8<-- [start:estimate]
@dataclass
class Estimate:
    mode: str             # inference, full, lora or qlora
    params: float | None
    state_bytes: float    # weights (+ gradients, optimizer, adapters)
    kv_bytes: float       # 0 without a KV cache
    total_gib: float      # (state + KV) x overhead
    lines: list[str]


def estimate(args) -> Estimate:
    """The job's memory from the command line's model, mode and context (ValueError if unsound)."""
    mode = ("full" if args.training else "lora" if args.lora else "qlora" if args.qlora
            else "inference")
    if args.memory_gib:
        return Estimate(mode, None, 0, 0, args.memory_gib,
                        [f"memory = {args.memory_gib:.2f} GiB (given)"])
    model = MODELS.get(args.model)
    params = count_params(model) if model else args.params
    layers, kv_heads, head_dim = ((model.layers, model.kv_heads, model.head_dim) if model
                                  else (args.layers, args.kv_heads, args.head_dim))
    lines = []
    if model:
        lines.append(f"{args.model}: {model.layers} layers, hidden {model.hidden}, "
                     f"{model.heads} heads, {model.kv_heads} KV heads x {model.head_dim}; "
                     f"{params / 1e9:.2f}e9 parameters counted from its config")
    if mode in ("lora", "qlora"):
        if model:
            trainable = lora_params(model, args.lora_rank)
            how = f"rank {args.lora_rank} on all linear layers"
        elif args.trainable_fraction:
            trainable, how = params * args.trainable_fraction, f"{args.trainable_fraction:g} of them"
        else:
            raise ValueError(f"--{mode} with --params needs --trainable-fraction (or use --model)")
    state = model_state_bytes(params, args.precision, mode,
                              trainable if mode in ("lora", "qlora") else 0)
    if mode == "inference":
        lines.append(f"weights = {params:.4g} x {BYTES[args.precision]:g} bytes ({args.precision})"
                     f" = {state / GB:.2f} GB")
    elif mode == "full":
        w = BYTES[args.precision]
        parts = f"{w:g} weights + {w:g} gradients + {ADAM_MOMENTS} Adam moments"
        parts += f" + {MASTER} fp32 master weights" if w < 4 else ""
        lines.append(f"bytes per parameter, training with Adam in {args.precision}: {parts} = "
                     f"{training_bytes_per_param(args.precision):g}")
        lines.append(f"model state = {params:.4g} x {training_bytes_per_param(args.precision):g} "
                     f"bytes = {state / GB:.2f} GB")
    else:
        base = NF4 if mode == "qlora" else BYTES[args.precision]
        label = "4-bit NF4" if mode == "qlora" else args.precision
        lines.append(f"{mode}: frozen weights {params:.4g} x {base:.4g} bytes ({label}) = "
                     f"{params * base / GB:.2f} GB; adapters {trainable:.4g} parameters ({how}) "
                     f"x {ADAPTER} bytes = {trainable * ADAPTER / GB:.2f} GB")
    kv = 0.0
    shape = (layers, kv_heads, head_dim)
    if args.context:
        if mode != "inference":
            raise ValueError("--context sizes the KV cache of inference; training activations "
                             "are covered by --overhead")
        if not all(shape):
            raise ValueError("--context needs the model's shape: --model, or --layers, "
                             "--kv-heads and --head-dim")
        kv = kv_cache_bytes(layers, kv_heads, head_dim, args.context, args.batch,
                            BYTES[args.kv_precision])
        lines.append(f"KV cache = 2 x {layers} layers x {kv_heads} KV heads x {head_dim} head dim"
                     f" x {args.context} tokens x {args.batch} sequence{'s' * (args.batch > 1)} x "
                     f"{BYTES[args.kv_precision]:g} bytes = {kv / GB:.2f} GB ({kv / GIB:.2f} GiB)")
    elif any(shape) and not model:
        raise ValueError("--layers, --kv-heads and --head-dim size the KV cache: add --context")
    total = (state + kv) * args.overhead / GIB
    lines.append(f"memory = ({state / GB:.2f} + {kv / GB:.2f}) GB x {args.overhead:g} overhead"
                 f" = {total:.2f} GiB")
    return Estimate(mode, params, state, kv, total, lines)
# --8<-- [end:estimate]


def show(text: str, end: str = "\n") -> bool:
    """Print the answer; False if it could not be. A reader that stops reading (| head) ends
    the run quietly; a full device is one line naming it."""
    try:
        print(text, end=end, flush=True)
        return True
    except OSError as exc:  # BrokenPipeError included
        try:
            where = os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
        except OSError:
            where = ""
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        if not isinstance(exc, BrokenPipeError):
            name = f"standard output ({where})" if where.startswith("/") else "standard output"
            print(f"error: cannot write to {name}: {exc.strerror}", file=sys.stderr)
        return False


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if sys.stdout is None:  # started with standard output closed (>&-): nowhere to answer
        parser.exit(2, "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
    if (args.params or args.model) and not args.precision:
        parser.error("--params and --model need --precision (one of " + ", ".join(BYTES) + ")")
    if not args.memory_only and args.hours is None and args.instance_hours is None:
        parser.error("--hours (on one " + REFERENCE + ") or --instance-hours is needed to rank "
                     "instances (or give --memory-only)")
    if args.memory_gib and (args.context or args.lora or args.qlora):
        parser.error("--memory-gib is the total already: --context, --lora and --qlora need "
                     "--params or --model")
    if args.qlora and args.precision in ("int8", "int4", "fp8"):
        parser.error("--qlora stores the weights in 4-bit NF4; --precision is its compute "
                     "precision (bf16, fp16 or fp32)")
    try:
        est = estimate(args)
    except ValueError as exc:
        parser.error(str(exc))
    splits = [args.gpus] if args.gpus else list(SPLITS)
    lines = est.lines + ["per GPU, split over " + " / ".join(map(str, splits)) + " GPUs = "
                         + " / ".join(f"{est.total_gib / n:.2f}" for n in splits)
                         + f" GiB; each GPU also keeps {args.reserve_gib:g} GiB in reserve"]
    if args.memory_only:
        return 0 if show("\n".join(lines)) else 1
    workload = "inference" if est.mode == "inference" else "training"
    on_reference = args.hours is not None
    try:
        instances = load_instances(args.data)
        specs = load_specs(args.specs) if on_reference else None
    except FileNotFoundError as exc:
        which = "aws-instances.csv" if Path(exc.filename) == args.data else "accelerator-specs.csv"
        flag = "--data" if which == "aws-instances.csv" else "--specs"
        parser.error(f"no table at {exc.filename}: download {which} from the site's {SITE_DATA} "
                     f"and pass its path with {flag}")
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    largest = max(i.accelerator_count for i in instances)
    if args.gpus and args.gpus > largest:
        parser.error(f"--gpus {args.gpus}: this chooser plans one instance (one node); "
                     f"the largest has {largest:g} accelerators")
    job = Job(est.total_gib, workload, args.precision,
              args.hours if on_reference else args.instance_hours, on_reference, args.gpus,
              args.scaling, args.reserve_gib, args.include_retired, args.nvidia_only)
    options, candidates, unpriced = rank(instances, job, specs)
    need = (f"{args.gpus} x {est.total_gib / args.gpus:.2f} GiB (+ {args.reserve_gib:g} GiB "
            "reserve)" if args.gpus else f"{est.total_gib:.2f} GiB on up to {SPLITS[-1]} GPUs "
            f"({est.total_gib / SPLITS[-1]:.2f} GiB each, + {args.reserve_gib:g} GiB reserve)")
    if not options:
        near = closest(candidates, args.gpus or SPLITS[-1])
        hint = (f"; closest: {near.instance_type} ({near.accelerator_count:g} x "
                f"{near.accelerator_memory_gib:g} GiB {near.accelerator}, ${near.usd_per_hour:g}/h)"
                if near else "")
        if unpriced:
            hint = ("; " + ", ".join(sorted(unpriced)) + " would fit but "
                    + next(iter(sorted(unpriced.items())))[1] + " (give --instance-hours)")
        parser.error(f"no instance fits {need} for {workload}"
                     f"{' in ' + args.precision if args.precision else ''}{hint}")
    # Self-check: every option fits and the list is in cost order.
    by_type = {i.instance_type: i for i in instances}
    if not all(usable_gib(by_type[o.instance_type], args.reserve_gib) >= o.gib_per_gpu_needed
               and o.split * o.copies <= max(o.gpus_paid, 1) for o in options) or [
                   o.total_usd for o in options] != sorted(o.total_usd for o in options):
        print("error: internal check failed: ranking inconsistent", file=sys.stderr)
        return 1
    shown = options[:args.top]
    as_of = max(i.price_as_of for i in instances)
    warnings = []
    weights = est.state_bytes if est.mode == "inference" else 0
    if est.kv_bytes > weights > 0:
        warnings.append(f"the KV cache ({est.kv_bytes / GIB:.2f} GiB) is larger than the weights "
                        f"({weights / GIB:.2f} GiB): a shorter context, a smaller batch or "
                        "--kv-precision fp8 shrinks it")
    if on_reference:
        column = figure_column(job)
        basis = (f"hours: {job.hours:g} on one {REFERENCE}, scaled by {FIGURE_NAME[column]}"
                 f"{' (decode-bound inference)' if workload == 'inference' else ''};\n"
                 f"n GPUs run n x {args.scaling:g}^log2(n) times as fast as one"
                 f"{' (a split; replicas add up)' if workload == 'inference' else ''}")
    else:
        basis = f"hours: {job.hours:g} on each instance, as given (not scaled)"
    if args.json:
        return 0 if show(json.dumps({
            "workload": workload, "mode": est.mode, "precision": args.precision,
            "memory_gib": round(est.total_gib, 2), "kv_cache_gib": round(est.kv_bytes / GIB, 2),
            "gpus": args.gpus, "reserve_gib": args.reserve_gib, "hours": job.hours,
            "hours_on": REFERENCE if on_reference else "instance",
            "throughput": FIGURE_NAME[figure_column(job)] if on_reference else None,
            "scaling_per_doubling": args.scaling if on_reference else None,
            "basis": basis, "warnings": warnings, "prices_as_of": as_of,
            "options": [asdict(o) for o in shown],
            "not_priced": [{"instance_type": k, "reason": v} for k, v in sorted(unpriced.items())]},
            indent=2, allow_nan=False)) else 1
    text = [*(lines if args.explain else []),
            f"{len(options)} instance{'s fit' if len(options) > 1 else ' fits'}; cheapest "
            f"{len(shown)} (on-demand, us-east-1, prices "
            f"as of {as_of})", basis, table(shown)]
    text += [f"warning: {w}" for w in warnings]
    if unpriced:
        missing: dict[str, list[str]] = {}
        for k, v in sorted(unpriced.items()):
            missing.setdefault(v, []).append(k)
        text += [f"not priced: {', '.join(ks)}: {v}" for v, ks in missing.items()]
    return 0 if show("\n".join(text)) else 1


if __name__ == "__main__":
    sys.exit(main())
