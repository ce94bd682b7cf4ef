"""Cats vs dogs (docs/training/cats-vs-dogs.md): training curves and training throughput."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from html import escape
from pathlib import Path

from . import load_json, markdown_table, renderer, svg_figure
from .run_details import load_results


@renderer("keras_history")
def keras_history(docs_dir: Path, path: str) -> str:
    """Loss and accuracy per epoch, training vs validation, from a history.json of train.py."""
    doc = load_json(docs_dir, path)
    epochs = doc["epochs"]
    if not epochs:
        raise ValueError(f"{path} lists no epochs")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    x = [e["epoch"] for e in epochs]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, metric, label in ((axes[0], "loss", "loss (binary cross-entropy)"),
                              (axes[1], "accuracy", "accuracy")):
        ax.plot(x, [e[metric] for e in epochs], "o-", label="training (augmented)")
        ax.plot(x, [e[f"val_{metric}"] for e in epochs], "s--", label="validation")
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[1].set_ylim(0, 1.02)
    axes[1].axhline(0.5, color="grey", lw=0.8, ls=":")
    axes[1].legend(loc="lower right")
    best = max(epochs, key=lambda e: e["val_accuracy"])
    alt = (f"Training and validation loss and accuracy over {len(epochs)} epochs; best "
           f"validation accuracy {best['val_accuracy']:.3f} at epoch {best['epoch']}")
    caption = (f"{path}: {doc.get('image_size')}-pixel images, batch {doc.get('batch_size')}, "
               f"learning rate {doc.get('learning_rate')}, backend {doc.get('backend')}. "
               f"Best validation accuracy {best['val_accuracy']:.3f} at epoch {best['epoch']}.")
    return svg_figure(fig, alt=alt, caption=caption)


CASE_LABELS = {  # case -> (augmentation, XLA) as the table says them
    "gpu-augmented": "on", "cpu-augmented": "on", "gpu-plain": "off", "cpu-plain": "off",
    "gpu-augmented-keras-default": "on, Keras's default: no XLA",
}


def _rate(m: dict) -> float:
    return m["work"]["images"] / m["median_s"]


@renderer("keras_throughput")
def keras_throughput(docs_dir: Path, path: str) -> str:
    """Images per second per device, augmentation and precision, with the ratio to the CPU."""
    doc, _, before = load_results(docs_dir, path)
    timed = [m for m in doc["measurements"] if m["phase"] in ("end_to_end", "kernel")
             and m["case"] in CASE_LABELS]
    if not timed:
        raise ValueError(f"{path} holds no timed epochs")
    cpu = {m["params"]["augment"]: _rate(m) for m in timed if m["device"] == "cpu"}
    rows = []
    order = list(CASE_LABELS)
    for m in sorted(timed, key=lambda m: (m["device"] == "cpu", order.index(m["case"]),
                                          m["variant"])):
        p, rate = m["params"], _rate(m)
        ratio = cpu.get(p["augment"])
        rows.append([m["device"].upper(), CASE_LABELS[m["case"]],
                     m["variant"].split("-", 1)[1], f"**{rate:,.0f}**",
                     f"{rate / ratio:,.0f}×" if ratio and m["device"] == "gpu" else "—"])
    table = markdown_table(["device", "augmentation", "precision", "images/s", "vs CPU"],
                           rows, "lllrr")
    gpus = doc["system"].get("gpus") or []
    host = doc["system"]["host"]
    hardware = (f"{len(gpus)} × {escape(gpus[0]['name'])}" if gpus else "no GPU") + \
        f"; CPU {escape(host['cpu'])} ({host['cores']} cores)"
    backends = ", ".join(sorted({m.get("extra", {}).get("backend", "?") for m in timed}))
    sizes = sorted({(m["device"].upper(), m["params"]["images_per_epoch"], m["repeats"])
                    for m in timed})
    epochs = "; ".join(f"{d}: {n:,} images × {r}" for d, n, r in sizes)
    note = (f"{hardware}; Keras backend {backends}; batch "
            f"{', '.join(str(b) for b in sorted({m['params']['batch_size'] for m in timed}))}. "
            "images/s = images per epoch / median epoch time (host clock, after warm-up "
            f"epochs; epochs timed per row: {epochs}). \"vs CPU\" divides by the CPU row with "
            "the same augmentation.")
    by_case = {(m["case"], m["variant"]): _rate(m) for m in timed}
    fast, cpu_aug = by_case.get(("gpu-augmented", "gpu-float32")), cpu.get(True)
    slow = by_case.get(("gpu-augmented-keras-default", "gpu-float32"))
    if fast and cpu_aug:
        note += (f" With augmentation, float32: {fast:,.0f} images/s on the GPU against "
                 f"{cpu_aug:,.0f} on the host CPU, {fast / cpu_aug:,.0f}×")
        note += (f"; Keras's default (no XLA) {slow:,.0f}, {fast / slow:,.0f}× slower than with "
                 "<code>allow_xla</code>." if slow else ".")
    if not gpus:
        before = ('!!! warning "No GPU figures yet"\n\n    This results file was measured on a '
                  "machine without a GPU; it shows the CPU baseline only.\n\n") + before
    return before + table + "\n\n" + note + "\n"


def _runner_windows(log: str) -> list[tuple[float, float, str]]:
    """(start s, end s, "case: variant") for each variant the runner checked and timed."""
    marks = []
    for line in log.splitlines():
        found = re.match(r"\[\s*([\d.]+) s\] (.*)", line)
        if found:
            marks.append((float(found.group(1)), found.group(2)))
    windows = []
    for (t, text), (end, _) in zip(marks, marks[1:] + [(marks[-1][0], "")]):
        if text.endswith(": check, then time"):
            windows.append((t, end, text.removesuffix(": check, then time")))
    return windows


@renderer("keras_gpu_use")
def keras_gpu_use(docs_dir: Path, smi: str, log: str) -> str:
    """GPU utilisation sampled by nvidia-smi over a runner's run, with its cases marked."""
    lines = (docs_dir / smi).read_text().splitlines()
    started = float(lines[0].split()[-1])  # "# runner started at unix T" (gpu/keras.sh)
    t, util, mem = [], [], []
    for row in lines[2:]:
        stamp, u, m = (x.strip() for x in row.split(","))
        when = datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
        t.append(when.timestamp() - started)
        util.append(float(u))
        mem.append(float(m))
    windows = _runner_windows((docs_dir / log).read_text())
    if not t or not windows:
        raise ValueError(f"{smi} or {log} holds no samples or no runner cases")
    import matplotlib.pyplot as plt

    cases: dict[str, list[float]] = {}  # case -> [start, end] over its variants
    for a, b, name in windows:
        span = cases.setdefault(name.split(":")[0], [a, b])
        span[:] = [min(span[0], a), max(span[1], b)]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.plot(t, util, lw=1, color="#1f77b4")
    for i, (case, (a, b)) in enumerate(cases.items()):
        colour = "#d62728" if "default" in case else "#7f7f7f" if case.startswith("cpu") \
            else "#2ca02c"
        ax.axvspan(a, b, color=colour, alpha=0.12, lw=0)
        label = (case.replace("-keras-default", "*").replace("-augmented", " aug")
                 .replace("-plain", " plain").replace("gpu", "GPU").replace("cpu", "CPU"))
        ax.text((a + b) / 2, 102 + (i % 2) * 9, label, ha="center", va="bottom", fontsize=10)
    ax.set_ylim(0, 120)
    ax.set_yticks([0, 25, 50, 75, 100])
    ax.set_xlim(0, max(t))
    ax.set_xlabel("seconds since the runner started")
    ax.set_ylabel("GPU utilisation, %")
    ax.grid(alpha=0.3)
    peak = max(mem) / 1024
    alt = (f"nvidia-smi utilisation over a {max(t):.0f}-second benchmark run: short bursts while "
           "GPU epochs run, near zero while the CPU cases and the op-by-op case run")
    caption = (f"{smi.removeprefix('../')}: utilization.gpu every 250 ms during the runner's run (top labels: its "
               "cases; the case marked * is Keras's default, no XLA). memory.used rose to "
               f"{peak:,.1f} GiB at the first GPU case and stayed there: JAX reserves 75 % of the "
               "GPU's memory when it starts, whatever the model needs.")
    return svg_figure(fig, alt=alt, caption=caption)


