"""Timeline results (run.py timeline; tools/timeline_trace.py): the pipeline against its ideal
(the longest stage alone), the cost per kernel of a chain launched one by one or as a graph, and
a recorded timeline with its idle gaps named by cause."""

from __future__ import annotations

from pathlib import Path

from . import load_json, markdown_table, renderer, svg_figure, value
from .run_details import label, load

STAGES = ("cuda_c_copy_in", "cuda_c_compute", "cuda_c_copy_out")
CAUSES = {"input": "#e69f00", "host Python": "#cc79a7", "synchronisation": "#d55e00",
          "small kernels": "#f0e442"}  # the tool's causes, in its order
WORK = {"kernels": "#0072b2", "copies": "#009e73"}


def rows(doc: dict, case: str) -> dict[str, dict]:
    """{variant: its measurement}: the kernel phase where there is one, else end to end."""
    found: dict[str, dict] = {}
    for m in doc["measurements"]:
        if m["case"] == case and (m["phase"] == "kernel" or m["variant"] not in found):
            found[m["variant"]] = m
    return found


def ideal_s(doc: dict) -> float:
    """The pipeline's ideal: the longest of the three stages, each measured alone."""
    got = rows(doc, "overlap")
    if missing := [s for s in STAGES if s not in got]:
        raise ValueError(f"the results file lacks the stages {missing}")
    return max(got[s]["median_s"] for s in STAGES)


def pipelines(doc: dict) -> dict[str, dict]:
    return {k: m for k, m in rows(doc, "overlap").items()
            if doc["variants"].get(k, {}).get("group") == "pipeline"}


def best(doc: dict, lib: str = "cuda_c") -> tuple[str, float]:
    """The fastest pipeline of a toolkit and its share of the ideal."""
    got = {k: m for k, m in pipelines(doc).items() if k.startswith(lib)}
    if not got:
        raise ValueError(f"the results file has no {lib} pipeline")
    key = min(got, key=lambda k: got[k]["median_s"])
    return key, ideal_s(doc) / got[key]["median_s"]


@value("timeline.best")
def best_value(docs_dir: Path, lib: str = "cuda_c", show: str = "share", *, path: str) -> str:
    """`{{ timeline.best cuda_c share|label|ms }}`: the fastest pipeline of a toolkit."""
    doc = load(docs_dir, path)
    key, share = best(doc, lib)
    shown = {"share": f"{100 * share:.0f} %", "label": label(doc, key).partition(", ")[2],
             "ms": f"{pipelines(doc)[key]['median_s'] * 1e3:.2f}"}
    if show not in shown:
        raise ValueError(f"show must be one of {sorted(shown)}, not {show!r}")
    return shown[show]


@value("timeline.ideal")
def ideal_value(docs_dir: Path, show: str = "ms", *, path: str) -> str:
    """`{{ timeline.ideal ms|serial }}`: the ideal in ms, or the serial run's share of it."""
    doc = load(docs_dir, path)
    if show == "ms":
        return f"{ideal_s(doc) * 1e3:.2f}"
    if show == "serial":
        return f"{100 * ideal_s(doc) / rows(doc, 'overlap')['cuda_c_c1_s1']['median_s']:.0f} %"
    raise ValueError(f"show must be ms or serial, not {show!r}")


