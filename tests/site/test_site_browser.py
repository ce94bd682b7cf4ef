"""The built site in headless Chromium: every page, as a reader's browser gets it, and on paper.

Each page is loaded once per colour scheme (see ``sitecheck.site_visits``); the tests below
assert on what those visits recorded, so a page added to the site is checked without any change
here. Skipped with a reason when Chromium or npm (for axe-core) cannot be had.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from sitecheck import (  # noqa: F401 - fixtures are used by name
    COLOUR_RULES, DIAGRAM_FIT, LISTINGS, code_colours, DRAWN, MERMAID_TIMEOUT_MS, MIN_READABLE_PX, NARROW_VIEWPORT,
    LISTING_COLOURS, PRINT_FIGURES, PRINT_LAYOUT, PRINT_VIEWPORT, PRINT_WIDTH_PX,
    READABILITY, SIDEWAYS, WIDE_VIEWPORT, Recorder, axe_source, browser, chromium_path,
    content_pages, full_audit, label, mean_rgb, new_context, normalised_lines, page_file, page_paths, run_axe,
    same_colours, search, serve, site_server, site_visits, TABLE_FIT, TALL_ROW_PX, visit_page,
)

PAGE_WEIGHT_LIMIT = 1_000_000  # bytes, for pages without a diagram
BLOCKING_IMPACTS = {"serious", "critical"}

# (search term, the page it must find among the first results). Terms for pages that are not
# in the build are skipped, so the table can name pages before they land.
SEARCH_TERMS = [
    ("array addition bounds check", "kernels/array-addition/"),
    ("cudaErrorInsufficientDriver", "setup/troubleshooting/"),
    ("p5.48xlarge", "setup/gpus-on-aws/"),
    ("Mandelbrot", "kernels/mandelbrot/"),
    ("grid-stride loop", "kernels/saxpy/"),
    ("cuBLAS", "kernels/matmul/"),
    ("spot instance", "setup/gpus-on-aws/"),
    ("nvidia-smi", "setup/check-your-gpu/"),
    ("PoCL", "accelerators/platforms/"),
    ("XLA", "accelerators/compilers/"),
    ("GPU survival toolkit", ""),
]
SEARCH_TOP = 3  # the right page must be among this many documents


def failures(visits, attribute) -> dict[str, list]:
    return {label(path): getattr(v, attribute) for path, v in visits.items()
            if getattr(v, attribute)}


# The most screens a page may take, collapsed blocks closed (issue 42): a desktop screen is
# 1280 x 900 px, a phone 390 x 844 px (the viewports of site_visits).
SCREENS = {1280: 15, 390: 20}


@pytest.mark.parametrize("width", sorted(SCREENS))
def test_every_page_fits_its_screens(site_visits, width):
    wide = width == WIDE_VIEWPORT["width"]
    visits = site_visits.light if wide else site_visits.narrow
    screen = (WIDE_VIEWPORT if wide else NARROW_VIEWPORT)["height"]
    assert wide or width == NARROW_VIEWPORT["width"]
    assert visits and max(v.height for v in visits.values()) > screen  # it measures
    long = {label(p): round(v.height / screen, 1) for p, v in visits.items()
            if p != "404.html" and v.height > SCREENS[width] * screen}
    assert not long, f"screens at {width} px, limit {SCREENS[width]}"


def test_every_built_page_is_visited(site_visits, site_server):
    built = {p.relative_to(site_server.root) for p in site_server.root.rglob("*.html")}
    assert len(site_visits.light) == len(built) > 0
    assert len(site_visits.dark) == len(built)


def test_pages_load_without_console_errors(site_visits):
    assert not failures(site_visits.light, "console_errors")
    assert not failures(site_visits.dark, "console_errors")


def test_no_failed_requests(site_visits):
    assert not failures(site_visits.light, "failed_requests")


def test_no_request_leaves_the_site(site_visits):
    # Fonts, Mermaid, search and every script must come from the site itself.
    assert not failures(site_visits.light, "offsite_requests")
    assert not failures(site_visits.dark, "offsite_requests")


def test_every_image_loads_and_has_alt_text(site_visits):
    broken = {label(p): [i["src"] for i in v.images if not i["loaded"]]
              for p, v in site_visits.light.items()}
    no_alt = {label(p): [i["src"] for i in v.images if i["alt"] is None]
              for p, v in site_visits.light.items()}
    assert not {p: s for p, s in broken.items() if s}, "images that did not load"
    assert not {p: s for p, s in no_alt.items() if s}, "images without an alt attribute"


def test_mermaid_diagrams_render_to_svg(site_visits):
    with_diagrams = {p: v for p, v in site_visits.light.items() if v.mermaid_blocks}
    if not with_diagrams:
        pytest.skip("no page has a Mermaid diagram")
    problems = {}
    for path, v in with_diagrams.items():
        svgs = [s for s in v.mermaid_svgs if s["width"] is not None]
        bad = [s["text"][:80] for s in svgs
               if s["width"] < 50 or s["height"] < 20 or "Syntax error" in s["text"]]
        if v.mermaid_error or len(svgs) != v.mermaid_blocks or bad:
            problems[label(path)] = {"blocks": v.mermaid_blocks, "svgs": len(svgs),
                                     "bad": bad, "error": v.mermaid_error}
    assert not problems


def test_mermaid_is_downloaded_only_by_pages_with_a_diagram(site_visits, site_server):
    mermaid = site_server.url("assets/javascripts/mermaid.min.js")
    loaded = {p: mermaid in v.served for p, v in site_visits.light.items()}
    assert not [label(p) for p, v in site_visits.light.items()
                if loaded[p] and not v.mermaid_blocks], "Mermaid loaded without a diagram"
    assert not [label(p) for p, v in site_visits.light.items()
                if v.mermaid_blocks and not loaded[p]], "diagram without the local Mermaid"


def test_pages_without_diagrams_weigh_under_1_mb(site_visits):
    heavy = {label(p): v.bytes for p, v in site_visits.light.items()
             if not v.mermaid_blocks and v.bytes >= PAGE_WEIGHT_LIMIT}
    assert not heavy, f"bytes transferred, limit {PAGE_WEIGHT_LIMIT}"
    assert all(v.bytes > 10_000 for v in site_visits.light.values())  # the measure measures


def test_code_blocks_have_a_working_copy_button(site_visits):
    with_code = {p: v for p, v in site_visits.light.items() if v.code.get("blocks")}
    if not with_code:
        pytest.skip("no page has a code block")
    assert not {label(p): v.code["without_button"] for p, v in with_code.items()
                if v.code["without_button"]}, "code blocks without a copy button"
    wrong = {label(p): (v.copied[0][:80], v.copied[1][:80]) for p, v in with_code.items()
             if v.copied is None or normalised_lines(v.copied[0]) != normalised_lines(v.copied[1])}
    assert not wrong, "clicking the copy button did not put the code on the clipboard"


def test_palette_follows_the_readers_colour_scheme(site_visits):
    assert {v.color_scheme for v in site_visits.light.values()} == {"default"}
    assert {v.color_scheme for v in site_visits.dark.values()} == {"slate"}


def test_light_dark_toggle(browser, site_server):
    context = new_context(browser, site_server, "light")
    try:
        page = context.new_page()
        page.goto(site_server.url(""), wait_until="load")
        scheme = "document.body.getAttribute('data-md-color-scheme')"
        assert page.evaluate(scheme) == "default"
        page.locator("form[data-md-component=palette] label:visible").first.click()
        page.wait_for_function(f"{scheme} === 'slate'")
        page.reload(wait_until="load")  # the choice is remembered
        assert page.evaluate(scheme) == "slate"
        page.locator("form[data-md-component=palette] label:visible").first.click()
        page.wait_for_function(f"{scheme} === 'default'")
    finally:
        context.close()


@pytest.fixture(scope="module")
def search_page(browser, site_server):
    context = new_context(browser, site_server, "light")
    page = context.new_page()
    page.goto(site_server.url(""), wait_until="networkidle")
    yield page
    context.close()


# What a reader types for an instance, an error, a kernel, MIG and a crash (issue 42): the page
# that answers it comes first.
FIRST_RESULT = [
    ("p5.48xlarge", "setup/gpus-on-aws/"),
    ("cudaErrorInsufficientDriver", "setup/troubleshooting/"),
    ("SAXPY", "kernels/saxpy/"),
    ("MIG", "setup/sharing-a-gpu/"),
    ("out of memory", "setup/troubleshooting/"),
]


@pytest.mark.parametrize(("term", "expected"), FIRST_RESULT, ids=[t for t, _ in FIRST_RESULT])
def test_search_finds_the_obvious_page_first(search_page, site_server, term, expected):
    assert expected in content_pages(site_server.root)
    found = search(search_page, term, site_server.base)
    assert found[:1] == [expected], f"{term!r} found {found[:5]}"


@pytest.mark.parametrize(("term", "expected"), SEARCH_TERMS, ids=[t for t, _ in SEARCH_TERMS])
def test_search_finds_the_right_page(search_page, site_server, term, expected):
    present = [page for _, page in SEARCH_TERMS if page in content_pages(site_server.root)]
    assert len(present) >= 2, "fewer than two search terms have their page: update SEARCH_TERMS"
    if expected not in content_pages(site_server.root):
        pytest.skip(f"{label(expected)} is not in this build")
    found = search(search_page, term, site_server.base)
    assert expected in found[:SEARCH_TOP], f"{term!r} found {found[:5]}"


def test_notebook_pages_show_outputs_and_images(site_visits):
    notebooks = {label(p): v.notebook for p, v in site_visits.light.items() if v.notebook}
    if not notebooks:
        pytest.skip("no notebook page in this build")
    assert not {p: n for p, n in notebooks.items()
                if n["outputs"] == 0 or n["images_loaded"] != n["images"] or n["errors"]}
    assert any(n["images"] for n in notebooks.values()), "no notebook shows an image"


def blocking(visits) -> dict[str, list]:
    return {label(p): [f"{a['id']} ({a['impact']}, {a['count']}x): {a['help']}; {a['nodes']}"
                       for a in v.axe if a["impact"] in BLOCKING_IMPACTS]
            for p, v in visits.items()
            if any(a["impact"] in BLOCKING_IMPACTS for a in v.axe)}


def test_accessibility_light_scheme(site_visits):
    assert not blocking(site_visits.light), "axe-core: serious or critical violations"


def test_accessibility_dark_scheme(site_visits):
    assert not blocking(site_visits.dark), "axe-core: serious or critical violations"


def test_listings_take_their_colours_from_the_theme(site_visits):
    """Both colour audits leave the listings out (sitecheck.full_audit): what makes that safe is
    that no listing colours itself, so its colours are the code variables checked below."""
    for visits in (site_visits.light, site_visits.dark):
        assert not failures(visits, "listing_colours"), "listings with colours of their own"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_code_colours_reach_4_5_to_1_on_the_listing_background(browser, site_server, scheme):
    """The dark pass of axe leaves the code listings out (sitecheck.LISTINGS): every token of
    every listing is the theme's code colour variables, checked here once per scheme."""
    path = next(p for p in content_pages(site_server.root)
                if "<pre" in page_file(site_server.root, p).read_text())
    context = new_context(browser, site_server, scheme)
    try:
        page = context.new_page()
        page.goto(site_server.url(path), wait_until="load")
        found = code_colours(page)
    finally:
        context.close()
    assert len(found) >= 10, found  # the fg colour and Material's token colours, at least
    assert not {name: round(ratio, 2) for name, ratio in found.items() if ratio < 4.5}