PROFILE_LABELS = {"no-augmentation": "no augmentation",
                  "augmentation": "augmentation, Keras's default",
                  "augmentation-jit": "augmentation, <code>allow_xla</code>"}


@renderer("keras_profile")
def keras_profile(docs_dir: Path, path: str) -> str:
    """The table of a profile_step.py log: XLA or not, step times, programs, GPU busy."""
    text = (docs_dir / path).read_text()
    rows = []
    for case, label in PROFILE_LABELS.items():
        def find(pattern: str, case=case) -> str:
            found = re.search(rf"\] {re.escape(case)}: {pattern}", text)
            if not found:
                raise ValueError(f"{path}: no line for {case} matching {pattern!r}")
            return found.group(1)
        steps = re.findall(rf"\] {re.escape(case)}: batch\s+(\d+):\s+([\d.]+) ms/step", text)
        rows.append([label, find(r"model\.jit_compile = (\w+)"),
                     " / ".join(f"{float(ms):.1f}" for _, ms in steps),
                     find(r"the first epoch compiled (\d+) XLA programs"),
                     find(r"trace of \d+ steps at batch \d+: (\d+) XLA programs launched"),
                     find(r"trace .*GPU busy (\d+%)")])
    batches = " / ".join(sorted({b for b in re.findall(r"batch\s+(\d+):\s+[\d.]+ ms/step", text)},
                                key=int))
    table = markdown_table(["version", "jit_compile", f"ms per step, batch {batches}",
                            "programs compiled, epoch 1", "programs run per step",
                            "GPU busy"], rows, "llrrrr")
    alone = re.search(r"augmentation alone, eager, all three, batch (\d+): ([\d.]+) ms", text)
    versions = re.search(r"keras ([\d.]+), jax ([\d.]+)", text)
    note = (f"From {path.removeprefix('../')} (Keras {versions.group(1)}, JAX "
            f"{versions.group(2)}, one H200). \"Programs\" are XLA executables: compiled ones "
            "counted by <code>jax.log_compiles</code>, launched ones and the GPU's busy share "
            "read from a <code>jax.profiler</code> trace of five steps at the largest batch.")
    if alone:
        note += (f" The three augmentation layers alone, run op by op on a batch of "
                 f"{alone.group(1)}, took {float(alone.group(2)):.0f} ms per call.")
    return table + "\n\n" + note + "\n"
