"""Cats vs dogs (docs/training/cats-vs-dogs.md): training curves, training throughput, the
profile of a training step and the GPU's utilisation. The page holds the sentences."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from . import load_json, markdown_table, pairs, renderer, svg_figure, value
from .run_details import label, load_results


@renderer("keras_history")
def keras_history(docs_dir: Path, path: str, alt: str) -> str:
    """Loss and accuracy per epoch, training vs validation, from a history.json of train.py."""
    epochs = load_json(docs_dir, path)["epochs"]
    if not epochs:
        raise ValueError(f"{path} lists no epochs")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    x = [e["epoch"] for e in epochs]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, metric, name in ((axes[0], "loss", "loss (binary cross-entropy)"),
                             (axes[1], "accuracy", "accuracy")):
        ax.plot(x, [e[metric] for e in epochs], "o-", label="training (augmented)")
        ax.plot(x, [e[f"val_{metric}"] for e in epochs], "s--", label="validation")
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[1].set_ylim(0, 1.02)
    axes[1].axhline(0.5, color="grey", lw=0.8, ls=":")
    axes[1].legend(loc="lower right")
    return svg_figure(fig, alt=alt)


@value("keras.history")
def history_fact(docs_dir: Path, path: str, fact: str) -> str:
    """A setting of a history.json (image_size, batch_size, ...), or best / best_epoch."""
    doc = load_json(docs_dir, path)
    best = max(doc["epochs"], key=lambda e: e["val_accuracy"])
    facts = {"best": f"{best['val_accuracy']:.3f}", "best_epoch": str(best["epoch"]),
             "epochs": str(len(doc["epochs"]))}
    return facts[fact] if fact in facts else str(doc[fact])


def _epochs(doc: dict) -> list[dict]:
    """The timed epochs of a results file measured with a GPU."""
    if not doc["system"].get("gpus"):
        raise ValueError("the results file was measured without a GPU")
    return [m for m in doc["measurements"] if m["phase"] in ("end_to_end", "kernel")]


def _rate(m: dict) -> float:
    return m["work"]["images"] / m["median_s"]


def _rate_of(doc: dict, case: str, variant: str) -> float:
    for m in _epochs(doc):
        if (m["case"], m["variant"]) == (case, variant):
            return _rate(m)
    raise ValueError(f"no timed epoch for {case}/{variant}")


@renderer("keras_throughput")
def keras_throughput(docs_dir: Path, path: str) -> str:
    """Images per second per variant and augmentation, with the ratio to the CPU."""
    doc, _, before = load_results(docs_dir, path)
    timed = _epochs(doc)
    cpu = {m["params"]["augment"]: _rate(m) for m in timed if m["device"] == "cpu"}
    rows = []
    for m in sorted(timed, key=lambda m: (m["device"] == "cpu", not m["params"]["xla_augmentation"],
                                          not m["params"]["augment"], m["variant"])):
        p, rate = m["params"], _rate(m)
        augmentation = ("on" if p["augment"] else "off") + (
            "" if p["xla_augmentation"] or not p["augment"] else ", Keras's default: no XLA")
        ratio = cpu.get(p["augment"])
        rows.append([label(doc, m["variant"]), augmentation, f"**{rate:,.0f}**",
                     f"{rate / ratio:,.0f}×" if ratio and m["device"] == "gpu" else "—"])
    return before + markdown_table(["variant", "augmentation", "images/s", "vs CPU"], rows,
                                   "llrr") + "\n"


@value("keras.rate")
def rate(docs_dir: Path, path: str, case: str, variant: str, over: str = "") -> str:
    """Images/s of case/variant; with over=CASE/VARIANT, how many times that one's rate."""
    doc = load_results(docs_dir, path)[0]
    r = _rate_of(doc, case, variant)
    if not over:
        return f"{r:,.0f}"
    return f"{r / _rate_of(doc, *over.split('/')):,.0f}×"


@value("keras.epochs")
def epochs_timed(docs_dir: Path, path: str) -> str:
    """Images per epoch × timed epochs, per device."""
    sizes = sorted({(m["device"].upper(), m["params"]["images_per_epoch"], m["repeats"])
                    for m in _epochs(load_results(docs_dir, path)[0])})
    return "; ".join(f"{d}: {n:,} images × {r}" for d, n, r in sizes)


def _runner_windows(log: str) -> list[tuple[float, float, str]]:
    """(start s, end s, "case: variant") for each variant the runner checked and timed."""
    marks = [(float(m.group(1)), m.group(2)) for m in
             re.finditer(r"^\[\s*([\d.]+) s\] (.*)$", log, re.M)]
    return [(t, end, text.removesuffix(": check, then time"))
            for (t, text), (end, _) in zip(marks, marks[1:] + [(marks[-1][0], "")])
            if text.endswith(": check, then time")]