@contextmanager
def bad_page(browser, tmp_path, body: str):
    """(page, server): a light-scheme browser page and a server of its own for one index.html
    holding `body`; both closed afterwards."""
    (tmp_path / "index.html").write_text(
        f'<!doctype html><html lang="en"><head><title>bad</title></head><body><main>{body}'
        '</main></body></html>')
    server, httpd = serve(tmp_path)
    context = new_context(browser, server, "light")
    try:
        yield context.new_page(), server
    finally:
        context.close()
        httpd.shutdown()
        httpd.server_close()


def test_the_checks_catch_a_bad_page(browser, site_server, axe_source, tmp_path):
    """A page with an off-site image, a missing file, an image without alt text, an error in
    its script and a Mermaid block that cannot render: every check above must see it."""
    with bad_page(browser, tmp_path, '<img src="https://example.invalid/x.png" alt="off-site">'
                  '<img src="missing.png">'
                  '<div class="mermaid">graph TD; A--&gt;B</div>'
                  '<script>console.error("boom")</script>') as (page, server):
        visit = visit_page(page, Recorder(page, server), server, "", "light", axe_source,
                           full=True, mermaid_timeout_ms=1000)
    assert any("boom" in e for e in visit.console_errors)
    assert any("example.invalid" in r for r in visit.offsite_requests)
    assert any("missing.png" in r for r in visit.failed_requests)
    assert sum(not i["loaded"] for i in visit.images) == 2
    assert any(i["alt"] is None for i in visit.images)
    assert "image-alt" in {a["id"] for a in visit.axe if a["impact"] in BLOCKING_IMPACTS}
    assert visit.mermaid_error  # no Material, so nothing renders: the wait must time out


