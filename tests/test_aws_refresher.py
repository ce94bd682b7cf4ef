"""snippets/aws/refresh_prices.py against a small offer file in the AWS Price List format."""

from __future__ import annotations

import csv
import json

import pytest

from conftest import ROOT, load_snippet, run_snippet

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
    proc = run_snippet(REFRESH, "--offer", FIXTURE, "--out", out)
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
])
def test_bad_offer_files_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "offer.json"
    if content is not None:
        path.write_text(content)
    proc = run_snippet(REFRESH, "--offer", path, "--dry-run")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert message in proc.stderr


def test_help():
    proc = run_snippet(REFRESH, "--help")
    assert proc.returncode == 0 and "--offer" in proc.stdout
