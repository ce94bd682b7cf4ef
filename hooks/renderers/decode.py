"""Decode results (run.py decode): each step form's tokens/s at each batch against its bound,
batch x the copy bandwidth of the same run / the bytes one step reads (weights and KV cache),
and the figures a sentence names (`{{ decode.row FIELD VARIANT BATCH }}`, `{{ decode.best FIELD
BATCH }}`, `{{ decode.copy }}`, `{{ decode.cache FIELD BATCH }}`)."""

from pathlib import Path

from . import markdown_table, renderer, value
from .run_details import gbs, kernel_rows, label, load, of_group

MIB, GIB = 2**20, 2**30


def copy_gbs(doc: dict) -> float:
    """The fastest copy of the run, in GB/s (bytes read + written per second)."""
    rows = [m for case in {m["case"] for m in doc["measurements"]}
            for v, m in kernel_rows(doc, case).items() if v in of_group(doc, "copy")]
    if not rows:
        raise ValueError("the results file has no copy row: the bound needs its bandwidth")
    return max(gbs(m) for m in rows)


def figures(doc: dict, m: dict) -> dict:
    """One step row: ms per step, tokens/s, GB/s read, the bound in tokens/s and the share of it."""
    batch = m["params"]["batch"]
    bound = batch * copy_gbs(doc) * 1e9 / m["bytes"]
    return {"label": label(doc, m["variant"]), "batch": batch, "ms": m["median_s"] * 1e3,
            "tokens": batch / m["median_s"], "gbs": gbs(m), "bound": bound,
            "share": batch / m["median_s"] / bound, "first_s": m["work"]["first_call_s"],
            "error": m["error"]["value"]}


def steps(doc: dict, batch: int) -> list[dict]:
    rows = kernel_rows(doc, f"batch-{batch}")
    return [figures(doc, rows[v]) for v in doc["variants"] if v in rows and v not in
            of_group(doc, "copy")]


def batches(doc: dict) -> list[int]:
    return sorted({m["params"]["batch"] for m in doc["measurements"] if "batch" in m["params"]})


@renderer("decode_table")
def decode_table(docs_dir: Path, path: str) -> str:
    """Every step form at every batch: ms per step, tokens/s, GB/s read, the bound, the share of
    it, the first call (compile, capture) in seconds, and the relative error of its logits
    against the eager step's."""
    doc = load(docs_dir, path)
    rows = [[f["batch"], f["label"], f"{f['ms']:.2f}", f"{f['tokens']:,.0f}", f"{f['gbs']:,.0f}",
             f"{f['bound']:,.0f}", f"{100 * f['share']:.1f}&nbsp;%", f"{f['first_s']:.1f}",
             f"{f['error']:.1g}"]
            for b in batches(doc) for f in steps(doc, b)]
    head = ["batch", "decode step", "ms per step", "tokens/s", "GB/s read", "bound, tokens/s",
            "of the bound", "first call, s", "vs eager"]
    return markdown_table(head, rows, "rlrrrrrrr") + "\n"


FORMAT = {"label": "{}", "ms": "{:.2f}", "tokens": "{:,.0f}", "gbs": "{:,.0f}",
          "bound": "{:,.0f}", "share": "{:.0%}", "first_s": "{:.0f}"}


@value("decode.row")
def row(docs_dir: Path, field: str, variant: str, batch: str = "1", *, path: str) -> str:
    """One figure of one step form at one batch."""
    doc = load(docs_dir, path)
    found = [f for f in steps(doc, int(batch)) if f["label"] == label(doc, variant)]
    if not found:
        raise ValueError(f"{path}: no {variant} row at batch {batch}")
    return FORMAT[field].format(found[0][field]).replace("%", "&nbsp;%")


@value("decode.best")
def best(docs_dir: Path, field: str, batch: str = "1", *, path: str) -> str:
    """One figure of the fastest step form at one batch."""
    top = max(steps(load(docs_dir, path), int(batch)), key=lambda f: f["tokens"])
    return FORMAT[field].format(top[field]).replace("%", "&nbsp;%")


@value("decode.copy")
def copy(docs_dir: Path, *, path: str) -> str:
    """The copy bandwidth of the run, GB/s."""
    return f"{copy_gbs(load(docs_dir, path)):,.0f}"


def cache_figures(doc: dict, batch: int) -> dict:
    found = [m for m in kernel_rows(doc, f"batch-{batch}").values() if "kv_cache" in m["extra"]]
    if not found:
        raise ValueError(f"no step row at batch {batch} records its KV cache")
    m = found[0]  # every step form of a batch shares one cache
    e, tokens = m["extra"], batch * m["extra"]["kv_positions"]
    return {"per_token_mib": f"{e['kv_cache'] / tokens / MIB:.3f}",
            "allocated_per_token_mib": f"{e['kv_cache_allocated'] / tokens / MIB:.3f}",
            "gib": f"{e['kv_cache'] / GIB:.2f}", "positions": f"{e['kv_positions']:,}",
            "weights_gib": f"{e['weights'] / GIB:.1f}",
            "share": f"{e['kv_cache'] / m['bytes']:.0%}".replace("%", "&nbsp;%")}


@value("decode.cache")
def cache(docs_dir: Path, field: str, batch: str = "1", *, path: str) -> str:
    """What the step reads at one batch, measured from the tensors: the KV cache per token
    (nbytes, and what the allocator handed out), its GiB, positions, the weights' GiB, and the
    cache's share of the bytes a step reads."""
    return cache_figures(load(docs_dir, path), int(batch))[field]
