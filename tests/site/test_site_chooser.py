"""The GPUs-on-AWS page in headless Chromium: its in-browser chooser gives the same answers as
`snippets/aws/choose_instance.py`, its answer is readable on a phone, and its command output is
readable at 1280 px.

One table of cases (CASES) is run twice: through the CLI's own `main` (with `--json`) and by
filling in the page's form. For every case both must name the same instances in the same order,
with the same split, GPUs used and paid for, memory per GPU, $/hour, hours, job cost, notes and
unpriced instances, or both must refuse (with the same message where the refusal is the
arithmetic's, not a range check). The page is loaded once and every case is filled in and read
back inside one `page.evaluate` (about a second for all of them). The same answers, compared
with a CLI whose Adam moments are counted at 4 bytes instead of 8, must differ: the comparison
sees a drift in one constant.

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
SPECS = ROOT / "docs" / "data" / "accelerator-specs.csv"
TOP = 10


class Case(NamedTuple):
    """One question for the chooser; each case names only what differs from the defaults."""
    model: str = "params"  # a preset, "params" (size in billions) or "memory" (size in GiB)
    size: float = 7
    precision: str = "bf16"
    mode: str = "inference"  # inference, full, lora, qlora
    context: int = 0
    batch: int = 1
    kv: str = "bf16"
    rank: int = 16
    fraction: float = 0
    gpus: int | None = None  # None: the chooser picks the split
    hours: float = 1
    on_reference: bool = True  # --hours (on one H100 SXM) or --instance-hours
    scaling: float = 0.9
    nvidia: bool = True  # NVIDIA only
    retired: bool = False
    overhead: float = 1.2
    reserve: float = 1  # GiB


CASES = [
    Case(mode="full", hours=10),  # the page's 7B example
    Case(mode="full", gpus=8, hours=10, nvidia=False),
    Case("llama-3.1-70b", context=8192, batch=8, hours=720),  # the page's worked example
    Case("llama-3.1-70b", context=8192, batch=8, hours=720, on_reference=False),
    Case("llama-3.1-70b", context=8192, batch=8, hours=720, on_reference=False, gpus=1),
    Case("llama-3.1-8b", hours=720, on_reference=False),
    Case("llama-3.1-8b", context=131072, hours=720, on_reference=False),  # KV > weights
    Case("llama-3.1-8b", context=131072, kv="fp8", batch=4, hours=50, nvidia=False),
    Case("mistral-7b-v0.3", precision="fp8", context=32768, batch=2, kv="fp16", hours=100),
    Case("qwen2.5-7b", mode="lora", rank=64, hours=12, scaling=1),
    Case("qwen2.5-72b", mode="qlora", hours=48, scaling=0.8, nvidia=False),
    Case("llama-3.1-70b", mode="full", precision="fp8", hours=1000),
    Case("llama-3.1-8b", mode="qlora", precision="fp32", gpus=2, hours=3, on_reference=False),
    Case(size=13, mode="lora", fraction=0.004, precision="fp16", gpus=4, hours=0.5,
         overhead=1.1, reserve=2, nvidia=False),
    Case(size=1.5, precision="fp32", mode="full", hours=3, retired=True),
    Case(size=70, precision="int4", hours=5, nvidia=False, on_reference=False),
    Case(size=0.35, precision="int8", hours=8760, nvidia=False, overhead=1.0, reserve=0),
    Case(size=2, precision="int4", on_reference=False),  # fractional GPUs (G6f) fit
    Case("memory", 40, hours=100),
    Case("memory", 20, precision="fp32", mode="full", hours=100, nvidia=False, retired=True,
         on_reference=False),
    Case("memory", 150, precision="fp8", mode="full", gpus=2, hours=10),
    Case("memory", 11, precision="fp16", hours=730, reserve=0.5, on_reference=False),
    Case("memory", 21, hours=1, gpus=1, on_reference=False),  # under 10 % headroom on an L4
    Case("memory", 2000, hours=1),  # only a B300 holds it, and it has no bandwidth figure
    Case(size=405, mode="full", nvidia=False),  # fits nowhere: closest named
    Case("memory", 3000, mode="full", gpus=8),  # fits nowhere
    Case(precision="int8", mode="full"),  # refused: int8 training
    Case(mode="lora"),  # refused: LoRA by size needs the adapters' share
    Case("llama-3.1-8b", precision="int4", mode="qlora"),  # refused: QLoRA stores NF4
    Case("memory", 10, mode="lora"),  # refused: a total memory has no adapters
    Case(hours=1e12),  # refused: hours beyond any job
    Case(size=7, hours=5, scaling=0.3),  # refused: scaling below its range
]


def case_id(c: Case) -> str:
    return "-".join(f"{k}={v}" for k, v in c._asdict().items() if v != Case._field_defaults[k])


def cli_args(c: Case) -> list[str]:
    if c.model == "params":
        args = ["--params", repr(c.size * 1e9)]
    elif c.model == "memory":
        args = ["--memory-gib", str(c.size)]
    else:
        args = ["--model", c.model]
    args += ["--precision", c.precision, "--overhead", str(c.overhead), "--reserve-gib",
             str(c.reserve), "--data", str(DATA), "--specs", str(SPECS), "--top", "1000", "--json",
             "--hours" if c.on_reference else "--instance-hours", str(c.hours)]
    if c.on_reference:
        args += ["--scaling", str(c.scaling)]
    if c.mode != "inference":
        args.append({"full": "--training", "lora": "--lora", "qlora": "--qlora"}[c.mode])
    if c.mode in ("lora", "qlora") and c.model not in ("params", "memory"):
        args += ["--lora-rank", str(c.rank)]
    if c.fraction:
        args += ["--trainable-fraction", str(c.fraction)]
    if c.context:
        args += ["--context", str(c.context), "--batch", str(c.batch), "--kv-precision", c.kv]
    if c.gpus:
        args += ["--gpus", str(c.gpus)]
    return args + (["--nvidia-only"] if c.nvidia else []) + (
        ["--include-retired"] if c.retired else [])


@pytest.fixture(scope="module")
def chooser():
    return load_snippet("aws/choose_instance.py")


def cli_answer(chooser, case) -> dict:
    """{'error': message or None (a range check)} or {'memory', 'count', 'rows', ...}."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = chooser.main(cli_args(case))
        except SystemExit as exc:
            status = exc.code
    if status != 0:
        assert status == 2, err.getvalue()
        message = err.getvalue().strip().removeprefix("error: ")
        return {"error": None if message.startswith("argument ") else message}
    answer = json.loads(out.getvalue())
    rows = [[o["instance_type"], f"{o['total_usd']:,.2f}", f"{o['usd_per_hour']:.4f}",
             f"{o['hours']:,.2f}", f"{o['gpus_used']:g}/{o['gpus_paid']:g} {o['accelerator']}",
             f"{o['gib_per_gpu_needed']:.2f} of {o['usable_gib_per_gpu']:.2f}",
             "; ".join([o["parallelism"], *o["warnings"]])] for o in answer["options"][:TOP]]
    reasons: dict[str, list[str]] = {}
    for r in answer["not_priced"]:
        reasons.setdefault(r["reason"], []).append(r["instance_type"])
    return {"memory": f"{answer['memory_gib']:.2f}", "count": len(answer["options"]),
            "rows": rows, "warnings": [f"Warning: {w}" for w in answer["warnings"]],
            "unpriced": [f"Not priced: {', '.join(v)}: {k}." for k, v in reasons.items()]}


