"""The one table renderer (hooks/renderers/table.py): columns, rows and order as a page's
directive names them, the formats it adds, and the sources it demands of a fact table."""

from __future__ import annotations

import pytest

import renderers

CSV = """key,item,value,unit,link,speed,unconfirmed,source,as_of
b,second,2e9,B,NVLink,900,speed,https://www.example.org/b/page.html,2026-11
a,first,65536,count,PCIe only,,,https://github.com/owner/repo/blob/x.md,2026-11-29
"""


@pytest.fixture
def docs(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.csv").write_text(CSV)
    return tmp_path


def test_columns_rows_and_order_come_from_the_directive(docs):
    out = renderers.get("table")(docs, path="data/x.csv", where="key=a,b", align="lrl", flag="*",
                                 cols="what={item};value={quantity};link={link}{speed:, ?}")
    assert out.splitlines() == ["| what | value | link |", "|:--|--:|:--|",
                                "| first | 65,536 | PCIe only |", "| second | 2 GB | NVLink, 900* |"]
    out = renderers.get("table")(docs, path="data/x.csv", sort="-key", cols="k={key};s={speed}")
    assert out.splitlines()[2:] == ["| b | 900 |", "| a | – |"]  # an empty cell shows –


def test_footnotes_carry_short_source_links(docs):
    out = renderers.get("table")(docs, path="data/x.csv", mark="n", cols="item={item}{mark}",
                                 notes="{sources}, {as_of}")
    assert "| second[^n-1] |" in out
    assert "[^n-2]: [owner/repo](https://github.com/owner/repo/blob/x.md), 2026-11-29" in out
    assert "[^n-1]: [example.org/page](https://www.example.org/b/page.html), 2026-11" in out


def test_a_fact_table_needs_a_source_and_a_date_on_every_row(docs):
    (docs / "data" / "x.csv").write_text(CSV.replace("2026-11-29", "last year"))
    with pytest.raises(ValueError, match="row 2: no source, or an as-of date"):
        renderers.get("table")(docs, path="data/x.csv", cols="k={key}")
    (docs / "data" / "x.csv").write_text(CSV)
    with pytest.raises(ValueError, match="no row has key=zz"):  # a misspelt row is not dropped
        renderers.get("table")(docs, path="data/x.csv", where="key=zz", cols="k={key}")


def test_formats_and_one_cell():
    cells = renderers.table.Cells()
    assert cells.format("{a:time} {b:time} {c:ms} {d:pct} {e:sig} {f:ratio}", a=2.5, b=3.2e-4,
                        c=0.0123, d=0.9187, e=1.23e12, f=412.6) == \
        "2.5 s 320 µs 12.3 91.9&nbsp;% 1.23e12 413"
    assert cells.format("{x:≥ ?}|{y:≥ ?}", x="5", y="N/A") == "≥ 5|"


def test_a_field_no_row_has_raises_and_one_another_row_has_is_empty():
    rows = [{"z": {}}, {"z": {"k": 1}}]
    assert renderers.table.Cells(rows).format("{z[k]}", **rows[0]) == ""
    with pytest.raises(KeyError, match=r"no field \{z\[kk\]\}"):
        renderers.table.Cells(rows).format("{z[kk]}", **rows[1])


def test_joins_divisions_and_one_row_files(docs):
    (docs / "data" / "y.json").write_text('{"rows": [{"key": "a", "n": 4}, {"key": "b", "n": 8}], "k": 1024}')
    out = renderers.get("table")(docs, path="data/x.csv", where="key=a,b", names="a=one;b=two",
                                 join="y=data/y.json key={key};other=key=a",
                                 cols="x={what};x={y[n]:/{other[value]}:.1e};n={y[n]:pow2}")
    assert out.splitlines()[2:] == ["| one | 6.1e-05 | 2<sup>2</sup> |", "| two | 1.2e-04 | 2<sup>3</sup> |"]
    assert renderers.get_value("cell")(docs, "data/y.json", "{k:/4:,.0f} {k:pow2}", key=".") == "256 2<sup>10</sup>"
    assert renderers.get_value("cell")(docs, "data/y.json", "{n:/2:change}", where="key=b") == "+300.0%"


def test_a_long_name_breaks_only_where_it_is_told_and_renders_as_written():
    """renderers.long_name: a kernel or metric name in a cell may break after `after`'s
    characters only, and Markdown reads no emphasis into its underscores."""
    import markdown

    name = "_ZN17cutlass__5x_cudnn6Kernel<float, 128>"
    table = renderers.markdown_table(["kernel"], [[renderers.long_name(name, "_")]])
    html = markdown.markdown(table, extensions=["tables"])
    assert "<em>" not in html
    assert html.count("<wbr>") == 2 and "cutlass&#95;&#95;<wbr>5x&#95;<wbr>cudnn" in html  # not after "_ZN"
    text = html.split("<code data-wrap>")[1].split("</code>")[0].replace("<wbr>", "")
    assert text.replace("&#95;", "_").replace("&lt;", "<").replace("&gt;", ">") == name
    assert "<wbr>" not in renderers.long_name("a_b", ".")


def test_code_of_several_words_in_a_table_wraps_at_its_spaces_only():
    """hooks/table_code.py: each word of a table cell's code in a span of its own (extra.css keeps
    it whole), code of one word and code outside tables untouched."""
    import importlib.util

    # a MkDocs hook is a file mkdocs.yml names, not a package the editable install exposes
    from helpers import ROOT

    spec = importlib.util.spec_from_file_location("table_code", ROOT / "hooks" / "table_code.py")
    table_code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table_code)

    page = ("<p><code>a b</code></p><table><tr><td><code>sudo hwinfo --gfxcard</code> "
            "<code>opencl-event</code></td></tr></table>")
    assert table_code.mark(page) == (
        "<p><code>a b</code></p><table><tr><td><code data-wrap><span>sudo</span> <span>hwinfo"
        "</span> <span>--gfxcard</span></code> <code>opencl-event</code></td></tr></table>")
