"""One table for any data file, its columns chosen on the page; and one figure, `{{ cell }}`:

    <!-- render table path=data/x.csv cols="header={template};..." [align=lrr] [where="f=a,b* g=c"]
         [sort="f -g"] [mark=prefix] [notes="{template}"] [flag=*] [empty=–] [run=1] [key=rows]
         [names="value=words;..."] [join="name=f={f} g=c;..."] -->

Rows: a CSV's, a JSON file's list `key` (`key=.`: the file is the one row), or a results file's
measurements. A fact row with a `source` needs a source and an as-of date (`as_of` or `date`),
and gets `{sources}` (short links), `{site}` and, with a `unit`, `{quantity}`. A measurement
gets `label`, `group`, `what` (its phase), `s` (median), `gbs`, `tflops`, `over_cpu` (the case's
fastest CPU kernel over it), `per_s[work]`, `per_step` and its params. `names="value=words;..."`
gives `what` the page's words for the values of the first `where` field. `join` gives each row,
as `name`, the row of the same file (or of the file a path before the conditions names) that
the conditions (as in `where`, the row's `{field}`s filled in) match, the fastest if several:
for ratios to a named row. Templates are format strings with the specs `time`, `ms`, `sig`,
`ratio`, `pct`, `change` (of a ratio), `pow2`, `dims` (a case's `params` m, n, k: "1024³") and
`text ? text` (the value for `?`; nothing when empty); `/N:spec` divides by N first (N may be
a field: `{a:/{b}:.1f}`); an empty cell shows `empty`. Rows keep the order of the first
`where`'s values, then `sort`'s (`-`: descending). `mark` numbers a footnote `{mark}` per row
of the file, `notes` is its text; `flag` marks the fields a row lists as `unconfirmed`; `run=1`
adds the run's details.
"""

from __future__ import annotations

import fnmatch
import re
import string
from html import escape
from pathlib import Path
from urllib.parse import urlparse

from . import load_json, markdown_table, pairs, read_csv, renderer, value
from .run_details import describe_run, label, load

AS_OF = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
URL = re.compile(r"https?://[^\s;,)]+")
SI = {"B/s": ((1e12, "TB/s"), (1e9, "GB/s")), "B": ((1e9, "GB"), (1e6, "MB"), (1e3, "KB")),
      "FLOP/s": ((1e12, "TFLOP/s"),), "s": ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))}


def scaled(v: float, unit: str) -> tuple[float, str]:
    """`v` in the largest of the unit's multiples that it reaches (else the smallest): (1.5, "GB")."""
    steps = SI.get(unit, ((1, ""),))
    scale, name = next(((s, n) for s, n in steps if v >= s), steps[-1])
    return v / scale, name


SPECS = {"time": lambda x: "{:.3g} {}".format(*scaled(x, "s")),
         "sig": lambda x: f"{x:.3g}".replace("e+", "e"),
         "ratio": lambda x: f"{x:,.0f}" if x >= 100 else f"{x:.3g}",
         "pct": lambda x: f"{100 * x:.1f}&nbsp;%",
         "ms": lambda x: f"{1e3 * x:,.3f}" if x < 0.01 else f"{1e3 * x:,.1f}",
         "change": lambda x: f"{100 * (x - 1):+.1f}%",  # of a ratio new / old
         "dims": lambda d: f"{d['m']}³" if len(set(d.values())) == 1 else "×".join(map(str, d.values())),
         "pow2": lambda x: (f"2<sup>{int(x).bit_length() - 1}</sup>" if int(x) & (int(x) - 1) == 0
                            else f"{int(x):,}")}