# ---------------------------------------------------------------- readable on every screen

@pytest.fixture(params=["1280px", "390px"])
def visits(request, site_visits):
    """The light-scheme visits at a desktop width (1280 px) and at a phone's (390 px)."""
    return site_visits.light if request.param == "1280px" else site_visits.narrow


def readable(visits, key) -> dict[str, list]:
    return {label(p): v.readability.get(key) for p, v in visits.items()
            if v.readability.get(key)}


def test_a_table_wider_than_the_column_says_it_scrolls(visits):
    assert not readable(visits, "tables"), "tables that scroll sideways with no visible cue"


def test_no_table_is_wider_than_its_column_at_1280_px(site_visits):
    """Between both sidebars at 1280 px every table fits: none hides its last columns (a
    mandelbrot table hid its "Measured" one). Closed blocks and other tabs count (TABLE_FIT)."""
    wide = {label(p): v.tables["wide"] for p, v in site_visits.light.items() if v.tables["wide"]}
    assert not wide, "(table's first row, px beyond its column)"


def test_no_table_row_is_taller_than_half_a_phone_screen(site_visits):
    tall = {label(p): v.tables["tall"] for p, v in site_visits.narrow.items() if v.tables["tall"]}
    assert not tall, f"(table's first row, its tallest row's px; at most {TALL_ROW_PX})"


