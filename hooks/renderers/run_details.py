"""What every measured figure on the site is shown with: where, when, with what, by which command."""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path

from . import renderer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "snippets"))
from bench.results import load_results  # noqa: E402  (validates the schema too)


def load(docs_dir: Path, path: str) -> dict:
    file = docs_dir / path
    if not file.is_file():
        raise FileNotFoundError(f"results file {path} not found under {docs_dir}")
    return load_results(file)


def describe_run(doc: dict) -> str:
    """A Markdown paragraph naming hardware, versions, date and command of a results file."""
    s = doc["system"]
    gpus = s.get("gpus") or []
    if gpus:
        g = gpus[0]
        count = f"{len(gpus)} × " if len(gpus) > 1 else ""
        gpu = (f"{count}{g['name']} ({g['memory_mib'] // 1024} GiB, compute capability "
               f"{g['compute_capability']}, driver {g['driver']})")
    else:
        gpu = "no GPU"
    cuda = s.get("cuda") or {}
    cuda_text = f", CUDA runtime {cuda['runtime']}" if cuda.get("runtime") else ""
    libs = ", ".join(f"{k} {v}" for k, v in s.get("libraries", {}).items())
    host = s.get("host", {})
    return (f"Measured {s.get('date', '?')[:10]} on {gpu}{cuda_text}; CPU {host.get('cpu', '?')} "
            f"({host.get('cores', '?')} cores). Software: {libs}. "
            f"Command: <code>{escape(s.get('command', '?'))}</code>")


@renderer("run_details")
def run_details(docs_dir: Path, path: str) -> str:
    doc = load(docs_dir, path)
    notes = "".join(f"\n- {n}" for n in doc.get("notes", []))
    body = describe_run(doc) + (f"\n\nNotes:{notes}" if notes else "")
    indented = "\n".join("    " + line for line in body.splitlines())
    return f'??? info "How this was measured ({escape(path)})"\n\n{indented}\n'