def _smi(docs_dir: Path, smi: str) -> tuple[list[float], list[float], list[float]]:
    """(seconds since the runner started, utilisation %, memory MiB) of an nvidia-smi log."""
    lines = (docs_dir / smi).read_text().splitlines()
    started = float(lines[0].split()[-1])  # "# runner started at unix T" (gpu/keras.sh)
    t, util, mem = [], [], []
    for row in lines[2:]:
        stamp, u, m = (x.strip() for x in row.split(","))
        when = datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
        t.append(when.timestamp() - started)
        util.append(float(u))
        mem.append(float(m))
    if not t:
        raise ValueError(f"{smi} holds no samples")
    return t, util, mem


@renderer("keras_gpu_use")
def keras_gpu_use(docs_dir: Path, smi: str, log: str, cases: str, alt: str) -> str:
    """GPU utilisation sampled by nvidia-smi over a runner's run, with its cases marked by the
    names the page gives them (`cases="gpu-plain=GPU plain;..."`)."""
    t, util, _ = _smi(docs_dir, smi)
    windows = _runner_windows((docs_dir / log).read_text())
    if not windows:
        raise ValueError(f"{log} holds no runner cases")
    import matplotlib.pyplot as plt

    names, spans = pairs(cases), {}  # case -> [start, end] over its variants
    for a, b, name in windows:
        span = spans.setdefault(name.split(":")[0], [a, b])
        span[:] = [min(span[0], a), max(span[1], b)]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.plot(t, util, lw=1, color="#1f77b4")
    for i, (case, (a, b)) in enumerate(spans.items()):
        colour = "#d62728" if "default" in case else "#7f7f7f" if case.startswith("cpu") \
            else "#2ca02c"
        ax.axvspan(a, b, color=colour, alpha=0.12, lw=0)
        ax.text((a + b) / 2, 102 + (i % 2) * 9, names[case], ha="center", va="bottom", fontsize=10)
    ax.set_ylim(0, 120)
    ax.set_yticks([0, 25, 50, 75, 100])
    ax.set_xlim(0, max(t))
    ax.set_xlabel("seconds since the runner started")
    ax.set_ylabel("GPU utilisation, %")
    ax.grid(alpha=0.3)
    return svg_figure(fig, alt=alt)


@value("keras.gpu_memory")
def gpu_memory(docs_dir: Path, smi: str) -> str:
    """The highest memory.used of an nvidia-smi log, in GiB."""
    return f"{max(_smi(docs_dir, smi)[2]) / 1024:,.1f} GiB"


def _found(text: str, path: str, pattern: str) -> str:
    found = re.search(pattern, text)
    if not found:
        raise ValueError(f"{path}: no line matching {pattern!r}")
    return found.group(1)


@renderer("keras_profile")
def keras_profile(docs_dir: Path, path: str, cases: str) -> str:
    """The table of a profile_step.py log: XLA or not, step times, programs, GPU busy; one row
    per case of `cases="no-augmentation=no augmentation;..."` (the page's names for them)."""
    text = (docs_dir / path).read_text()
    rows = []
    for case, name in pairs(cases).items():
        line = rf"\] {re.escape(case)}: "
        steps = re.findall(line + r"batch\s+\d+:\s+([\d.]+) ms/step", text)
        rows.append([name, _found(text, path, line + r"model\.jit_compile = (\w+)"),
                     " / ".join(f"{float(ms):.1f}" for ms in steps),
                     _found(text, path, line + r"the first epoch compiled (\d+) XLA programs"),
                     _found(text, path, line + r"trace of \d+ steps at batch \d+: (\d+) XLA "
                                               r"programs launched"),
                     _found(text, path, line + r"trace .*GPU busy (\d+%)")])
    batches = " / ".join(sorted(set(re.findall(r"batch\s+(\d+):\s+[\d.]+ ms/step", text)),
                                key=int))
    return markdown_table(["version", "jit_compile", f"ms per step, batch {batches}",
                           "programs compiled, epoch 1", "programs run per step", "GPU busy"],
                          rows, "llrrrr") + "\n"


PROFILE_FACTS = {"keras": r"keras ([\d.]+), jax", "jax": r"keras [\d.]+, jax ([\d.]+)",
                 "alone_batch": r"augmentation alone, eager, all three, batch (\d+):",
                 "alone_ms": r"augmentation alone, eager, all three, batch \d+: ([\d.]+) ms"}


@value("keras.profile")
def profile_fact(docs_dir: Path, path: str, fact: str) -> str:
    """One figure of a profile_step.py log: keras, jax (versions), alone_batch, alone_ms."""
    found = _found((docs_dir / path).read_text(), path, PROFILE_FACTS[fact])
    return f"{float(found):.0f}" if fact == "alone_ms" else found
