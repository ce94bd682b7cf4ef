"""Will an LLM fit, and how fast can it decode? Weights + KV cache against GPU memory, and the
memory-bandwidth bound on tokens per second.

Run:  python snippets/hardware/llm_memory.py [--model llama-3.1-70b] [--weights bf16]
          [--context 8192] [--batch 8] [--gpu-mib 143771] [--gpu-tbs 4.8] [--reserve-mib 0]

Weights take parameters x bytes per parameter. The KV cache keeps, for every token of every
sequence in the batch, one key and one value vector per layer and KV head:
2 x layers x KV heads x head dim x bytes, per token. A GPU needs both in memory (plus a reserve
for the CUDA context, activations and fragmentation). Decoding reads every weight and the whole
KV cache once per step, so a step takes at least (weights + KV cache) / bandwidth: split over N
GPUs (tensor parallel) each reads 1/N of it, in parallel.

Memory is counted in the units the card reports: `nvidia-smi --query-gpu=memory.total` gives MiB
(2**20 bytes), and sizes are printed in GiB (2**30 bytes). A datasheet's "141 GB" is not
141e9 bytes of usable memory: an H200 reports 143,771 MiB, 150.8e9 bytes.
"""

from __future__ import annotations

# --8<-- [start:imports]
import argparse
import math
import os
import sys
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
MIB, GIB = 2**20, 2**30
# memory.total of the project's H200 as nvidia-smi reports it (docs/data/doctor-h200.json)
H200_MIB = 143771
# --8<-- [end:shapes]


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


def plan(model: str, weights: str, kv: str, context: int, batch: int, gpu_mib: float,
         gpu_tbs: float, reserve_mib: float) -> dict:
    m = MODELS[model]
    w = weight_bytes(m["params"], weights)
    per_token = kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], kv)
    cache = per_token * context * batch
    usable = (gpu_mib - reserve_mib) * MIB
    n = gpus_needed(w + cache, gpu_mib * MIB, reserve_mib * MIB)
    steps = decode_bound(w, cache, n, gpu_tbs * 1e12)
    return {"weights": w, "per_token": per_token, "cache": cache, "total": w + cache,
            "gpus": n, "left": n * usable - (w + cache),
            "steps_per_s": steps, "tokens_per_s": steps * batch,
            "weights_alone_fit": w <= usable}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=MODELS, default="llama-3.1-70b")
    parser.add_argument("--weights", choices=BYTES, default="bf16", help="weight precision")
    parser.add_argument("--kv", choices=BYTES, default="bf16", help="KV cache precision")
    parser.add_argument("--context", type=int, default=8192,
                        help="tokens per sequence (prompt + output), 8192")
    parser.add_argument("--batch", type=int, default=8,
                        help="sequences decoded together, 8")
    parser.add_argument("--gpu-mib", type=float, default=H200_MIB,
                        help="memory per GPU in MiB, as nvidia-smi reports memory.total "
                             f"(default {H200_MIB}: the project's H200)")
    parser.add_argument("--gpu-tbs", type=float, default=4.8,
                        help="memory bandwidth per GPU in TB/s (default 4.8: H200 datasheet)")
    parser.add_argument("--reserve-mib", type=float, default=0.0,
                        help="memory kept free per GPU in MiB (CUDA context, activations), 0")
    args = parser.parse_args(argv)
    if sys.stdout is None:  # started with standard output closed (>&-): nowhere to answer
        parser.exit(2, "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
    if min(args.context, args.batch) < 1 or not 0 < args.gpu_tbs <= 1000:
        parser.error("--context and --batch must be above 0, --gpu-tbs above 0 and at most 1000")
    # at least 1 MiB usable and at most 16 TiB a GPU: false for nan and inf too
    if not (args.reserve_mib >= 0 and 1 <= args.gpu_mib - args.reserve_mib
            and args.gpu_mib <= 2**24):
        parser.error("--gpu-mib must be at least 1 above --reserve-mib (0 or more) and at most "
                     f"{2**24}")

    p = plan(args.model, args.weights, args.kv, args.context, args.batch, args.gpu_mib,
             args.gpu_tbs, args.reserve_mib)
    usable = (args.gpu_mib - args.reserve_mib) * MIB
    alone = "fit" if p["weights_alone_fit"] else "do not fit"
    lines = [
        f"{args.model}, weights in {args.weights}, KV cache in {args.kv}",
        f"weights:                {p['weights'] / GIB:8.1f} GiB",
        f"KV cache per token:     {p['per_token'] / MIB:8.3f} MiB",
        f"KV cache, all tokens:   {p['cache'] / GIB:8.1f} GiB  "
        f"({args.batch} x {args.context:,} tokens)",
        f"total:                  {p['total'] / GIB:8.1f} GiB",
        f"on {usable / GIB:.1f} GiB per GPU: the weights alone {alone} on one GPU; "
        f"weights + KV cache need {p['gpus']} GPU{'s' if p['gpus'] > 1 else ''} "
        f"({p['left'] / GIB:.1f} GiB left over)",
        f"decode bound at {args.gpu_tbs:g} TB/s per GPU: {p['steps_per_s']:.1f} steps/s, "
        f"{p['tokens_per_s']:.0f} tokens/s for the batch of {args.batch}",
    ]
    try:
        print("\n".join(lines), flush=True)
    except OSError as exc:  # a reader that stops (| head) ends it quietly; a full device is named
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        if not isinstance(exc, BrokenPipeError):
            print(f"error: cannot write to standard output: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
