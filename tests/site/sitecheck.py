"""Fixtures and helpers for the browser, link and accessibility checks of the built site.

The fixtures live here, not in a ``tests/site/conftest.py``: a second module named ``conftest``
would replace the root one in ``sys.modules`` and break ``from helpers import ROOT`` in every
test file collected after this folder (and ``tests/site`` cannot be a package: ``site`` is a
standard-library module). Test modules import the fixtures they use from here.

Everything runs against the site that the root ``built_site`` fixture builds once per session,
served from 127.0.0.1 on a free port under the path of ``site_url`` (as GitHub Pages serves it),
in one headless Chromium (Debian's ``chromium``) driven by Playwright. Each page is loaded once
in a light and once in a dark colour scheme at 1280 px and measured there, printed to A4 (a page
with a chart or a diagram) and measured again narrowed to 390 px (``site_visits``; the dark pass
checks what the scheme changes, ``PASSES``); the tests then assert on what the visits recorded.
Nothing here reaches beyond this machine, except apt and npm when Chromium or axe-core is missing.
"""

from __future__ import annotations

import atexit
import functools
import gzip
import http.server
import json
import os
import shutil
import subprocess
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from conftest import ROOT

CACHE = Path(os.environ.get("SITE_TEST_CACHE", ROOT / ".cache" / "site-tests"))
AXE_VERSION = "4.14.1"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
INSTALL_TIMEOUT_S = 900
MERMAID_TIMEOUT_MS = int(os.environ.get("SITE_TEST_MERMAID_TIMEOUT_MS", 30_000))

# Material draws each Mermaid diagram into a *closed* shadow root, which neither a test nor
# axe-core can look into. Opening it (in the test browser only) lets both see the SVG.
OPEN_SHADOW_ROOTS = """
(() => {
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    return attach.call(this, Object.assign({}, init, { mode: "open" }));
  };
})();
"""


class _ConfigLoader(yaml.SafeLoader):
    """Reads mkdocs.yml, leaving its `!!python/name:` tags unresolved."""


_ConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _env(loader, node):
    """`!ENV [NAME, ..., default]` as MkDocs reads it: the first variable set, else the default."""
    items = loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode) else [
        loader.construct_scalar(node), None]
    names, default = (items[:-1], items[-1]) if len(items) > 1 else (items, None)
    return next((os.environ[n] for n in names if n in os.environ), default)


_ConfigLoader.add_constructor("!ENV", _env)


def mkdocs_config() -> dict:
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_ConfigLoader)


def site_url() -> str:
    """`site_url` from mkdocs.yml, "" when unset."""
    return mkdocs_config().get("site_url") or ""


def site_prefix() -> str:
    """The URL path the site lives under once published ("/" or "/repo/")."""
    path = urlsplit(site_url()).path or "/"
    return path if path.endswith("/") else path + "/"


# ---------------------------------------------------------------- the built pages


def page_paths(site: Path) -> list[str]:
    """Paths (relative to the site root) of every HTML page in the built site; "" is home."""
    paths = []
    for html in sorted(site.rglob("*.html")):
        rel = html.relative_to(site).as_posix()
        if rel == "index.html":
            paths.append("")
        elif rel.endswith("/index.html"):
            paths.append(rel.removesuffix("index.html"))
        else:
            paths.append(rel)  # 404.html
    return paths


def content_pages(site: Path) -> list[str]:
    """Pages a reader reaches through the site: all but the 404 page."""
    return [p for p in page_paths(site) if p != "404.html"]


def page_file(site: Path, path: str) -> Path:
    return site / path / "index.html" if path == "" or path.endswith("/") else site / path


def label(path: str) -> str:
    return path or "(home)"


# ---------------------------------------------------------------- a local server


class _Handler(http.server.SimpleHTTPRequestHandler):
    prefix = "/"

    def translate_path(self, path):
        url_path = urlsplit(path).path
        if not url_path.startswith(self.prefix):
            return str(Path(self.directory) / "-outside-the-site-")  # no such file: 404
        return super().translate_path("/" + url_path[len(self.prefix):])

    def end_headers(self):
        # LinkChecker throttles each host to about 3 requests a second unless the server sends
        # this header (its documented opt-in); harmless for the browser.
        self.send_header("LinkChecker", "local test server")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@dataclass
class Server:
    root: Path
    origin: str  # "http://127.0.0.1:PORT"
    prefix: str  # "/" or "/repo/"

    @property
    def base(self) -> str:
        return self.origin + self.prefix

    def url(self, path: str) -> str:
        return self.base + path.lstrip("/")

    def local_file(self, url: str) -> Path | None:
        """The file under the site root that a URL of this server serves, if any."""
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != self.origin or not parts.path.startswith(self.prefix):
            return None
        rel = unquote(parts.path[len(self.prefix):])
        file = self.root / rel
        if file.is_dir():
            file = file / "index.html"
        return file if file.is_file() else None


def serve(directory: Path, prefix: str = "/"):
    """Start a threaded HTTP server for `directory` on 127.0.0.1; returns (server, httpd)."""
    handler = type("Handler", (_Handler,), {"prefix": prefix})
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, name="site-server", daemon=True).start()
    return Server(directory, f"http://127.0.0.1:{httpd.server_address[1]}", prefix), httpd


@pytest.fixture(scope="session")
def site_server(built_site):
    """The built site on http://127.0.0.1:<free port>/<site_url path>/."""
    server, httpd = serve(built_site, site_prefix())
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


