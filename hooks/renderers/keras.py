"""Cats vs dogs (docs/training/cats-vs-dogs.md): training curves and training throughput."""

from __future__ import annotations

from html import escape
from pathlib import Path

from . import load_json, markdown_table, renderer, svg_figure
from .run_details import load


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


def _rate(m: dict) -> float:
    return m["work"]["images"] / m["median_s"]


@renderer("keras_throughput")
def keras_throughput(docs_dir: Path, path: str) -> str:
    """Images per second per device and batch size, with the ratio to the CPU at that batch."""
    doc = load(docs_dir, path)
    timed = [m for m in doc["measurements"] if m["phase"] == "end_to_end"]
    first = {(m["variant"], m["params"]["batch_size"]): m["median_s"]
             for m in doc["measurements"] if m["phase"] == "compile_first"}
    if not timed:
        raise ValueError(f"{path} holds no timed epochs")
    cpu = {m["params"]["batch_size"]: _rate(m) for m in timed if m["device"] == "cpu"
           and m["params"]["devices"] == 1}
    one_gpu = {m["params"]["batch_size"]: _rate(m) for m in timed if m["device"] == "gpu"
               and m["params"]["devices"] == 1}
    rows = []
    for m in sorted(timed, key=lambda m: (m["device"] == "gpu", m["params"]["devices"],
                                          m["params"]["batch_size"])):
        p, rate = m["params"], _rate(m)
        where = ("CPU" if m["device"] == "cpu" and p["devices"] == 1
                 else f"{p['devices']} × {m['device'].upper()}")
        vs_cpu = f"{rate / cpu[p['batch_size']]:.1f}×" if p["batch_size"] in cpu else "—"
        vs_gpu = (f"{rate / one_gpu[p['batch_size']]:.2f}×"
                  if m["device"] == "gpu" and p["batch_size"] in one_gpu else "—")
        rows.append([where, p["batch_size"], f"{p['images_per_epoch']:,} × {m['repeats']}",
                     f"**{rate:,.0f}**",
                     f"{m['median_s']:.3f} ({m['min_s']:.3f}-{m['max_s']:.3f})",
                     f"{first.get((m['variant'], p['batch_size']), float('nan')):.2f}",
                     vs_cpu, vs_gpu, f"{1 - m['error']['value']:.3f}"])
    table = markdown_table(
        ["device", "batch", "images × timed epochs", "images/s", "epoch s, median (min-max)",
         "first epoch s", "vs CPU", "vs 1 GPU", "train accuracy"], rows, "lrrrrrrrr")
    gpus = doc["system"].get("gpus") or []
    host = doc["system"]["host"]
    hardware = (f"{len(gpus)} × {escape(gpus[0]['name'])}" if gpus else "no GPU") + \
        f"; CPU {escape(host['cpu'])} ({host['cores']} cores)"
    backends = ", ".join(sorted({m["params"]["backend"] for m in timed}))
    head = (f"**{hardware}; Keras backend {backends}.** "
            "images/s = images per epoch / median epoch time, timed after "
            "warm-up; the first epoch, which includes compilation, is shown apart. "
            "Ratios compare rows with the same batch size.")
    if not any(m["device"] == "gpu" for m in timed):
        head = ('!!! warning "No GPU figures yet"\n\n    This results file was measured on a '
                "machine without a GPU; it shows the CPU baseline only.\n\n" + head)
    return head + "\n\n" + table + "\n"