def test_a_table_that_scrolls_on_a_phone_keeps_its_first_column_in_view(site_visits):
    unpinned = {label(p): v.tables["unpinned"] for p, v in site_visits.narrow.items()
                if v.tables["unpinned"]}
    assert not unpinned, "(table's first row, px its first column moved out of view)"


def test_the_table_checks_fire_on_a_wide_table_and_a_tall_row(browser, tmp_path):
    """A table wider than its column in a closed block, and one with a row taller than
    TALL_ROW_PX in a tab not shown: both reported, and the page left as it was. Of two tables
    that scroll, the one whose first column is not sticky is reported."""
    row = ('<tr><td style="white-space:nowrap">{}</td><td style="white-space:nowrap">'
           + "a long cell that does not fit the column " * 3 + "</td></tr>")
    pinned = row.format("pinned").replace(
        '<td style="white-space:nowrap">', '<td style="white-space:nowrap;position:sticky;left:0">', 1)
    body = ('<div class="md-typeset" style="width:600px">'
            f'<div class="md-typeset__scrollwrap" style="overflow-x:auto"><table>{row.format("loose")}'
            '</table></div><div class="md-typeset__scrollwrap" style="overflow-x:auto"><table>'
            f'{pinned}</table></div>'
            '<details><summary>more</summary>'
            '<div class="md-typeset__scrollwrap" style="overflow-x:auto"><table><tr>'
            '<td style="white-space:nowrap">the column that matters sits past the right edge '
            'of a six-hundred pixel column, so a reader never sees it</td></tr></table></div>'
            '</details><div class="tabbed-block" style="display:none"><div '
            'class="md-typeset__scrollwrap"><table><tr><td><div style="height:700px">notes</div>'
            '</td></tr></table></div></div></div>')
    with bad_page(browser, tmp_path, body) as (page, server):
        page.goto(server.url(""), wait_until="load")
        found = page.evaluate(TABLE_FIT.replace("TALL_ROW_PX", str(TALL_ROW_PX)))
        restored = page.evaluate("() => !document.querySelector('details').open && "
                                 "getComputedStyle(document.querySelector('.tabbed-block')).display === 'none'")
    assert [n[:5] for n, _ in found["unpinned"]] == ["loose"], found
    wide = [n for n, _ in found["wide"] if n.startswith("the column that matters")]
    assert len(wide) == 1 and len(found["wide"]) == 3, found["wide"]
    assert found["wide"][2][1] > 100
    assert [name for name, _ in found["tall"]] == ["notes"] and found["tall"][0][1] > TALL_ROW_PX
    assert restored


