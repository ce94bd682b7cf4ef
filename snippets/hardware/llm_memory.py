"""Will an LLM fit, and how fast can it decode? Weights + KV cache against GPU memory, and the
memory-bandwidth bound on tokens per second.

Run:  python snippets/hardware/llm_memory.py [--model llama-3.1-70b] [--weights bf16]
          [--context 8192] [--batch 8] [--gpu-gb 141] [--gpu-tbs 4.8] [--reserve-gb 0]

Weights take parameters x bytes per parameter. The KV cache keeps, for every token of every
sequence in the batch, one key and one value vector per layer and KV head:
2 x layers x KV heads x head dim x bytes, per token. A GPU needs both in memory (plus a reserve
for the CUDA context, activations and fragmentation). Decoding reads every weight and the whole
KV cache once per step, so a step takes at least (weights + KV cache) / bandwidth: split over N
GPUs (tensor parallel) each reads 1/N of it, in parallel.
"""

from __future__ import annotations

import os
import signal
import sys


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)


# --8<-- [start:imports]
import argparse
import math
# --8<-- [end:imports]

# --8<-- [start:shapes]
# Layer and head shapes from each model's published config.json on Hugging Face
# (num_hidden_layers, num_key_value_heads, hidden_size / num_attention_heads), as of 2026-11;
# parameter counts are those of the checkpoints (safetensors metadata).
MODELS = {
    "llama-3.1-8b": {"params": 8.03e9, "layers": 32, "kv_heads": 8, "head_dim": 128},
    "llama-3.1-70b": {"params": 70.6e9, "layers": 80, "kv_heads": 8, "head_dim": 128},
}
BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
# --8<-- [end:shapes]


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


# --8<-- [start:formula]
def weight_bytes(params: float, weights: str) -> float:
    return params * BYTES[weights]


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, kv: str) -> float:
    return 2 * layers * kv_heads * head_dim * BYTES[kv]  # 2: one key and one value


def gpus_needed(total_bytes: float, gpu_bytes: float, reserve_bytes: float) -> int:
    """Fewest GPUs whose usable memory (capacity minus a per-GPU reserve) holds it all."""
    usable = gpu_bytes - reserve_bytes
    return math.ceil(total_bytes / usable)


def decode_bound(weights_b: float, kv_b: float, gpus: int, bandwidth: float) -> float:
    """Decode steps per second at most: every weight and all of the KV cache read once per step,
    spread over `gpus` GPUs reading in parallel (communication between them left out)."""
    return gpus * bandwidth / (weights_b + kv_b)
# --8<-- [end:formula]


def plan(model: str, weights: str, kv: str, context: int, batch: int, gpu_gb: float,
         gpu_tbs: float, reserve_gb: float) -> dict:
    m = MODELS[model]
    w = weight_bytes(m["params"], weights)
    per_token = kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], kv)
    cache = per_token * context * batch
    n = gpus_needed(w + cache, gpu_gb * 1e9, reserve_gb * 1e9)
    steps = decode_bound(w, cache, n, gpu_tbs * 1e12)
    return {"weights": w, "per_token": per_token, "cache": cache, "total": w + cache,
            "gpus": n, "left": n * (gpu_gb - reserve_gb) * 1e9 - (w + cache),
            "steps_per_s": steps, "tokens_per_s": steps * batch,
            "weights_alone_fit": w <= (gpu_gb - reserve_gb) * 1e9}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--model", choices=MODELS, default="llama-3.1-70b")
    parser.add_argument("--weights", choices=BYTES, default="bf16", help="weight precision")
    parser.add_argument("--kv", choices=BYTES, default="bf16", help="KV cache precision")
    parser.add_argument("--context", type=number(int, 1, 10_000_000), default=8192,
                        help="tokens per sequence (prompt + output), 8192")
    parser.add_argument("--batch", type=number(int, 1, 100_000), default=8,
                        help="sequences decoded together, 8")
    parser.add_argument("--gpu-gb", type=number(float, 1.0, 10_000.0), default=141.0,
                        help="memory per GPU in GB (default 141: NVIDIA H200 SXM datasheet)")
    parser.add_argument("--gpu-tbs", type=number(float, 0.01, 1000.0), default=4.8,
                        help="memory bandwidth per GPU in TB/s (default 4.8: H200 datasheet)")
    parser.add_argument("--reserve-gb", type=number(float, 0.0, 10_000.0), default=0.0,
                        help="memory kept free per GPU (CUDA context, activations), 0")
    args = parser.parse_args(argv)
    if args.reserve_gb >= args.gpu_gb:
        parser.error(f"--reserve-gb {args.reserve_gb} leaves nothing of --gpu-gb {args.gpu_gb}")

    p = plan(args.model, args.weights, args.kv, args.context, args.batch, args.gpu_gb,
             args.gpu_tbs, args.reserve_gb)
    usable = args.gpu_gb - args.reserve_gb
    print(f"{args.model}, weights in {args.weights}, KV cache in {args.kv}")
    print(f"weights:                {p['weights'] / 1e9:8.1f} GB")
    print(f"KV cache per token:     {p['per_token'] / 1e6:8.3f} MB")
    print(f"KV cache, all tokens:   {p['cache'] / 1e9:8.1f} GB  ({args.batch} x {args.context:,} tokens)")
    print(f"total:                  {p['total'] / 1e9:8.1f} GB")
    alone = "fit" if p["weights_alone_fit"] else "do not fit"
    print(f"on {usable:g} GB per GPU: the weights alone {alone} on one GPU; "
          f"weights + KV cache need {p['gpus']} GPU{'s' if p['gpus'] > 1 else ''} "
          f"({p['left'] / 1e9:.1f} GB left over)")
    print(f"decode bound at {args.gpu_tbs:g} TB/s per GPU: {p['steps_per_s']:.1f} steps/s, "
          f"{p['tokens_per_s']:.0f} tokens/s for the batch of {args.batch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
