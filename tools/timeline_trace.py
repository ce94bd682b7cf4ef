"""Turn a recorded timeline into the small JSON the timeline page draws (run once per trace).

    python tools/timeline_trace.py TRACE --label NAME --output docs/data/timeline-trace-h200.json

TRACE is Nsight Systems' SQLite export (`nsys export --type sqlite`) or a Chrome-format trace
(`jax.profiler`'s perfetto_trace.json.gz, `torch.profiler`'s export_chrome_trace). The tool keeps
the device's work (kernels, copies) and the host's named ranges, picks the WINDOW seconds from the
middle of the device's work and names every idle gap on the device there by what the host was doing:
- synchronisation: the host waits in a synchronising call (cudaStreamSynchronize, ...);
- input: the host is in a range whose name says data loading (input, iterator, next, load, ...);
- small kernels: a gap shorter than --small microseconds, between two launches;
- host Python: anything else (the host is busy in its own code).
Copies are not gaps: the device moves data without computing. Several traces go into one file
with --add (each --label once). Written whole or not at all; bad input: one line, exit 2.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path

SYNC = re.compile(r"synchron|BlockHostUntilReady|block_until_ready|EventQuery|cudaMemcpy(?!Async)"
                  r"|cuMemcpyDtoH(?!Async)|TransferFromDevice|ToLiteral", re.I)
INPUT = re.compile(r"input|iterator|__next__|next_batch|data.?load|load_images|decode|(?-i:PIL)"
                   r"|prefetch|get_batch|data_adapter", re.I)
CAUSES = ("input", "host Python", "synchronisation", "small kernels")


def _intervals_nsys(path: Path) -> tuple[list, list]:
    """(device [start, end, kind, name], host [start, end, name]) in seconds, from nsys SQLite."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
    if "StringIds" not in tables:
        raise ValueError(f"{path} is not an Nsight Systems SQLite export (no StringIds table)")
    names = dict(db.execute("select id, value from StringIds"))
    device, host = [], []
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        device += [[s, e, "kernel", names.get(n, "?")] for s, e, n in
                   db.execute("select start, end, shortName from CUPTI_ACTIVITY_KIND_KERNEL")]
    for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", "copy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "copy")):
        if table in tables:
            device += [[s, e, kind, kind] for s, e in db.execute(f"select start, end from {table}")]
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        host += [[s, e, names.get(n, "?")] for s, e, n in
                 db.execute("select start, end, nameId from CUPTI_ACTIVITY_KIND_RUNTIME")]
    if "NVTX_EVENTS" in tables:
        cols = {r[1] for r in db.execute("pragma table_info(NVTX_EVENTS)")}
        text = "coalesce(text, (select value from StringIds where id = textId))" \
            if "textId" in cols else "text"
        host += [[s, e, t or "?"] for s, e, t in
                 db.execute(f"select start, end, {text} from NVTX_EVENTS where end is not null")]
    db.close()
    to_s = lambda rows: [[r[0] / 1e9, r[1] / 1e9, *r[2:]] for r in rows]  # noqa: E731 - ns
    return to_s(device), to_s(host)


