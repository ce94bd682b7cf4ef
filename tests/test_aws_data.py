"""The AWS instance data file and its companions: every row complete, sourced, dated, consistent."""

from __future__ import annotations

import csv
import re
import shutil

import pytest

from helpers import ROOT, load_snippet

DATA = ROOT / "docs" / "data"
DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


def rows(name: str) -> list[dict]:
    with open(DATA / name, newline="") as f:
        return list(csv.DictReader(f))


INSTANCES = rows("aws-instances.csv")
BY_TYPE = {r["instance_type"]: r for r in INSTANCES}


def test_the_chooser_accepts_the_file():
    mod = load_snippet("aws/choose_instance.py")
    assert len(mod.load_instances(DATA / "aws-instances.csv")) == len(INSTANCES) > 50


@pytest.mark.parametrize("row", INSTANCES, ids=lambda r: r["instance_type"])
def test_row_is_complete_sourced_and_consistent(row):
    mod = load_snippet("aws/choose_instance.py")
    assert all(row[c].strip() for c in mod.REQUIRED), row
    price, count = float(row["on_demand_usd_per_hour"]), float(row["accelerator_count"])
    assert price > 0 and count > 0 and float(row["accelerator_memory_gib"]) > 0
    assert float(row["usd_per_accelerator_hour"]) == pytest.approx(price / count, abs=5.1e-5)
    assert DATE.match(row["price_as_of"]) and DATE.match(row["spec_as_of"])
    assert row["price_source"] and row["spec_source"]
    assert row["role"] in mod.ROLES and row["status"] in mod.STATUSES
    assert row["instance_type"].startswith(row["family"].lower() + ".")


def test_no_duplicate_instance_types():
    names = [r["instance_type"] for r in INSTANCES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("itype", "role", "status"), [
    ("p3.2xlarge", "training", "retired"), ("p4d.24xlarge", "training", "current"),
    ("p5.48xlarge", "training", "current"), ("g4dn.xlarge", "inference", "current"),
    ("inf1.xlarge", "inference", "current"), ("g5.xlarge", "inference", "current")])
def test_the_articles_families_are_there_with_their_status(itype, role, status):
    assert (BY_TYPE[itype]["role"], BY_TYPE[itype]["status"]) == (role, status)


def test_p5_price_is_the_post_june_2025_one():
    assert float(BY_TYPE["p5.48xlarge"]["on_demand_usd_per_hour"]) < 98.32


def test_unconfirmed_fields_are_named():
    allowed = {"specs", "status", "spec date", "price"}
    for r in INSTANCES:
        flags = {f.strip() for f in r["unconfirmed"].split(";") if f.strip()}
        assert flags <= allowed, r["instance_type"]


@pytest.mark.parametrize("name", ["aws-price-history.csv"])
def test_companion_files_are_sourced_dated_and_refer_to_known_types(name):
    for r in rows(name):
        itype = r.get("instance_type") or r["ml_instance"].removeprefix("ml.")
        assert itype in BY_TYPE
        assert float(r["usd_per_hour"]) > 0 and r["source"].strip()
        assert DATE.match(r.get("date") or r["as_of"])


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r.update(on_demand_usd_per_hour="-1"), "positive"),
    (lambda r: r.update(usd_per_accelerator_hour="9.9"), "usd_per_accelerator_hour"),
    (lambda r: r.update(price_source=""), "empty price_source"),
    (lambda r: r.update(spec_as_of="July 2026"), "not YYYY-MM-DD"),
    (lambda r: r.update(status="maybe"), "status"),
])
def test_the_loader_rejects_a_bad_row(tmp_path, edit, message):
    mod = load_snippet("aws/choose_instance.py")
    bad = [dict(r) for r in INSTANCES]
    edit(bad[3])
    path = tmp_path / "bad.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(INSTANCES[0]))
        w.writeheader()
        w.writerows(bad)
    with pytest.raises(ValueError, match=message):
        mod.load_instances(path)


def test_the_loader_rejects_a_duplicate(tmp_path):
    mod = load_snippet("aws/choose_instance.py")
    path = tmp_path / "dup.csv"
    shutil.copy(DATA / "aws-instances.csv", path)
    with open(path, "a") as f:
        f.write((DATA / "aws-instances.csv").read_text().splitlines()[1] + "\n")
    with pytest.raises(ValueError, match="duplicate"):
        mod.load_instances(path)