def test_code_in_table_cells_never_breaks(visits):
    assert not readable(visits, "broken_code"), "identifiers broken over two lines in a cell"


def test_every_chart_has_a_dark_copy_and_shows_it_in_the_dark_scheme(site_visits):
    charts = {label(p): v.readability.get("charts", []) for p, v in site_visits.dark.items()}
    assert any(charts.values()), "no chart found: the check checks nothing"
    wrong = {p: [c["alt"][:50] for c in cs if not (c["light"] and c["dark"])
                 or c["shown"] != "chart-dark"] for p, cs in charts.items()}
    assert not {p: c for p, c in wrong.items() if c}


def test_chart_type_is_readable(visits):
    small = {label(p): [(c["alt"][:50], round(c["min_px"], 1)) for c in
                        v.readability.get("charts", [])
                        if c["min_px"] is None or c["min_px"] < MIN_READABLE_PX]
             for p, v in visits.items()}
    assert not {p: c for p, c in small.items() if c}, f"chart type under {MIN_READABLE_PX} px"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_chart_scrolls_sideways_on_a_phone(site_visits, scheme):
    """At 390 px no chart is wider than its box or the screen, and no page scrolls sideways."""
    visits = site_visits.passes["390", scheme]
    charts = {label(p): [(c["alt"][:40], round(c["over"])) for c in v.sideways["charts"]
                         if c["over"] > 1] for p, v in visits.items()}
    assert any(v.sideways["charts"] for v in visits.values()), "no chart found"
    assert not {p: c for p, c in charts.items() if c}, "(chart, px past its box)"
    assert not {label(p): v.sideways["page"] for p, v in visits.items() if v.sideways["page"] > 1}


def test_notebook_images_keep_their_colours_in_the_dark_scheme(site_visits):
    """A notebook's PNG (a colour scale, GPU against CPU bars) shows as drawn in both schemes: no
    inversion or hue rotation (the dark scheme's old filter turned the Mandelbrot set pink)."""
    for width in ("1280", "390"):
        light = {label(p): v.notebook_rgb for p, v in site_visits.passes[width, "light"].items()
                 if v.notebook_rgb}
        dark = {label(p): v.notebook_rgb for p, v in site_visits.passes[width, "dark"].items()
                if v.notebook_rgb}
        assert light and light.keys() == dark.keys(), "no notebook image found"
        changed = {p: list(zip(light[p], dark[p])) for p in light
                   if len(light[p]) != len(dark[p])
                   or not all(map(same_colours, light[p], dark[p]))}
        assert not changed, f"{width} px: (light, dark) mean colours"


def test_the_notebook_colour_check_fires_on_an_inverted_image(browser, site_server, site_visits):
    path = next(p for p, v in site_visits.dark.items() if v.notebook_rgb)
    context = new_context(browser, site_server, "dark")
    try:
        page = context.new_page()
        page.goto(site_server.url(path), wait_until="load")
        img = page.locator(".jupyter-wrapper .jp-OutputArea-output img").first
        assert same_colours(mean_rgb(img.screenshot()), site_visits.dark[path].notebook_rgb[0])
        img.evaluate("i => { i.style.filter = 'invert(0.88) hue-rotate(180deg)'; }")  # the old rule
        assert not same_colours(mean_rgb(img.screenshot()), site_visits.dark[path].notebook_rgb[0])
    finally:
        context.close()


def test_the_sideways_check_fires_on_a_chart_wider_than_a_phone(browser, tmp_path):
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="600pt" height="100pt" '
           'viewBox="0 0 600 100"><text x="5" y="50" style="font-size: 12px">wide</text></svg>')
    import base64

    data = base64.b64encode(svg.encode()).decode()
    body = (f'<figure class="data-chart"><img alt="a wide chart" style="min-width:560px" '
            f'src="data:image/svg+xml;base64,{data}#only-light"></figure>')
    with bad_page(browser, tmp_path, body) as (page, server):
        page.set_viewport_size(NARROW_VIEWPORT)
        page.goto(server.url(""), wait_until="load")
        found = page.evaluate(SIDEWAYS)
    assert found["charts"][0]["over"] > 100 and found["page"] > 100, found


