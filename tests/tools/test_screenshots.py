"""tools/screenshots.py writes each PNG whole or not at all: a full disk keeps the earlier one."""

from __future__ import annotations

import contextlib
import resource
import sys
import types

from conftest import ROOT


class FakePage:
    """Stands in for a Playwright page: its screenshot is 64 KiB of PNG-looking bytes."""

    def goto(self, url, **kwargs): pass
    def evaluate(self, script): pass
    def wait_for_timeout(self, ms): pass
    def screenshot(self, path=None, full_page=False):
        data = b"\x89PNG" + b"\x01" * 65536
        if path:  # as Playwright does: in place
            with open(path, "wb") as f:
                f.write(data)
        return data


class FakeBrowser:
    def new_context(self, **kwargs):
        return types.SimpleNamespace(new_page=FakePage, close=lambda: None)

    def close(self): pass


def fake_playwright(monkeypatch):
    browser = types.SimpleNamespace(chromium=types.SimpleNamespace(launch=lambda **kw: FakeBrowser()))
    module = types.ModuleType("playwright.sync_api")
    module.sync_playwright = lambda: contextlib.nullcontext(browser)
    monkeypatch.setitem(sys.modules, "playwright.sync_api", module)
    from tests.site import sitecheck

    monkeypatch.setattr(sitecheck, "find_chromium", lambda: "/usr/bin/chromium")


def test_a_full_disk_keeps_the_earlier_screenshot(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT))
    from tools import screenshots

    fake_playwright(monkeypatch)
    site, out = tmp_path / "site", tmp_path / "shots"
    site.mkdir()
    (site / "index.html").write_text("<p>home</p>")
    out.mkdir()
    earlier = out / "home-390-light.png"
    earlier.write_bytes(b"the earlier screenshot")
    args = [str(site), "", "-o", str(out), "--widths", "390", "--schemes", "light"]
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))  # `ulimit -f`: a nearly full disk
    try:
        from bench.cli import run_main

        code = run_main(screenshots.main, args)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    err = capsys.readouterr().err
    assert code == 1 and err == f"error: cannot write {earlier}: File too large\n", err
    assert earlier.read_bytes() == b"the earlier screenshot"
    assert [p.name for p in out.iterdir()] == [earlier.name]  # no temporary left
    assert run_main(screenshots.main, args) == 0  # without the limit: the new one, whole
    assert earlier.read_bytes() == FakePage().screenshot()
