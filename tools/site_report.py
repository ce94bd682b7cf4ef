#!/usr/bin/env python3
"""Speed and weight of the built site: Lighthouse scores and the page weight of every page.

Not part of CI (Lighthouse takes a minute or two and its performance score varies from run to
run). It builds the site with `mkdocs build --strict` (or takes --site DIR), serves it on
127.0.0.1 under the path of site_url with gzip, as GitHub Pages serves it, then:

1. visits every page in headless Chromium (Debian's chromium, through Playwright) and adds up
   what it transfers: the HTML and every file it loads (CSS, JavaScript, the search index,
   images, Mermaid where there is a diagram), text counted gzip-compressed;
2. runs Lighthouse (npm `lighthouse`, installed on first use into .cache/site-tests/) against
   Debian's chromium (CHROME_PATH) on the home page and on the heaviest page, with Lighthouse's
   mobile defaults and with its desktop preset, for performance, accessibility, best practices
   and SEO.

Goals: accessibility, best practices and SEO at least 95; performance at least 90; pages
without a diagram under 1 MB transferred. Exit status 1 when a goal is missed, 2 on bad
arguments or when a tool is missing.

    python -m tools.site_report            # or: make report (from the repository root)
    python -m tools.site_report --site /tmp/site --json build/site-report.json
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

try:
    from tests.site import sitecheck  # the browser helpers the site tests use
except ModuleNotFoundError as exc:  # run as a file: the repository root is not on the path
    if exc.name not in ("tests", "tests.site", "conftest"):
        raise
    sys.stderr.write("error: run it from the repository root as: python -m tools.site_report\n")
    sys.exit(2)

from bench.cli import CannotWrite, atomic_write, run_main, show  # noqa: E402 (the project's)

ROOT = Path(__file__).resolve().parents[1]

LIGHTHOUSE_VERSION = "13.5.0"
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
GOALS = {"performance": 90, "accessibility": 95, "best-practices": 95, "seo": 95}
WEIGHT_GOAL = 1_000_000


class GzipHandler(sitecheck._Handler):
    """Serves text files gzip-compressed when the client accepts it, as GitHub Pages does."""

    def send_head(self):
        file = Path(self.translate_path(self.path))
        if file.is_dir():
            if not urlsplit(self.path).path.endswith("/"):
                return super().send_head()  # redirects to the URL with a slash
            file = file / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and file.is_file() and file.suffix in sitecheck.COMPRESSED):
            return super().send_head()
        body = gzip.compress(file.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(file)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def serve_gzip(directory: Path, prefix: str):
    handler = type("Handler", (GzipHandler,), {"prefix": prefix})
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    httpd.daemon_threads = True
    httpd.handle_error = lambda request, address: None  # Lighthouse drops connections at will
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    return sitecheck.Server(directory, origin, prefix), httpd


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def build_site(target: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d",
                           str(target)], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("mkdocs build --strict failed:\n" + proc.stderr[-3000:])


def page_weights(server, chromium: str) -> dict[str, dict]:
    from playwright.sync_api import sync_playwright

    weights = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=sitecheck.CHROMIUM_ARGS)
        context = sitecheck.new_context(browser, server, "light")
        page = context.new_page()
        recorder = sitecheck.Recorder(page, server)
        for path in sitecheck.page_paths(server.root):
            visit = sitecheck.visit_page(page, recorder, server, path, "light", None, full=False)
            weights[path] = {"bytes": visit.bytes, "requests": len(visit.served),
                             "diagrams": visit.mermaid_blocks,
                             "offsite": visit.offsite_requests}
        browser.close()
    return weights


def lighthouse_cli() -> Path:
    home = sitecheck.CACHE / f"lighthouse-{LIGHTHOUSE_VERSION}"
    cli = home / "node_modules" / "lighthouse" / "cli" / "index.js"
    if not cli.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is not on PATH: it installs lighthouse")
        home.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(home),
                        f"lighthouse@{LIGHTHOUSE_VERSION}"], check=True, capture_output=True,
                       timeout=600)
    return cli


def lighthouse(cli: Path, url: str, chromium: str, preset: str, out: Path) -> dict:
    flags = " ".join(sitecheck.CHROMIUM_ARGS)
    cmd = ["node", str(cli), url, "--quiet", "--output=json", f"--output-path={out}",
           f"--chrome-flags={flags}", "--only-categories=" + ",".join(CATEGORIES)]
    if preset == "desktop":
        cmd.append("--preset=desktop")
    env = {**os.environ, "CHROME_PATH": chromium}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not out.is_file():
        raise RuntimeError(f"lighthouse failed on {url}:\n{proc.stderr[-2000:]}")
    report = json.loads(out.read_text())
    scores = {c: round(100 * (report["categories"][c]["score"] or 0)) for c in CATEGORIES}
    audits = report["audits"]
    failed = sorted(a for c in CATEGORIES for a in
                    (r["id"] for r in report["categories"][c]["auditRefs"] if r.get("weight"))
                    if audits[a].get("score") is not None and audits[a]["score"] < 0.9)
    return {"scores": scores, "lighthouse": report["lighthouseVersion"],
            "total_byte_weight": audits["total-byte-weight"]["numericValue"],
            "lcp_ms": audits["largest-contentful-paint"]["numericValue"],
            "tbt_ms": audits["total-blocking-time"]["numericValue"],
            "cls": audits["cumulative-layout-shift"]["numericValue"],
            "audits_below_90": failed}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build it now)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--presets", default="mobile,desktop",
                        help="Lighthouse presets to run, comma-separated (default: %(default)s)")
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    args = parser.parse_args(argv)
    presets = [p for p in args.presets.split(",") if p]
    if not presets or set(presets) - {"mobile", "desktop"}:
        parser.error("--presets takes mobile, desktop or both")
    if args.site is not None and not (args.site / "index.html").is_file():
        parser.error(f"--site {args.site}: no index.html there")
    chromium = sitecheck.find_chromium()
    if chromium is None:
        why = sitecheck.install_chromium()
        chromium = sitecheck.find_chromium()
        if chromium is None:
            return fail(f"no Chromium: {why}")

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            show("building the site (mkdocs build --strict) ...")
            try:
                build_site(site)
            except RuntimeError as exc:
                return fail(str(exc))
        server, httpd = serve_gzip(site, sitecheck.site_prefix())
        try:
            show("measuring every page in Chromium ...")
            weights = page_weights(server, chromium)
            heaviest = max(weights, key=lambda p: weights[p]["bytes"])
            try:
                cli = lighthouse_cli()
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                return fail(f"cannot install lighthouse: {exc}")
            lh = {}
            for path in dict.fromkeys(["", heaviest]):
                for preset in presets:
                    show(f"lighthouse {preset}: /{path} ...")
                    out = Path(tmp) / f"lh-{preset}-{len(lh)}.json"
                    try:
                        lh[f"{preset} {sitecheck.label(path)}"] = lighthouse(
                            cli, server.url(path), chromium, preset, out)
                    except RuntimeError as exc:
                        return fail(str(exc))
        finally:
            httpd.shutdown()
            httpd.server_close()

    missed = []
    show(f"\nPage weight (transferred, text gzip-compressed as GitHub Pages sends it; "
         f"goal: under {WEIGHT_GOAL / 1e6:.0f} MB without a diagram)")
    show(f"{'page':46} {'kB':>7} {'requests':>8}  diagrams")
    for path, w in sorted(weights.items(), key=lambda item: -item[1]["bytes"]):
        flag = ""
        if not w["diagrams"] and w["bytes"] >= WEIGHT_GOAL:
            flag = "  over the goal"
            missed.append(f"{sitecheck.label(path)} weighs {w['bytes']} bytes")
        if w["offsite"]:
            flag += f"  OFF-SITE: {w['offsite'][:2]}"
            missed.append(f"{sitecheck.label(path)} requests off-site files")
        show(f"{'/' + path:46} {w['bytes'] / 1000:7.0f} {w['requests']:8d}  "
             f"{w['diagrams'] or '':>8}{flag}")
    show(f"\nLighthouse {next(iter(lh.values()))['lighthouse']} "
         f"(goals: performance >= 90, the others >= 95)")
    show(f"{'run':40} {'perf':>5} {'a11y':>5} {'b-p':>5} {'seo':>5} {'kB':>7} "
         f"{'LCP ms':>7} {'TBT ms':>7}")
    for name, r in lh.items():
        s = r["scores"]
        show(f"{name:40} {s['performance']:5d} {s['accessibility']:5d} "
             f"{s['best-practices']:5d} {s['seo']:5d} {r['total_byte_weight'] / 1000:7.0f} "
             f"{r['lcp_ms']:7.0f} {r['tbt_ms']:7.0f}")
        for category, goal in GOALS.items():
            if s[category] < goal:
                missed.append(f"{name}: {category} {s[category]} < {goal} "
                              f"(audits below 0.9: {', '.join(r['audits_below_90'])})")
    if args.json:  # whole or not at all: a full disk keeps an earlier report
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(args.json, json.dumps({"weights": weights, "lighthouse": lh}, indent=1))
        except (OSError, CannotWrite) as exc:
            return fail(str(exc) if isinstance(exc, CannotWrite) else
                        f"cannot write {args.json}: {exc.strerror or exc}")
    show("\n" + ("\n".join("goal missed: " + m for m in missed) if missed else
                 "every goal met"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(run_main(main))
