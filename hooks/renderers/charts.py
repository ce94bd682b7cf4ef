"""The one chart style of the site. Renderers draw with matplotlib and embed the figure with
`svg_figure`: an SVG per colour scheme (Material's `#only-light` / `#only-dark` image switch),
each with a narrower copy that a phone gets instead (a `<picture>` source), so that no chart
scrolls sideways, its smallest type shows at READABLE_PX or more and each plot area is
MIN_PLOT_PX tall or more on a wide screen (a column of WIDE_PX) and on a phone (NARROW_PX), and
no two tick labels of an axis touch. tests/site measures all of it in the browser.
"""

from __future__ import annotations

import base64
import io
import math
import re
import textwrap
from html import escape

import matplotlib

matplotlib.use("Agg")  # no display at build time

READABLE_PX = 10
MIN_PLOT_PX = 215  # tests/site asks for 200 at 390 px, where the phone copy shows a bit wider
LABEL_GAP_PT = 2  # the least space between two tick labels (a browser's font may run wider)
WIDE_PX, NARROW_PX, PHONE_MEDIA = 560, 340, "(max-width: 600px)"
CHART_RC = {
    "font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "xtick.labelsize": 10,
    "ytick.labelsize": 10, "legend.fontsize": 10, "figure.titlesize": 12,
    "figure.facecolor": "none", "axes.facecolor": "none", "savefig.transparent": True,
    "axes.axisbelow": True, "axes.grid": False, "grid.color": "#b0b0b0", "grid.alpha": 0.6,
    "svg.fonttype": "none",
}
matplotlib.rcParams.update(CHART_RC)
# The dark scheme's copy: ink and paper swapped for the slate scheme's; data colours stay.
DARK_INK = {"#000000": "#e2e4e9", "#262626": "#e2e4e9", "#333333": "#d0d3dc", "#404040": "#c4c8d2",
            "#4d4d4d": "#b8bcc8", "#555555": "#b0b4c0", "#666666": "#a4a9b6",
            "#ffffff": "#1e2129", "#b0b0b0": "#5b6070", "#cccccc": "#4a4f5d"}
SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def dark_svg(svg: str) -> str:
    out = re.sub(r"#[0-9a-fA-F]{6}\b", lambda m: DARK_INK.get(m.group(0).lower(), m.group(0)), svg)
    style = f"<style>text {{ fill: {DARK_INK['#000000']}; }}</style>"
    return re.sub(r"(<svg[^>]*>)", lambda m: m.group(1) + style, out, count=1)


def _plain_log_ticks(fig) -> None:
    """Log-axis labels as "10³" in the label's own size (matplotlib sets "$10^{3}$"'s exponent
    at 70 %, below reading size on a phone)."""
    from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, NullFormatter

    for axis in (a for ax in fig.axes for a in (ax.xaxis, ax.yaxis)):
        if isinstance(major := axis.get_major_formatter(), LogFormatterSciNotation):
            def label(x, pos, base=major._base):
                e = math.log(x, base) if x > 0 else math.nan
                ok = math.isfinite(e) and abs(e - round(e)) < 1e-9
                return f"{base:g}{str(round(e)).translate(SUPERSCRIPT)}" if ok else ""

            axis.set_major_formatter(FuncFormatter(label))
            if isinstance(axis.get_minor_formatter(), LogFormatterSciNotation):
                axis.set_minor_formatter(NullFormatter())


def _narrow(fig, phone=None, chars: int = 26) -> None:
    """The phone layout of a figure: panels side by side stacked, legends in one column, titles,
    axis labels and category labels longer than `chars` broken over lines (type unchanged);
    then what the renderer's `phone` does to it (drop labels the page's table gives, ...)."""
    from matplotlib.gridspec import GridSpec
    from matplotlib.text import Text

    specs = [ax.get_subplotspec() for ax in fig.axes]
    if len(specs) > 1 and all(s and s.get_gridspec().nrows == 1 for s in specs):
        grid = GridSpec(len(specs), 1, figure=fig)
        for i, ax in enumerate(fig.axes):
            ax.set_subplotspec(grid[i])
            ax.yaxis.set_tick_params(labelleft=True)  # shared y: each panel keeps its labels
        w, h = fig.get_size_inches()
        fig.set_size_inches(w / len(specs), h * len(specs))
    fig.set_layout_engine("constrained")
    # Every legend, the figure's or a panel's: one column under the panels, clear of the data.
    for old in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
        handles, texts = old.legend_handles, [t.get_text() for t in old.texts]
        old.remove()
        fig.legend(handles, texts, loc="outside lower center", ncols=1, frameon=False)
    fill = lambda t: t if "\n" in t or "$" in t else textwrap.fill(t, chars)  # noqa: E731
    for axis in (a for ax in fig.axes for a in (ax.xaxis, ax.yaxis)):
        labels = axis.get_ticklabels()
        if axis.get_scale() == "linear" and any(len(t.get_text()) > chars for t in labels):
            axis.set_ticks(axis.get_ticklocs(), [fill(t.get_text()) for t in labels])
    for text in fig.findobj(Text):
        text.set_text(fill(text.get_text()))
    if phone:
        phone(fig)


