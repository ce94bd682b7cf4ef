"""Placeholders are short and loud (renderers/page.py): a page binds its data files once (and
may name its topic, for bare figure names), and every unknown name, argument, field, row or file fails the render with one line naming the page
and the placeholder. `python tests/test_shortcodes.py` prints each page's placeholder share."""

from __future__ import annotations

import re
import sys

import pytest

from pathlib import Path
from renderers.page import DIRECTIVE, RenderError, VALUE, render_page

DOCS = Path(__file__).resolve().parents[1] / "docs"
LIMIT = 0.08  # of a page's characters
PROSE = re.compile(r'\b(?:alt|caption)="[^"]*"')  # a figure's words for the reader, not markup


def placeholder_share(source: str) -> float:
    """The share of a page's characters that is placeholder markup: every `{{ ... }}` and
    `<!-- render ... -->`, less the alt and caption text they carry."""
    found = [m[0] for m in VALUE.finditer(source)]
    found += [line.strip() for line in source.splitlines() if DIRECTIVE.match(line.strip())]
    return sum(len(PROSE.sub("", p)) for p in found) / max(len(source), 1)


def shares() -> dict[str, float]:
    return {p.relative_to(DOCS).as_posix(): placeholder_share(p.read_text())
            for p in sorted(DOCS.rglob("*.md"))}


def test_placeholders_are_at_most_8_percent_of_every_page():
    over = {p: f"{s:.1%}" for p, s in shares().items() if s > LIMIT}
    assert not over, over


def test_the_share_counts_both_forms():
    page = "Words.\n{{ cell x }}\n<!-- render table path=a.csv -->\n"
    assert placeholder_share(page) == pytest.approx((12 + 32) / len(page))


FRONT = "---\ndata: {m: matmul-h100.json, tune: matmul-tune-h100.json}\n---\n"


def render(body: str, front: str = FRONT) -> str:
    return render_page(front + body, DOCS, "planted.md")


def test_a_page_topic_gives_bare_names_and_leaves_the_others_alone():
    topical = "---\ndata: {m: matmul-h100.json, tune: matmul-tune-h100.json}\ntopic: matmul\n---\n"
    body = "{{ share cuda_c/warptile }} {{ cell where=\"variant=cuda_c/naive\" show=\"{s}\" }}"
    assert render(body, topical) == render(body.replace("{{ share", "{{ matmul.share"))


def test_a_bound_page_renders_what_the_long_form_does():
    short = render("{{ matmul.share cuda_c/warptile }} {{ matmul.tflops cuda_c/warptile fp32 1024 path=tune }}")
    long = render("{{ cell path=data/matmul-h100.json where=\"variant=cuda_c/warptile case=4096 phase=kernel\" "
                  "show=\"{label}\" }}", "")
    assert "%" in short and "CUDA C" in long


@pytest.mark.parametrize("body, says", [
    ("{{ matmul.shar cuda_c/warptile }}", "no value named 'matmul.shar'"),
    ("{{ matmul.share cuda_c/warptile sizes=4096 }}", "unexpected keyword argument 'sizes'"),
    ("{{ matmul.share cuda_c/warptyle }}", "no cuda_c/warptyle"),
    ("{{ matmul.share cuda_c/warptile path=tuning }}", "binds no data file of that name"),
    ('{{ cell where="variant=cuda_c/warptile phase=kernel" show="{nn:pow2}" }}', "no field {nn}"),
    ('{{ cell where="variant=cuda_c/warptyle" show="{s}" }}', "no row has variant=cuda_c/warptyle"),
    ('<!-- render table where="variant=cuda_c/naive" cols="x={tflopz}" -->', "no field {tflopz}"),
    ('<!-- render table where="variant=cuda_c/naive" cols="x={s:pctt}" -->', "Invalid format specifier"),
    ("<!-- render no_such_table -->", "no renderer named 'no_such_table'"),
    ("{{ matmul.share cuda_c/warptile", "not a placeholder"),
    ("{{ share cuda_c/warptile }}", "no value named 'share'"),  # no topic: no bare name
    ("<!-- render matmul_build build=data/matmul-build-h100.jsn -->", "data file data/matmul-build-h100.jsn not found"),
    ('{{ cell where="variant=cuda_c/naive" show="{s}" }}', None),  # the control: it renders
])
def test_every_mistake_raises_one_line_naming_the_page_and_the_placeholder(body, says):
    if says is None:
        assert render(body).strip()
        return
    with pytest.raises(RenderError) as caught:
        render(f"Some words.\n\n{body}\n")
    message = str(caught.value)
    assert message.startswith("planted.md: ") and "\n" not in message
    assert says in message and body.split()[1] in message


@pytest.mark.parametrize("front, body, says", [
    ("topic: matmul", "{{ shar cuda_c/warptile }}", "no value named 'shar'"),
    ("topic: matmull", "{{ matmul.share cuda_c/warptile }}", "topic: 'matmull' names no figures"),
    ("data: keras-climb-h100.json\ntopic: keras", "{{ busy 12 }}", "no climb step 12"),
    ("data: keras-climb-h100.json\ntopic: keras", "{{ busy climb-defualt }}", "no end-to-end row 'climb-defualt'"),
])
def test_a_topic_or_a_step_number_that_names_nothing_raises(front, body, says):
    with pytest.raises(RenderError, match=re.escape(says)):
        render(f"Words.\n{body}\n", f"---\n{front}\n---\n")


def test_a_climb_step_number_is_that_steps_row():
    front = "---\ndata: keras-climb-h100.json\ntopic: keras\n---\n"
    assert render("{{ over 11 1 }}", front) == render("{{ over climb-batch4096 climb-default }}", front)


def test_a_misspelt_field_fails_the_strict_build(tmp_path):
    """The hook turns a RenderError into a PluginError: mkdocs build --strict stops on it."""
    import importlib.util

    from mkdocs.exceptions import PluginError

    spec = importlib.util.spec_from_file_location("render_data", DOCS.parent / "hooks/render_data.py")
    render_data = importlib.util.module_from_spec(spec)  # the hook, as mkdocs.yml loads it
    spec.loader.exec_module(render_data)

    class Page:
        meta = {"data": "matmul-h100.json"}
        class file:
            src_uri = "planted.md"

    with pytest.raises(PluginError, match=r"planted\.md: .*no field \{nn\}"):
        render_data.on_page_markdown('{{ cell where="variant=cuda_c/naive" show="{nn}" }}\n', Page,
                                     {"docs_dir": str(DOCS)}, None)


if __name__ == "__main__":
    for page, share in shares().items():
        if share:
            print(f"{share:6.1%}  {page}")
    sys.exit(0)