class Cells(string.Formatter):
    """Formats a row's template. A field that is empty or N/A in this row is ""; a field that
    none of `rows` (the rows the template is filled from) has raises KeyError: a misspelt field
    must not render empty."""

    def __init__(self, rows: list[dict] = ()):
        self.rows = rows

    def get_field(self, name, args, kwargs):
        try:
            return super().get_field(name, args, kwargs)
        except (KeyError, IndexError, TypeError):
            if any(self.has(name, row) for row in self.rows):
                return "", name
            raise KeyError(f"no field {{{name}}} in the rows; they have: "
                           f"{', '.join(sorted(kwargs))}") from None

    def has(self, name, row) -> bool:
        try:
            super().get_field(name, (), row)
            return True
        except (KeyError, IndexError, TypeError):
            return False

    def format_field(self, value, spec):
        if value in ("", None, "N/A"):
            return ""
        if spec.startswith("/"):
            by, _, spec = spec[1:].partition(":")
            value = float(value) / float(by)
        if "?" in spec:
            return spec.replace("?", str(value))
        if spec in SPECS:
            return SPECS[spec](value if isinstance(value, dict) else float(value))
        return format(float(value) if spec and isinstance(value, str) else value, spec)


def link_label(url: str) -> str:
    """`nvidia.com/h200`: the site and the last part of the path; owner/repo on GitHub."""
    parsed = urlparse(url)
    host, parts = parsed.netloc.removeprefix("www."), [p for p in parsed.path.split("/") if p]
    if host in ("github.com", "raw.githubusercontent.com") and len(parts) >= 2:
        return "/".join(parts[:2])
    names = [re.sub(r"\.(html?|rst|txt|md|aspx)$", "", p) for p in parts] or [""]
    tail = names[-2] if names[-1] in ("index", "summary", "amp", "specifications") and len(names) > 1 else names[-1]
    return f"{host}/{tail}" if tail else host


def source_links(text: str) -> str:
    """Each URL of a source cell ("a ; label: url ; ...") as a short link; other text kept."""
    out = []
    for chunk in text.split(" ; "):
        m = URL.search(chunk)
        if not m:
            out.append(escape(chunk.strip()))
            continue
        name, rest = chunk[:m.start()].strip().rstrip(":"), chunk[m.end():].strip()
        out.append((f"{escape(name)}: " if name else "") + f"[{escape(link_label(m[0]))}]({m[0]})"
                   + (f" {escape(rest)}" if rest else ""))
    return "; ".join(out)


def quantity(v: float, unit: str) -> str:
    x, name = scaled(v, unit)
    return f"{x:g} {name}" if name else f"{v:,.0f}"


def fact_rows(rows: list[dict], path: str) -> list[dict]:
    """A fact table's rows, escaped; one with a `source` column must give each a source and an
    as-of date."""
    for i, r in enumerate(rows, start=1):
        if "source" in r and (not str(r["source"]).strip() or not AS_OF.match(str(r.get("as_of", r.get("date", ""))).strip())):
            raise ValueError(f"{path} row {i}: no source, or an as-of date not YYYY[-MM[-DD]]")
    return [{**{k: escape(v) if isinstance(v, str) else v for k, v in r.items()},
             "sources": source_links(r.get("source", "")), "site": urlparse(r.get("source", "")).netloc,
             **({"quantity": quantity(float(r["value"]), r["unit"])} if "unit" in r else {})}
            for r in rows]


def measurement_rows(doc: dict) -> list[dict]:
    best: dict[str, float] = {}
    for m in doc["measurements"]:
        if m["device"] == "cpu" and m["phase"] == "kernel":
            best[m["case"]] = min(best.get(m["case"], m["median_s"]), m["median_s"])
    return [{**m.get("params", {}), **m, "label": label(doc, m["variant"]), "s": (s := m["median_s"]),
             "group": doc["variants"].get(m["variant"], {}).get("group", ""),
             "what": m["phase"].replace("_", " "), "over_cpu": best[m["case"]] / s if m["case"] in best else "",
             "gbs": m["bytes"] / s / 1e9 if m.get("bytes") else "", "tflops": m.get("flops", 0) / s / 1e12,
             "per_s": {k: v / s for k, v in (m.get("work") or {}).items()},
             "per_step": s / m.get("params", {}).get("steps_per_call", 1)} for m in doc["measurements"]]


def conditions_of(text: str) -> list[list[str]]:
    """"f=a,b* g=c" as [[field, patterns], ...]."""
    return [c.split("=", 1) for c in text.split()]


def matches(row: dict, conditions: list[list[str]]) -> bool:
    return all(any(fnmatch.fnmatchcase(str(row.get(k, "")), p) for p in v.split(","))
               for k, v in conditions)


