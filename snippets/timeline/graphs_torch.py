"""Launches that cost nothing, in PyTorch: a chain of tiny matrix products (one kernel each, which
no compiler fuses) launched one by one, captured once as a CUDA graph (torch.cuda.CUDAGraph) and
replayed, and compiled with torch.compile(mode="reduce-overhead"), which captures the graph for
you. Run: python graphs_torch.py [LENGTH]   (on the CPU: the eager chain only, there is no graph)"""
import argparse

import torch


# --8<-- [start:chain]
def chain(x, w, length):
    """`length` products x @ w, each one small kernel; w is the identity, so x comes back."""
    for _ in range(length):
        x = x @ w
    return x
# --8<-- [end:chain]


# --8<-- [start:graph]
def graphed(x, w, length):
    """A function that replays the chain captured once as a CUDA graph. The graph keeps the
    addresses it was captured with: new input goes into `x` itself, the result is `out`."""
    side = torch.cuda.Stream()  # capture needs a stream other than the default one
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        chain(x, w, length)  # warm up: cuBLAS picks its kernel before the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = chain(x, w, length)

    def replay():
        graph.replay()  # one launch for all `length` kernels
        return out
    return replay


def compiled(length):
    """torch.compile captures the CUDA graph itself ("reduce-overhead"); it copies the input into
    the graph's own buffer on each call."""
    return torch.compile(lambda x, w: chain(x, w, length), mode="reduce-overhead")
# --8<-- [end:graph]


def inputs(device: str, size: int = 16):
    """Whole-number x (exact through every product) and the identity w."""
    x = torch.arange(size * size, dtype=torch.float32, device=device).reshape(size, size) % 7
    return x, torch.eye(size, device=device)


def check(length: int, device: str) -> int:
    """Elements that differ from x after the chain, in every way the device offers."""
    x, w = inputs(device)
    results = [chain(x, w, length)]
    if device == "cuda":
        results += [graphed(x.clone(), w, length)(), compiled(length)(x, w)]
    return sum(int((r != x).sum()) for r in results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("length", nargs="?", type=int, default=100, help="kernels (default 100)")
    length = parser.parse_args().length
    if not 1 <= length <= 10_000:
        parser.error("LENGTH must be from 1 to 10000")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    wrong = check(length, device)
    print(f"OK: the chain of {length} gives x back on {device}" if wrong == 0
          else f"FAILED: {wrong} elements wrong")
    raise SystemExit(1 if wrong else 0)
