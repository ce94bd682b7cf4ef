"""Cats vs dogs (docs/training/cats-vs-dogs.md, climb.md): training curves, train.py's epoch
times, the climb's table and where a step's time goes. The pages hold the sentences."""

from __future__ import annotations

import statistics
from pathlib import Path

from . import load_json, long_name, markdown_table, renderer, svg_figure, value
from .run_details import label, load, of_group
from .table import cell


@renderer("keras_history")
def keras_history(docs_dir: Path, path: str, alt: str) -> str:
    """Loss and accuracy per epoch, training vs validation, from a history.json of train.py."""
    if not (epochs := load_json(docs_dir, path)["epochs"]):
        raise ValueError(f"{path} lists no epochs")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    x = [e["epoch"] for e in epochs]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, metric, name in ((axes[0], "loss", "loss (binary cross-entropy)"),
                             (axes[1], "accuracy", "accuracy")):
        ax.plot(x, [e[metric] for e in epochs], "o-", label="training (augmented)")
        ax.plot(x, [e[f"val_{metric}"] for e in epochs], "s--", label="validation")
        ax.set(xlabel="epoch", ylabel=name)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    axes[1].set_ylim(0, 1.02)
    axes[1].axhline(0.5, color="grey", lw=0.8, ls=":")
    axes[1].legend(loc="lower right")
    return svg_figure(fig, alt=alt)


@value("keras.history")
def history_fact(docs_dir: Path, path: str, fact: str = "", climb: str = "") -> str:
    """Of a history.json: epochs, steady_s (median seconds of the epochs after the first), steady
    (training images/s in steady_s); climb=FILE:VARIANT: that row's images/s over steady."""
    epochs = (doc := load_json(docs_dir, path))["epochs"]
    steady = statistics.median(e["seconds"] for e in epochs[1:]) if len(epochs) > 1 else None
    if climb:
        row = _climb(docs_dir, climb.split(":")[0])[1][climb.split(":")[1]]
        return f"{steady / row['median_s'] / doc['images']['train']:.1f}×"
    return {"epochs": lambda: str(len(epochs)), "steady_s": lambda: f"{steady:.3f}",
            "steady": lambda: f"{doc['images']['train'] / steady:,.0f}"}[fact]()


def _climb(docs_dir: Path, path: str) -> tuple[dict, dict]:
    return (doc := load(docs_dir, path)), {m["variant"]: m for m in doc["measurements"]
                                           if m["phase"] == "end_to_end"}


def _step_ms(m: dict) -> float:
    """A step's time on the host clock, untraced: seconds per image x images per step."""
    return m["median_s"] * m["params"]["batch_size"] * 1e3


def _spread(m: dict) -> float:
    """The counted rounds' highest images/s over their lowest."""
    rates = m["extra"]["rounds_images_per_s"]
    return max(rates) / min(rates)


def _busy(m: dict) -> float | None:
    """The GPU's busy time per step in a profiler trace, over the untraced step's time."""
    t = m["extra"].get("trace") or {}
    return min(1.0, t["busy_ms"] / _step_ms(m)) if "busy_ms" in t else None


@renderer("keras_climb")
def keras_climb(docs_dir: Path, path: str, groups: str = "climb") -> str:
    """A row per variant of `groups` (registry groups, in order): median images/s of all samples,
    the rounds' (lowest-highest, highest/lowest), GPU busy, TFLOP/s, gain on the step before."""
    doc, found = _climb(docs_dir, path)
    rows, before = [], None
    for key in [k for g in groups.split(",") for k in of_group(doc, g) if k in found]:
        m, climbing = found[key], doc["variants"][key]["group"] == "climb"
        rate, rounds, busy = 1 / m["median_s"], m["extra"]["rounds_images_per_s"], _busy(m)
        rows.append([doc["variants"][key]["step"], label(doc, key), f"**{rate:,.0f}**",
                     f"{min(rounds):,.0f}–{max(rounds):,.0f} ({_spread(m):.2f})",
                     "—" if busy is None else f"{busy:.0%}", f"{rate * m['flops'] / 1e12:.2f}",
                     f"{rate / before:.2f}×" if climbing and before else "—"])
        before = rate if climbing else before
    return markdown_table(["step", "change", "images/s", "rounds: lowest–highest (ratio)",
                           "GPU busy", "TFLOP/s", "× step before"], rows, "llrrrrr") + "\n"


def _round_cell(r: dict) -> str:
    number, steal = r["round"], f"{100 * r['steal']:.2f}&nbsp;%"
    if r["counted"]:
        return f"{number}: **{r['images_per_s']:,.0f}** ({steal})"
    return f"{number}: ~~{r['images_per_s']:,.0f}~~ ({steal}, set aside)"


