"""What every measured figure on the site is shown with: where, when, with what, by which command.

`load` is the one way a renderer reads a benchmark results file: validated against the schema
of `snippets/bench/results.py`, never a partial run or a quick check.
"""

from __future__ import annotations

import textwrap
from html import escape
from pathlib import Path

from bench import results

from . import data_file, renderer


def load(docs_dir: Path, path: str) -> dict:
    """The document of a results file; FileNotFoundError when it is missing, ValueError (one
    line) for a file that breaks the schema, is a partial run or a quick check."""
    doc = results.read_results(data_file(docs_dir, path))
    for flag, what in (("partial", "an interrupted run"), ("quick_check", "a quick check")):
        if doc.get(flag):
            raise ValueError(f"{path} is {what} ({flag}: true), not for publication")
    return doc


def label(doc: dict, variant: str) -> str:
    """The label a reader sees for a variant: the benchmark's registry, copied into the file."""
    try:
        return doc["variants"][variant]["label"]
    except KeyError:
        raise ValueError(f"{doc.get('benchmark', '?')}: the results file names no label for "
                         f"{variant!r}") from None


def of_group(doc: dict, group: str) -> list[str]:
    """The variants the registry put in `group` ("copy", "ceiling", ...), in registry order."""
    return [k for k, v in doc.get("variants", {}).items() if v.get("group") == group]


def kernel_rows(doc: dict, case: str) -> dict[str, dict]:
    """{variant: its kernel-only measurement} of one case."""
    return {m["variant"]: m for m in doc["measurements"]
            if m["case"] == case and m["phase"] == "kernel"}


def gbs(m: dict) -> float:
    """The measurement's bytes moved per second, in GB/s."""
    return m["bytes"] / m["median_s"] / 1e9


def describe_run(doc: dict) -> str:
    """A Markdown paragraph naming hardware, versions, commit, date and command of a results file."""
    s = doc["system"]
    gpus = s.get("gpus") or []
    g = gpus[0] if gpus else {}
    gpu = (f"{f'{len(gpus)} × ' if len(gpus) > 1 else ''}{g['name']} ({g['memory_mib'] // 1024} GiB, "
           f"compute capability {g['compute_capability']}, driver {g['driver']})" if g else "no GPU")
    cuda = s.get("cuda") or {}
    parts = [cuda.get("runtime") and f"CUDA runtime {cuda['runtime']}",
             cuda.get("nvcc") and f"nvcc {cuda['nvcc']}",
             *(f"{k} reports CUDA {v}" for k, v in (cuda.get("frameworks") or {}).items() if k != "error")]
    cuda_text = "".join(f", {p}" for p in parts if p)
    libs = ", ".join(f"{k} {v}" for k, v in s.get("libraries", {}).items())
    host, code = s.get("host", {}), doc.get("code") or {}
    commit = code.get("commit", "unknown")
    code_text = "" if not code else " Code: commit not recorded." if commit == "unknown" else (
        f" Code: commit <code>{escape(commit[:12])}</code>"
        f"{' with uncommitted changes' if code.get('dirty') else ''}.")
    return (f"Measured {s.get('date', '?')[:10]} on {gpu}{cuda_text}; CPU {host.get('cpu', '?')} "
            f"({host.get('cores', '?')} cores). Software: {libs}.{code_text} "
            f"Command: <code>{escape(s.get('command', '?'))}</code>")


@renderer("run_details")
def run_details(docs_dir: Path, path: str) -> str:
    doc = load(docs_dir, path)
    notes = "".join(f"\n- {n}" for n in doc.get("notes", []))
    body = textwrap.indent(describe_run(doc) + (f"\n\nNotes:{notes}" if notes else ""), "    ")
    return f'??? info "How this was measured ({escape(path)})"\n\n{body}\n'