# Fills the form with each case (the form recomputes on every input event) and reads the answer.
ANSWERS = """
cases => {
  const form = document.getElementById("aws-chooser"), el = form.elements;
  const result = document.getElementById("aws-chooser-result");
  const text = sel => [...result.querySelectorAll(sel)].map(p => p.textContent.trim());
  return cases.map(c => {
    el.model.value = c.model; el.mode.value = c.mode;
    form.dispatchEvent(new Event("change", { bubbles: true }));  // what applies to the job
    el.size.value = String(c.size); el.precision.value = c.precision;
    el.context.value = c.context ? String(c.context) : ""; el.batch.value = String(c.batch);
    el.kv.value = c.kv; el.rank.value = String(c.rank);
    el.fraction.value = c.fraction ? String(c.fraction) : "";
    el.gpus.value = c.gpus ? String(c.gpus) : "auto"; el.hours.value = String(c.hours);
    el["hours-on"].value = c.on_reference ? "reference" : "instance";
    el.scaling.value = String(c.scaling); el.overhead.value = String(c.overhead);
    el.reserve.value = String(c.reserve); el.nvidia.checked = c.nvidia; el.retired.checked = c.retired;
    form.dispatchEvent(new Event("input", { bubbles: true }));
    const summary = result.querySelector(".aws-chooser-summary");
    return { summary: summary ? summary.textContent : result.textContent,
             error: !!(summary && summary.hasAttribute("data-error")),
             rows: [...result.querySelectorAll("tbody tr")].map(
               tr => [...tr.cells].map(td => td.textContent.trim())),
             warnings: text(".aws-chooser-warning"), unpriced: text(".aws-chooser-unpriced") };
  });
}
"""


def page_answer(got: dict, cli: dict) -> dict:
    if got["error"]:
        return {"error": got["summary"] if cli.get("error") else None}
    memory = re.search(r"needs ([0-9.]+) GiB", got["summary"])
    count = re.search(r"(\d+) instances? fits?", got["summary"])
    return {"memory": memory and memory.group(1), "count": count and int(count.group(1)),
            "rows": got["rows"], "warnings": got["warnings"], "unpriced": got["unpriced"]}


