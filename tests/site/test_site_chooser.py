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
from typing import NamedTuple

import pytest

from conftest import ROOT
from tests.helpers import load_snippet
from sitecheck import browser, chromium_path, new_context, site_server  # noqa: F401

PAGE = "setup/gpus-on-aws/"
DATA = ROOT / "docs" / "data" / "aws-instances.csv"
TOP = 10


class Case(NamedTuple):
    """One question for the chooser; each case names only what differs from the defaults."""
    size: float  # billions of parameters, or GiB of memory (kind="memory")
    kind: str = "params"
    precision: str = "bf16"
    mode: str = "inference"
    gpus: int = 1
    hours: float = 1
    nvidia: bool = True  # NVIDIA only
    overhead: float = 1.2
    reserve: float = 1  # GiB


CASES = [
    Case(7, mode="training", gpus=8, hours=10),  # the page's worked example
    Case(7, mode="training", gpus=8, hours=10, nvidia=False),
    Case(8, hours=720),
    Case(8, hours=720, nvidia=False),
    Case(70, gpus=8, hours=24),
    Case(70, precision="fp8", gpus=4, hours=100),
    Case(70, precision="int4", hours=5, nvidia=False),
    Case(13, precision="fp16", gpus=2, hours=0.5, overhead=1.1, reserve=2),
    Case(1.5, precision="fp32", mode="training", hours=3),
    Case(3, precision="fp8", mode="training", gpus=4, hours=48, overhead=1.3, reserve=1.5),
    Case(405, mode="training", gpus=8, nvidia=False),  # fits nowhere: closest named
    Case(7, precision="int8", mode="training"),  # refused: int8 training
    Case(0.35, precision="int8", hours=8760, nvidia=False, overhead=1.0, reserve=0),
    Case(2, precision="int4"),  # fractional GPUs (G6f) fit
    Case(180, precision="fp8", gpus=8, hours=12, reserve=4),
    Case(40, kind="memory", hours=100),
    Case(20, kind="memory", precision="fp32", hours=100, nvidia=False),
    Case(5, kind="memory", precision="int8", hours=2, nvidia=False),
    Case(600, kind="memory", mode="training", gpus=8, hours=36),
    Case(150, kind="memory", precision="fp8", mode="training", gpus=2, hours=10),
    Case(3000, kind="memory", mode="training", gpus=8),  # fits nowhere
    Case(11, kind="memory", precision="fp16", hours=730, reserve=0.5),
    Case(70, kind="memory", mode="training", gpus=4, hours=1000, nvidia=False, reserve=3),
]


def case_id(c: Case) -> str:
    unit = "B" if c.kind == "params" else "GiB"
    return (f"{c.size}{unit}-{c.precision}-{c.mode}-{c.gpus}gpu-{c.hours}h"
            f"{'-nvidia' if c.nvidia else ''}-x{c.overhead}-r{c.reserve}")


def cli_args(c: Case) -> list[str]:
    args = (["--params", repr(c.size * 1e9)] if c.kind == "params" else ["--memory-gib", str(c.size)])
    args += ["--precision", c.precision, "--gpus", str(c.gpus), "--hours", str(c.hours),
             "--overhead", str(c.overhead), "--reserve-gib", str(c.reserve),
             "--data", str(DATA), "--top", "1000", "--json"]
    return args + (["--training"] if c.mode == "training" else []) + (
        ["--nvidia-only"] if c.nvidia else [])


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


def fill(page, c: Case) -> None:
    form = page.locator("#aws-chooser")
    for name in ("kind", "precision", "mode", "gpus"):
        form.locator(f"[name={name}]").select_option(str(getattr(c, name)))
    for name in ("size", "hours", "overhead", "reserve"):
        form.locator(f"[name={name}]").fill(str(getattr(c, name)))
    form.locator("[name=nvidia]").set_checked(c.nvidia)
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
    assert {c.kind for c in CASES} == {"params", "memory"}
    assert {c.precision for c in CASES} == set(chooser.BYTES)
    assert {c.mode for c in CASES} == {"inference", "training"}
    assert {c.gpus for c in CASES} == {1, 2, 4, 8}
    answers = [cli_answer(chooser, c) for c in CASES]
    assert sum("error" in a for a in answers) >= 3 and sum("rows" in a for a in answers) >= 15


def test_the_page_chooser_and_the_cli_agree_on_every_case(aws_page, chooser):
    assert not differences(aws_page, chooser, CASES), "case: (CLI, page)"


def test_the_comparison_fails_when_the_page_script_drifts(aws_page, chooser):
    """Adam's moments counted at 4 bytes instead of 8 in the page's script only."""
    def drift(source):
        assert "var ADAM_MOMENTS = 8;" in source
        return source.replace("var ADAM_MOMENTS = 8;", "var ADAM_MOMENTS = 4;")

    training = [c for c in CASES if c.kind == "params" and c.mode == "training"][:3]
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
