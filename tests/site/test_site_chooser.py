"""The GPUs-on-AWS page in headless Chromium: its in-browser chooser gives the same answers as
`snippets/aws/choose_instance.py`, and its command output is readable at 1280 px.

One table of cases (CASES) is run twice: through the CLI's own `main` (with `--json`) and by
filling in the page's form. For every case both must name the same instances in the same order,
with the same usable memory, $/hour, hours and job cost, or refuse with the same message. A
tampered copy of the page's script (one constant changed) must make the comparison fail.

Command output: no row of an output table (in a block with a dashed header rule, a line whose
columns are set apart by two or more spaces) may be clipped at the right or wrapped onto a
second line (a line of prose may wrap), no command or output text may sit under a copy button, and the
chooser's own table must fit its form. A narrowed column and a removed padding must trip both.
"""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from conftest import ROOT
from tests.helpers import load_snippet
from sitecheck import browser, chromium_path, new_context, site_server  # noqa: F401

PAGE = "setup/gpus-on-aws/"
DATA = ROOT / "docs" / "data" / "aws-instances.csv"
TOP = 10

# (size is: billions of parameters, or GiB of memory; precision; mode; GPUs; hours;
#  NVIDIA only; overhead; reserve GiB)
CASES = [
    ("params", 7, "bf16", "training", 8, 10, True, 1.2, 1),  # the page's worked example
    ("params", 7, "bf16", "training", 8, 10, False, 1.2, 1),
    ("params", 8, "bf16", "inference", 1, 720, True, 1.2, 1),
    ("params", 8, "bf16", "inference", 1, 720, False, 1.2, 1),
    ("params", 70, "bf16", "inference", 8, 24, True, 1.2, 1),
    ("params", 70, "fp8", "inference", 4, 100, True, 1.2, 1),
    ("params", 70, "int4", "inference", 1, 5, False, 1.2, 1),
    ("params", 13, "fp16", "inference", 2, 0.5, True, 1.1, 2),
    ("params", 1.5, "fp32", "training", 1, 3, True, 1.2, 1),
    ("params", 3, "fp8", "training", 4, 48, True, 1.3, 1.5),
    ("params", 405, "bf16", "training", 8, 1, False, 1.2, 1),  # fits nowhere: closest named
    ("params", 7, "int8", "training", 1, 1, True, 1.2, 1),     # refused: int8 training
    ("params", 0.35, "int8", "inference", 1, 8760, False, 1.0, 0),
    ("params", 2, "int4", "inference", 1, 1, True, 1.2, 1),    # fractional GPUs (G6f) fit
    ("params", 180, "fp8", "inference", 8, 12, True, 1.2, 4),
    ("memory", 40, "bf16", "inference", 1, 100, True, 1.2, 1),
    ("memory", 20, "fp32", "inference", 1, 100, False, 1.2, 1),
    ("memory", 5, "int8", "inference", 1, 2, False, 1.2, 1),
    ("memory", 600, "bf16", "training", 8, 36, True, 1.2, 1),
    ("memory", 150, "fp8", "training", 2, 10, True, 1.2, 1),
    ("memory", 3000, "bf16", "training", 8, 1, True, 1.2, 1),  # fits nowhere
    ("memory", 11, "fp16", "inference", 1, 730, True, 1.2, 0.5),
    ("memory", 70, "bf16", "training", 4, 1000, False, 1.2, 3),
]


def case_id(case) -> str:
    kind, size, precision, mode, gpus, hours, nvidia, overhead, reserve = case
    unit = "B" if kind == "params" else "GiB"
    return (f"{size}{unit}-{precision}-{mode}-{gpus}gpu-{hours}h"
            f"{'-nvidia' if nvidia else ''}-x{overhead}-r{reserve}")


def cli_args(case) -> list[str]:
    kind, size, precision, mode, gpus, hours, nvidia, overhead, reserve = case
    args = (["--params", repr(size * 1e9)] if kind == "params" else ["--memory-gib", str(size)])
    args += ["--precision", precision, "--gpus", str(gpus), "--hours", str(hours),
             "--overhead", str(overhead), "--reserve-gib", str(reserve),
             "--data", str(DATA), "--top", "1000", "--json"]
    return args + (["--training"] if mode == "training" else []) + (
        ["--nvidia-only"] if nvidia else [])


@pytest.fixture(scope="module")
def chooser():
    return load_snippet("aws/choose_instance.py")


