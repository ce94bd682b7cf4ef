"""snippets/aws/refresh_prices.py against a small offer file in the AWS Price List format."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT, SNIPPETS, load_snippet, run_snippet, FULL, run_to

REFRESH = "aws/refresh_prices.py"
FIXTURE = ROOT / "tests" / "fixtures" / "aws" / "offer-AmazonEC2-us-east-1-sample.json"
DATA = ROOT / "docs" / "data" / "aws-instances.csv"


@pytest.fixture(scope="module")
def offer():
    return json.loads(FIXTURE.read_text())


def test_fixture_is_in_the_offer_file_format(offer):
    assert {"formatVersion", "offerCode", "version", "publicationDate", "products", "terms"} <= set(offer)
    for sku, term in offer["terms"]["OnDemand"].items():
        assert sku in offer["products"]
        for t in term.values():
            assert t["sku"] == sku and t["offerTermCode"] in {"JRTCKXETXF"}
            for dim in t["priceDimensions"].values():
                assert float(dim["pricePerUnit"]["USD"]) >= 0


def test_filters_keep_one_linux_shared_on_demand_price_per_type(offer):
    prices = load_snippet(REFRESH).on_demand_prices(offer, "us-east-1")
    # Windows, Dedicated, SQL, unused-reservation and us-west-2 variants of p5 are all dropped;
    # the bare-metal g4dn is kept; storage and Reserved terms are ignored.
    assert prices["p5.48xlarge"] == 55.04
    assert prices["g4dn.metal"] == 7.824
    assert set(prices) == {"p5.48xlarge", "g4dn.xlarge", "g4dn.metal", "g6e.xlarge",
                           "inf2.xlarge", "dl1.24xlarge", "m7i.large"}


def test_conflicting_prices_are_an_error(offer):
    mod = load_snippet(REFRESH)
    bad = json.loads(json.dumps(offer))
    for sku, product in bad["products"].items():
        if product["attributes"].get("operatingSystem") == "Windows":
            product["attributes"]["operatingSystem"] = "Linux"
    with pytest.raises(ValueError, match="two different"):
        mod.on_demand_prices(bad, "us-east-1")


def test_refresh_updates_prices_only(tmp_path):
    out = tmp_path / "new.csv"
    proc = run_snippet(REFRESH, "--offer", FIXTURE, "--data", DATA, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "g6e.xlarge" in proc.stdout and "-10.0%" in proc.stdout
    assert "dl1.24xlarge" in proc.stdout  # reported, not added
    old = {r["instance_type"]: r for r in csv.DictReader(open(DATA))}
    new = {r["instance_type"]: r for r in csv.DictReader(open(out))}
    assert old.keys() == new.keys()
    g = new["g6e.xlarge"]
    assert g["on_demand_usd_per_hour"] == "1.6749" and g["price_as_of"] == "2026-07-20"
    assert "Price List offer file AmazonEC2 us-east-1 version 20260720000000" in g["price_source"]
    assert g["spec_source"] == old["g6e.xlarge"]["spec_source"]
    assert new["g5.xlarge"] == old["g5.xlarge"]  # not in the offer file: untouched
    # The refreshed file is still valid for the chooser.
    assert len(load_snippet("aws/choose_instance.py").load_instances(out)) == len(old)


def test_dry_run_writes_nothing(tmp_path):
    copy = tmp_path / "data.csv"
    copy.write_text(DATA.read_text())
    proc = run_snippet(REFRESH, "--offer", FIXTURE, "--data", copy, "--dry-run")
    assert proc.returncode == 0 and copy.read_text() == DATA.read_text()


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read the offer file"),
    ("not json", "cannot read the offer file"),
    ('{"products": {}}', "not an AWS Price List offer file"),
    ('{"products": {}, "terms": {"OnDemand": {}}}', "no Linux on-demand instance prices"),
    ("[1, 2]", "not a JSON object"),
])
def test_bad_offer_files_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "offer.json"
    if content is not None:
        path.write_text(content)
    proc = run_snippet(REFRESH, "--offer", path, "--data", DATA, "--dry-run")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert message in proc.stderr


def g6e_dimension(offer):
    for sku, product in offer["products"].items():
        a = product["attributes"]
        if (a.get("instanceType"), a.get("operatingSystem"), a.get("tenancy"),
                a.get("capacitystatus"), a.get("preInstalledSw")) == ("g6e.xlarge", "Linux",
                                                                        "Shared", "Used", "NA"):
            term = next(iter(offer["terms"]["OnDemand"][sku].values()))
            return next(iter(term["priceDimensions"].values()))
    raise AssertionError("fixture lost its g6e.xlarge row")


def spoiled(offer, how):
    bad = json.loads(json.dumps(offer))
    if how == "date":
        bad["publicationDate"] = "last Tuesday"
    elif how == "no-date":
        del bad["publicationDate"]
    elif how == "tiny":
        g6e_dimension(bad)["pricePerUnit"]["USD"] = "0.00001"
    elif how in ("inf", "nan", "-1"):
        g6e_dimension(bad)["pricePerUnit"]["USD"] = {"inf": "Infinity", "nan": "NaN"}.get(how, how)
    return bad


@pytest.mark.parametrize(("how", "message"), [
    ("date", "is not a date"), ("no-date", "is not a date"),
    ("tiny", "refusing to write"),
    ("inf", "not a finite, non-negative number"), ("nan", "not a finite, non-negative number"),
    ("-1", "not a finite, non-negative number"),
])
def test_bad_offers_write_nothing(tmp_path, offer, how, message):
    data = tmp_path / "data.csv"
    data.write_text(DATA.read_text())
    path = tmp_path / "offer.json"
    path.write_text(json.dumps(spoiled(offer, how)))
    proc = run_snippet(REFRESH, "--offer", path, "--data", data)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert data.read_text() == DATA.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "offer.json"]


def damaged_table(tmp_path, how):
    path = tmp_path / "data.csv"
    text = DATA.read_text()
    header, first, rest = text.split("\n", 2)
    cells = first.split(",")
    if how == "binary":
        path.write_bytes(b"\x00\xff\xfe garbage \x9c" * 40)
    elif how == "empty":
        path.write_text("")
    elif how == "header-only":
        path.write_text(header + "\n")
    elif how == "other-schema":
        path.write_text("name,value\na,1\n")
    elif how in ("inf", "zero", "date"):
        if how == "date":
            cells[14] = "2026-02-30"
        else:
            cells[7] = "inf" if how == "inf" else "0"
        path.write_text("\n".join([header, ",".join(cells), rest]))
    return path


@pytest.mark.parametrize(("how", "message"), [
    ("binary", "error: "), ("empty", "missing columns"), ("header-only", "no rows"),
    ("other-schema", "missing columns"), ("inf", "finite and positive"),
    ("zero", "finite and positive"), ("date", "day is out of range"),
])
def test_damaged_tables_are_one_line_errors(tmp_path, how, message):
    path = damaged_table(tmp_path, how)
    before = path.read_bytes()
    proc = run_snippet(REFRESH, "--offer", FIXTURE, "--data", path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and path.read_bytes() == before


@pytest.mark.parametrize("where", ["missing-folder", "a-folder", "read-only"])
def test_unwritable_outputs_fail_before_reading_the_offer(tmp_path, where):
    target = {"missing-folder": tmp_path / "nope" / "x.csv", "a-folder": tmp_path,
              "read-only": tmp_path / "ro" / "x.csv"}[where]
    if where == "read-only":
        target.parent.mkdir()
        target.parent.chmod(0o555)
        if os.access(target.parent, os.W_OK):
            pytest.skip("running as root: a read-only folder is still writable")
    # The offer file does not exist: the output check must come first.
    proc = run_snippet(REFRESH, "--offer", tmp_path / "no-offer.json", "--data", DATA,
                       "--out", target)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--out" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("step", ["write", "rename"])
@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_an_interrupted_write_keeps_the_earlier_table(tmp_path, monkeypatch, failure, step):
    mod = load_snippet(REFRESH)
    target = tmp_path / "data.csv"
    target.write_text("earlier\n")
    real_write = mod.Path.write_text

    def half_then_fail(self, text, *args, **kwargs):  # a full disk, or a stop, halfway through
        real_write(self, text[:len(text) // 2])
        raise failure

    def fail(*args):
        raise failure
    if step == "write":
        monkeypatch.setattr(mod.Path, "write_text", half_then_fail)
    else:
        monkeypatch.setattr(mod.os, "replace", fail)
    with pytest.raises(type(failure)):
        mod.write_atomically(target, "new\n" * 1000)
    assert target.read_text() == "earlier\n"
    # The temporary file is removed: nothing but the earlier table is left.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]
    monkeypatch.undo()
    mod.write_atomically(target, "new\n")  # the next run writes over the leftover and renames it
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["data.csv"]


def test_help():
    proc = run_snippet(REFRESH, "--help")
    assert proc.returncode == 0 and "--offer" in proc.stdout


def test_copy_with_its_companion_runs_in_an_empty_folder(tmp_path):
    import subprocess
    import sys
    copy = tmp_path / "refresh_prices.py"
    copy.write_text((ROOT / "snippets" / REFRESH).read_text())
    (tmp_path / "choose_instance.py").write_text((SNIPPETS / "aws/choose_instance.py").read_text())
    (tmp_path / "aws-instances.csv").write_text(DATA.read_text())
    run = subprocess.run([sys.executable, str(copy), "--offer", str(FIXTURE), "--data",
                          "aws-instances.csv"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "wrote aws-instances.csv" in run.stdout
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == [
        "aws-instances.csv", "choose_instance.py", "refresh_prices.py"]
    missing = subprocess.run([sys.executable, str(copy), "--offer", str(FIXTURE)],
                             capture_output=True, text=True, cwd=tmp_path / ".." )
    assert missing.returncode == 2 and "pass --data" in missing.stderr




@pytest.mark.parametrize("stdout", ["/dev/full", "closed pipe"])
def test_a_full_device_or_a_closed_pipe_is_one_line_and_the_table_is_written(tmp_path, stdout):
    out = tmp_path / "new.csv"
    proc = run_to(stdout, REFRESH, "--offer", FIXTURE, "--data", DATA, "--out", out)
    assert proc.returncode == 1
    assert proc.stderr == (FULL if stdout == "/dev/full" else "")
    assert "g6e.xlarge" in out.read_text()  # the report is what failed, not the table


@pytest.mark.parametrize(("product", "message"), [
    ({"productFamily": "Storage", "attributes": "not a mapping"}, "attributes"),
    ({"productFamily": "Compute Instance", "attributes": ["a", "list"]}, "attributes"),
    ("a string", "not an object"),
])
def test_a_product_of_the_wrong_shape_is_one_line(tmp_path, offer, product, message):
    bad = json.loads(json.dumps(offer))
    bad["products"]["SKU-ODD"] = product
    path = tmp_path / "offer.json"
    path.write_text(json.dumps(bad))
    copy = tmp_path / "data.csv"
    copy.write_text(DATA.read_text())
    proc = run_snippet(REFRESH, "--offer", path, "--data", copy)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: ") and "SKU-ODD" in proc.stderr and message in proc.stderr
    assert copy.read_text() == DATA.read_text()


def test_a_symlinked_table_is_replaced_through_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "aws-instances.csv"
    target.write_text(DATA.read_text())
    link = tmp_path / "aws-instances.csv"
    link.symlink_to("real/aws-instances.csv")
    proc = run_snippet(REFRESH, "--offer", FIXTURE, "--data", link)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and "1.6749" in target.read_text()
    assert sorted(p.name for p in target.parent.iterdir()) == ["aws-instances.csv"]


def test_closed_stdout_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "new.csv"
    proc = subprocess.run(["bash", "-c", f"{sys.executable} {SNIPPETS / REFRESH} --offer {FIXTURE} "
                           f"--data {DATA} --out {out} >&-"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 1 and proc.stderr == (
        "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
    assert not out.exists()


def test_a_deeply_nested_offer_file_is_one_line(tmp_path):
    deep = tmp_path / "offer.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    proc = run_snippet(REFRESH, "--offer", deep, "--data", DATA, "--dry-run")
    assert proc.returncode == 2 and proc.stderr == (
        f"error: cannot read the offer file {deep}: JSON nested too deep\n"), proc.stderr


# Runs a tool with os.replace patched to send Ctrl-C to the process right after the real rename:
# the interrupt a user's Ctrl-C would give at the end of the final write.
SIGINT_AFTER_RENAME = """
import os, runpy, signal, sys
real = os.replace
def replace(src, dst):
    real(src, dst)
    os.kill(os.getpid(), signal.SIGINT)
os.replace = replace
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def interrupted_in_rename(tool: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SIGINT_AFTER_RENAME, str(SNIPPETS / tool),
                           *map(str, args)], capture_output=True, text=True, timeout=300)


def test_ctrl_c_in_the_final_rename_says_the_output_is_whole(tmp_path):
    out = tmp_path / "aws-instances.csv"
    done = interrupted_in_rename(REFRESH, "--offer", FIXTURE, "--data", DATA, "--out", out)
    assert done.returncode == 130, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == f"interrupted ({out} written whole before it)"
    rows = list(csv.DictReader(out.open()))
    assert rows and len(rows) == len(list(csv.DictReader(DATA.open())))  # whole, not cut
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left
