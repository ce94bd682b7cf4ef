"""Which AWS GPU instance should a job run on, and what will it cost?

Give the GPU memory the job needs (or a model size and a precision, from which the memory is
estimated), the number of GPUs and the hours; get the instances that fit, cheapest job first.
Prices and specs come from docs/data/aws-instances.csv, the file the site's table is built from.

    python snippets/aws/choose_instance.py --memory-gib 20 --hours 100
    python snippets/aws/choose_instance.py --params 7e9 --precision bf16 --training --gpus 8 --hours 10 --explain
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "docs" / "data" / "aws-instances.csv"
GIB = 1024**3

REQUIRED = ["family", "instance_type", "accelerator", "accelerator_count", "accelerator_memory_gib",
            "vcpus", "memory_gib", "on_demand_usd_per_hour", "usd_per_accelerator_hour",
            "low_precision", "role", "workloads", "status", "price_source", "price_as_of",
            "spec_source", "spec_as_of"]
ROLES = {"training", "inference", "graphics"}
STATUSES = {"current", "legacy", "retired"}
DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")

# --8<-- [start:memory]
# Bytes per parameter for the weights in each precision.
BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
ADAM_MOMENTS = 8  # two fp32 moments (m and v) per parameter
MASTER = 4        # fp32 master copy of the weights, kept when the weights are in lower precision


def training_bytes_per_param(precision: str) -> float:
    """Weights + gradients (same precision) + two Adam moments + fp32 master weights if < fp32."""
    if precision in ("int8", "int4"):
        raise ValueError(f"full training with Adam is not done in {precision}; "
                         "use fp32, bf16, fp16 or fp8 (int8/int4 are for inference)")
    w = BYTES[precision]
    return w + w + ADAM_MOMENTS + (MASTER if w < 4 else 0)


def estimate_memory_gib(params: float, precision: str, training: bool, overhead: float) -> float:
    """GPU memory a model needs in total: inference = weights x overhead (KV cache, activations);
    training with Adam = (weights + gradients + moments + master) x overhead (activations)."""
    per_param = training_bytes_per_param(precision) if training else BYTES[precision]
    return params * per_param * overhead / GIB
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


def load_instances(path: Path = DATA) -> list[Instance]:
    """Read and validate the data file; raise ValueError naming the first bad row."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path.name}: missing columns {', '.join(missing)}")
        rows = list(reader)
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
        if min(count, mem, price, per_acc, vcpus, ram) <= 0 or not math.isfinite(price):
            raise ValueError(f"{where}: counts, sizes and prices must be positive")
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
                            tuple(r["workloads"].split(";")), r["status"], r["price_as_of"]))
    if not out:
        raise ValueError(f"{path.name}: no rows")
    return out


# --8<-- [start:rank]
@dataclass(frozen=True)
class Option:
    instance_type: str
    accelerator: str
    accelerators: str  # what the instance has, e.g. "8 x 80 GiB"
    gib_per_gpu_needed: float
    usd_per_hour: float
    hours: float
    total_usd: float
    status: str


def fits(inst: Instance, gib_per_gpu: float, gpus: int) -> bool:
    if inst.accelerator_count < 1:  # a slice of one GPU serves a one-GPU job only
        return gpus == 1 and inst.accelerator_memory_gib >= gib_per_gpu
    return inst.accelerator_count >= gpus and inst.accelerator_memory_gib >= gib_per_gpu


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


def rank(instances: list[Instance], memory_gib: float, gpus: int, hours: float, workload: str,
         precision: str | None = None, include_retired: bool = False,
         nvidia_only: bool = False) -> tuple[list[Option], list[Instance]]:
    """Options that fit, cheapest job first; and the usable candidates (for 'closest')."""
    per_gpu = memory_gib / gpus  # the job's memory split evenly (FSDP/ZeRO-3, tensor parallel)
    candidates = [i for i in instances
                  if usable(i, workload, precision, include_retired, nvidia_only)]
    options = [Option(i.instance_type, i.accelerator,
                      f"{i.accelerator_count:g} x {i.accelerator_memory_gib:g} GiB",
                      round(per_gpu, 2), i.usd_per_hour, hours, round(i.usd_per_hour * hours, 2),
                      i.status)
               for i in candidates if fits(i, per_gpu, gpus)]
    options.sort(key=lambda o: (o.total_usd, o.instance_type))
    return options, candidates
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


def table(options: list[Option]) -> str:
    head = ["#", "instance", "accelerator", "accelerators", "$/hour", "hours", "job $"]
    rows = [[str(n), o.instance_type, o.accelerator, o.accelerators, f"{o.usd_per_hour:.4f}",
             f"{o.hours:g}", f"{o.total_usd:,.2f}"] for n, o in enumerate(options, start=1)]
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    right = {0, 4, 5, 6}

    def line(cells):
        return "  ".join(c.rjust(w) if k in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows)])


