"""The HTML reports in a real browser: each sample's scorecard and brief, the leaderboard and
the audit trend pages load in headless Chromium (Debian's ``chromium`` package) with no
script error, no element wider than the page, every chart drawn and every link resolving.

Each page is copied beside itself with a probe script first in ``<head>`` (ahead of the
page's Content-Security-Policy, so the policy still governs everything the page loads). The
probe records page errors, failed loads, policy violations and ``console.error`` calls; after
``load`` it measures the layout and writes the result as JSON into ``<pre
id="cmax-browser-check">``, which ``--dump-dom`` prints. Links are checked from the HTML.
Without a ``chromium`` binary the test skips (``bash tools/install-system-deps.sh --tests``
installs it); in CI (``CI`` set) it fails instead, so the browser check is never silently absent.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from cmax.cli import main
from cmax.history import run_audit
from cmax.history.trend import render_trend_reports
from tests.history.history_fakes import fake_assess, write_run

#: the window every page is checked at, and a narrow one (half a laptop screen) for one page
#: of each kind but the leaderboard, whose 14 columns need about 840 px (below that its
#: fixed-layout table pushes past the page)
WIDTH, NARROW = 1280, 800
PROBE_ID = "cmax-browser-check"
PROBE_PREFIX = "browser-probe."

PROBE = """<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    var t = e.target;
    errors.push(t && t !== window && (t.src || t.href)
      ? "failed to load " + (t.src || t.href).slice(0, 80)
      : "error: " + e.message);
  }, true);
  window.addEventListener("unhandledrejection", function (e) {
    errors.push("unhandled rejection: " + String(e.reason));
  });
  document.addEventListener("securitypolicyviolation", function (e) {
    errors.push("CSP " + e.violatedDirective + " blocked " + String(e.blockedURI).slice(0, 80));
  });
  var consoleError = console.error;
  console.error = function () {
    errors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    return consoleError.apply(console, arguments);
  };
  function describe(el) {
    var s = el.tagName.toLowerCase();
    if (el.id) { s += "#" + el.id; }
    if (el.className && typeof el.className === "string") {
      s += "." + el.className.trim().split(/\\s+/).join(".");
    }
    return s + " \\"" + (el.textContent || "").trim().slice(0, 40) + "\\"";
  }
  function clipped(el) {
    for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== "visible") { return true; }
    }
    return false;
  }
  window.addEventListener("load", function () {
    var bodyRight = document.body.getBoundingClientRect().right;
    var wide = [];
    var all = document.body.getElementsByTagName("*");
    for (var i = 0; i < all.length; i++) {
      var r = all[i].getBoundingClientRect();
      if (r.width > 0 && r.right > bodyRight + 0.5 && !clipped(all[i])) {
        wide.push(describe(all[i]) + " right edge " + Math.round(r.right) +
                  " > body " + Math.round(bodyRight));
      }
    }
    var charts = [];
    var imgs = document.images;
    for (var j = 0; j < imgs.length; j++) {
      var b = imgs[j].getBoundingClientRect();
      charts.push({kind: "img", alt: imgs[j].alt, width: b.width, height: b.height,
                   loaded: imgs[j].complete && imgs[j].naturalWidth > 0});
    }
    var svgs = document.querySelectorAll("svg");
    for (var k = 0; k < svgs.length; k++) {
      if (svgs[k].parentElement && svgs[k].parentElement.closest("svg")) { continue; }
      var s = svgs[k].getBoundingClientRect();
      charts.push({kind: "svg", alt: svgs[k].getAttribute("aria-label") || "",
                   width: s.width, height: s.height, loaded: true});
    }
    var out = document.createElement("pre");
    out.id = "@PROBE_ID@";
    out.textContent = JSON.stringify({
      errors: errors, wide: wide, charts: charts,
      scrollWidth: document.documentElement.scrollWidth,
      viewport: document.documentElement.clientWidth, window: window.innerWidth});
    document.body.appendChild(out);
  });
})();
</script>""".replace("@PROBE_ID@", PROBE_ID)


def chromium() -> str:
    """The chromium binary, or skip (fail in CI) naming the package to install."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    reason = ("Debian's chromium package is not installed: "
              "bash tools/install-system-deps.sh --tests")
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the real-browser tests: {reason}")
    pytest.skip(reason)