def cli_answer(chooser, case) -> dict:
    """{'error': message} or {'memory': 'x.xx', 'count': n, 'rows': [...]} from the CLI."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = chooser.main(cli_args(case))
        except SystemExit as exc:
            status = exc.code
    if status != 0:
        assert status == 2, err.getvalue()
        return {"error": err.getvalue().strip().removeprefix("error: ")}
    answer = json.loads(out.getvalue())
    rows = [[str(n), o["instance_type"], f"{o['accelerators']} {o['accelerator']}",
             f"{o['usable_gib_per_gpu']:.2f}", f"{o['usd_per_hour']:.4f}", f"{o['hours']:g}",
             f"{o['total_usd']:,.2f}"] for n, o in enumerate(answer["options"][:TOP], start=1)]
    return {"memory": f"{answer['memory_gib']:.2f}", "count": len(answer["options"]),
            "rows": rows}


def fill(page, case) -> None:
    kind, size, precision, mode, gpus, hours, nvidia, overhead, reserve = case
    form = page.locator("#aws-chooser")
    form.locator("[name=kind]").select_option(kind)
    form.locator("[name=size]").fill(str(size))
    form.locator("[name=precision]").select_option(precision)
    form.locator("[name=mode]").select_option(mode)
    form.locator("[name=gpus]").select_option(str(gpus))
    form.locator("[name=hours]").fill(str(hours))
    form.locator("[name=overhead]").fill(str(overhead))
    form.locator("[name=reserve]").fill(str(reserve))
    form.locator("[name=nvidia]").set_checked(nvidia)
    form.locator("button[type=submit]").click()


PAGE_ANSWER = """
() => {
  const result = document.getElementById("aws-chooser-result");
  const summary = result.querySelector(".aws-chooser-summary");
  const rows = [...result.querySelectorAll("tbody tr")].map(
    tr => [...tr.cells].map(td => td.textContent.trim()));
  return { summary: summary ? summary.textContent : result.textContent,
           error: !!(summary && summary.hasAttribute("data-error")), rows };
}
"""


def page_answer(page) -> dict:
    got = page.evaluate(PAGE_ANSWER)
    if got["error"]:
        return {"error": got["summary"]}
    memory = re.search(r"needs ([0-9.]+) GiB", got["summary"])
    count = re.search(r"(\d+) instances fit", got["summary"])
    return {"memory": memory and memory.group(1), "count": count and int(count.group(1)),
            "rows": got["rows"]}


@pytest.fixture(scope="module")
def aws_page(browser, site_server):
    """(page, open): `open(tamper=None)` loads the AWS page with its chooser ready; `tamper`
    rewrites aws-chooser.js on the way to the browser."""
    context = new_context(browser, site_server, "light")
    page = context.new_page()
    loaded = []  # the `tamper` the page was last loaded with

    def open_page(tamper=None):
        if loaded == [tamper]:
            return page  # loaded already, with the same script: fill() sets every field
        page.unroute("**/aws-chooser.js")
        if tamper:
            def handler(route):
                response = route.fetch()
                route.fulfill(response=response, body=tamper(response.text()))
            page.route("**/aws-chooser.js", handler)
        page.goto(site_server.url(PAGE), wait_until="load")
        page.wait_for_selector("#aws-chooser[data-ready]")
        loaded[:] = [tamper]
        return page

    yield open_page
    context.close()


def differences(aws_page, chooser, cases) -> dict[str, tuple]:
    page = aws_page()
    found = {}
    for case in cases:
        fill(page, case)
        cli, web = cli_answer(chooser, case), page_answer(page)
        if cli != web:
            found[case_id(case)] = (cli, web)
    return found


def test_the_cases_cover_what_the_form_offers(chooser):
    assert len(CASES) >= 20
    assert {c[0] for c in CASES} == {"params", "memory"}
    assert {c[2] for c in CASES} == set(chooser.BYTES)
    assert {c[3] for c in CASES} == {"inference", "training"}
    assert {c[4] for c in CASES} == {1, 2, 4, 8}
    answers = [cli_answer(chooser, c) for c in CASES]
    assert sum("error" in a for a in answers) >= 3 and sum("rows" in a for a in answers) >= 15


def test_the_page_chooser_and_the_cli_agree_on_every_case(aws_page, chooser):
    assert not differences(aws_page, chooser, CASES), "case: (CLI, page)"


def test_the_comparison_fails_when_the_page_script_drifts(aws_page, chooser):
    """Adam's moments counted at 4 bytes instead of 8 in the page's script only."""
    def drift(source):
        assert "var ADAM_MOMENTS = 8;" in source
        return source.replace("var ADAM_MOMENTS = 8;", "var ADAM_MOMENTS = 4;")

    training = [c for c in CASES if c[0] == "params" and c[3] == "training"][:3]
    try:
        assert differences(lambda: aws_page(drift), chooser, training)
    finally:
        aws_page()  # the next test gets the real script


def test_the_chooser_makes_no_request_but_the_table(aws_page, site_server):
    page = aws_page()
    seen = []
    page.on("request", lambda r: seen.append(r.url))
    fill(page, CASES[0])
    page.wait_for_timeout(200)
    assert not seen, "the form should compute in the page"


# ---------------------------------------------------------------- output readable at 1280 px

OUTPUT_FIT = r"""
() => {
  const out = { blocks: 0, tables: 0, clipped: [], wrapped: [], under_button: [], form_table: null };
  const inside = (r, b) => r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top;
  for (const code of document.querySelectorAll(
      ".md-content :is(.language-text, .language-bash) pre > code")) {
    out.blocks++;
    const pre = code.parentElement, box = pre.getBoundingClientRect();
    const style = getComputedStyle(code);
    const right = box.left + pre.clientLeft + pre.clientWidth - parseFloat(style.paddingRight) + 0.5;
    const button = pre.parentElement.querySelector("button[data-md-type=copy]") ||
                   pre.querySelector("button[data-md-type=copy]");
    const buttonBox = button && button.getBoundingClientRect();
    const lines = [...code.querySelectorAll(":scope > span[id^='__span']")];
    const table = lines.some(l => /^\s*-+(\s+-+)+\s*$/.test(l.textContent));
    if (table) out.tables++;
    for (const line of lines) {
      const text = line.textContent.replace(/\n$/, "");
      if (!text.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(line);
      const rects = [...range.getClientRects()].filter(r => r.width > 0);
      const tops = new Set(rects.map(r => Math.round(r.top)));
      const row = table && /\S {2,}\S/.test(text);  // columns are set apart by 2+ spaces
      if (row && rects.some(r => r.right > right)) out.clipped.push(text.slice(0, 70));
      if (row && tops.size > 1) out.wrapped.push(text.slice(0, 70));
      if (buttonBox && rects.some(r => inside(r, buttonBox))) out.under_button.push(text.slice(0, 70));
    }
  }
  const form = document.getElementById("aws-chooser"), table = form && form.querySelector("table");
  if (table) {
    out.form_table = { width: Math.round(table.getBoundingClientRect().width),
                       room: Math.round(form.clientWidth) };
  }
  return out;
}
"""


@pytest.fixture(scope="module")
def wide_page(browser, site_server):
    """The AWS page at 1280 x 900 in a scheme, loaded once per scheme for this module (the test
    that alters it runs last)."""
    contexts, pages = [], {}

    def open_page(scheme):
        if scheme not in pages:
            contexts.append(new_context(browser, site_server, scheme))
            pages[scheme] = contexts[-1].new_page()
            pages[scheme].goto(site_server.url(PAGE), wait_until="load")
            pages[scheme].wait_for_selector("#aws-chooser[data-ready]")
        return pages[scheme]

    yield open_page
    for context in contexts:
        context.close()


def unreadable(found: dict) -> dict:
    bad = {k: found[k] for k in ("clipped", "wrapped", "under_button") if found[k]}
    if found["form_table"] and found["form_table"]["width"] > found["form_table"]["room"]:
        bad["form_table"] = found["form_table"]
    return bad


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_output_tables_are_whole_at_1280_px(wide_page, scheme):
    found = wide_page(scheme).evaluate(OUTPUT_FIT)
    assert found["tables"] >= 2 and found["form_table"], found  # the check checks something
    assert not unreadable(found)


def test_the_output_checks_fire_on_a_narrow_column_and_a_covered_line(wide_page):
    page = wide_page("light")
    page.evaluate("""() => {
        document.querySelectorAll('.md-content .language-text pre > code')
          .forEach(c => { c.style.whiteSpace = 'pre'; c.style.paddingRight = '0'; });
        document.querySelector('.md-content').style.maxWidth = '560px';
    }""")
    found = page.evaluate(OUTPUT_FIT)
    assert found["clipped"] and found["under_button"] and found["form_table"]["width"] > 0
    page.evaluate("""() => document.querySelectorAll('.md-content .language-text pre > code')
        .forEach(c => { c.style.whiteSpace = 'pre-wrap'; })""")
    assert page.evaluate(OUTPUT_FIT)["wrapped"]
