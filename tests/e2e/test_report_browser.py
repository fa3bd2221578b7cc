"""The HTML report in a real headless browser (Debian's chromium): each page loads with no console error,
requests nothing beyond itself, and every inline SVG figure renders with a non-zero size."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ccscope import api

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _chromium import Browser, find_browser, page_url  # noqa: E402

BROWSER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no chromium on PATH (Debian: apt-get install -y chromium; .ci/run installs it)"
)

# Per figure of the page: the rendered size of its SVG (CSS pixels).
FIGURE_SIZES = (
    "JSON.stringify({figures: document.querySelectorAll('figure').length,"
    " sizes: [...document.querySelectorAll('figure svg')].map(s => { const r = s.getBoundingClientRect();"
    " return [r.width, r.height]; }), title: document.title})"
)


@pytest.fixture(scope="module")
def browser():
    b = Browser(BROWSER)
    yield b
    b.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    """A report of each kind: a run (window trace and packet log), a sweep, and a compare of runs."""
    from ccscope import sweep
    from ccscope.analysis import compare, report

    root = tmp_path_factory.mktemp("reports")
    runs = []
    for ctl, secs in (("cubic", 6), ("cubic", 8), ("vegas", 6)):
        r = api.run(f"examples/{ctl}.toml", overrides={"duration_s": secs}, cwnd=True, packets=True)
        runs.append(r.save(root / f"{ctl}-{secs}"))
    sweep.run_sweep("examples/fixed.toml", {"flows.0.window": [4, 16]}, out=root / "sweep", jobs=1)
    compare(runs, root / "cmp")
    return {
        "run": report(runs[0], root / "run.html"),
        "sweep": report(root / "sweep", root / "sweep.html"),
        "compare": report(root / "cmp", root / "compare.html"),
    }


@pytest.mark.parametrize("kind, figures", [("run", 3), ("sweep", 1), ("compare", 4)])
def test_report_loads_without_errors_and_every_figure_renders(browser, reports, kind, figures):
    import json

    url = page_url(reports[kind])
    value, errors, requests = browser.load(url, FIGURE_SIZES)
    assert errors == [], errors
    assert requests == [], f"the page fetched {requests}"
    page = json.loads(value)
    assert page["figures"] == figures == len(page["sizes"])
    for w, h in page["sizes"]:
        assert w > 100 and h > 100, page["sizes"]


def test_the_checker_sees_a_console_error_and_a_request(browser, tmp_path):
    # A page with a failing script and an external image: the same check must report both.
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><img src='http://127.0.0.1:9/x.png'>"
                   "<script>console.error('boom'); undefined_function();</script></body></html>")
    _, errors, requests = browser.load(page_url(bad), "1")
    assert any("boom" in e for e in errors) and any("undefined_function" in e for e in errors)
    assert requests == ["http://127.0.0.1:9/x.png"]
