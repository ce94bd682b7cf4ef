"""Screenshots of built pages, as readers see them: 1280 px and 390 px wide, light and dark.

    .venv/bin/mkdocs build -d /tmp/site
    .venv/bin/python -m tools.screenshots /tmp/site kernels/saxpy/ why/cpu-vs-gpu/ -o /tmp/shots

Writes one full-page PNG per page, width and scheme (PAGE-WIDTH-SCHEME.png), each whole or not at
all (a full disk keeps an earlier screenshot as it was). Uses the same
local server and Chromium set-up as the browser tests in tests/site/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WIDTHS = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="a built site folder (mkdocs build -d ...)")
    parser.add_argument("pages", nargs="+", help="page paths, e.g. kernels/saxpy/")
    parser.add_argument("-o", "--out", type=Path, default=Path("build/screenshots"))
    parser.add_argument("--widths", nargs="+", choices=sorted(WIDTHS), default=sorted(WIDTHS))
    parser.add_argument("--schemes", nargs="+", choices=["light", "dark"],
                        default=["light", "dark"])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site} holds no built site (no index.html)")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f"cannot make {args.out}: {exc.strerror or exc}")

    from bench.cli import atomic_write, show
    from playwright.sync_api import sync_playwright
    try:
        from tests.site.sitecheck import CHROMIUM_ARGS, find_chromium, serve, site_prefix
    except ModuleNotFoundError as exc:  # run as a file: the repository root is not on the path
        if exc.name not in ("tests", "tests.site", "conftest"):
            raise
        parser.error("run it from the repository root as: python -m tools.screenshots ...")

    chromium = find_chromium()
    if chromium is None:
        parser.error("no Chromium found (apt-get install chromium)")
    server, httpd = serve(args.site, site_prefix())
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            for width in args.widths:
                for scheme in args.schemes:
                    context = browser.new_context(color_scheme=scheme, viewport=WIDTHS[width])
                    page = context.new_page()
                    for path in args.pages:
                        page.goto(server.url(path), wait_until="networkidle")
                        page.evaluate("""async () => {
                          for (const b of document.querySelectorAll('.mermaid')) {
                            b.scrollIntoView(); await new Promise(r => setTimeout(r, 150)); }
                          window.scrollTo(0, 0); }""")
                        page.wait_for_timeout(500)
                        name = path.strip("/").replace("/", "_") or "home"
                        shot = args.out / f"{name}-{width}-{scheme}.png"
                        atomic_write(shot, page.screenshot(full_page=True))  # not in place
                        show(str(shot))
                    context.close()
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    return 0


if __name__ == "__main__":
    from bench.cli import run_main

    sys.exit(run_main(main))
