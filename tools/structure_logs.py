"""Turn the raw tool output the pages cite into JSON the renderers read (run once per new log).

    python tools/structure_logs.py          # (--help writes nothing)

- XLA's optimized HLO (docs/data/xla-hlo-*.txt): the element-wise operations inside its fusions
  and the fusion kinds -> docs/data/xla-hlo-*.counts.json
- an Nsight Compute text report: each kernel's first profiled launch (grid, block, occupancy,
  DRAM throughput, duration) -> the JSON named in NCU below
- ptxas's -v report of the matrix-multiplication build (docs/data/matmul-build-h100.txt):
  registers, spills and shared memory per kernel -> docs/data/matmul-build-h100.json
- an `ncu --metrics` report (docs/data/matmul-ncu-*.txt): every metric of each profiled launch,
  in order -> docs/data/matmul-ncu-*.json
- a SASS dump of `run.py mandelbrot --sass`: each kernel's main loop (bench.sass.loops)
  -> docs/data/mandelbrot-sass-*.loops.json
- gpu/mandelbrot.sh's `ncu --metrics` report (docs/data/mandelbrot-ncu-*.txt, a section
  "===== VARIANT" per kernel): each variant's metrics -> docs/data/mandelbrot-ncu-*.json

tests/test_structured_logs.py checks that every JSON file matches its raw file. Each file is
written whole or not at all (bench.cli.atomic_write): a full disk keeps the earlier one.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data"
NCU = {"gpu/logs/h100-2026-12-06h/call3/saxpy-ncu.txt": "docs/data/saxpy-ncu-h100.json",
       "gpu/logs/h100-2026-12-06b/reduction/reduction-ncu.txt": "docs/data/reduction-ncu-h100.json"}

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


ENTRY = re.compile(r"Compiling entry function '(?P<name>\w+)'")
SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
# The kernels' templates and the names of their instances (the WT, TC and WG macros of
# kernels.cuh, less the split of K, which only the host side knows).
TEMPLATES = {"sgemm_warptile": "wt_{}x{}x{}_{}x{}_{}x{}_{}x{}_{}_{}_g{}",
             "gemm_bf16_tc": "tc_{}x{}x{}_{}x{}_s{}_g{}", "gemm_bf16_wgmma": "wgmma_{}x{}_s{}_g{}_f{}"}


def parse_build(text: str) -> dict:
    """{kernel or template instance name: {"registers", "spill_stores", "smem", "dynamic_smem"}}
    from ptxas's -v report; template instances get names like the binary's (wt_..., tc_...)."""
    out: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if m := ENTRY.search(line):
            mangled = m["name"]
            args = re.findall(r"Li(\d+)E", mangled)
            form = next((f for k, f in TEMPLATES.items() if k in mangled), None)
            if "gemm_bf16_wgmma" in mangled and len(args) == 3:  # built before BM, BN were
                args = ["128", "256", *args]                      # template arguments
            found = re.match(r"_Z(\d+)", mangled)  # _Z<length><name><arguments>
            current = (form.format(*args) if form else
                       mangled[found.end():found.end() + int(found[1])] if found else mangled)
            out[current] = {}
        elif current and (m := SPILL.search(line)):
            out[current]["spill_stores"] = int(m[1])
        elif current and (m := re.search(r"Used (\d+) registers", line)):
            smem = re.search(r"(\d+) bytes smem", line)
            out[current] |= {"registers": int(m[1]), "smem": int(smem[1]) if smem else 0}
            stages = int(s[1]) if (s := re.search(r"_s(\d+)", current)) else 0
            if current.startswith("tc_"):  # the pipeline's buffers are dynamic shared memory
                bm, bn, bk = map(int, re.findall(r"\d+", current)[:3])
                out[current]["dynamic_smem"] = stages * (bm * bk + bk * bn) * 2
            elif current.startswith("wgmma_"):  # stages of A and B^T tiles, + 1 KiB to align
                bm, bn = map(int, re.findall(r"\d+", current)[:2])
                out[current]["dynamic_smem"] = stages * (bm + bn) * 64 * 2 + 1024
    return out


NCU_LAUNCH = re.compile(r"^  (?:void )?(\w+).*[,(]")  # a profiled launch's header
NCU_METRIC = re.compile(r"^\s+([a-z0-9_]+__[\w.]+)\s+(\S+)?\s+([\d,.]+)\s*$")
NCU_SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ms": 1e-3, "us": 1e-6}


def ncu_profiles(text: str) -> list[tuple[str, dict[str, float]]]:
    """[(kernel, {metric: value in base units})], one per profiled launch in order, from
    `ncu --metrics` output (or several such outputs appended)."""
    out: list[tuple[str, dict[str, float]]] = []
    for line in text.splitlines():
        if (m := NCU_LAUNCH.match(line)) and "__" not in m[1]:
            out.append((m[1], {}))
        elif out and (m := NCU_METRIC.match(line)):
            unit = m[2] if m[2] in NCU_SCALE else None
            out[-1][1][m[1]] = float(m[3].replace(",", "")) * (NCU_SCALE[unit] if unit else 1)
    return out


def variant_profiles(text: str) -> dict[str, dict[str, float]]:
    """{variant: its first profiled launch's metrics} from a report of one section per variant,
    each headed "===== VARIANT" (gpu/mandelbrot.sh)."""
    out = {}
    for section in re.split(r"^===== ", text, flags=re.M)[1:]:
        variant, _, body = section.partition("\n")
        if profiles := ncu_profiles(body):
            out[variant.strip()] = profiles[0][1]
    if not out:
        raise ValueError("no profiled launch in the ncu report")
    return out


def build_rows(text: str) -> list[dict]:
    """One row per kernel of parse_build, named without sgemm_, with its shared memory in KiB."""
    return [{"kernel": k.removeprefix("sgemm_"), **f,
             "shared_kib": (f.get("smem", 0) + f.get("dynamic_smem", 0)) / 1024,
             "dynamic": "dynamic" if f.get("dynamic_smem") else ""} for k, f in parse_build(text).items()]


def structured() -> dict[Path, object]:
    """{JSON file: its content} for every raw file this tool knows."""
    from bench.sass import loops  # the project's package

    out: dict[Path, object] = {}
    for raw in sorted(DATA.glob("xla-hlo-*.txt")):
        out[raw.with_suffix(".counts.json")] = {"raw": raw.name, **hlo_counts(raw.read_text())}
    for raw, target in NCU.items():
        out[ROOT / target] = {"raw": raw, "kernels": ncu_kernels((ROOT / raw).read_text())}
    for raw in sorted(DATA.glob("matmul-build-*.txt")):
        out[raw.with_suffix(".json")] = {"raw": raw.name, "rows": build_rows(raw.read_text())}
    for raw in sorted(DATA.glob("matmul-ncu-*.txt")):
        profiles = ncu_profiles(raw.read_text())
        out[raw.with_suffix(".json")] = {"raw": raw.name, "rows": [
            {"kernel": k.removeprefix("sgemm_"), "metrics": m} for k, m in profiles]}
    for raw in sorted(DATA.glob("mandelbrot-ncu-*.txt")):
        out[raw.with_suffix(".json")] = {"raw": raw.name, "variants": variant_profiles(raw.read_text())}
    for raw in sorted(DATA.glob("mandelbrot-sass-*.txt")):
        out[raw.with_suffix(".loops.json")] = {"raw": raw.name, "loops": loops(raw.read_text())}
    return out


def dump(content: object) -> str:
    return json.dumps(content, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    from bench.cli import Parser, atomic_write, show  # the project's package

    Parser(description=__doc__.splitlines()[0]).parse_args(argv)  # --help: nothing written
    for path, content in structured().items():
        atomic_write(path, dump(content))
        show(str(path.relative_to(ROOT)))  # | head: the rest is written all the same
    return 0


if __name__ == "__main__":
    from bench.cli import run_main

    sys.exit(run_main(main))
