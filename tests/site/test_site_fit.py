"""Diagrams fit the text column: every Mermaid diagram of the built site, measured as drawn in
headless Chromium at 1280 px and at 390 px (a phone), in the light and the dark scheme (in the
one visit per page, width and scheme of sitecheck.site_visits).

At 1280 px no diagram may be wider than its column (it would be cut off at the right edge). At
390 px a diagram may be wider, but then its box must scroll sideways and show the cue above it
(accessibility.js). Every diagram must be drawn without the reader scrolling to it, so that a
printed page or a saved PDF has them all (mermaid-loader.js draws the rest once the page is
idle). Two tests at the end prove that the measurement sees a diagram that is too wide and a
wide diagram without its cue.
"""

from __future__ import annotations

import pytest

from sitecheck import (  # noqa: F401 - fixtures are used by name
    DIAGRAM_FIT, DRAWN, MERMAID_TIMEOUT_MS, NARROW_VIEWPORT, WIDE_VIEWPORT, axe_source, browser,
    chromium_path, label, new_context, page_file, page_paths, site_server, site_visits,
)

WIDTHS = {"1280px": "1280", "390px": "390"}
SCHEMES = ("light", "dark")


def diagram_pages(site) -> dict[str, int]:
    counts = {p: page_file(site, p).read_text().count('class="mermaid"') for p in page_paths(site)}
    return {p: n for p, n in counts.items() if n}


@pytest.fixture(scope="module")
def fits(site_visits) -> dict[tuple[str, str], dict[str, list[dict]]]:
    """{(width, scheme): {page: [one measurement per diagram]}}, from the site's visits (no page
    is scrolled: the diagrams must be drawn on their own once the page has loaded, as for print)."""
    return {(width, scheme): {p: v.mermaid_svgs for p, v in site_visits.passes[w, scheme].items()
                              if v.mermaid_blocks}
            for width, w in WIDTHS.items() for scheme in SCHEMES}


def too_wide(measured: dict[str, list[dict]]) -> dict[str, list]:
    bad = {label(p): [(d["text"][:30], d["width"], d["column"]) for d in ds
                      if d["width"] is None or d["width"] > d["column"] + 0.5]
           for p, ds in measured.items()}
    return {p: b for p, b in bad.items() if b}


def scroll_without_cue(measured: dict[str, list[dict]]) -> dict[str, list]:
    bad = {label(p): [(d["text"][:30], d["width"], d["column"]) for d in ds
                      if d["width"] is None or
                      (d["width"] > d["column"] + 0.5 and not (d["scrolls"] and d["cue"]))]
           for p, ds in measured.items()}
    return {p: b for p, b in bad.items() if b}


def test_the_site_has_diagrams_to_measure(site_server):
    assert sum(diagram_pages(site_server.root).values()) >= 5, "the check checks nothing"


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_diagram_is_drawn_without_scrolling_to_it(fits, scheme):
    undrawn = {label(p): len([d for d in ds if d["width"] is None])
               for p, ds in fits["1280px", scheme].items()}
    assert not {p: n for p, n in undrawn.items() if n}, "diagrams not drawn (blank in print)"


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_diagram_fits_the_column_at_1280_px(fits, scheme):
    assert not too_wide(fits["1280px", scheme]), "(diagram, drawn px, column px)"


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_diagram_wider_than_a_phone_scrolls_with_a_cue(fits, scheme):
    assert not scroll_without_cue(fits["390px", scheme]), "(diagram, drawn px, column px)"


@pytest.fixture
def diagram_page(browser, site_server):
    """A function: (viewport) -> a page of the real site with a diagram, drawn."""
    contexts = []

    def open_page(viewport):
        context = new_context(browser, site_server, "light", viewport=viewport)
        contexts.append(context)
        page = context.new_page()
        path, blocks = next(iter(diagram_pages(site_server.root).items()))
        page.goto(site_server.url(path), wait_until="load")
        page.wait_for_function(DRAWN, arg=blocks, timeout=MERMAID_TIMEOUT_MS)
        return page, path

    yield open_page
    for context in contexts:
        context.close()


WIDE_DIAGRAM = ("flowchart LR\n" + " --> ".join(f'n{i}["a deliberately wide diagram, box {i}"]'
                                                 for i in range(8)))


def test_the_width_check_fires_on_a_diagram_too_wide(diagram_page):
    """A real page, its first diagram replaced by one drawn by the same Mermaid from a wide
    left-to-right source: the 1280 px check must report it."""
    page, path = diagram_page(WIDE_VIEWPORT)
    assert not too_wide({path: page.evaluate(DIAGRAM_FIT)})
    page.evaluate("""async (text) => {
        const { svg } = await window.mermaid.render("too-wide", text);
        document.querySelector("div.mermaid").shadowRoot.innerHTML = svg;
    }""", WIDE_DIAGRAM)
    [bad] = too_wide({path: page.evaluate(DIAGRAM_FIT)}).values()
    assert bad[0][1] > 1000 > bad[0][2]


def test_the_cue_check_fires_on_a_wide_diagram_without_its_cue(diagram_page):
    page, path = diagram_page(NARROW_VIEWPORT)
    measured = {path: page.evaluate(DIAGRAM_FIT)}
    assert any(d["width"] > d["column"] for d in measured[path]), "pick a wider first page"
    assert not scroll_without_cue(measured)
    page.evaluate("document.querySelectorAll('.scroll-hint').forEach(h => h.remove())")
    assert scroll_without_cue({path: page.evaluate(DIAGRAM_FIT)})