MIN_PLOT_PX = 200  # a chart's plot area on a phone, in CSS px


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chart_plot_areas_keep_their_height_on_a_phone(site_visits, scheme):
    """At 390 px each plot area (the axes, not the legend or labels around it) is at least
    MIN_PLOT_PX tall, as drawn in the SVG the phone gets (hooks/renderers/charts.py)."""
    charts = {label(p): v.readability.get("charts", [])
              for p, v in site_visits.passes["390", scheme].items()}
    assert any(charts.values()), "no chart found: the check checks nothing"
    short = {p: [(c["alt"][:40], c["plot_px"]) for c in cs
                 if c["plot_px"] is None or c["plot_px"] < MIN_PLOT_PX] for p, cs in charts.items()}
    assert not {p: c for p, c in short.items() if c}, f"(chart, plot px) under {MIN_PLOT_PX} px"


@pytest.mark.parametrize("where", [("1280", "light"), ("1280", "dark"), ("390", "light"), ("390", "dark")],
                         ids="-".join)
def test_chart_tick_labels_do_not_overlap(site_visits, where):
    overlaps = {label(p): [(c["alt"][:40], c["tick_overlaps"][:3]) for c in
                           v.readability.get("charts", []) if c.get("tick_overlaps")]
                for p, v in site_visits.passes[where].items()}
    assert not {p: c for p, c in overlaps.items() if c}, "(chart, tick labels drawn over each other)"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_code_and_output_lines_never_wrap_on_a_phone(site_visits, scheme):
    """A command's options and a CLI's column table keep their lines at 390 px: a code block
    scrolls sideways instead (with the shadow at its edge, extra.css)."""
    visits = site_visits.passes["390", scheme]
    assert any(v.code.get("blocks") for v in site_visits.light.values())
    assert not readable(visits, "wrapped_code"), "code blocks whose lines wrap"


def test_diagram_text_is_readable(visits):
    assert not readable(visits, "small_diagram_text"), f"diagram text under {MIN_READABLE_PX} px"


def test_notebook_output_lines_do_not_wrap(visits):
    assert not readable(visits, "wrapped_outputs"), "notebook output lines wrapped inside a word"


