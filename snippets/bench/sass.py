"""Floating-point instructions per iteration, counted in a kernel's SASS (GPU machine code).

`loops` reads a dump written by `run.py mandelbrot --sass` and finds each kernel's main loop;
the Mandelbrot page's FP64 ceiling table divides a datasheet's rate by what it counts.
"""

from __future__ import annotations

import re
from collections import Counter

FLOAT_OPCODES = {"FP64": {"DADD", "DMUL", "DFMA", "DSETP", "DMNMX"},
                 "FP32": {"FADD", "FMUL", "FFMA", "FSETP", "FMNMX"}}
PRODUCT = {"FP64": "DMUL", "FP32": "FMUL"}
PRODUCTS_PER_ITERATION = 3  # x*x, y*y, x*y: every iteration of every kernel does exactly three
TEST_PRODUCTS = (0, 2)  # a chunked kernel's loop adds the 2 squares of its one escape test
INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)(.*)")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")


def loops(text: str) -> dict[str, dict]:
    """For each kernel of a SASS dump written by `run.py <topic> --sass` (sections headed
    "===== VARIANT FUNCTION"), its main loop: of the backward branches' bodies, the one with the
    most products (DMUL in float64, FMUL in float32). Float instructions per iteration = float
    instructions of that precision in the body / iterations per trip, where iterations per trip =
    products in the body / 3 (rounded down: a chunked kernel's trip also squares x and y once for
    its test). `ops`: every opcode of the body per iteration, the instruction mix."""
    kernels: dict[str, dict] = {}
    for section in re.split(r"^===== ", text, flags=re.M)[1:]:
        header, _, body = section.partition("\n")
        variant = header.split()[0]
        code, labels, pending = [], {}, []
        for line in body.splitlines():
            found = LABEL.match(line)
            if found:
                pending.append(found.group(1))
                continue
            ins = INSTRUCTION.search(line)
            if ins and not ins.group(2).startswith("."):
                addr = int(ins.group(1), 16)
                for name in pending:
                    labels[name] = addr
                pending = []
                code.append((addr, ins.group(2), ins.group(3)))
        loops = []
        for addr, op, rest in code:
            target = re.search(r"`\((\.L_x_\d+)\)", rest)
            if op.startswith("BRA") and target and labels.get(target.group(1), addr + 1) <= addr:
                start = labels[target.group(1)]
                loops.append(Counter(o.split(".")[0] for a, o, _ in code if start <= a <= addr))
        if not loops:
            raise ValueError(f"no loop found in the SASS of {variant}")
        counts = max(loops, key=lambda c: c["DMUL"] + c["FMUL"])
        precision = "FP64" if counts["DMUL"] else "FP32"
        products = counts[PRODUCT[precision]]
        trips = products // PRODUCTS_PER_ITERATION
        if trips < 1 or products % PRODUCTS_PER_ITERATION not in TEST_PRODUCTS:
            raise ValueError(f"{variant}: {products} {PRODUCT[precision]} in the loop, "
                             "not 3 per iteration (+ 2 for a test)")
        float_ops = {op: n for op, n in sorted(counts.items()) if op in FLOAT_OPCODES[precision]}
        total = sum(counts.values())
        kernels[variant] = {"precision": precision, "iterations_per_trip": trips,
                            "float": sum(float_ops.values()) / trips,
                            "other": (total - sum(float_ops.values())) / trips,
                            "float_ops": float_ops,
                            "ops": {op: n / trips for op, n in sorted(counts.items())}}
    return kernels


def dump(bench) -> str:
    """The SASS of every Numba CUDA kernel that the GPU rows of `bench` launch, each compiled by
    one launch on the benchmark's probe case, in sections headed "===== VARIANT FUNCTION" (what
    `loops` reads). `run.py TOPIC --sass FILE` writes it; it needs a GPU and nvdisasm."""
    import sys

    from numba.cuda.dispatcher import CUDADispatcher

    def kernels() -> dict:  # every kernel (not device function) of a loaded module: its overloads
        found = {}   # held by a name, or in a table of them ({name: (kernel, ...)}, as KERNELS)
        for module in list(sys.modules.values()):
            for value in list(getattr(module, "__dict__", {}).values()):
                rows = list(value.values()) if isinstance(value, dict) else []
                for item in (value, *rows, *(x for row in rows if isinstance(row, tuple) for x in row)):
                    if isinstance(item, CUDADispatcher) and not item.targetoptions.get("device"):
                        found[id(item)] = (item, set(item.overloads))
        return found
    parts = []
    for key in bench.runnable():
        prepared = bench.setup(key, bench.probe_params) if bench.device(key) == "gpu" else None
        if prepared is None or prepared.kernel is None:
            continue
        before = kernels()
        prepared.kernel()
        for ident, (kernel, signatures) in kernels().items():
            for signature in signatures - before.get(ident, (None, set()))[1]:
                parts.append(f"===== {key} {kernel.py_func.__name__}\n"
                             f"{kernel.inspect_sass(signature)}\n")
    return "".join(parts)
