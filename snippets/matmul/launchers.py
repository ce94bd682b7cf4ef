"""How matmul's registry (benchmark.py) calls what it times: cuBLAS through PyTorch, the BF16
operands of the Triton rows, and the tuning runs' picks (gpu/matmul.sh): the rule for each CUDA C
kernel's template instance (`pick`), for Numba's warp tile and Triton's config (`best`), and the
launchers that run each size in its pick."""

import functools
import importlib
import json
import math
import os
import sys
from pathlib import Path

STARTED_WITH = os.environ.get("MATMUL_NUMBA_WARPTILE", "")  # Numba's warp tile without a pick
TEMPLATES = {"warptile": "wt_", "tensor_core": "tc_", "wgmma": "wgmma_"}  # instance prefixes


def mm(fp32: bool, x, y, c) -> None:  # cuBLAS through PyTorch into c; FP32: no TF32, FP32 output
    import torch

    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 and not fp32
    torch.mm(x, y, out=c)


def bf16_put(out_type: str = "float32"):
    """The `put` of a BF16 row: matmul_triton.py's operands, made on the GPU (BF16, rows padded,
    B transposed, as in sgemm.cu), and C in `out_type` (FP32; cuBLAS through PyTorch: BF16)."""
    def put(a, b, c):
        import torch
        from matmul_triton import tma_operands

        return *tma_operands(a, b), torch.empty(c.shape, dtype=getattr(torch, out_type),
                                                device="cuda")
    return put


def to_host(c):  # a BF16 row's result, as FP32 NumPy
    return c.float().cpu().numpy()


# --8<-- [start:pick]
def pick(tuned: dict, p: dict) -> dict[str, str]:
    """The rule: for each templated kernel, at this size, the tuning instance with the smallest
    median time in the tuning run (`tuned`, its results file). {kernel: instance}."""
    best: dict[str, tuple[float, str]] = {}
    for m in tuned["measurements"]:
        name = m["variant"].removeprefix("cuda_c/")
        kernel = next((k for k, pre in TEMPLATES.items() if name.startswith(pre)), None)
        if kernel and m["phase"] == "kernel" and all(m["params"].get(d) == p[d] for d in "mnk"):
            best[kernel] = min(best.get(kernel, (math.inf, "")), (m["median_s"], name))
    return {kernel: name for kernel, (_, name) in best.items()}


def tuned_instances(p: dict) -> dict[str, str]:
    """`pick` on the tuning run's results file that MATMUL_TUNED names ({} without one)."""
    path = os.environ.get("MATMUL_TUNED")
    return pick(json.loads(Path(path).read_text()), p) if path else {}


def best(env: str, key: str, m: int, n: int, k: int) -> list | None:
    """The same rule for Numba's warp tiles and Triton's configs: of the candidates that a tuning
    run (JSON lines, in the file that environment variable `env` names) checked at this M, N, K,
    the `key` ("tiles", "config") of the one with the highest share of cuBLAS in the same
    process. None: no tuning file, or no candidate passed its check at this size."""
    path = os.environ.get(env)
    rows = [r for r in tuning_rows(path, os.stat(path).st_mtime_ns)
            if r.get("size") == [m, n, k] and r.get("ok")] if path else []
    return max(rows, key=lambda r: r["share"])[key] if rows else None


@functools.lru_cache(maxsize=8)
def tuning_rows(path: str, mtime_ns: int) -> tuple:
    """A tuning file's rows, read once per version of the file: the launchers ask on every call,
    and reading it each time (about 0.2 ms) would be timed as part of a 10-microsecond kernel."""
    return tuple(map(json.loads, Path(path).read_text().splitlines()))
# --8<-- [end:pick]


def numba_warptile(a, b, c) -> None:
    """Numba's step 7 (sgemm_numba.py) in the tiles `best` takes for this size (else the tiles
    the process started with). Tiles are compiled in as module constants (sgemm_numba_tiles.py
    reads MATMUL_NUMBA_WARPTILE), so other tiles reload the modules: the same module objects,
    with new constants and a new kernel (compiled by the first call, the check)."""
    picked = best("MATMUL_NUMBA_TUNED", "tiles", a.shape[0], b.shape[1], a.shape[1])
    tiles = ",".join(map(str, picked)) if picked else STARTED_WITH
    if tiles != os.environ.get("MATMUL_NUMBA_WARPTILE", ""):
        os.environ["MATMUL_NUMBA_WARPTILE"] = tiles  # "": sgemm_numba_tiles.py's default
        for module in ("sgemm_numba_tiles", "sgemm_numba_07_warptile", "sgemm_numba"):
            importlib.reload(sys.modules[module])
    sys.modules["sgemm_numba"].matmul("warptile", a, b, c)


def numba_tiles() -> list[int]:
    """The warp tile the modules hold now (MATMUL_NUMBA_WARPTILE's order)."""
    return [getattr(sys.modules["sgemm_numba_tiles"], name)
            for name in "WBM WBN WBK WM WN WMITER WNITER WTM WTN BLOCKS_PER_SM".split()]


def triton_tma(a, b, c) -> None:
    """The persistent Triton kernel (matmul_triton.py) in the config `best` takes for this size,
    else the default of its size class."""
    import matmul_triton

    matmul_triton.matmul_tma_into(a, b, c, triton_pick(a, b))


def triton_tma_graph(a, b, c) -> None:
    """The same kernel and config, replayed from a CUDA graph (matmul_tma_graphed)."""
    import matmul_triton

    matmul_triton.matmul_tma_graphed(a, b, c, triton_pick(a, b))


def triton_pick(a, b) -> tuple | None:  # hashable: the graphs are keyed by it
    config = best("MATMUL_TRITON_TUNED", "config", a.shape[0], b.shape[1], a.shape[1])
    return tuple(config) if config else None


def triton_config(m: int, n: int, k: int) -> list:
    """The config the Triton kernel runs at this size: the tuning run's pick, or the default."""
    import matmul_triton

    return list(matmul_triton.tma_config(m, n, best("MATMUL_TRITON_TUNED", "config", m, n, k)))