# ---------------------------------------------------------------- Chromium


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def install_chromium() -> str:
    """Install Debian's chromium with apt (as root only); returns "" or why it could not."""
    if os.geteuid() != 0:
        return "not root, so apt-get cannot install it (run: sudo apt-get install chromium)"
    if shutil.which("apt-get") is None:
        return "apt-get is not available to install it"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update"],
                ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                  timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"`{' '.join(cmd)}` took more than {INSTALL_TIMEOUT_S} s"
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
            return f"`{' '.join(cmd)}` failed: {' '.join(tail)}"
    return ""


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        why = install_chromium()
        path = find_chromium()
        if path is None:
            pytest.skip(f"no Chromium for the browser tests: {why or 'not found after install'}")
    return path


_SHARED: dict = {}  # one Playwright and one Chromium for the whole session


def _close_shared() -> None:
    if "browser" in _SHARED:
        _SHARED.pop("browser").close()
        _SHARED.pop("playwright").stop()


@pytest.fixture(scope="session")
def browser(chromium_path):
    """One headless Chromium for the session. Each test module imports this fixture, and pytest
    makes one instance per importing module; a second Playwright started while the first runs
    fails ("Sync API inside the asyncio loop"), so every instance shares one, closed at exit."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if "browser" not in _SHARED:
        _SHARED["playwright"] = sync_api.sync_playwright().start()
        _SHARED["browser"] = _SHARED["playwright"].chromium.launch(
            executable_path=chromium_path, headless=True,
            args=CHROMIUM_ARGS)  # Playwright adds a fresh profile dir
        atexit.register(_close_shared)
    yield _SHARED["browser"]


def new_context(browser, server: Server, scheme: str, viewport: dict | None = None):
    context = browser.new_context(color_scheme=scheme,
                                  viewport=viewport or {"width": 1280, "height": 900},
                                  service_workers="block")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    context.add_init_script(OPEN_SHADOW_ROOTS)
    context.set_default_timeout(20_000)
    return context


# ---------------------------------------------------------------- axe-core from npm


def fetch_axe() -> Path | str:
    """axe.min.js of axe-core AXE_VERSION, from the npm registry into CACHE; or why not."""
    target = CACHE / f"axe-core-{AXE_VERSION}" / "axe.min.js"
    if target.is_file():
        return target
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH, so axe-core cannot be fetched from the npm registry"
    work = CACHE / "npm-pack"
    work.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run([npm, "pack", f"axe-core@{AXE_VERSION}", "--json",
                               "--pack-destination", str(work)],
                              capture_output=True, text=True, timeout=300, cwd=work)
    except subprocess.TimeoutExpired:
        return "npm pack axe-core took more than 300 s"
    if proc.returncode != 0:
        return f"npm pack axe-core@{AXE_VERSION} failed: {proc.stderr.strip()[-300:]}"
    tarball = work / json.loads(proc.stdout)[0]["filename"]
    with tarfile.open(tarball) as tar:
        member = tar.extractfile("package/axe.min.js")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(member.read())
    tarball.unlink()
    return target


@pytest.fixture(scope="session")
def axe_source() -> str:
    found = fetch_axe()
    if isinstance(found, str):
        pytest.skip(found)
    return found.read_text()


# The dark pass needs only the rules that depend on colour (color-contrast is most of axe's time),
# and both passes run those without the code listings: their every token is a node for axe, and
# their colours are the theme's code variables (no listing sets its own: LISTING_COLOURS), which
# `code_colours` reads once per scheme.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
LISTINGS = ["pre"]

# What `exclude` selects is left out of the audit, and its content is taken out of the page while
# axe runs and put back after (the same nodes): axe walks every node of the document whatever
# `exclude` says, and a page's listings are nine in ten of its nodes (2.5 s of a 3 s audit).
AXE_RUN = """
async ([rules, exclude, skip]) => {
  const options = { resultTypes: ["violations"] };
  if (rules) options.runOnly = { type: "rule", values: rules };
  if (skip.length) options.rules = Object.fromEntries(skip.map(id => [id, { enabled: false }]));
  const held = exclude.flatMap(s => [...document.querySelectorAll(s)]).map(el => [el, [...el.childNodes]]);
  held.forEach(([el]) => el.replaceChildren());
  let result;
  try {
    result = await axe.run(exclude.length ? { exclude: exclude.map(s => [s]) } : document, options);
  } finally {
    held.forEach(([el, nodes]) => el.replaceChildren(...nodes));
  }
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 4).map(n => n.target.join(" ") + " -- " +
                                       (n.failureSummary || "").replace(/\\s+/g, " ").slice(0, 240)),
    count: v.nodes.length,
  }));
}
"""


def run_axe(page, axe_js: str, rules: list[str] | None = None,
            exclude: list[str] = (), skip: list[str] = ()) -> list[dict]:
    """axe's violations on the page (`rules`; None: all but those in `skip`), leaving out what
    `exclude` selects."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_js)
    return page.evaluate(AXE_RUN, [rules, list(exclude), list(skip)])


def full_audit(page, axe_js: str) -> list[dict]:
    """Every axe rule on the page, the colour rules (COLOUR_RULES) without the listings: on the
    listings' token nodes they were a third of the audit (the 30 pages: 23 s, 17 s without, on
    2026-12-06), and the listings' colours are the theme's code variables (no listing sets its
    own: LISTING_COLOURS; their contrast: `code_colours`). The other rules see the listings."""
    return (run_axe(page, axe_js, None, (), COLOUR_RULES)
            + run_axe(page, axe_js, COLOUR_RULES, LISTINGS))


