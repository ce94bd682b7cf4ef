"""Refresh the on-demand prices in docs/data/aws-instances.csv from an AWS Price List offer file.

The offer file is the Price List bulk API's JSON for one service and region, e.g.
https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.json
(several hundred MB). Specs, roles and statuses are kept; prices, per-accelerator prices, price
sources and dates are updated; a table of what changed is printed.

Nothing is written unless every price and date checks out; the new table goes to a temporary
file in the same folder, which then replaces the old one in one step (os.replace), so a full disk
or an interrupt leaves the earlier table intact.

    python snippets/aws/refresh_prices.py --offer index.json --data docs/data/aws-instances.csv --dry-run
"""

# --8<-- [start:imports]
from __future__ import annotations

import os
import signal
import sys

from choose_instance import WRITTEN, interrupted, show

if __name__ == "__main__":  # choose_instance.py, beside this file, loads the standard library only:
    signal.signal(signal.SIGINT, interrupted)  # so Ctrl-C is one line from here on

import argparse
import csv
import datetime as dt
import io
import json
import math
import urllib.request
from pathlib import Path
# --8<-- [end:imports]

DATA = Path("docs/data/aws-instances.csv")  # relative to the current folder, as in the repository
PRICE_COLUMNS = ["instance_type", "accelerator_count", "on_demand_usd_per_hour",
                 "usd_per_accelerator_hour", "price_source", "price_as_of"]
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
        if not isinstance(product, dict):
            raise ValueError(f"product {sku} is not an object")
        attrs = product.get("attributes", {})
        if not isinstance(attrs, dict):
            raise ValueError(f"product {sku}: its attributes are not an object")
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
                if not math.isfinite(usd) or usd < 0:
                    raise ValueError(f"{name}: price {dim['pricePerUnit']['USD']!r} is not a "
                                     "finite, non-negative number")
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


def publication_date(offer: dict) -> str:
    """The offer file's publicationDate as YYYY-MM-DD (ValueError if it is not a date)."""
    text = str(offer.get("publicationDate", ""))
    try:
        return dt.date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        raise ValueError(f"publicationDate {text[:40]!r} is not a date") from None


