"""The GPU doctor's recorded report, and NVIDIA's minimum-driver table, rendered for the pages."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
from html import escape
from pathlib import Path

from . import markdown_table, renderer

DOCTOR = Path(__file__).resolve().parents[2] / "snippets" / "doctor" / "gpu_doctor.py"


def _doctor_module():
    spec = importlib.util.spec_from_file_location("gpu_doctor_for_pages", DOCTOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())


@renderer("doctor_report")
def doctor_report(docs_dir: Path, path: str, machine: str = "a GPU machine") -> str:
    """The doctor's text report as recorded in a JSON file, with when and how it was made."""
    file = docs_dir / path
    if not file.is_file():
        return (f'!!! warning "No report recorded on {escape(machine)} yet"\n\n'
                f"    `{escape(path)}` does not exist yet. It is written by `gpu/doctor.sh` on "
                f"{escape(machine)}; until then, run the doctor on your own machine to see a report.\n")
    report = json.loads(file.read_text())
    doctor = _doctor_module()
    if report.get("schema") != doctor.SCHEMA:
        raise ValueError(f"{path}: schema {report.get('schema')!r}, expected {doctor.SCHEMA!r}")
    # The facts were recorded on the machine; the diagnosis is the current doctor's reading of
    # them, so advice fixed in the doctor since the recording shows on the page.
    report["findings"] = doctor.diagnose(report["facts"])
    report["exit_status"] = doctor.exit_status(report["facts"], report["findings"])
    text = doctor.render_text(report).rstrip("\n")
    verdict = doctor.verdict(report)
    return (f"```text\n{text}\n```\n\n"
            f"<small>Recorded {escape(report['date'])} on {escape(machine)} by "
            f"<code>{escape(report.get('command', 'gpu_doctor.py'))}</code> (run by "
            f"<code>gpu/doctor.sh</code>; full JSON: <code>docs/{escape(path)}</code>; diagnosis by "
            f"the current doctor from the recorded facts). "
            f"Verdict: {verdict}, exit status {report['exit_status']}.</small>\n")


@renderer("cuda_driver_table")
def cuda_driver_table(docs_dir: Path, path: str, majors: str = "13,12,11") -> str:
    """NVIDIA's minimum driver per CUDA release, with source and as-of date from the CSV."""
    file = docs_dir / path
    if not file.is_file():
        raise FileNotFoundError(f"data file {path} not found under {docs_dir}")
    with open(file, newline="") as f:
        rows = list(csv.DictReader(f))
    keep = set(majors.split(","))
    shown = [r for r in rows if r["cuda_version"].split(".")[0] in keep]
    if not shown:
        raise ValueError(f"{path}: no rows for CUDA {majors}")
    for r in shown:
        if not r.get("source", "").startswith("https://") or not r.get("as_of"):
            raise ValueError(f"{path}: row {r['toolkit']!r} lacks a source URL or an as-of date")
    table = markdown_table(
        ["CUDA release", "minimum Linux x86-64 driver", "minimum Windows x86-64 driver"],
        [[r["toolkit"], f"≥ {r['linux_x86_64_min_driver']}",
          "—" if r["windows_x86_64_min_driver"] == "N/A" else f"≥ {r['windows_x86_64_min_driver']}"]
         for r in shown], align="lrr")
    sources = sorted({(r["source"], r["as_of"]) for r in shown})
    cite = "; ".join(f'<a href="{escape(url)}">NVIDIA CUDA Toolkit Release Notes</a>, Table 3 '
                     f'"CUDA Toolkit and Corresponding Driver Versions", as of {escape(date)}'
                     for url, date in sources)
    note = ("Windows: — means NVIDIA lists no minimum because the CUDA 13 Windows installers no "
            "longer bundle a driver.")
    return f"{table}\n\n<small>Source: {cite} (file <code>docs/{escape(path)}</code>). {note}</small>\n"


@renderer("troubleshooting_log")
def troubleshooting_log(docs_dir: Path, path: str, machine: str = "the project's NVIDIA H200 machine") -> str:
    """A raw log that gpu/troubleshooting.sh recorded on the GPU machine, shown as it was written."""
    file = (docs_dir / path).resolve()
    shown = path.removeprefix("../")
    if not file.is_file():
        return (f'!!! note "Not recorded on {escape(machine)} yet"\n\n'
                f"    `{escape(shown)}` is written by `gpu/troubleshooting.sh` on a GPU machine "
                "(`OUT=... bash gpu/run_all.sh troubleshooting`); run the commands above on yours "
                "to see the output.\n")
    text = re.sub(r"\x1b\[[0-9;]*m", "", file.read_text(errors="replace")).rstrip("\n")  # no ANSI
    if "```" in text:
        raise ValueError(f"{shown}: a log with a code fence cannot be shown verbatim")
    return (f"```text\n{text}\n```\n\n<small>Recorded on {escape(machine)} by "
            f"<code>gpu/troubleshooting.sh</code>; raw log: <code>{escape(shown)}</code>.</small>\n")