def _intervals_chrome(path: Path) -> tuple[list, list]:
    """The same from a Chrome-format trace (JAX's perfetto trace, PyTorch's chrome trace)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise ValueError(f"{path} holds no traceEvents list")
    meta = [e for e in events if isinstance(e, dict) and e.get("ph") == "M"]
    process = {e.get("pid"): str(e.get("args", {}).get("name", "")) for e in meta
               if e.get("name") == "process_name"}
    thread = {(e.get("pid"), e.get("tid")): str(e.get("args", {}).get("name", "")) for e in meta
              if e.get("name") == "thread_name"}
    # JAX's device rows: "Stream #N" hold the work; "XLA Modules", "XLA Ops" and the like are
    # spans drawn over it, and would hide every gap.
    streams = {pid for (pid, _), name in thread.items() if name.startswith("Stream")}
    device, host = [], []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "dur" not in e:
            continue
        start, end, name = e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6, str(e.get("name", "?"))
        cat, pid = str(e.get("cat", "")).lower(), e.get("pid")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset") or \
                "/device:gpu" in process.get(pid, "").lower():
            if pid in streams and not thread.get((pid, e.get("tid")), "").startswith("Stream"):
                continue
            copy = "memcpy" in cat or "memset" in cat or re.search(r"memcpy|memset", name, re.I)
            device.append([start, end, "copy" if copy else "kernel", name])
        elif cat != "gpu_user_annotation":  # PyTorch's ranges drawn on the device's rows
            host.append([start, end, name])
    return device, host


def read_trace(path: Path) -> tuple[list, list]:
    if not path.is_file():
        raise ValueError(f"trace {path} does not exist" if not path.exists()
                         else f"{path} is not a file")
    try:
        with open(path, "rb") as f:
            sqlite = f.read(16).startswith(b"SQLite format 3")
        device, host = _intervals_nsys(path) if sqlite else _intervals_chrome(path)
    except RecursionError:
        raise ValueError(f"cannot read the trace {path}: nested too deeply") from None
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError, sqlite3.Error,
            KeyError, TypeError, AttributeError) as exc:  # AttributeError: a field of another type
        raise ValueError(f"cannot read the trace {path}: {exc}") from None
    for start, end, *what in device + host:  # json reads Infinity and NaN: damage, not a time
        if not (isinstance(start, (int, float)) and isinstance(end, (int, float))
                and math.isfinite(start) and math.isfinite(end) and end >= start):
            raise ValueError(f"cannot read the trace {path}: event {what[-1]!r} has a start or "
                             "duration that is not a finite number of 0 or more")
    return device, host


def merged(spans: list) -> list:
    """Sorted [start, end] spans with overlaps joined."""
    out: list = []
    for s, e in sorted((s, e) for s, e, *_ in spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def middle_window(device: list, window: float) -> tuple[float, float]:
    """`window` seconds from the first device event after the middle of the traced device work:
    past start-up and compilation, a stretch like most of the run."""
    if not device:
        raise ValueError("the trace holds no device work (kernels or copies): was the GPU traced?")
    first, last = min(d[0] for d in device), max(d[1] for d in device)
    start = min((d[0] for d in device if d[0] >= (first + last) / 2), default=first)
    return start, start + window


def cause(gap: tuple[float, float], host: list, small_s: float) -> str:
    """What the host did while the device sat idle: its ranges of about the gap's length decide
    (a range ten times longer is the context, an epoch or the whole run, not the cause)."""
    s, e = gap
    during = sorted((he - hs, min(he, e) - max(hs, s), name) for hs, he, name in host
                    if hs < e and he > s and he - hs <= 10 * (e - s))  # not a whole epoch's range
    if sum(d for _, d, name in during if SYNC.search(name)) >= 0.5 * (e - s):
        return "synchronisation"
    if any(INPUT.search(name) for _, _, name in during[:5]):
        return "input"
    return "small kernels" if e - s <= small_s else "host Python"


def summarize(device: list, host: list, window: float, small_us: float, points: int = 1500) -> dict:
    """The window's device work and gaps, in milliseconds from its start, and the totals by cause."""
    t0, t1 = middle_window(device, window)
    host = [h for h in host if h[0] < t1 and h[1] > t0]
    inside = [[max(s, t0), min(e, t1), k, n] for s, e, k, n in device if s < t1 and e > t0]
    kernels = merged([d for d in inside if d[2] == "kernel"])
    copies = merged([d for d in inside if d[2] == "copy"])
    busy = merged(inside)
    gaps = [(a[1], b[0]) for a, b in zip(busy, busy[1:]) if b[0] > a[1]]
    named = [(s, e, cause((s, e), host, small_us / 1e6)) for s, e in gaps]
    resolution = (t1 - t0) / points  # joins what a picture could not tell apart
    ms = lambda spans: [[round((s - t0) * 1e3, 4), round((e - t0) * 1e3, 4), *rest]  # noqa: E731
                        for s, e, *rest in spans if e - s > 0]

    def coarse(spans):
        out = []
        for s, e, *rest in spans:
            if out and s - out[-1][1] < resolution and out[-1][2:] == rest:
                out[-1][1] = e
            else:
                out.append([s, e, *rest])
        return out
    totals = {c: round(sum(e - s for s, e, k in named if k == c) * 1e3, 4) for c in CAUSES}
    return {"window_ms": round((t1 - t0) * 1e3, 4), "small_us": small_us,
            "kernels": ms(coarse(kernels)), "copies": ms(coarse(copies)),
            "gaps": ms(coarse([list(g) for g in named])),
            "ms": {"kernels": round(sum(e - s for s, e in kernels) * 1e3, 4),
                   "copies": round(sum(e - s for s, e in copies) * 1e3, 4), **totals},
            "kernel_count": sum(1 for d in inside if d[2] == "kernel")}


def main(argv: list[str] | None = None) -> int:
    from bench.cli import Locked, Parser, atomic_write, lock, output_path, positive_float, show

    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path, help="nsys SQLite export, or a Chrome-format trace")
    parser.add_argument("--label", required=True, help="the traced program's name on the page")
    parser.add_argument("--output", type=output_path, required=True, help="the JSON to write")
    parser.add_argument("--window", type=positive_float(60.0), default=0.2,
                        help="seconds of device work to keep, from its middle (default 0.2)")
    parser.add_argument("--small", type=positive_float(1e4), default=20.0,
                        help="a gap up to this many microseconds is small kernels' (default 20)")
    parser.add_argument("--add", action="store_true", help="keep the output's other traces")
    args = parser.parse_args(argv)
    if args.window < 1e-6:  # the file keeps times to 0.1 us: a shorter window is written as 0 ms
        parser.error(f"--window must be at least 1e-06 s (1 us), got {args.window:g}")
    try:
        device, host = read_trace(args.trace)
        found = summarize(device, host, args.window, args.small)
    except ValueError as exc:
        parser.error(str(exc))
    try:  # --add reads, adds and renames: one run at a time, or one could drop the other's trace
        with lock(args.output if args.add else None):
            traces = {}
            if args.add and args.output.is_file():
                try:
                    traces = json.loads(args.output.read_text()).get("traces", {})
                except RecursionError:
                    parser.error(f"cannot read {args.output} to add to it: nested too deeply")
                except (OSError, ValueError, AttributeError) as exc:
                    parser.error(f"cannot read {args.output} to add to it: {exc}")
                if not isinstance(traces, dict):
                    parser.error(f"cannot add to {args.output}: its \"traces\" is not an object")
            converted = datetime.now(timezone.utc).isoformat(timespec="seconds")
            traces[args.label] = {"source": args.trace.name, "converted": converted, **found}
            atomic_write(args.output, json.dumps({"traces": traces}, indent=1) + "\n")
            show(f"{args.output}: {args.label}: {found['kernel_count']} kernels in "
                  f"{found['window_ms']:.1f} ms, idle by cause (ms) {json.dumps(found['ms'])}")
    except Locked as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    from bench.cli import run_main

    sys.exit(run_main(main))