# A listing's elements that set a colour of their own in a style attribute (a colour property, or
# a custom property such as the theme's variables) or an old `color` attribute: [each's tag and
# style]. The colour audits leave the listings out because their colours are the theme's code
# variables; a colour written into a listing would escape both.
LISTING_COLOURS = r"""
() => [...document.querySelectorAll("pre, pre *")]
  .filter(el => el.hasAttribute("color")
                || /(^|;|\s)(--|color|background|fill|stroke|opacity|filter)/i.test(el.getAttribute("style") || ""))
  .map(el => `<${el.tagName.toLowerCase()} style="${el.getAttribute("style") || ""}"`
             + (el.hasAttribute("color") ? ` color="${el.getAttribute("color")}"` : "") + ">")
"""


# Each code colour variable of the theme (--md-code-fg-color, --md-code-hl-<token>-color, from
# every stylesheet of the page), as the browser computes it inside a listing, with the
# listing's background: [(name, (r, g, b, a), (r, g, b, a))].
CODE_COLOURS = """
() => {
  const names = new Set(["--md-code-fg-color"]);
  const scan = rules => {
    for (const rule of rules) {
      for (const name of Array.from(rule.style || []))
        if (/^--md-code-hl-\\w+-color$/.test(name)) names.add(name);
      if (rule.cssRules) scan(rule.cssRules);  // inside @media and the like
    }
  };
  for (const sheet of document.styleSheets) scan(sheet.cssRules);
  const code = document.querySelector(".md-typeset pre > code");
  const rgba = value => {
    const probe = document.createElement("span");
    probe.style.color = value;
    code.appendChild(probe);
    const found = getComputedStyle(probe).color.match(/[\\d.]+/g).map(Number);
    probe.remove();
    return found.length === 3 ? [...found, 1] : found;
  };
  const background = rgba("var(--md-code-bg-color)");
  return [...names].sort().map(name => [name, rgba(`var(${name})`), background]);
}
"""