def _crowded(fig) -> tuple[bool, bool]:
    """Whether two tick labels of an x axis, and of a y axis, come closer than LABEL_GAP_PT."""
    fig.draw_without_rendering()
    renderer, pad = fig.canvas.get_renderer(), LABEL_GAP_PT * fig.dpi / 72 / 2
    crowded = [False, False]
    for ax in fig.axes:
        for k, axis in enumerate((ax.xaxis, ax.yaxis)):
            low, high = sorted(axis.get_view_interval())
            boxes = [t.get_window_extent(renderer).expanded(1, 1).padded(pad)
                     for t, loc in zip(axis.get_ticklabels(), axis.get_ticklocs())
                     if t.get_visible() and t.get_text().strip()
                     and low - 1e-9 * abs(high - low) <= loc <= high + 1e-9 * abs(high - low)]
            crowded[k] |= any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    return crowded[0], crowded[1]


def _fit(fig, shown_px: float) -> str:
    """The figure as SVG, laid out for a column `shown_px` wide (type unchanged): narrower until
    its smallest text shows at READABLE_PX or more, taller until each plot area is MIN_PLOT_PX
    tall or more and a y axis's labels stand apart, an x axis's labels turned until they stand
    apart (or after a dozen tries)."""
    import matplotlib.pyplot as plt

    turned = 0
    for _ in range(12):
        buf = io.StringIO()
        with plt.rc_context(CHART_RC):
            fig.savefig(buf, format="svg", bbox_inches="tight")
        svg = buf.getvalue()
        width = float(re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+)', svg).group(1))
        scale = shown_px / width  # CSS px per SVG unit (pt), shown that wide
        sizes = [float(x) for x in re.findall(r"font-size:\s*([\d.]+)px", svg)]
        smallest = min(sizes, default=READABLE_PX) * scale
        w, h = fig.get_size_inches()
        if smallest < READABLE_PX:
            shrink = max(0.7, smallest / READABLE_PX * 0.98)
            fig.set_size_inches(w * shrink, h * max(shrink, 0.9))
            if fig.get_layout_engine() is None:
                fig.tight_layout()
            continue
        plots = [ax.get_position().height * h * 72 * scale for ax in fig.axes if ax.get_visible()]
        crowded_x, crowded_y = _crowded(fig)
        if plots and min(plots) < MIN_PLOT_PX or crowded_y:
            short = max(MIN_PLOT_PX * 1.03 - min(plots), 0) / (72 * scale) if plots else 0
            fig.set_size_inches(w, max(h + short, h * 1.15 if crowded_y else h))
            if fig.get_layout_engine() is None:
                fig.tight_layout()
            continue
        if crowded_x and turned < 2:
            turned += 1  # first long labels broken after each "×" or space, then turned upright
            for ax in fig.axes:
                labels = ax.xaxis.get_ticklabels()
                if turned == 1 and ax.xaxis.get_scale() == "linear":
                    ax.set_xticks(ax.get_xticks(), [re.sub(r"(?<=[×,]) ?| (?=\()", "\n", t.get_text())
                                                    if len(t.get_text()) > 8 else t.get_text()
                                                    for t in labels])
                elif turned == 2:
                    for t in labels:
                        t.set(rotation=90, ha="right", rotation_mode="anchor")
            continue
        return svg
    return svg  # still too small or crowded: tests/site reports it


def svg_figure(fig, alt: str, caption: str = "", phone=None) -> str:
    """Embed a matplotlib figure: per scheme, the wide SVG and its phone copy (no extra request,
    text kept as text). `phone(fig)`, if given, changes the figure for the phone copy."""
    import matplotlib.pyplot as plt

    _plain_log_ticks(fig)
    wide = _fit(fig, WIDE_PX)
    _narrow(fig, phone)
    narrow = _fit(fig, NARROW_PX)
    plt.close(fig)

    def uri(svg: str) -> str:
        return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()

    def picture(colour, scheme: str) -> str:
        source = (f'<source media="{PHONE_MEDIA}" srcset="{uri(colour(narrow))}">'
                  if narrow != wide else "")
        return f'<picture>{source}<img alt="{escape(alt)}" src="{uri(colour(wide))}#only-{scheme}"></picture>'

    cap = f"<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return (f'<figure class="data-chart">{picture(str, "light")}{picture(dark_svg, "dark")}'
            f"{cap}</figure>")