def read_table(path: Path) -> tuple[list[str], list[dict]]:
    """The instance table's columns and rows; ValueError naming what is wrong with it."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields, rows = reader.fieldnames or [], list(reader)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text CSV file") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: damaged CSV ({exc})") from None
    missing = [c for c in PRICE_COLUMNS if c not in fields]
    if missing:
        raise ValueError(f"{path}: not the instance table (missing columns {', '.join(missing)})")
    if not rows:
        raise ValueError(f"{path}: no rows")
    check_rows(rows, str(path))
    return fields, rows


def check_rows(rows: list[dict], where: str) -> None:
    """Every price finite and positive, every per-accelerator price consistent, every date a date."""
    for n, r in enumerate(rows, start=2):
        name = f"{where} line {n} ({r.get('instance_type') or '?'})"
        try:
            count = float(r["accelerator_count"])
            price, per_acc = float(r["on_demand_usd_per_hour"]), float(r["usd_per_accelerator_hour"])
            dt.date.fromisoformat(r["price_as_of"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: {exc}") from None
        if not all(math.isfinite(x) and x > 0 for x in (count, price, per_acc)):
            raise ValueError(f"{name}: accelerator count and prices must be finite and positive")
        if abs(per_acc * count - price) > 0.001 * max(count, 1):
            raise ValueError(f"{name}: usd_per_accelerator_hour {per_acc} != {price} / {count:g}")


def output_file(text: str) -> Path:
    """An argparse type: a file path in an existing, writable folder, checked before any work."""
    try:  # a real write: os.access says yes to root everywhere, even in /proc
        path = Path(text)
        if path.is_dir():
            raise IsADirectoryError(text)
        real = path.resolve()  # a symlink is written through: probe beside its target
        probe = real.with_name(f".{real.name}.{os.getpid()}.probe")
        probe.touch()
        probe.unlink()
    except (OSError, ValueError):
        raise argparse.ArgumentTypeError(f"{text}: not a file in an existing, writable folder") from None
    return path


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write through a temporary file and rename it: a reader never sees half a file. A symlink
    is written through: its target is replaced, the link stays. A device or a pipe (/dev/stdout,
    a FIFO) is written in place: renaming a file over it would replace it."""
    if Path(path).exists() and not Path(path).is_file():
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return
    path = Path(path).resolve()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")  # unique
    # Ctrl-C waits until the file is whole and in place (or the write failed): no temporary file
    # is left, and the one line it prints then can say the output was written.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        tmp.write_bytes(data) if isinstance(data, bytes) else tmp.write_text(data)
        os.replace(tmp, path)
        WRITTEN.append(str(path))
    finally:
        try:
            tmp.unlink(missing_ok=True)  # after a failed write (a full disk, say): no leftover
        except OSError:  # a file system gone read-only: the write's own error is the one to say
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a Ctrl-C held back lands here


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Update the prices in the AWS instance table from a Price List offer file.")
    parser.add_argument("--offer", required=True,
                        help="offer file path or URL; 'aws' means " + OFFER_URL)
    parser.add_argument("--region", default="us-east-1", help="region code (default us-east-1)")
    parser.add_argument("--data", type=Path, default=DATA,
                        help="instance table to read (default: docs/data/aws-instances.csv under "
                             "the current folder)")
    parser.add_argument("--out", type=output_file,
                        help="file to write (default: --data, replaced)")
    parser.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    args = parser.parse_args(argv)
    if sys.stdout is None:  # started with standard output closed (>&-): its report goes nowhere
        parser.exit(1, "error: standard output is closed; give it a file (> FILE) or /dev/null\n")

    try:  # both cheap, and both before the (large) offer file is read
        fields, rows = read_table(args.data)
        out = args.out or (args.data if args.dry_run else output_file(str(args.data)))
    except argparse.ArgumentTypeError as exc:  # --data is the output when --out is not given
        parser.error(f"--data {exc} (it is replaced: give --out to write elsewhere)")
    except FileNotFoundError:
        parser.error(f"no instance table at {args.data}: pass --data")
    except OSError as exc:
        parser.error(f"cannot read the instance table: {exc}")
    except ValueError as exc:
        parser.error(str(exc))
    where = OFFER_URL.format(region=args.region) if args.offer == "aws" else args.offer
    try:
        offer = read_offer(where)
    except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        parser.error(f"cannot read the offer file {where}: {exc}")
    except RecursionError:
        parser.error(f"cannot read the offer file {where}: JSON nested too deep")
    if not isinstance(offer, dict):
        parser.error(f"{where}: not an AWS Price List offer file (not a JSON object)")
    try:
        prices = on_demand_prices(offer, args.region)
        date = publication_date(offer) if prices else ""
    except (KeyError, TypeError, AttributeError) as exc:
        parser.error(f"{where}: not an AWS Price List offer file (no {exc})")
    except ValueError as exc:
        parser.error(f"{where}: {exc}")
    if not prices:
        parser.error(f"{where}: no Linux on-demand instance prices for {args.region}")

    source = (f"AWS Price List offer file {offer.get('offerCode', '?')} {args.region} "
              f"version {offer.get('version', '?')}")
    new_rows, changes = refresh(rows, prices, source, date)
    # Everything is checked before anything is written: specs untouched, prices that survive
    # their rounding, per-accelerator prices consistent, dates real.
    keep = set(fields) - {"on_demand_usd_per_hour", "usd_per_accelerator_hour",
                          "price_source", "price_as_of"}
    try:
        for old, new in zip(rows, new_rows):
            if any(old[k] != new[k] for k in keep):
                raise ValueError(f"{old['instance_type']}: a spec column changed")
        check_rows(new_rows, f"prices from {where}")
    except ValueError as exc:
        parser.error(f"refusing to write: {exc}")
    known = {r["instance_type"] for r in rows}
    new_types = sorted({p["attributes"]["instanceType"] for p in offer["products"].values()
                        if is_accelerated(p) and p.get("attributes", {}).get("instanceType")
                        in prices and p["attributes"]["instanceType"] not in known})
    if args.dry_run:
        return 0 if show(report(changes, new_types)) else 1
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(new_rows)
    try:
        write_atomically(out, buf.getvalue())
    except OSError as exc:
        print(f"error: cannot write {out} (the earlier file is unchanged): {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    return 0 if show(f"{report(changes, new_types)}\nwrote {out}") else 1  # the table first


if __name__ == "__main__":
    sys.exit(main())