def load(browser: str, page: Path, profile: Path, width: int) -> dict[str, Any]:
    """Load a probed copy of ``page`` in a ``width``-pixel headless Chromium window; the
    probe's JSON result."""
    text = page.read_text(encoding="utf-8")
    head = re.search(r"<head[^>]*>", text)
    assert head is not None, f"{page.name} has no <head>"
    probed = page.with_name(f"{PROBE_PREFIX}{width}.{page.name}")
    probed.write_text(text[:head.end()] + PROBE + text[head.end():], encoding="utf-8")
    try:
        proc = subprocess.run(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", f"--window-size={width},2000",
             "--virtual-time-budget=5000", "--dump-dom", probed.as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    finally:
        probed.unlink()
    found = re.search(rf'<pre id="{PROBE_ID}">(.*?)</pre>', proc.stdout, re.S)
    assert found, (f"{page.name}: no probe result (the page never finished loading); "
                   f"chromium exit {proc.returncode}: {proc.stderr[-500:]}")
    result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return {**result, "width": width}


class _Links(HTMLParser):
    """Every href/src in a page and every id/name an anchor can point at."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.anchors: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value is None:
                continue
            if key == "id" or (tag == "a" and key == "name"):
                self.anchors.add(value)
            if key in ("href", "src"):
                self.targets.append(value)


def broken_links(page: Path) -> list[str]:
    """The links in ``page`` that lead nowhere: a missing local file or #anchor, or anything
    off the machine (the reports stand alone)."""
    links = _Links()
    links.feed(page.read_text(encoding="utf-8"))
    broken = []
    for target in links.targets:
        parts = urlsplit(target)
        if parts.scheme == "data":
            continue
        if parts.scheme or parts.netloc:
            broken.append(f"{target} (leaves the report)")
            continue
        if parts.path:
            other = page.parent / unquote(parts.path)
            if not other.is_file():
                broken.append(f"{target} (no such file)")
                continue
            anchors = _Links()
            anchors.feed(other.read_text(encoding="utf-8"))
            known = anchors.anchors
        else:
            known = links.anchors
        if parts.fragment and unquote(parts.fragment) not in known:
            broken.append(f"{target} (no such anchor)")
    return broken


def kind(name: str) -> str:
    """A report's kind from its file name: scorecard, brief, leaderboard, trend (the fleet's)
    or cluster trend."""
    if name.startswith("cluster-"):
        return "cluster trend"
    return name.removesuffix(".html").rsplit(".", 1)[-1]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every HTML report of the demo (the samples) and of a small audit: the pages to load."""
    demo = tmp_path_factory.mktemp("demo")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["demo", "-o", str(demo), "--no-pdf", "--format", "json"]) == 0
    runs, trend = tmp_path_factory.mktemp("runs"), tmp_path_factory.mktemp("trend")
    for month in range(1, 4):
        write_run(runs, "east", f"2026-{month:02d}-02", tier="Gold" if month < 3 else "Silver",
                  workloads=[["llama3.1-70b", "fp8", 512, 1.0 - 0.05 * month, 0.9, 1.0]],
                  sla=[99.9, 99.95 if month != 2 else 99.5, month != 2, 0 if month != 2 else 10],
                  period=[f"2026-{month:02d}-01", f"2026-{month:02d}-28"],
                  incidents=[[f"2026-{month:02d}-05", month]])
        write_run(runs, "west", f"2026-{month:02d}-03",
                  workloads=[["llama3.1-70b", "fp8", 512, 1.0, 0.99, 1.01]])
    render_trend_reports(run_audit(runs, assess=fake_assess), trend, pdf=False)
    return sorted(demo.glob("*.html")) + sorted(trend.glob("*.html"))


@pytest.fixture(scope="module")
def loaded(pages: list[Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each page's probe result, by "file name @ width" (two browsers at a time): every page
    at ``WIDTH``, the first page of each kind but the leaderboard also at ``NARROW``."""
    browser = chromium()
    profiles = tmp_path_factory.mktemp("chromium")
    kinds: dict[str, Path] = {}
    for page in pages:
        if kind(page.name) != "leaderboard":
            kinds.setdefault(kind(page.name), page)
    jobs = [(page, WIDTH) for page in pages] + [(page, NARROW) for page in kinds.values()]

    def one(index: int) -> dict[str, Any]:
        page, width = jobs[index]
        return load(browser, page, profiles / str(index), width)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, range(len(jobs))))
    return {f"{page.name} @{width}px": result
            for (page, width), result in zip(jobs, results, strict=True)}


def test_every_report_kind_is_loaded(pages: list[Path], loaded: dict[str, Any]) -> None:
    names = [p.name for p in pages]
    samples = sorted(p.name for p in (Path(__file__).parents[2] / "samples").iterdir()
                     if (p / "cmax.toml").is_file())
    assert len([n for n in names if n.endswith(".scorecard.html")]) == len(samples) >= 5
    assert len([n for n in names if n.endswith(".brief.html")]) == len(samples)
    assert "leaderboard.html" in names and "fleet.trend.html" in names
    assert len([n for n in names if n.startswith("cluster-")]) == 2
    assert {key.split(" @")[0] for key in loaded} == set(names)
    narrow = sorted(kind(key.split(" @")[0]) for key in loaded if key.endswith(f"@{NARROW}px"))
    assert narrow == ["brief", "cluster trend", "scorecard", "trend"]


def test_no_script_errors(loaded: dict[str, Any]) -> None:
    errors = {name: r["errors"] for name, r in loaded.items() if r["errors"]}
    assert not errors


def test_nothing_is_wider_than_the_page(loaded: dict[str, Any]) -> None:
    for name, r in loaded.items():
        assert r["window"] == r["width"], name
        assert r["scrollWidth"] <= r["viewport"], (name, r["wide"][:5])
        assert not r["wide"], (name, r["wide"][:5])


def test_every_chart_is_drawn(loaded: dict[str, Any]) -> None:
    undrawn = {name: [c for c in r["charts"]
                      if not (c["loaded"] and c["width"] > 0 and c["height"] > 0)]
               for name, r in loaded.items()}
    assert not {name: charts for name, charts in undrawn.items() if charts}
    # the pages that carry charts do show them: a page that lost its charts fails here
    drawn = {name: len(r["charts"]) for name, r in loaded.items()}
    assert all(n > 0 for name, n in drawn.items() if ".scorecard.html" in name), drawn
    assert drawn[f"leaderboard.html @{WIDTH}px"] > 0
    assert all(n > 0 for name, n in drawn.items() if name.startswith("cluster-")), drawn


def test_every_link_resolves(pages: list[Path]) -> None:
    broken = {p.name: broken_links(p) for p in pages}
    assert not {name: links for name, links in broken.items() if links}
    leaderboard = next(p for p in pages if p.name == "leaderboard.html")
    assert sum(1 for _ in re.finditer(r'href="[^"#]+\.html"', leaderboard.read_text())) >= 10
