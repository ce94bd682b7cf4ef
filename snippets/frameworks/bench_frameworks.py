"""Time one training step of the same network in TensorFlow, PyTorch and JAX, into a results file.

Run:  python snippets/frameworks/bench_frameworks.py [--frameworks tensorflow,pytorch,jax]
          [--sizes small,medium] [--out FILE]

For each framework that is installed and each execution mode (eager, graph/compiled), it times
the first step on its own (tracing and compilation happen there) and then the steady-state
step: the median of repeats of 20 steps each, ended by a device synchronisation. Batches are
on the device before timing, so no host-to-device copy is counted. All three run in full
float32 (TensorFloat-32 off), so they do the same arithmetic.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from bench import results, system, timing  # noqa: E402

MODULES = {"tensorflow": "train_tensorflow", "pytorch": "train_pytorch", "jax": "train_jax"}
MODES = {"tensorflow": ("eager", "function", "xla"), "pytorch": ("eager", "compile"),
         "jax": ("eager", "jit")}
SIZES = {"small": (64, 128), "medium": (512, 1024), "large": (2048, 8192)}  # (width, batch)
STEPS_PER_REPEAT = 20


def load(framework: str):
    """The framework's training module, or None (with the reason) when it is not installed."""
    try:
        mod = importlib.import_module(MODULES[framework])
    except ImportError as exc:
        return None, f"{framework} not installed here ({exc.name or exc}): skipped"
    if framework == "tensorflow":
        mod.tf.config.experimental.enable_tensor_float_32_execution(False)
    elif framework == "jax":
        mod.jax.config.update("jax_default_matmul_precision", "highest")
    elif framework == "pytorch":
        mod.torch.backends.cuda.matmul.allow_tf32 = False
    return mod, None


def device_of(framework: str, mod) -> str:
    if framework == "tensorflow":
        return mod.device_name()
    if framework == "pytorch":
        return mod.device().type.replace("cuda", "gpu")
    return "gpu" if mod.jax.devices()[0].platform in ("gpu", "cuda", "rocm") else "cpu"


def flops_per_step(width: int, batch: int) -> int:
    forward = 2 * batch * (2 * width + width * width + width)  # three matrix products
    return 3 * forward  # backward costs about twice the forward


def bench_one(framework, mod, mode, size, repeats) -> dict | None:
    width, batch = SIZES[size]
    x, y = mod.make_data(n=max(4096, 4 * batch))
    trainer = mod.build(width=width, mode=mode, lr=0.01)
    n_batches = len(x) // batch
    batches = [trainer.put(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch])
               for i in range(n_batches)]
    xs, ys = trainer.put(x, y)
    loss0, _ = trainer.evaluate(xs, ys)
    state = {"i": 0}

    def steps(k):
        loss = None
        for _ in range(k):
            loss = trainer.step(*batches[state["i"] % n_batches])
            state["i"] += 1
        trainer.sync(loss)
        return loss

    first = timing.time_once(lambda: steps(1))  # tracing + compilation + one step
    stats = timing.time_host(lambda: steps(STEPS_PER_REPEAT), repeats=repeats, warmup=1)
    loss1, acc1 = trainer.evaluate(xs, ys)
    ok = math.isfinite(loss1) and loss1 < loss0
    per_step = {"median_s": stats.median_s / STEPS_PER_REPEAT, "min_s": stats.min_s / STEPS_PER_REPEAT,
                "max_s": stats.max_s / STEPS_PER_REPEAT, "repeats": stats.repeats,
                "clock": "host, synchronised every 20 steps", "spread": round(stats.spread, 4)}
    params = {"width": width, "batch": batch, "size": size, "steps_per_repeat": STEPS_PER_REPEAT}
    error = {"metric": "loss_after_over_loss_before", "value": round(loss1 / loss0, 4) if loss0 else None}
    dev = device_of(framework, mod)
    common = dict(params=params, flops=flops_per_step(width, batch), error=error,
                  work={"final_accuracy": round(acc1, 4)})
    return {"ok": ok, "rows": [
        results.measurement("train_step", f"{framework}_{mode}", dev, "compile_first",
                            {"median_s": first, "min_s": first, "max_s": first, "repeats": 1,
                             "clock": "host", "spread": 1.0}, **common),
        results.measurement("train_step", f"{framework}_{mode}", dev, "end_to_end", per_step, **common),
    ]}


def parse_list(text: str, allowed) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(allowed)}; got {text!r}")
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--frameworks", type=lambda t: parse_list(t, MODULES),
                        default=list(MODULES), help="comma-separated: tensorflow,pytorch,jax")
    parser.add_argument("--sizes", type=lambda t: parse_list(t, SIZES), default=["small", "medium"],
                        help="comma-separated: small (64 wide, batch 128), medium (512, 1024), "
                             "large (2048, 8192)")
    parser.add_argument("--repeats", type=int, default=timing.MIN_REPEATS,
                        help=f"timed repeats of {STEPS_PER_REPEAT} steps (default 10)")
    parser.add_argument("--out", type=Path, default=None, help="write a results JSON file here")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")

    rows, notes, failed = [], [
        "first step (compile_first) includes tracing and compilation; end_to_end is the steady-"
        "state time per step: the median of repeats of 20 steps, each repeat ended by a device "
        "synchronisation; batches were on the device before timing",
        "all frameworks in full float32 (TensorFloat-32 off); SGD with momentum, same model"], 0
    for framework in args.frameworks:
        mod, why = load(framework)
        if mod is None:
            notes.append(why)
            print(why)
            continue
        for size in args.sizes:
            for mode in MODES[framework]:
                out = bench_one(framework, mod, mode, size, args.repeats)
                failed += not out["ok"]
                rows += out["rows"]
                first, warm = out["rows"]
                print(f"{framework:<10} {mode:<8} {size:<6} {warm['device']:<3} first step "
                      f"{first['median_s'] * 1e3:9.1f} ms   step {warm['median_s'] * 1e3:8.3f} ms"
                      f"{'' if out['ok'] else '   LOSS DID NOT FALL'}")
                if args.out:  # after every run, so a time-out keeps what was measured
                    results.write_results(args.out, "frameworks",
                                          system.describe_system(check_cuda=False), rows, notes)
    if not rows:
        print("error: none of the requested frameworks is installed", file=sys.stderr)
        return 1
    if args.out:
        print(f"wrote {args.out}")
    if failed:
        print(f"error: in {failed} runs the loss did not fall", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