def pick(docs_dir: Path, path: str, where: str = "", sort: str = "", key: str = "rows",
         mark: str = "", flag: str = "", names: str = "",
         join: str = "") -> tuple[list[dict], dict | None]:
    """(the rows of a data file that `where` keeps, in order; the results document, if it is one)."""
    data = load_json(docs_dir, path) if path.endswith(".json") else {key: read_csv(docs_dir, path)}
    doc = load(docs_dir, path) if "measurements" in data else None  # a results file, checked
    rows = measurement_rows(doc) if doc else fact_rows([data] if key == "." else data[key], path)
    conditions, joins = conditions_of(where), {}  # joins: {name: (rows to search, conditions)}
    for name, text in (pairs(join) if join else {}).items():
        source, _, rest = text.partition(" ")
        joins[name] = (list(rows), text) if "=" in source else (pick(docs_dir, source)[0], rest)
    for i, r in enumerate(rows, start=1):
        r["mark"] = f"[^{mark}-{i}]"
        r["what"] = pairs(names).get(r.get(conditions[0][0]), r.get("what")) if names else r.get("what")
        for field in filter(None, map(str.strip, r.get("unconfirmed", "").split(";")) if flag else ()):
            r[field] += flag if r.get(field, "").strip() else ""  # a figure not confirmed at its source
        for name, (others, text) in joins.items():
            mine = conditions_of(Cells().format(text, **r))  # a field the row lacks raises
            r[name] = min((b for b in others if matches(b, mine)), key=lambda b: b.get("s", 0), default={})
    for field, patterns in conditions:  # a misspelt variant or field must not drop a row unseen
        if missing := [p for p in patterns.split(",")
                       if not any(fnmatch.fnmatchcase(str(r.get(field, "")), p) for r in rows)]:
            raise ValueError(f"{path}: no row has {field}={','.join(missing)}")
    if names and (unknown := set(pairs(names)) - {str(r.get(conditions[0][0])) for r in rows}):
        raise ValueError(f"{path}: names= gives words for {', '.join(sorted(unknown))}, which no row has")
    rows = [r for r in rows if matches(r, conditions)]
    if conditions:
        field, order = conditions[0][0], conditions[0][1].split(",")
        rows.sort(key=lambda r: next(i for i, p in enumerate(order) if fnmatch.fnmatchcase(str(r[field]), p)))
    for k in reversed(sort.split()):
        rows.sort(key=lambda r: r[k.lstrip("-")], reverse=k.startswith("-"))
    if not rows:
        raise ValueError(f"{path}: no row where {where!r}")
    return rows, doc


@value("cell")
def cell(docs_dir: Path, path: str, show: str, where: str = "", sort: str = "", key: str = "rows",
         join: str = "") -> str:
    """One figure for a sentence: `show` (a template) over the first row `where` and `sort` pick."""
    row = pick(docs_dir, path, where, sort, key, join=join)[0][0]
    return Cells([row]).format(show, **row)


@value("field")
def field(docs_dir: Path, name: str, *, path: str) -> str:
    """`{{ field NAME }}`: a field of a file that is one row (a JSON object)."""
    return cell(docs_dir, path, f"{{{name}}}", key=".")


@renderer("table")
def table(docs_dir: Path, path: str, cols: str = "", align: str = "", where: str = "",
          sort: str = "", mark: str = "", notes: str = "", empty: str = "–", flag: str = "",
          run: str = "", key: str = "rows", names: str = "", join: str = "") -> str:
    rows, doc = pick(docs_dir, path, where, sort, key, mark, flag, names, join)
    columns = [c.split("=", 1) for c in cols.split(";")] if cols else []  # headings may repeat
    fill = lambda t, r: Cells(rows).format(t, **r).strip() or empty  # noqa: E731
    out = markdown_table([h for h, _ in columns], [[fill(t, r) for _, t in columns] for r in rows],
                         align or None) + "\n" if columns else ""
    if notes:
        out += "\n" + "\n".join(f"{r['mark']}: {fill(notes, r)}" for r in rows) + "\n"
    return out + (f"\n{describe_run(doc)}\n" if run else "")