def contrast(fg: tuple, bg: tuple) -> float:
    """WCAG contrast ratio of a colour (its alpha laid over `bg`) on an opaque `bg`."""
    def luminance(rgb):
        c = [x / 255 for x in rgb]
        c = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    over = [f * fg[3] + b * (1 - fg[3]) for f, b in zip(fg[:3], bg[:3])]
    hi, lo = sorted((luminance(over), luminance(bg[:3])), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def code_colours(page) -> dict[str, float]:
    """{code colour variable: its contrast on the listing background}, on the loaded page."""
    return {name: contrast(fg, bg) for name, fg, bg in page.evaluate(CODE_COLOURS)}


# ---------------------------------------------------------------- one visit per page

IMAGES = """
async () => {
  const images = [...document.images];
  images.forEach(img => { img.loading = "eager"; });
  await Promise.all(images.map(img => img.decode().catch(() => null)));
  return images.map(img => ({
    src: (img.currentSrc || img.src || "").slice(0, 100),
    alt: img.getAttribute("alt"),
    loaded: img.complete && img.naturalWidth > 0,
  }));
}
"""

CODE_BLOCKS = """
() => {
  const blocks = [...document.querySelectorAll(".md-content pre > code")];
  const buttons = [...document.querySelectorAll(".md-content button[data-md-type=copy]")];
  const targets = new Map();
  for (const b of buttons) {
    const t = document.querySelector(b.getAttribute("data-clipboard-target"));
    if (t) targets.set(t, b);
  }
  return {
    blocks: blocks.length,
    without_button: blocks.filter(b => !targets.has(b)).map(b => b.innerText.slice(0, 60)),
  };
}
"""

DRAWN = ("n => [...document.querySelectorAll('div.mermaid')]"
         ".filter(d => d.shadowRoot && d.shadowRoot.querySelector('svg')).length >= n")

# Each diagram as drawn: its size and text, the width of the text column it sits in, whether
# its box scrolls sideways, and whether the cue above it is shown (accessibility.js).
DIAGRAM_FIT = r"""
() => [...document.querySelectorAll("div.mermaid")].map(d => {
  const svg = d.shadowRoot && d.shadowRoot.querySelector("svg");
  const column = d.closest(".md-content__inner") || d.parentElement;
  const style = getComputedStyle(column);
  const inner = column.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const hint = d.previousElementSibling;
  const box = svg ? svg.getBoundingClientRect() : null;
  return {
    text: (svg ? svg.querySelector("g") || svg : d).textContent.trim().slice(0, 200),
    width: box ? Math.round(box.width * 10) / 10 : null,
    height: box ? Math.round(box.height * 10) / 10 : null,
    column: Math.round(inner * 10) / 10,
    scrolls: ["auto", "scroll"].includes(getComputedStyle(d).overflowX) &&
             d.scrollWidth > d.clientWidth + 1,
    cue: !!(hint && hint.classList.contains("scroll-hint") && hint.offsetParent !== null &&
            hint.textContent.trim()),
  };
})
"""
# Every overflowing diagram has its cue: accessibility.js has seen the drawn diagrams.
CUES_SET = """() => [...document.querySelectorAll("div.mermaid")].every(d =>
  d.scrollWidth <= d.clientWidth + 1 ||
  (d.previousElementSibling && d.previousElementSibling.classList.contains("scroll-hint")))"""

# What makes a page scroll sideways: the page itself, and each chart wider than its box.
SIDEWAYS = """() => ({
  page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  charts: [...document.querySelectorAll("figure.data-chart")].map(f => {
    const img = [...f.querySelectorAll("img")].find(i => i.offsetParent !== null);
    const box = f.getBoundingClientRect();
    return {alt: (f.querySelector("img") || {}).alt || "",
            over: Math.max(f.scrollWidth - f.clientWidth,
                           img ? img.getBoundingClientRect().right - box.right : 0,
                           box.right - document.documentElement.clientWidth)};
  }),
})"""

NOTEBOOK = """
() => {
  const wrapper = document.querySelector(".jupyter-wrapper");
  if (!wrapper) return null;
  const outputs = wrapper.querySelectorAll(".jp-OutputArea-output");
  const images = wrapper.querySelectorAll(".jp-OutputArea-output img");
  return {
    cells: wrapper.querySelectorAll(".jp-Cell").length,
    outputs: outputs.length,
    images: images.length,
    images_loaded: [...images].filter(i => i.complete && i.naturalWidth > 0).length,
    errors: wrapper.querySelectorAll("[data-mime-type='application/vnd.jupyter.stderr']").length,
  };
}
"""


# What a reader can read (issue "Readable on every screen"): tables that overflow without a cue,
# code in table cells broken over two lines, charts (their light/dark copies, the smallest type
# as rendered: the SVG's smallest font-size scaled by shown width / viewBox width), notebook
# output lines that wrap, Mermaid text shrunk below reading size.
READABILITY = r"""
async () => {
  // Shown: laid out, and not inside a closed block (Chromium lays out a closed <details>'s
  // content for measuring, but the reader sees none of it).
  const shown = el => el.offsetParent !== null && el.getClientRects().length > 0 &&
                      !el.parentElement.closest("details:not([open])");
  // A chart's SVG laid out inline at the width it is shown (an <img>'s inside cannot be measured):
  // the height of each plot area (matplotlib's axes patch) in CSS px, and the pairs of tick
  // labels of one axis that overlap.
  const chartLayout = (svgText, width) => {
    const box = document.createElement("div");
    box.style.cssText = `position:absolute; left:-20000px; top:0; width:${width}px; visibility:hidden`;
    box.innerHTML = svgText.replace(/^<\?xml[^>]*>/, "").replace(/<!DOCTYPE[^>]*>/, "");
    document.body.appendChild(box);
    const svg = box.querySelector("svg");
    svg.style.width = width + "px";
    svg.style.height = "auto";
    const plots = [...svg.querySelectorAll("g[id^='axes_'] > g[id^='patch_']:first-child")]
      .map(g => Math.round(g.getBoundingClientRect().height));
    const overlaps = [];
    for (const axis of svg.querySelectorAll("g[id^='matplotlib.axis_']")) {
      const labels = [];  // [text, box] per tick (a label of several lines is several <text>s)
      for (const tick of axis.querySelectorAll(":scope > g[id^='xtick_'], :scope > g[id^='ytick_']")) {
        const texts = [...tick.querySelectorAll("text")].filter(t => t.textContent.trim());
        if (!texts.length) continue;
        const boxes = texts.map(t => t.getBoundingClientRect());
        labels.push([texts.map(t => t.textContent.trim()).join(" "), {
          left: Math.min(...boxes.map(b => b.left)), right: Math.max(...boxes.map(b => b.right)),
          top: Math.min(...boxes.map(b => b.top)), bottom: Math.max(...boxes.map(b => b.bottom))}]);
      }
      for (let i = 0; i < labels.length; i++) {
        for (let j = i + 1; j < labels.length; j++) {
          const [a, b] = [labels[i][1], labels[j][1]];
          if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
            overlaps.push([labels[i][0], labels[j][0]]);
          }
        }
      }
    }
    box.remove();
    return {plot_px: plots.length ? Math.min(...plots) : null, tick_overlaps: overlaps};
  };
  // A block whose lines wrap: its text laid out on more lines than it has (line anchors and
  // other empty elements do not count).
  const wrapsInsideALine = el => {
    const lines = el.textContent.split("\n").filter(l => l.trim()).length;
    const tops = new Set();
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
    }
    return tops.size > lines;
  };
  const out = {tables: [], broken_code: [], charts: [], wrapped_outputs: [], wrapped_code: [],
               small_diagram_text: []};
  for (const wrap of document.querySelectorAll(".md-typeset__scrollwrap")) {
    if (!shown(wrap) || wrap.scrollWidth <= wrap.clientWidth + 1) continue;
    const hint = wrap.previousElementSibling;
    if (!(hint && hint.classList.contains("scroll-hint") && shown(hint))) {
      out.tables.push(wrap.innerText.trim().slice(0, 60));
    }
  }
  // Code in a cell may wrap at a space (a call, an error message), never inside a word.
  const brokenInsideAWord = el => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const word of n.textContent.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(n, word.index);
        range.setEnd(n, word.index + word[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) return true;
      }
    }
    return false;
  };
  for (const code of document.querySelectorAll(".md-typeset table code")) {
    if (shown(code) && brokenInsideAWord(code)) out.broken_code.push(code.textContent);
  }
  for (const fig of document.querySelectorAll("figure.data-chart")) {
    const img = [...fig.querySelectorAll("img")].find(shown);
    const item = {alt: (fig.querySelector("img") || {}).alt || "", light: !!fig.querySelector('img[src$="#only-light"]'),
                  dark: !!fig.querySelector('img[src$="#only-dark"]'), shown: img ? (img.src.endsWith("#only-dark") ? "chart-dark" : "chart-light") : null, min_px: null};
    const src = img ? img.currentSrc || img.src : "";  // the phone copy, where the width picks it
    if (src.startsWith("data:image/svg+xml;base64,")) {
      const text = atob(src.split(",")[1].split("#")[0]);
      const svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
      const box = (svg.getAttribute("viewBox") || "").split(/\s+/).map(Number);
      const sizes = [...text.matchAll(/font-size:\s*([0-9.]+)px/g)].map(m => +m[1]);
      if (box.length === 4 && sizes.length) {
        item.min_px = Math.min(...sizes) * img.getBoundingClientRect().width / box[2];
      }
      const utf8 = new TextDecoder().decode(Uint8Array.from(text, c => c.charCodeAt(0)));
      Object.assign(item, chartLayout(utf8, img.getBoundingClientRect().width));
    }
    out.charts.push(item);
  }
  for (const code of document.querySelectorAll(".md-typeset pre > code")) {
    if (shown(code) && wrapsInsideALine(code)) out.wrapped_code.push(code.textContent.slice(0, 60));
  }
  for (const pre of document.querySelectorAll(".jupyter-wrapper .jp-OutputArea-output pre")) {
    if (shown(pre) && wrapsInsideALine(pre)) out.wrapped_outputs.push(pre.textContent.slice(0, 60));
  }
  for (const d of document.querySelectorAll("div.mermaid")) {
    const svg = d.shadowRoot && d.shadowRoot.querySelector("svg");
    if (!svg) continue;
    for (const t of svg.querySelectorAll("foreignObject div, text")) {
      const px = parseFloat(getComputedStyle(t).fontSize) * svg.getBoundingClientRect().width /
                 (svg.viewBox.baseVal && svg.viewBox.baseVal.width || svg.getBoundingClientRect().width);
      if (t.textContent.trim() && px < MIN_PX) { out.small_diagram_text.push([t.textContent.trim().slice(0, 40), Math.round(px * 10) / 10]); break; }
    }
  }
  return out;
}
"""
# Each table as a reader sees it with every closed block opened and every tab shown (restored
# after): the tables wider than their column (first row's text, px beyond it) and those with a
# row taller than TALL_ROW_PX (first row's text, the tallest row's px). And, of the tables shown
# as the page loads (accessibility.js has marked those that scroll), each whose first column
# shows less than half of itself when the table is scrolled to its right end (first row's
# text, px its first cell moved).
TABLE_FIT = r"""
() => {
  const name = wrap => wrap.querySelector("tr").innerText.replace(/\s+/g, " ").trim().slice(0, 60);
  const out = {wide: [], tall: [], unpinned: []};
  for (const wrap of document.querySelectorAll(".md-typeset__scrollwrap")) {
    const first = wrap.querySelector("tr > :first-child");
    if (!first || !wrap.getClientRects().length || wrap.closest("details:not([open])") ||
        wrap.scrollWidth <= wrap.clientWidth + 1) continue;
    const before = wrap.scrollLeft;
    wrap.scrollLeft = wrap.scrollWidth;
    const cell = first.getBoundingClientRect(), box = wrap.getBoundingClientRect();
    wrap.scrollLeft = before;
    // A first column wider than the table's scroll leaves room for may show in part only.
    const shownPx = Math.min(cell.right, box.right) - Math.max(cell.left, box.left);
    if (shownPx < Math.min(cell.width, box.width) / 2) out.unpinned.push([name(wrap), Math.round(cell.left - box.left)]);
  }
  const closed = [...document.querySelectorAll("details:not([open])")];
  const tabs = [...document.querySelectorAll(".tabbed-block")]
    .filter(b => getComputedStyle(b).display === "none").map(b => [b, b.style.display]);
  closed.forEach(d => { d.open = true; });
  tabs.forEach(([b]) => { b.style.display = "block"; });
  for (const wrap of document.querySelectorAll(".md-typeset__scrollwrap")) {
    if (!wrap.getClientRects().length || !wrap.querySelector("tr")) continue;
    const over = wrap.scrollWidth - wrap.clientWidth;
    if (over > 1) out.wide.push([name(wrap), over]);
    const tallest = Math.max(...[...wrap.querySelectorAll("tr")].map(r => Math.round(r.getBoundingClientRect().height)));
    if (tallest > TALL_ROW_PX) out.tall.push([name(wrap), tallest]);
  }
  tabs.forEach(([b, display]) => { b.style.display = display; });
  closed.forEach(d => { d.open = false; });
  return out;
}
"""
TALL_ROW_PX = 400  # the tallest table row a phone may show: about half its screen
MIN_READABLE_PX = 10  # the smallest type a chart or diagram may show, in CSS px
NARROW_VIEWPORT = {"width": 390, "height": 844}  # a phone


COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb"}


@functools.lru_cache(maxsize=None)
def transfer_size(file: Path) -> int:
    """Bytes on the wire for `file` as GitHub Pages sends it: text gzip-compressed, images as
    they are (HTTP headers not counted). The local test server sends everything uncompressed."""
    data = file.read_bytes()
    return len(gzip.compress(data, 6)) if file.suffix in COMPRESSED else len(data)


@dataclass
class Visit:
    path: str
    scheme: str = ""  # the colour scheme the browser asked for: "light" or "dark"
    color_scheme: str = ""  # the palette Material applied (data-md-color-scheme)
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    offsite_requests: list[str] = field(default_factory=list)
    served: set[str] = field(default_factory=set)  # URLs answered 200 by the site server
    bytes: int = 0  # transferred, as GitHub Pages would send it (see transfer_size)
    images: list[dict] = field(default_factory=list)
    width: int = 1280  # the viewport's, in CSS px
    mermaid_blocks: int = 0
    mermaid_svgs: list = field(default_factory=list)  # DIAGRAM_FIT of each diagram
    mermaid_error: str = ""
    sideways: dict = field(default_factory=dict)  # SIDEWAYS
    notebook_rgb: list[tuple] = field(default_factory=list)  # mean colour of each image, 0-1
    code: dict = field(default_factory=dict)
    copied: tuple[str, str] | None = None  # (code block text, clipboard text)
    notebook: dict | None = None
    axe: list[dict] = field(default_factory=list)
    listing_colours: list[str] = field(default_factory=list)  # LISTING_COLOURS
    readability: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)  # TABLE_FIT
    height: int = 0  # the page's full height in CSS px, collapsed blocks closed
    printed: dict | None = None  # PRINT_LAYOUT and the PDF's size, for pages with a figure


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


