"""Turn the raw tool output the pages cite into JSON the renderers read (run once per new log).

    python tools/structure_logs.py

- XLA's optimized HLO (docs/data/xla-hlo-*.txt): the element-wise operations inside its fusions
  and the fusion kinds -> docs/data/xla-hlo-*.counts.json
- an Nsight Compute text report: each kernel's first profiled launch (grid, block, occupancy,
  DRAM throughput, duration) -> the JSON named in NCU below
- a SASS dump of `run.py mandelbrot --sass`: each kernel's main loop (bench.sass.loops)
  -> docs/data/mandelbrot-sass-*.loops.json

tests/test_structured_logs.py checks that every JSON file matches its raw file.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data"
NCU = {"gpu/logs/h200-2026-12-01/saxpy-ncu.txt": "docs/data/saxpy-ncu-h200.json",
       "gpu/logs/h200-2026-12-02b/reduce/call2-reduction-ncu.txt": "docs/data/reduction-ncu-h200.json"}

ELEMENTWISE = ("add", "subtract", "multiply", "divide", "tanh", "exponential", "log", "maximum",
               "minimum", "negate", "sqrt", "rsqrt", "power", "abs", "logistic", "erf")
HLO_OP = re.compile(r"=\s*\S+\s+(?P<op>[a-z-]+)\(")
NCU_KERNEL = re.compile(r"^  (\w+)[^()]*(?:\([^)]*\))? \((\d+), 1, 1\)x\((\d+), 1, 1\)")
NCU_METRICS = {"Achieved Occupancy": "occupancy_pct", "DRAM Throughput": "dram_pct",
               "Duration": "duration_us"}


def hlo_counts(text: str) -> dict:
    """Element-wise operations inside the fused computations of an optimized-HLO dump, and
    the kinds of its fusion instructions."""
    counts: dict[str, int] = {}
    inside = False
    for line in text.splitlines():
        if line.startswith("%fused") or line.startswith("fused_"):
            inside = True
        elif line.startswith("}"):
            inside = False
        elif inside and (m := HLO_OP.search(line)) and m["op"] in ELEMENTWISE:
            counts[m["op"]] = counts.get(m["op"], 0) + 1
    kinds = re.findall(r"\bfusion\(.*?kind=(\w+)", text)
    if not counts or not kinds:
        raise ValueError("no fused element-wise operations found")
    ops = sorted(counts.items(), key=lambda kv: -kv[1])
    return {"total": sum(counts.values()), "ops": ", ".join(f"{n} {op}" for op, n in ops),
            "fusions": len(kinds), "kinds": ", ".join(sorted(set(kinds)))}


def ncu_kernels(text: str) -> list[dict]:
    """The first profiled launch of each kernel of an `ncu` text report."""
    found: list[dict] = []
    for line in text.splitlines():
        if m := NCU_KERNEL.match(line):
            found.append({"kernel": m[1], "grid": int(m[2]), "block": int(m[3])})
            continue
        for name, key in NCU_METRICS.items():
            if found and line.strip().startswith(name + " ") and key not in found[-1]:
                found[-1][key] = float(line.split()[-1].replace(",", ""))
    first = {}
    for k in found:
        first.setdefault(k["kernel"], k)
    if not first:
        raise ValueError("no kernels found in the ncu report")
    return list(first.values())


def structured() -> dict[Path, object]:
    """{JSON file: its content} for every raw file this tool knows."""
    from bench.sass import loops  # the project's package

    out: dict[Path, object] = {}
    for raw in sorted(DATA.glob("xla-hlo-*.txt")):
        out[raw.with_suffix(".counts.json")] = {"raw": raw.name, **hlo_counts(raw.read_text())}
    for raw, target in NCU.items():
        out[ROOT / target] = {"raw": raw, "kernels": ncu_kernels((ROOT / raw).read_text())}
    for raw in sorted(DATA.glob("mandelbrot-sass-*.txt")):
        out[raw.with_suffix(".loops.json")] = {"raw": raw.name, "loops": loops(raw.read_text())}
    return out


def dump(content: object) -> str:
    return json.dumps(content, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    for path, content in structured().items():
        path.write_text(dump(content))
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