def positive(kind: type):
    """An argparse type: a finite number greater than 0 (a whole one when kind is int)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a {'whole ' * (kind is int)}number, got {text!r}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Rank the AWS GPU instances that fit a job by what the job costs "
                    "(on-demand, us-east-1, from docs/data/aws-instances.csv).")
    need = p.add_mutually_exclusive_group(required=True)
    need.add_argument("--memory-gib", type=positive(float),
                      help="GPU memory the job needs in total, GiB")
    need.add_argument("--params", type=positive(float),
                      help="model size in parameters (7e9 for 7B); needs --precision")
    p.add_argument("--precision", choices=sorted(BYTES),
                   help="precision of the weights (with --params), or of the compute "
                        "(with --memory-gib: keeps instances without it out)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--training", action="store_true", help="training with Adam")
    mode.add_argument("--inference", action="store_true", help="inference (the default)")
    p.add_argument("--gpus", type=positive(int), default=1,
                   help="GPUs on one instance the memory is split over (default 1)")
    p.add_argument("--hours", type=positive(float), required=True,
                   help="hours the job runs on the instance")
    p.add_argument("--overhead", type=positive(float), default=1.2,
                   help="factor for activations and KV cache on top of the model state (default 1.2)")
    p.add_argument("--top", type=positive(int), default=10, help="rows to show (default 10)")
    p.add_argument("--include-retired", action="store_true", help="also rank retired instances")
    p.add_argument("--nvidia-only", action="store_true",
                   help="leave out AWS Inferentia/Trainium (they need the Neuron SDK, not CUDA)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--explain", action="store_true", help="show how the memory was estimated")
    p.add_argument("--data", type=Path, default=DATA, help=argparse.SUPPRESS)
    p.error = lambda message: p.exit(2, f"error: {message}\n")
    return p


def explain(args, memory: float, per_param: float | None) -> list[str]:
    lines = []
    if args.params:
        what = "training with Adam" if args.training else "inference"
        if args.training:
            w = BYTES[args.precision]
            parts = f"{w:g} weights + {w:g} gradients + {ADAM_MOMENTS} Adam moments"
            parts += f" + {MASTER} fp32 master weights" if w < 4 else ""
            lines.append(f"bytes per parameter, {what} in {args.precision}: {parts} = {per_param:g}")
        else:
            lines.append(f"bytes per parameter, {what} in {args.precision}: {per_param:g} (weights)")
        lines.append(f"memory = {args.params:g} parameters x {per_param:g} bytes x {args.overhead:g} "
                     f"overhead / 2^30 = {memory:.2f} GiB")
    else:
        lines.append(f"memory = {memory:.2f} GiB (given)")
    lines.append(f"per GPU = {memory:.2f} GiB / {args.gpus} GPU{'s' * (args.gpus > 1)} = "
                 f"{memory / args.gpus:.2f} GiB")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.params and not args.precision:
        parser.error("--params needs --precision (one of " + ", ".join(BYTES) + ")")
    workload = "training" if args.training else "inference"
    try:
        instances = load_instances(args.data)
        per_param = (training_bytes_per_param(args.precision) if args.training
                     else BYTES[args.precision]) if args.params else None
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    memory = (estimate_memory_gib(args.params, args.precision, args.training, args.overhead)
              if args.params else args.memory_gib)
    if args.gpus > max(i.accelerator_count for i in instances):
        parser.error(f"--gpus {args.gpus}: this chooser plans one instance (one node); "
                     f"the largest has {max(i.accelerator_count for i in instances):g} accelerators")
    options, candidates = rank(instances, memory, args.gpus, args.hours, workload, args.precision,
                               args.include_retired, args.nvidia_only)
    if not options:
        near = closest(candidates, args.gpus)
        hint = (f"; closest: {near.instance_type} ({near.accelerator_count:g} x "
                f"{near.accelerator_memory_gib:g} GiB {near.accelerator}, ${near.usd_per_hour:g}/h)"
                if near else "")
        parser.error(f"no instance fits {args.gpus} x {memory / args.gpus:.2f} GiB for "
                     f"{workload}{' in ' + args.precision if args.precision else ''}{hint}")
    # Self-check: every option fits and the list is in cost order.
    per_gpu = memory / args.gpus
    by_type = {i.instance_type: i for i in instances}
    assert all(fits(by_type[o.instance_type], per_gpu, args.gpus) for o in options)
    assert [o.total_usd for o in options] == sorted(o.total_usd for o in options)
    shown = options[:args.top]
    if args.json:
        print(json.dumps({"workload": workload, "precision": args.precision,
                          "memory_gib": round(memory, 2), "gpus": args.gpus, "hours": args.hours,
                          "prices_as_of": max(i.price_as_of for i in instances),
                          "options": [asdict(o) for o in shown]}, indent=2))
        return 0
    if args.explain:
        print("\n".join(explain(args, memory, per_param)))
    print(f"{len(options)} instances fit; cheapest {len(shown)} for {args.hours:g} h "
          f"(on-demand, us-east-1, prices as of {max(i.price_as_of for i in instances)}):")
    print(table(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