class Recorder:
    """Routes page events into the Visit in progress (none between visits)."""

    def __init__(self, page, server: Server):
        self.server, self.visit, self.pending = server, None, set()
        page.on("console", self._console)
        page.on("requestfinished", lambda r: self.pending.discard(r))
        page.on("requestfailed", lambda r: self.pending.discard(r))
        page.on("pageerror", lambda err: self._add("console_errors", f"uncaught: {err}"))
        page.on("request", self._request)
        page.on("requestfailed", lambda r: self._add(
            "failed_requests", f"{r.url[:160]} ({r.failure})"))
        page.on("response", self._response)

    def _add(self, name, item):
        if self.visit is not None:
            getattr(self.visit, name).append(item)

    def _console(self, msg):
        if msg.type == "error":
            where = msg.location.get("url", "") if msg.location else ""
            self._add("console_errors", f"{msg.text[:300]} [{where}]")

    def _request(self, request):
        self.pending.add(request)
        scheme = urlsplit(request.url).scheme
        if scheme in ("http", "https", "ws", "wss") and not request.url.startswith(
                self.server.origin + "/"):
            self._add("offsite_requests", request.url[:200])

    def _response(self, response):
        if self.visit is None:
            return
        if response.status >= 400:
            self.visit.failed_requests.append(f"{response.url[:160]} (HTTP {response.status})")
        elif response.status == 200 and response.url not in self.visit.served:
            self.visit.served.add(response.url)
            file = self.server.local_file(response.url)
            if file is not None:
                self.visit.bytes += transfer_size(file)


    def settle(self, page, timeout_s: float = 10.0) -> None:
        """Wait until every request the page started has finished (the search index, ...).
        Playwright delivers events only while it is called, hence wait_for_timeout."""
        deadline = time.monotonic() + timeout_s
        page.wait_for_timeout(10)
        while self.pending and time.monotonic() < deadline:
            page.wait_for_timeout(50)


