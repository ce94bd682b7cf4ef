"""The one chart style of the site: every renderer draws with matplotlib and embeds its figure
with `svg_figure`, which writes a light and a dark copy of it, shown by Material's own
light/dark image switch (an image whose address ends in `#only-light` or `#only-dark`).

Importing this module sets matplotlib's defaults (CHART_RC), so a renderer's figures get the
shared type sizes without asking for them; a renderer that sets its own font size must stay at
or above MIN_FONT_PT, which tests/site checks in the browser at 1280 px and 390 px.
"""

from __future__ import annotations

import base64
import io
import re
from html import escape

# Chart style shared by every renderer: type that stays readable when the chart is shown at
# the content column's width (at least MIN_FONT_PT at the SVG's own size; extra.css keeps a chart
# from shrinking below CHART_MIN_WIDTH_PX, scrolling it sideways on a phone instead), a
# transparent background, and grid lines behind the data. tests/site checks the rendered sizes.
MIN_FONT_PT = 10
CHART_MIN_WIDTH_PX = 560
CHART_RC = {
    "font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "xtick.labelsize": 10,
    "ytick.labelsize": 10, "legend.fontsize": 10, "figure.titlesize": 12,
    "figure.facecolor": "none", "axes.facecolor": "none", "savefig.transparent": True,
    "axes.axisbelow": True, "axes.grid": False, "grid.color": "#b0b0b0", "grid.alpha": 0.6,
    "svg.fonttype": "none",
}
# The dark scheme's copy of a chart: the same SVG with its ink and paper swapped for the
# slate scheme's (Material's --md-default-fg-color and background). Data colours stay.
DARK_INK = {"#000000": "#e2e4e9", "#262626": "#e2e4e9", "#333333": "#d0d3dc", "#404040": "#c4c8d2",
            "#4d4d4d": "#b8bcc8", "#555555": "#b0b4c0", "#666666": "#a4a9b6",
            "#ffffff": "#1e2129", "#b0b0b0": "#5b6070", "#cccccc": "#4a4f5d"}


def _apply_style() -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display at build time
    matplotlib.rcParams.update(CHART_RC)


def dark_svg(svg: str) -> str:
    """The dark-scheme copy of a matplotlib SVG: default (black) text and lines made light,
    white fills (legend boxes) made the dark background."""
    out = re.sub(r"#[0-9a-fA-F]{6}\b", lambda m: DARK_INK.get(m.group(0).lower(), m.group(0)), svg)
    style = f"<style>text {{ fill: {DARK_INK['#000000']}; }}</style>"
    return re.sub(r"(<svg[^>]*>)", lambda m: m.group(1) + style, out, count=1)


SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")
READABLE_PX = 10  # the smallest type a chart may show at CHART_MIN_WIDTH_PX (tests/site)


def _plain_log_ticks(fig) -> None:
    """Log-axis labels as "10³" in the label's own size: matplotlib's "$10^{3}$" sets the
    exponent at 70 %, below reading size once a chart is shown at a phone's width."""
    import math

    from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, NullFormatter

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            major = axis.get_major_formatter()
            if not isinstance(major, LogFormatterSciNotation):
                continue
            base = major._base

            def label(x, pos, base=base):
                exponent = math.log(x, base) if x > 0 else math.nan
                if not math.isfinite(exponent) or abs(exponent - round(exponent)) > 1e-9:
                    return ""
                return f"{base:g}{str(round(exponent)).translate(SUPERSCRIPT)}"

            axis.set_major_formatter(FuncFormatter(label))
            if isinstance(axis.get_minor_formatter(), LogFormatterSciNotation):
                axis.set_minor_formatter(NullFormatter())


def _smallest_px(svg: str) -> float:
    """The smallest type of an SVG, in CSS px, when the SVG is shown CHART_MIN_WIDTH_PX wide."""
    width = float(re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+)', svg).group(1))
    sizes = [float(x) for x in re.findall(r"font-size:\s*([\d.]+)px", svg)]
    return min(sizes, default=READABLE_PX) * CHART_MIN_WIDTH_PX / width


def svg_figure(fig, alt: str, caption: str = "") -> str:
    """Embed a matplotlib figure as two SVG <img>s, one per colour scheme (no extra request,
    text kept as text); Material shows the one that matches the reader's scheme.

    A figure drawn wider than its type allows (its smallest text would show under READABLE_PX
    at CHART_MIN_WIDTH_PX) is made narrower and shorter, type unchanged, until it fits."""
    import matplotlib.pyplot as plt

    _plain_log_ticks(fig)
    for _ in range(6):
        buf = io.StringIO()
        with plt.rc_context(CHART_RC):
            fig.savefig(buf, format="svg", bbox_inches="tight")
        light = buf.getvalue()
        smallest = _smallest_px(light)
        if smallest >= READABLE_PX:
            break
        w, h = fig.get_size_inches()
        shrink = max(0.6, smallest / READABLE_PX * 0.98)
        fig.set_size_inches(w * shrink, h * max(shrink, 0.85))
        if fig.get_layout_engine() is None:
            fig.tight_layout()
    plt.close(fig)

    def img(svg: str, scheme: str) -> str:
        data = base64.b64encode(svg.encode()).decode()
        return f'<img alt="{escape(alt)}" src="data:image/svg+xml;base64,{data}#only-{scheme}">'

    cap = f"<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return (f'<figure class="data-chart">{img(light, "light")}{img(dark_svg(light), "dark")}'
            f"{cap}</figure>")


_apply_style()