def test_the_readability_checks_catch_a_bad_page(browser, tmp_path):
    """A table that overflows with no cue, a code cell that breaks, a chart with no dark copy and
    6 px type, a wrapping notebook output: each check above must see it."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="600pt" height="100pt" '
           'viewBox="0 0 600 100"><text x="5" y="50" style="font-size: 6px">tiny</text></svg>')
    import base64

    data = base64.b64encode(svg.encode()).decode()
    # A plot area 40 units tall in a 600-unit-wide chart (20 px at 300 px), two x labels on one spot.
    crowded = base64.b64encode((
        '<svg xmlns="http://www.w3.org/2000/svg" width="600pt" height="200pt" viewBox="0 0 600 200">'
        '<g id="axes_1"><g id="patch_2"><path d="M 50 10 L 590 10 L 590 50 L 50 50 z"/></g>'
        '<g id="matplotlib.axis_1"><g id="xtick_1"><text x="100" y="80" style="font-size: 24px">'
        '8192\u00b3</text></g><g id="xtick_2"><text x="130" y="80" style="font-size: 24px">'
        '3001\u00d74099\u00d72053</text></g></g></g></svg>').encode()).decode()
    body = ('<div class="md-typeset"><div class="md-typeset__scrollwrap" style="overflow-x:auto;'
            'width:200px"><table style="width:900px"><tr><td>wide</td></tr></table></div>'
            '<table><tr><td><div style="width:80px"><code style="word-break:break-all">'
            'cudaErrorInsufficientDriver</code></div></td></tr></table>'
            f'<figure class="data-chart"><img alt="a chart" '
            f'style="width:300px" src="data:image/svg+xml;base64,{data}#only-light"></figure></div>'
            '<div class="jupyter-wrapper"><div class="jp-OutputArea-output"><pre style="width:80px;'
            'white-space:pre-wrap;word-break:break-all">CPU njit_parallel 1234567</pre></div></div>'
            '<div class="md-typeset"><pre><code style="display:block;width:120px;white-space:pre-wrap">'
            'aws ec2 describe-instances --explain --nvidia-only</code></pre></div>'
            f'<figure class="data-chart"><img alt="a crowded chart" style="width:300px" '
            f'src="data:image/svg+xml;base64,{crowded}#only-light"></figure>')
    with bad_page(browser, tmp_path, body) as (page, server):
        page.goto(server.url(""), wait_until="load")
        found = page.evaluate(READABILITY.replace("MIN_PX", str(MIN_READABLE_PX)))
    assert found["tables"], found
    assert found["broken_code"], found
    assert found["wrapped_outputs"], found
    assert found["wrapped_code"] == ["aws ec2 describe-instances --explain --nvidia-only"], found
    chart, crowded = found["charts"]
    assert not chart["dark"] and chart["min_px"] < MIN_READABLE_PX
    assert crowded["plot_px"] == 20 and crowded["tick_overlaps"] == [["8192³", "3001×4099×2053"]]


def test_the_contrast_audit_fails_when_a_real_element_loses_contrast(browser, site_server,
                                                                      axe_source):
    """The audit runs before any click (so a fading toast cannot trip it) and still sees a real
    paragraph of a real page turned light grey on white; and a listing's token coloured in place
    is seen by LISTING_COLOURS (test_listings_take_their_colours_from_the_theme)."""
    path = next(p for p in content_pages(site_server.root)
                if "<pre" in page_file(site_server.root, p).read_text())
    context = new_context(browser, site_server, "light")
    try:
        page = context.new_page()
        page.goto(site_server.url(path), wait_until="load")
        assert not [a for a in run_axe(page, axe_source, COLOUR_RULES)
                    if a["id"] == "color-contrast"]
        page.evaluate("document.querySelector('.md-content p').style.color = '#c8c8c8'")
        assert "color-contrast" in {a["id"] for a in run_axe(page, axe_source, COLOUR_RULES)}
        # and as the dark pass audits, the listings taken out while axe runs, and the light one
        assert "color-contrast" in {a["id"] for a in run_axe(page, axe_source, COLOUR_RULES,
                                                             LISTINGS)}
        assert "color-contrast" in {a["id"] for a in full_audit(page, axe_source)}
        assert not page.evaluate(LISTING_COLOURS)
        page.evaluate("document.querySelector('.md-typeset pre span').style.color = '#c8c8c8'")
        assert page.evaluate(LISTING_COLOURS) == ['<span style="color: rgb(200, 200, 200);">']
    finally:
        context.close()


def test_the_audit_without_listings_puts_them_back(browser, site_server, axe_source):
    """The dark pass's audit takes the listings out of the page while axe runs (AXE_RUN): the
    same listings are back after it, for the print and narrow measurements that follow (every
    element and its text; Material does not set again the tabindex of a listing that scrolls,
    which nothing measured reads)."""
    path = max(content_pages(site_server.root),
               key=lambda p: page_file(site_server.root, p).read_text().count("<pre"))
    listings = """() => [...document.querySelectorAll('pre')].map(p => {
        const copy = p.cloneNode(true);
        copy.querySelectorAll('[tabindex]').forEach(e => e.removeAttribute('tabindex'));
        return copy.outerHTML;
    })"""
    context = new_context(browser, site_server, "dark")
    try:
        page = context.new_page()
        page.goto(site_server.url(path), wait_until="load")
        before = page.evaluate(listings)
        run_axe(page, axe_source, COLOUR_RULES, LISTINGS)
        after = page.evaluate(listings)
    finally:
        context.close()
    assert len(before) > 5 and sum(map(len, before)) > 10_000  # listings with tokens in them
    assert after == before


def test_search_index_holds_prose_not_diagram_source_or_listings(site_server):
    import json
    import re

    index = json.loads((site_server.root / "search" / "search_index.json").read_text())
    diagram = re.compile(r"\b(flowchart|graph) (LR|RL|TD|TB|BT)\b|sequenceDiagram|\bsubgraph ")
    bad = [d["location"] for d in index["docs"] if diagram.search(d["text"])]
    assert not bad, "search entries holding Mermaid source"
    long = [d["location"] for d in index["docs"]
            for block in re.findall(r"<pre>.*?</pre>", d["text"], re.S) if block.count("\n") > 12]
    assert not long, "search entries holding whole listings"

# --- Diagrams fit the text column (in this file so that one xdist worker makes the visits) ---
# Diagrams fit the text column: every Mermaid diagram of the built site, measured as drawn in
# headless Chromium at 1280 px and at 390 px (a phone), in the light and the dark scheme (in the
# one visit per page, width and scheme of sitecheck.site_visits).
#
# At 1280 px no diagram may be wider than its column (it would be cut off at the right edge). At
# 390 px a diagram may be wider, but then its box must scroll sideways and show the cue above it
# (accessibility.js). Every diagram must be drawn without the reader scrolling to it, so that a
# printed page or a saved PDF has them all (mermaid-loader.js draws the rest once the page is
# idle). Two tests at the end prove that the measurement sees a diagram that is too wide and a
# wide diagram without its cue.

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


# --- On paper (in this file so that one xdist worker makes the visits) -----------------------
# Every page with a chart or a diagram printed to A4 (Chromium's ``page.pdf``) from the light and
# from the dark scheme, once the page has settled, in its visit (sitecheck.print_page): no
# diagram or chart wider than the printable width, exactly one copy of each chart shown (the
# light one: paper is white, whatever the reader's scheme), and no Mermaid source text (a diagram
# not yet drawn when printing starts must not print as code).

# Mermaid source as a reader would see it printed (a diagram not yet drawn).
MERMAID_SOURCE = ("flowchart ", "sequenceDiagram", "subgraph ", "-->", "---|")


def test_the_print_check_has_pages_to_print(site_visits, site_server):
    printed = site_visits.printed
    pages = {p for p in page_paths(site_server.root)
             if any(f in page_file(site_server.root, p).read_text() for f in PRINT_FIGURES)}
    assert set(printed) == {(scheme, p) for scheme in ("light", "dark") for p in pages}
    assert any(layout["charts"] for layout in printed.values()), "no chart: the check checks nothing"
    assert any(layout["diagrams"] for layout in printed.values()), "no diagram to check"
    assert all(layout["page"] == PRINT_WIDTH_PX for layout in printed.values())
    # The PDFs (PDF_FIGURES): every light page, and a dark sample, each a real document.
    pdfs = {key for key, layout in printed.items() if "pdf_bytes" in layout}
    assert {(s, p) for s, p in printed if s == "light"} <= pdfs
    assert any(s == "dark" for s, _ in pdfs), "no dark page printed to PDF"
    assert all(printed[key]["pdf_bytes"] > 10_000 for key in pdfs)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_exactly_one_copy_of_each_chart_prints_the_light_one(site_visits, scheme):
    wrong = {label(p): [(c["alt"][:40], [s["copy"] for s in c["shown"]]) for c in layout["charts"]
                        if [s["copy"] for s in c["shown"]] != ["light"]]
             for (s, p), layout in site_visits.printed.items() if s == scheme}
    assert not {p: c for p, c in wrong.items() if c}, "(chart, copies printed)"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_diagram_or_chart_is_wider_than_the_paper(site_visits, scheme):
    printed = site_visits.printed
    wide = {label(p): [("diagram", d["width"]) for d in layout["diagrams"]
                       if not d["drawn"] or d["right"] > PRINT_WIDTH_PX]
            + [(c["alt"][:40], s["right"]) for c in layout["charts"] for s in c["shown"]
               if s["right"] > PRINT_WIDTH_PX]
            for (s, p), layout in printed.items() if s == scheme}
    assert not {p: w for p, w in wide.items() if w}, f"(figure, right edge px) past {PRINT_WIDTH_PX}"
    assert not {label(p): layout["sideways"] for (s, p), layout in printed.items()
                if s == scheme and layout["sideways"] > 1}, "pages cut off at the right"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_mermaid_source_prints(site_visits, scheme):
    source = {label(p): [m for m in MERMAID_SOURCE if m in layout["text"]]
              for (s, p), layout in site_visits.printed.items() if s == scheme and layout["diagrams"]}
    assert not {p: m for p, m in source.items() if m}, "Mermaid source in the printed text"


def test_the_print_checks_fire_on_an_undrawn_diagram_and_a_dark_copy(browser, site_server):
    """A real page with a diagram and a chart, printed from the dark scheme with the site's print
    rules for both undone: the checks above must see the source text, the second chart copy and
    the diagram past the paper's edge."""
    path = next(p for p in page_paths(site_server.root)
                if 'class="mermaid"' in page_file(site_server.root, p).read_text()
                and 'class="data-chart"' in page_file(site_server.root, p).read_text())
    context = new_context(browser, site_server, "dark", viewport=PRINT_VIEWPORT)
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