def mean_rgb(png: bytes) -> tuple[float, float, float]:
    """The mean colour (each channel 0-1) of a screenshot."""
    import io

    from PIL import Image, ImageStat

    return tuple(c / 255 for c in ImageStat.Stat(Image.open(io.BytesIO(png)).convert("RGB")).mean)


def same_colours(a: tuple, b: tuple, tolerance: float = 0.03) -> bool:
    """Whether two mean colours are one picture's, unfiltered: no channel moved by more than
    `tolerance` (an inversion darkens the paper; a hue rotation moves the channels apart)."""
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


# After a change of width: the layout redone, accessibility.js's resize observers run, and the
# images a <picture> picks for the new width decoded.
RELAID = """async () => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
}"""


def measure(page, visit: Visit, mermaid_timeout_ms: int = MERMAID_TIMEOUT_MS) -> None:
    """What depends on the width: diagrams as drawn, readability, sideways scroll, notebook
    images' colours."""
    if visit.mermaid_blocks:
        # No scrolling: every diagram must be drawn on its own once the page is idle, as for
        # print (mermaid-loader.js).
        try:
            page.wait_for_function(DRAWN, arg=visit.mermaid_blocks, timeout=mermaid_timeout_ms)
            page.wait_for_function(CUES_SET, timeout=2000)
        except Exception as exc:  # noqa: BLE001 - reported by the diagram tests
            visit.mermaid_error = str(exc).splitlines()[0]
        visit.mermaid_svgs = page.evaluate(DIAGRAM_FIT)
    visit.height = page.evaluate("document.documentElement.scrollHeight")
    visit.readability = page.evaluate(READABILITY.replace("MIN_PX", str(MIN_READABLE_PX)))
    visit.sideways = page.evaluate(SIDEWAYS)
    visit.tables = page.evaluate(TABLE_FIT.replace("TALL_ROW_PX", str(TALL_ROW_PX)))
    for img in page.locator(".jupyter-wrapper .jp-OutputArea-output img:visible").all():
        visit.notebook_rgb.append(mean_rgb(img.screenshot()))


# Opens the closed blocks around the page's first code block; the number opened.
OPEN_FIRST_CODE = """() => {
  const code = document.querySelector(".md-content details pre > code");
  let opened = 0;
  for (let d = code && code.closest("details"); d; d = d.parentElement.closest("details")) {
    if (!d.open) { d.open = true; d.setAttribute("data-opened-by-test", ""); opened++; }
  }
  return opened;
}"""


