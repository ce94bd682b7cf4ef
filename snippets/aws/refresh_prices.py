"""Refresh the on-demand prices in docs/data/aws-instances.csv from an AWS Price List offer file.

The offer file is the Price List bulk API's JSON for one service and region, e.g.
https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.json
(several hundred MB). Specs, roles and statuses are kept; prices, per-accelerator prices, price
sources and dates are updated; a table of what changed is printed.

    python snippets/aws/refresh_prices.py --offer index.json --dry-run
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import urllib.request
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "docs" / "data" / "aws-instances.csv"
OFFER_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{region}/index.json"

# --8<-- [start:filter]
# One price per instance type: Linux, shared tenancy, no pre-installed software, the plain
# on-demand instance-hour (not the unused-reservation or allocated-capacity variants).
WANTED = {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
          "capacitystatus": "Used"}
FAMILIES = {"Compute Instance", "Compute Instance (bare metal)"}


def on_demand_prices(offer: dict, region: str) -> dict[str, float]:
    """instanceType -> USD per hour, from an offer file's products and terms.OnDemand."""
    prices: dict[str, float] = {}
    on_demand = offer["terms"]["OnDemand"]
    for sku, product in offer["products"].items():
        attrs = product.get("attributes", {})
        if product.get("productFamily") not in FAMILIES:
            continue
        if any(attrs.get(k) != v for k, v in WANTED.items()):
            continue
        if attrs.get("regionCode", region) != region:
            continue
        for term in on_demand.get(sku, {}).values():
            for dim in term["priceDimensions"].values():
                if dim.get("unit") != "Hrs":
                    continue
                usd = float(dim["pricePerUnit"]["USD"])
                name = attrs["instanceType"]
                if usd > 0 and prices.setdefault(name, usd) != usd:
                    raise ValueError(f"{name}: two different on-demand prices "
                                     f"({prices[name]} and {usd}) after filtering")
    return prices
# --8<-- [end:filter]


def is_accelerated(product: dict) -> bool:
    attrs = product.get("attributes", {})
    return (attrs.get("gpu", "0") not in ("", "0", "NA")
            or "GPU" in attrs.get("instanceFamily", "")
            or "Machine Learning" in attrs.get("instanceFamily", ""))


def refresh(rows: list[dict], prices: dict[str, float], source: str, as_of: str):
    """Return (new rows, changes); changes are (instance, old, new) for every row, new=None if
    the offer file has no price for it (the row is kept as it was)."""
    new_rows, changes = [], []
    for row in rows:
        row = dict(row)
        old = float(row["on_demand_usd_per_hour"])
        new = prices.get(row["instance_type"])
        changes.append((row["instance_type"], old, new))
        if new is not None:
            row["on_demand_usd_per_hour"] = f"{new:g}"
            row["usd_per_accelerator_hour"] = f"{new / float(row['accelerator_count']):.4f}"
            row["price_source"] = source
            row["price_as_of"] = as_of
        new_rows.append(row)
    return new_rows, changes


def report(changes, new_types: list[str]) -> str:
    moved = [(t, o, n) for t, o, n in changes if n is not None and abs(n - o) > 1e-9]
    missing = [t for t, _, n in changes if n is None]
    lines = [f"{len(changes)} instances in the data file; {len(changes) - len(missing)} priced in "
             f"the offer file; {len(moved)} changed"]
    if moved:
        lines.append(f"{'instance':<18} {'old $/h':>10} {'new $/h':>10} {'change':>8}")
        for t, o, n in sorted(moved):
            lines.append(f"{t:<18} {o:>10.4f} {n:>10.4f} {100 * (n - o) / o:>+7.1f}%")
    if missing:
        names = sorted(missing)
        more = f" and {len(names) - 6} more" if len(names) > 6 else ""
        lines.append(f"not in the offer file (price kept): {', '.join(names[:6])}{more}")
    if new_types:
        lines.append("accelerated types in the offer file but not in the data file "
                     "(add specs and a role by hand): " + ", ".join(sorted(new_types)))
    return "\n".join(lines)


def read_offer(where: str) -> dict:
    if where.startswith(("https://", "http://")):
        with urllib.request.urlopen(where, timeout=300) as response:  # noqa: S310 (a fixed AWS URL)
            return json.load(response)
    with open(where) as f:
        return json.load(f)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Update the prices in the AWS instance data file from a Price List offer file.")
    parser.add_argument("--offer", required=True,
                        help="offer file path or URL; 'aws' means " + OFFER_URL)
    parser.add_argument("--region", default="us-east-1", help="region code (default us-east-1)")
    parser.add_argument("--data", type=Path, default=DATA, help="data file to read")
    parser.add_argument("--out", type=Path, help="file to write (default: --data, in place)")
    parser.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    args = parser.parse_args(argv)

    where = OFFER_URL.format(region=args.region) if args.offer == "aws" else args.offer
    try:
        offer = read_offer(where)
    except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        parser.error(f"cannot read the offer file {where}: {exc}")
    try:
        prices = on_demand_prices(offer, args.region)
    except (KeyError, TypeError, AttributeError) as exc:
        parser.error(f"{where}: not an AWS Price List offer file (no {exc})")
    except ValueError as exc:
        parser.error(f"{where}: {exc}")
    if not prices:
        parser.error(f"{where}: no Linux on-demand instance prices for {args.region}")
    try:
        with open(args.data, newline="") as f:
            reader = csv.DictReader(f)
            fields, rows = reader.fieldnames, list(reader)
    except OSError as exc:
        parser.error(f"cannot read the data file: {exc}")

    date = str(offer.get("publicationDate", ""))[:10]
    if len(date) != 10:
        parser.error(f"{where}: the offer file has no publicationDate")
    source = (f"AWS Price List offer file {offer.get('offerCode', '?')} {args.region} "
              f"version {offer.get('version', '?')}")
    new_rows, changes = refresh(rows, prices, source, date)
    known = {r["instance_type"] for r in rows}
    new_types = sorted({p["attributes"]["instanceType"] for p in offer["products"].values()
                        if is_accelerated(p) and p.get("attributes", {}).get("instanceType")
                        in prices and p["attributes"]["instanceType"] not in known})
    print(report(changes, new_types))

    # Self-check: specs untouched, and every updated per-accelerator price consistent.
    for old, new in zip(rows, new_rows):
        keep = set(fields) - {"on_demand_usd_per_hour", "usd_per_accelerator_hour",
                              "price_source", "price_as_of"}
        assert all(old[k] == new[k] for k in keep), old["instance_type"]
        assert abs(float(new["usd_per_accelerator_hour"]) * float(new["accelerator_count"])
                   - float(new["on_demand_usd_per_hour"])) < 0.001 * float(new["accelerator_count"])
    if args.dry_run:
        return 0
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(new_rows)
    out = args.out or args.data
    out.write_text(buf.getvalue())
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