@renderer("timeline_overlap")
def overlap_chart(docs_dir: Path, path: str, alt: str) -> str:
    """Share of the ideal against chunks, one line per stream count (CUDA C), Numba as points."""
    import matplotlib.pyplot as plt

    doc, lines = load(docs_dir, path), {}
    ideal = ideal_s(doc)
    for key, m in pipelines(doc).items():
        extra = m.get("extra", {})
        lib = "Numba" if key.startswith("numba") else "CUDA C"
        share = 100 * ideal / m["median_s"]
        lines.setdefault((lib, extra["streams"]), []).append((extra["chunks"], share))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (lib, streams), pts in sorted(lines.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if lib == "CUDA C" else "x",
                ls="-" if lib == "CUDA C" else ":", ms=5,
                label=f"{lib}, {streams} stream{'s' * (streams > 1)}")
    ax.axhline(100, color="grey", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("chunks")
    ax.set_ylabel("% of the ideal (longest stage)")
    ax.grid(True, which="major")
    ax.legend(loc="best", fontsize=8, ncol=2)
    return svg_figure(fig, alt) + "\n"


@renderer("timeline_graphs")
def graphs_table(docs_dir: Path, path: str) -> str:
    """Microseconds per kernel, one row per chain length, one column per way of launching."""
    doc = load(docs_dir, path)
    per: dict[tuple[str, str], dict[int, float]] = {}
    for key, m in rows(doc, "graphs").items():
        v, n = doc["variants"].get(key, {}), m.get("extra", {}).get("kernels")
        if n and v.get("group") in ("stream", "graph", "compiled"):
            lib = key.split("_")[0] if key.startswith("torch") else "cuda_c"
            per.setdefault((lib, v["group"]), {})[n] = m["median_s"] / n * 1e6
    if not per:
        raise ValueError(f"{path} has no chains")
    names = {"cuda_c": "CUDA C", "torch": "PyTorch"}
    ways = {"stream": "one by one", "graph": "CUDA graph", "compiled": "torch.compile"}
    cols = sorted(per, key=lambda c: (c[0] != "cuda_c", list(ways).index(c[1])))
    lengths = sorted({n for got in per.values() for n in got})
    table = [[f"{n:,}", *(f"{per[c][n]:.2f}" if n in per[c] else "–" for c in cols)] for n in lengths]
    return markdown_table(["kernels in the chain", *(f"{names[c[0]]}, {ways[c[1]]}" for c in cols)],
                          table, "r" * (len(cols) + 1)) + "\n"


@value("timeline.graph_share")
def graph_share(docs_dir: Path, length: str = "1000", lib: str = "cuda_c", *, path: str) -> str:
    """`{{ timeline.graph_share 1000 }}`: a graph's time per kernel as a share of one by one."""
    got = rows(load(docs_dir, path), "graphs")
    way = {"cuda_c": ("stream", "graph"), "torch": ("stream", "graph")}[lib]
    a, b = (got.get(f"{lib}_{w}_{length}") for w in way)
    if not a or not b:
        raise ValueError(f"{path} lacks {lib} chains of {length}")
    return f"{100 * b['median_s'] / a['median_s']:.0f} %"


@value("timeline.launch_spread")
def launch_spread(docs_dir: Path, length: str = "100", *, path: str) -> str:
    """`{{ timeline.launch_spread 100 }}`: slowest over fastest sample of CUDA C's chain of
    `length` kernels launched one by one."""
    got = rows(load(docs_dir, path), "graphs").get(f"cuda_c_stream_{length}")
    if not got:
        raise ValueError(f"{path} lacks the CUDA C chain of {length} launched one by one")
    return f"{got['spread']:.1f}"


def trace_of(docs_dir: Path, path: str, name: str) -> dict:
    traces = load_json(docs_dir, path).get("traces", {})
    if name not in traces:
        raise ValueError(f"{path} holds no trace {name!r}; it holds {sorted(traces)}")
    return traces[name]


@renderer("timeline_trace")
def trace_chart(docs_dir: Path, path: str, name: str, alt: str) -> str:
    """The device's row of a recorded timeline: kernels, copies, and idle gaps coloured by cause."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    t = trace_of(docs_dir, path, name)
    fig, ax = plt.subplots(figsize=(7, 2.6))
    for what, y in (("kernels", 1.0), ("copies", 0.0)):
        ax.broken_barh([(s, e - s) for s, e, *_ in t[what]], (y, 0.8), color=WORK[what])
    for s, e, why in t["gaps"]:
        ax.broken_barh([(s, e - s)], (2.0, 0.8), color=CAUSES[why])
    ax.set_yticks([0.4, 1.4, 2.4], ["copies", "kernels", "idle"])
    ax.set_xlim(0, t["window_ms"])
    ax.set_ylim(-0.1, 2.9)
    ax.set_xlabel("ms")
    shown = [c for c in CAUSES if t["ms"].get(c)]
    ax.legend(handles=[Patch(color=CAUSES[c], label=f"idle: {c}") for c in shown],
              loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=2, fontsize=8, frameon=False)
    return svg_figure(fig, alt) + "\n"


@renderer("timeline_idle")
def idle_table(docs_dir: Path, path: str, names: str) -> str:
    """Milliseconds of each trace's window: computing, copying, and idle by cause."""
    traces = [(n, trace_of(docs_dir, path, n)) for n in names.split(",")]
    what = ["kernels", "copies", *CAUSES]
    cell = lambda t, w: f"{t['ms'][w]:.2f} ({100 * t['ms'][w] / t['window_ms']:.0f} %)"  # noqa: E731
    out = [[w if w in WORK else f"idle: {w}", *(cell(t, w) for _, t in traces)] for w in what]
    return markdown_table(["ms of the window", *(f"`{n}`" for n, _ in traces)], out,
                          "l" + "r" * len(traces)) + "\n"
