"""The built site on paper: every page with a chart or a diagram printed to A4 (Chromium's
``page.pdf``) from the light and from the dark scheme, once the page has settled.

What a page prints is its layout under print media at the printable width, so each page is
measured there (``emulate_media``, a viewport as wide as the printable area) and then printed:
no diagram or chart wider than the printable width, exactly one copy of each chart shown (the
light one: paper is white, whatever the reader's scheme), and no Mermaid source text (a diagram
not yet drawn when printing starts must not print as code). One browser context per scheme,
each page loaded once. Skipped with a reason when Chromium cannot be had.
"""

from __future__ import annotations

import pytest

from sitecheck import (  # noqa: F401 - fixtures are used by name
    DRAWN, MERMAID_TIMEOUT_MS, RELAID, Recorder, browser, chromium_path, label, new_context,
    page_file, page_paths, site_server,
)

A4_WIDTH_MM, MARGIN_MM = 210, 12
PRINT_WIDTH_PX = round((A4_WIDTH_MM - 2 * MARGIN_MM) / 25.4 * 96)  # CSS px: 96 to the inch
FIGURES = ('class="mermaid"', 'class="data-chart"')

# Under print media: each chart's shown copies and their widths, each diagram's drawn width,
# the width of the text, and the text a reader would see (innerText follows the CSS).
PRINT_LAYOUT = r"""
() => {
  const seen = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const page = document.documentElement.clientWidth;
  return {
    page,
    sideways: document.documentElement.scrollWidth - page,
    charts: [...document.querySelectorAll("figure.data-chart")].map(f => ({
      alt: (f.querySelector("img") || {}).alt || "",
      shown: [...f.querySelectorAll("img")].filter(seen).map(i => ({
        copy: i.src.endsWith("#only-dark") ? "dark" : "light",
        right: Math.round(i.getBoundingClientRect().right)})),
    })),
    diagrams: [...document.querySelectorAll(".mermaid")].map(d => {
      const svg = d.shadowRoot && d.shadowRoot.querySelector("svg");
      return {drawn: !!svg, right: svg ? Math.round(svg.getBoundingClientRect().right) : null,
              width: svg ? Math.round(svg.getBoundingClientRect().width) : null};
    }),
    text: document.body.innerText,
  };
}
"""
# Mermaid source as a reader would see it printed (a diagram not yet drawn).
MERMAID_SOURCE = ("flowchart ", "sequenceDiagram", "subgraph ", "-->", "---|")


def printed_pages(site) -> list[str]:
    return [p for p in page_paths(site) if any(f in page_file(site, p).read_text() for f in FIGURES)]


@pytest.fixture(scope="module")
def printed(browser, site_server) -> dict[tuple[str, str], dict]:
    """{(scheme, page): its print layout, plus the size of its PDF}: every page with a chart or
    a diagram, loaded once per scheme, settled (diagrams drawn, images decoded), then printed."""
    found = {}
    paths = printed_pages(site_server.root)
    for scheme in ("light", "dark"):
        context = new_context(browser, site_server, scheme,
                              viewport={"width": PRINT_WIDTH_PX, "height": 1100})
        page = context.new_page()
        recorder = Recorder(page, site_server)
        for path in paths:
            page.goto(site_server.url(path), wait_until="load")
            blocks = page_file(site_server.root, path).read_text().count('class="mermaid"')
            if blocks:
                page.wait_for_function(DRAWN, arg=blocks, timeout=MERMAID_TIMEOUT_MS)
            recorder.settle(page)
            page.emulate_media(media="print")
            page.evaluate(RELAID)
            layout = page.evaluate(PRINT_LAYOUT)
            layout["pdf_bytes"] = len(page.pdf(format="A4", margin={
                side: f"{MARGIN_MM}mm" for side in ("top", "right", "bottom", "left")}))
            page.emulate_media(media="screen")
            found[scheme, path] = layout
        context.close()
    return found


def test_the_print_check_has_pages_to_print(printed):
    assert any(layout["charts"] for layout in printed.values()), "no chart: the check checks nothing"
    assert any(layout["diagrams"] for layout in printed.values()), "no diagram to check"
    assert all(layout["page"] == PRINT_WIDTH_PX and layout["pdf_bytes"] > 10_000
               for layout in printed.values())


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_exactly_one_copy_of_each_chart_prints_the_light_one(printed, scheme):
    wrong = {label(p): [(c["alt"][:40], [s["copy"] for s in c["shown"]]) for c in layout["charts"]
                        if [s["copy"] for s in c["shown"]] != ["light"]]
             for (s, p), layout in printed.items() if s == scheme}
    assert not {p: c for p, c in wrong.items() if c}, "(chart, copies printed)"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_diagram_or_chart_is_wider_than_the_paper(printed, scheme):
    wide = {label(p): [("diagram", d["width"]) for d in layout["diagrams"]
                       if not d["drawn"] or d["right"] > PRINT_WIDTH_PX]
            + [(c["alt"][:40], s["right"]) for c in layout["charts"] for s in c["shown"]
               if s["right"] > PRINT_WIDTH_PX]
            for (s, p), layout in printed.items() if s == scheme}
    assert not {p: w for p, w in wide.items() if w}, f"(figure, right edge px) past {PRINT_WIDTH_PX}"
    assert not {label(p): layout["sideways"] for (s, p), layout in printed.items()
                if s == scheme and layout["sideways"] > 1}, "pages cut off at the right"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_mermaid_source_prints(printed, scheme):
    source = {label(p): [m for m in MERMAID_SOURCE if m in layout["text"]]
              for (s, p), layout in printed.items() if s == scheme and layout["diagrams"]}
    assert not {p: m for p, m in source.items() if m}, "Mermaid source in the printed text"


def test_the_print_checks_fire_on_an_undrawn_diagram_and_a_dark_copy(browser, site_server):
    """A real page with a diagram and a chart, printed from the dark scheme with the site's print
    rules for both undone: the checks above must see the source text, the second chart copy and
    the diagram past the paper's edge."""
    path = next(p for p in printed_pages(site_server.root)
                if 'class="mermaid"' in page_file(site_server.root, p).read_text()
                and 'class="data-chart"' in page_file(site_server.root, p).read_text())
    context = new_context(browser, site_server, "dark", viewport={"width": PRINT_WIDTH_PX, "height": 1100})
    try:
        page = context.new_page()
        page.route("**/mermaid.min.js", lambda route: route.abort())  # never drawn
        page.route("**/extra.css", lambda route: route.fulfill(body="", content_type="text/css"))
        page.goto(site_server.url(path), wait_until="load")
        page.wait_for_timeout(500)
        page.emulate_media(media="print")
        layout = page.evaluate(PRINT_LAYOUT)
    finally:
        context.close()
    assert any(m in layout["text"] for m in MERMAID_SOURCE)
    # Material's own rules alone print both copies (the bug this file guards against).
    assert all([s["copy"] for s in c["shown"]] == ["light", "dark"] for c in layout["charts"])