# On paper (A4, Chromium's ``page.pdf``): what a page prints is its layout under print media at the
# printable width, so a page with a chart or a diagram is measured there and then printed, in the
# same visit (the test_site_browser.py print checks read it).
A4_WIDTH_MM, MARGIN_MM = 210, 12
PRINT_WIDTH_PX = round((A4_WIDTH_MM - 2 * MARGIN_MM) / 25.4 * 96)  # CSS px: 96 to the inch
PRINT_VIEWPORT = {"width": PRINT_WIDTH_PX, "height": 1100}
PRINT_FIGURES = ('class="mermaid"', 'class="data-chart"')

# Under print media: each chart's shown copies and their widths, each diagram's drawn width,
# the width of the text, and the text a reader would see (innerText follows the CSS).
PRINT_LAYOUT = r"""
() => {
  const seen = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const page = document.documentElement.clientWidth;
  return {
    page,
    sideways: document.documentElement.scrollWidth - page,
    charts: [...document.querySelectorAll("figure.data-chart")].map(f => ({
      alt: (f.querySelector("img") || {}).alt || "",
      shown: [...f.querySelectorAll("img")].filter(seen).map(i => ({
        copy: i.src.endsWith("#only-dark") ? "dark" : "light",
        right: Math.round(i.getBoundingClientRect().right)})),
    })),
    diagrams: [...document.querySelectorAll(".mermaid")].map(d => {
      const svg = d.shadowRoot && d.shadowRoot.querySelector("svg");
      return {drawn: !!svg, right: svg ? Math.round(svg.getBoundingClientRect().right) : null,
              width: svg ? Math.round(svg.getBoundingClientRect().width) : null};
    }),
    text: document.body.innerText,
  };
}
"""


def print_page(page, pdf: bool = True) -> dict:
    """The loaded page printed: its PRINT_LAYOUT at the printable width under print media, and
    (`pdf`) the size of its A4 PDF; the page is left under screen media."""
    page.set_viewport_size(PRINT_VIEWPORT)
    page.emulate_media(media="print")
    try:
        page.evaluate(RELAID)
        layout = page.evaluate(PRINT_LAYOUT)
        if pdf:
            layout["pdf_bytes"] = len(page.pdf(format="A4", margin={
                side: f"{MARGIN_MM}mm" for side in ("top", "right", "bottom", "left")}))
    finally:
        page.emulate_media(media="screen")
    return layout


def visit_page(page, recorder: Recorder, server: Server, path: str, scheme: str,
               axe_js: str | None, full: bool, rules: list[str] | None = COLOUR_RULES,
               mermaid_timeout_ms: int = MERMAID_TIMEOUT_MS, narrow: dict | None = None,
               printed: bool = False, pdf: bool = True, measured: bool = True):
    """Load one page and record what the tests check. `full`: every check (the copy button
    clicked, images, code, notebook); otherwise the scheme, errors, requests, diagrams,
    readability, sideways scroll, notebook images' colours and axe's `rules` (None: all);
    without `measured`, none of what `measure` records at this width.
    With `printed`, the page, settled, is then printed (`print_page`, into visit.printed; to a
    PDF too with `pdf`). With
    `narrow` (a viewport), the page is then narrowed to it and measured again (`measure`): the
    answer is (the visit, the narrow visit), else the visit."""
    visit = Visit(path, scheme, width=page.viewport_size["width"])
    visit.mermaid_blocks = page_file(server.root, path).read_text().count('class="mermaid"')
    recorder.visit = visit
    wide = page.viewport_size
    try:
        page.goto(server.url(path), wait_until="load")
        visit.color_scheme = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
        if measured:
            measure(page, visit, mermaid_timeout_ms)
        if axe_js:
            # Audit before anything is clicked: the copy button's "Copied to clipboard" toast
            # fades out over a few hundred ms, and axe would catch it half-transparent.
            visit.axe = (full_audit(page, axe_js) if full
                         else run_axe(page, axe_js, rules, LISTINGS))
            visit.listing_colours = page.evaluate(LISTING_COLOURS)
        if full:
            visit.images = page.evaluate(IMAGES)
            visit.code = page.evaluate(CODE_BLOCKS)
            visit.notebook = page.evaluate(NOTEBOOK)
            # Click the first copy button a reader can see (others may sit in a closed tab). A
            # page whose code is all in closed blocks has the first opened, as a reader would,
            # and closed again after (the narrow pass measures the page as it loads).
            button = page.locator(".md-content button[data-md-type=copy]:visible").first
            opened = 0
            if visit.code["blocks"] and not button.count():
                opened = page.evaluate(OPEN_FIRST_CODE)
            if visit.code["blocks"] and button.count():
                page.evaluate("navigator.clipboard.writeText('')")
                button.scroll_into_view_if_needed()
                button.click()
                code = page.evaluate("t => document.querySelector(t).innerText",
                                     button.get_attribute("data-clipboard-target"))
                visit.copied = (code, page.evaluate("navigator.clipboard.readText()"))
            if opened:
                page.evaluate("() => document.querySelectorAll('details[data-opened-by-test]')"
                              ".forEach(d => { d.open = false; d.removeAttribute('data-opened-by-test'); })")
        recorder.settle(page)  # the requests it started (search index, ...) belong to this visit
        if printed:
            visit.printed = print_page(page, pdf)
        if narrow is None:
            return visit
        small = Visit(path, scheme, color_scheme=visit.color_scheme, width=narrow["width"],
                      mermaid_blocks=visit.mermaid_blocks)
        page.set_viewport_size(narrow)
        page.evaluate(RELAID)
        measure(page, small, mermaid_timeout_ms)
        return visit, small
    finally:
        recorder.visit = None
        if page.viewport_size != wide:
            page.set_viewport_size(wide)