@pytest.fixture(scope="module")
def aws_page(browser, site_server):
    """The AWS page at 1280 px with its chooser ready, loaded once for this module's chooser
    tests; `answers(cases)` fills the form with each case and returns what the page showed."""
    context = new_context(browser, site_server, "light")
    page = context.new_page()
    page.goto(site_server.url(PAGE), wait_until="load")
    page.wait_for_selector("#aws-chooser[data-ready]")
    page.answers = lambda cases: page.evaluate(ANSWERS, [c._asdict() for c in cases])
    yield page
    context.close()


@pytest.fixture(scope="module")
def page_answers(aws_page):
    return aws_page.answers(CASES)


def differences(chooser, answers) -> dict[str, tuple]:
    found = {}
    for case, got in zip(CASES, answers):
        cli = cli_answer(chooser, case)
        web = page_answer(got, cli)
        if cli != web:
            found[case_id(case)] = (cli, web)
    return found


def test_the_cases_cover_what_the_form_offers(chooser):
    assert len(CASES) >= 20
    assert {c.model for c in CASES} == {"params", "memory", *chooser.MODELS}
    assert {c.precision for c in CASES} == set(chooser.BYTES)
    assert {c.mode for c in CASES} == {"inference", "full", "lora", "qlora"}
    assert {c.gpus for c in CASES} == {None, 1, 2, 4, 8}
    assert {c.kv for c in CASES} >= {"bf16", "fp8", "fp16"} and {c.on_reference for c in CASES} == {True, False}
    answers = [cli_answer(chooser, c) for c in CASES]
    assert sum("error" in a for a in answers) >= 6 and sum("rows" in a for a in answers) >= 20
    assert any(a.get("unpriced") for a in answers) and any(a.get("warnings") for a in answers)
    notes = " ".join(r[-1] for a in answers for r in a.get("rows", []))
    for word in ("idle GPU", "headroom", "replicas", "one GPU each", "data parallel over",
                 "data-parallel replicas", "tensor parallel", "FSDP", "no NVLink"):
        assert word in notes, word
    retired = [c for c in CASES if c.retired]  # the box changes the answer
    assert retired and all(cli_answer(chooser, c) != cli_answer(chooser, c._replace(retired=False))
                           for c in retired)


def test_the_page_chooser_and_the_cli_agree_on_every_case(chooser, page_answers):
    assert not differences(chooser, page_answers), "case: (CLI, page)"


def test_the_comparison_fails_when_one_side_drifts(chooser, page_answers, monkeypatch):
    """Adam's moments counted at 4 bytes instead of 8 on the CLI's side only."""
    monkeypatch.setattr(chooser, "ADAM_MOMENTS", 4)
    drifted = differences(chooser, page_answers)
    assert drifted and all("mode=full" in k for k in drifted)


def test_the_chooser_makes_no_request_but_the_tables(aws_page):
    seen = []
    aws_page.on("request", lambda r: seen.append(r.url))
    aws_page.answers(CASES[:3])
    aws_page.wait_for_timeout(200)
    assert not seen, "the form should compute in the page"


# ---------------------------------------------------------------- the answer on a phone

PHONE_ANSWER = """
() => {
  const table = document.querySelector("#aws-chooser table");
  const wrap = table.closest(".md-typeset__scrollwrap"), box = wrap.getBoundingClientRect();
  const head = [...table.tHead.rows[0].cells].map(c => c.textContent);
  const col = name => head.indexOf(name);
  const hint = wrap.previousElementSibling;
  return {
    head, rows: table.tBodies[0].rows.length,
    hidden: [...table.tBodies[0].rows].flatMap(r => [col("job $"), col("$/hour")].map(k => r.cells[k])
      .filter(td => td.getBoundingClientRect().right > box.right + 0.5).map(td => td.textContent)),
    scrolls: wrap.scrollWidth > wrap.clientWidth + 1,
    cue: !!(hint && hint.classList.contains("scroll-hint")),
    page_scrolls: document.scrollingElement.scrollWidth > window.innerWidth + 1,
  };
}
"""


def test_the_answer_on_a_phone_shows_each_price_and_job_cost(browser, site_server):
    """At 390 px the answer's job cost and $/hour are in view for every option without sideways
    scrolling; the rest of the table scrolls, with the site's cue; the page itself does not."""
    context = new_context(browser, site_server, "dark", viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(site_server.url(PAGE), wait_until="load")
        page.wait_for_selector("#aws-chooser[data-ready]")
        page.evaluate(ANSWERS, [CASES[2]._asdict()])
        page.wait_for_timeout(100)  # accessibility.js marks the scrolling table on a mutation
        found = page.evaluate(PHONE_ANSWER)
        assert found["rows"] and found["head"][1:3] == ["job $", "$/hour"], found
        assert not found["hidden"] and not found["page_scrolls"], found
        assert found["cue"] == found["scrolls"], found
    finally:
        context.close()


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