@renderer("keras_rounds")
def keras_rounds(docs_dir: Path, path: str, over: float = 1.15) -> str:
    """Every round, in the order run, of the rows whose counted rounds' highest/lowest exceeds
    `over` or that had a round set aside: images/s and the hypervisor's steal share of the
    host's CPU time; a set-aside round struck through."""
    doc, found = _climb(docs_dir, path)
    rows = []
    for key, m in found.items():
        rounds, ratio = m["extra"]["rounds"], _spread(m)
        if ratio > float(over) or not all(r["counted"] for r in rounds):
            rows.append([label(doc, key), f"{ratio:.2f}",
                         " · ".join(_round_cell(r) for r in rounds)])
    return markdown_table(["row", "counted rounds: highest/lowest",
                           "round: images/s (steal share)"], rows, "lrl") + "\n"


@renderer("keras_step_time")
def keras_step_time(docs_dir: Path, path: str, variants: str) -> str:
    """Where a step's time goes, per variant (a key or a climb step's number): the step (host clock), the kernels and copies in a
    trace of one epoch, the GPU idle rest, programs (or launches) and the 3 longest kernels."""
    doc, found = _climb(docs_dir, path)
    rows = []
    for key in (_key(doc, v) for v in variants.split(",")):
        t, step = (m := found[key])["extra"]["trace"], _step_ms(m)
        top = "<br>".join(f"{ms:.3f} {long_name(name[:44], '_')}" for name, ms in t["top"][:3])
        rows.append([label(doc, key), m["params"]["batch_size"], f"{step:.3f}",
                     f"{t['kernels_ms']:.3f}", f"{t['copies_ms']:.3f}",
                     f"{max(0.0, step - t['busy_ms']):.3f}", f"{t['launches_per_step']:g}", top])
    return markdown_table(["row", "batch", "step, ms", "kernels, ms", "copies, ms",
                           "GPU idle, ms", "launches per step", "longest kernels, ms per step"],
                          rows, "lrrrrrrl") + "\n"


# The climb's figures for sentences: {{ keras.NAME variant ... }}; a climb row by its key or
# its step's number.
@value("keras.busy")
def busy(docs_dir: Path, variant: str, *, path: str) -> str:
    """The GPU-busy share of a row's step."""
    return f"{_busy(_row(docs_dir, path, variant)):.0%}"


@value("keras.spread")
def spread(docs_dir: Path, variant: str, *, path: str) -> str:
    """A row's counted rounds' highest images/s over their lowest."""
    return f"{_spread(_row(docs_dir, path, variant)):.2f}"


@value("keras.rate")
def images_per_s(docs_dir: Path, variant: str, *, path: str) -> str:
    return cell(docs_dir, path, "{per_s[images]:,.0f}", f"variant={_key(load(docs_dir, path), variant)}")


@value("keras.over")
def over(docs_dir: Path, variant: str, other: str, *, path: str, digits: str = "1",
         spread: str = "") -> str:
    """How many times the images/s of `other` a row's is (`digits` below 10). `spread=rounds`
    adds the range the rounds allow (lowest over highest round to highest over lowest): the
    headline over a host-bound row, whose rounds disagree, is a range, not one figure."""
    a, b = _row(docs_dir, path, variant), _row(docs_dir, path, other)
    fmt = lambda r: f"{r:,.{int(digits)}f}×" if r < 10 else f"{r:,.0f}×"  # noqa: E731
    ratio = fmt(b["median_s"] / a["median_s"])
    if spread != "rounds":
        return ratio
    mine, theirs = a["extra"]["rounds_images_per_s"], b["extra"]["rounds_images_per_s"]
    return (f"{ratio} (from {fmt(min(mine) / max(theirs))} to {fmt(max(mine) / min(theirs))} "
            f"across the rounds)")


@value("keras.rounds")
def rounds(docs_dir: Path, fact: str, *, path: str) -> str:
    """Of all rows: widest (the largest spread, and its label), within15 (how many rows within
    1.15), set_aside (how many rounds the steal rule set aside and ran again)."""
    doc, found = _climb(docs_dir, path)
    if fact == "set_aside":
        n = sum(not r["counted"] for m in found.values() for r in m["extra"]["rounds"])
        return {0: "no round", 1: "one round"}.get(n, f"{n} rounds")
    spread = {k: _spread(m) for k, m in found.items()}
    key = max(spread, key=spread.get)
    return {"widest": lambda: f"{spread[key]:.2f} (“{label(doc, key)}”)",
            "within15": lambda: f"{sum(v <= 1.15 for v in spread.values())} of {len(spread)} rows within 1.15"}[fact]()


def _key(doc: dict, variant: str) -> str:
    """A row's key; a climb step's number (`11`, as the page's prose names the steps) is its row."""
    if not variant.isdigit():
        return variant
    if not (keys := [k for k, v in doc["variants"].items()
                     if v["group"] == "climb" and v["step"] == variant]):
        raise ValueError(f"no climb step {variant}")
    return keys[0]


def _row(docs_dir: Path, path: str, variant: str) -> dict:
    doc, found = _climb(docs_dir, path)
    if (m := found.get(_key(doc, variant))) is None:
        raise ValueError(f"{path} has no end-to-end row {variant!r}")
    return m