WIDE_VIEWPORT = {"width": 1280, "height": 900}
FIGURES = ('class="mermaid"', 'class="data-chart"', 'class="jupyter-wrapper"')


class Pass(NamedTuple):
    """What one colour scheme's pass checks on each page."""
    full: bool  # every check (visit_page's `full`), or those a scheme can change
    rules: list[str] | None  # axe's rules (None: all, see full_audit)
    measured: str  # the pages `measure`d at 1280 px and again at 390 px: "all" or "figures"
    searched: tuple[str, ...]  # the pages on which Material's search worker runs


# The dark pass keeps to what the scheme changes: its colours (palette, axe's colour rules,
# charts' and notebooks' copies, what prints), on every page. The widths are measured on the
# pages with a chart, a diagram or a notebook (the rest a phone in the dark shows as the phone in
# the light and the wide screen in the dark do; no dark check reads their measures).
# Material's search worker indexes the same search_index.json on every page load, whatever the
# page or scheme: a third of a load's CPU. It runs on the home page of the light pass (and in the
# search tests); elsewhere the site's worker file is answered with an empty script, after its
# request was made and recorded as any other (a wrong path or a missing file still fails).
PASSES = {"light": Pass(True, None, "all", ("",)),
          "dark": Pass(False, COLOUR_RULES, "figures", ())}
SEARCH_WORKER = "**/assets/javascripts/workers/search.*.js"
# The PDF (`print_page`) shows that the page prints at all; its layout under print media, which
# the print tests read, is measured on every page of both schemes. Light prints every PDF; dark,
# the pages holding both a diagram and a chart (the scheme changes colours, not what prints).
PDF_FIGURES = {"light": (), "dark": PRINT_FIGURES}


@dataclass
class SiteVisits:
    passes: dict[tuple[str, str], dict[str, Visit]]  # (width, scheme) -> {page: its visit}
    seconds: float

    @property
    def light(self) -> dict[str, Visit]:
        return self.passes["1280", "light"]

    @property
    def dark(self) -> dict[str, Visit]:
        return self.passes["1280", "dark"]

    @property
    def narrow(self) -> dict[str, Visit]:
        return self.passes["390", "light"]

    @property
    def printed(self) -> dict[tuple[str, str], dict]:
        """{(scheme, page): its print layout}: every page with a chart or a diagram."""
        return {(scheme, p): v.printed for (width, scheme), visits in self.passes.items()
                if width == "1280" for p, v in visits.items() if v.printed is not None}


@pytest.fixture(scope="session")
def site_visits(browser, site_server, axe_source) -> SiteVisits:
    """Every built page loaded once per colour scheme at 1280 px, measured there, printed (a
    page with a chart or a diagram) and measured again narrowed to 390 px (PASSES), every check
    of a width and scheme made in that one load.
    Each module that imports this fixture gets an instance of its own (see `browser`), so the
    visits are made once and kept in _SHARED."""
    if "visits" in _SHARED:
        return _SHARED["visits"]
    start = time.monotonic()
    paths = page_paths(site_server.root)
    with_figures = {p for p in paths
                    if any(f in page_file(site_server.root, p).read_text() for f in FIGURES)}
    to_print = {p for p in paths
                if any(f in page_file(site_server.root, p).read_text() for f in PRINT_FIGURES)}
    passes: dict = {}
    searching = {"now": False}

    def search_worker(route):
        if searching["now"] or site_server.local_file(route.request.url) is None:
            route.continue_()
        else:  # an empty worker: Material's search waits for its answer, quietly
            route.fulfill(status=200, content_type="text/javascript", body="")

    for scheme, (full, rules, measured, searched) in PASSES.items():
        context = new_context(browser, site_server, scheme, viewport=WIDE_VIEWPORT)
        context.route(SEARCH_WORKER, search_worker)
        page = context.new_page()
        recorder = Recorder(page, site_server)
        wide, small = passes.setdefault(("1280", scheme), {}), passes.setdefault(("390", scheme), {})
        for path in paths:
            searching["now"] = path in searched
            both = measured == "all" or path in with_figures
            text = page_file(site_server.root, path).read_text()
            found = visit_page(page, recorder, site_server, path, scheme, axe_source, full=full,
                               rules=rules, narrow=NARROW_VIEWPORT if both else None,
                               printed=path in to_print,
                               pdf=all(f in text for f in PDF_FIGURES[scheme]), measured=both)
            wide[path], small[path] = found if both else (found, None)
        passes["390", scheme] = {p: v for p, v in small.items() if v is not None}
        context.close()
    _SHARED["visits"] = SiteVisits(passes, time.monotonic() - start)
    return _SHARED["visits"]


def normalised_lines(text: str) -> list[str]:
    return _lines(text)


def search(page, term: str, base: str) -> list[str]:
    """Type `term` into the search box; the documents found, best first, as site paths."""
    box = page.locator("input.md-search__input")
    box.click()
    box.fill(term)
    box.press("End")
    read = """() => [document.querySelector('.md-search-result__meta')?.innerText || '',
        ...[...document.querySelectorAll('li.md-search-result__item > a')].map(a => a.href)]"""
    previous, deadline = None, time.monotonic() + 10
    while time.monotonic() < deadline:
        current = page.evaluate(read)
        if current == previous and len(current) > 1:
            break
        previous = current
        time.sleep(0.15)
    documents = []
    for href in previous[1:]:
        url = urlsplit(href)
        path = url.path.removeprefix(urlsplit(base).path)
        if path not in documents:
            documents.append(path)
    return documents
