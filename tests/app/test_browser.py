"""End to end: `memwb app` on 127.0.0.1, driven by headless Debian Chromium through Playwright.

Chromium's plain --screenshot/--dump-dom capture Streamlit before its websocket
renders, so the test waits on the page itself: the KPI tiles' values and the
Plotly SVGs. Screenshots go to the git-ignored ``test-artifacts/``.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from memory_engine.observability.spool import find_owner

pytestmark = [pytest.mark.app, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(demo_build):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium not installed (make browser)")
    _, ws, _ = demo_build
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MEMWB_HOME", None)
    log = open(ws.parent / "streamlit.log", "wb")  # noqa: SIM115 - closed in teardown
    proc = subprocess.Popen(
        [sys.executable, "-c", "from memory_engine.cli import main; main()", "app", "--workspace", str(ws),
         "--port", str(port), "--otlp-port", "0", "--no-demo"],  # 0: not the default 4318 of an app a developer runs
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            log.close()
            pytest.fail(f"memwb app did not answer: {(ws.parent / 'streamlit.log').read_text()[-2000:]}")
        time.sleep(0.5)
    owner = find_owner(ws)  # its OTLP receiver took a free port, so it cannot clash with a developer's open app
    assert owner is not None and owner.traces_url and not owner.traces_url.endswith(":4318/v1/traces"), owner
    yield url
    os.killpg(proc.pid, 15)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
    log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def test_overview_and_review_render_in_chromium(server, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(f"{server}/Overview", wait_until="domcontentloaded")
    # the first run opens the engine (bundled model) and queries the warehouse
    page.wait_for_function(
        "document.querySelectorAll('[data-testid=\"stMetricValue\"]').length >= 5", timeout=120_000
    )
    page.wait_for_function(
        "document.querySelectorAll('.js-plotly-plot .main-svg .scatterlayer .trace').length >= 3", timeout=60_000
    )
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "overview.png"), full_page=True)
    labels = page.locator('[data-testid="stMetricLabel"]').all_inner_texts()
    values = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
    tiles = dict(zip([x.strip() for x in labels], [v.strip() for v in values], strict=True))
    assert {"Citation hit rate", "Citation accuracy", "Write efficacy (7 d)", "Retrieval p95", "Health score"} <= set(tiles)
    assert all(re.search(r"\d", v) for v in tiles.values()), tiles
    assert "demo replay" in page.locator('[data-testid="stCaptionContainer"]').first.inner_text()

    page.goto(f"{server}/Citation_review", wait_until="domcontentloaded")
    box = page.get_by_label("Reviewer name")
    box.wait_for(timeout=60_000)
    box.fill("browser-reviewer")
    box.press("Enter")
    page.locator(".st-key-v_correct button").wait_for(timeout=60_000)
    progress = page.get_by_text(re.compile(r"^0/\d+ reviewed")).first
    progress.wait_for(timeout=30_000)
    page.get_by_role("heading", name="Citation review").first.click()  # focus leaves the text box
    # the keyboard shortcuts install their key listener from an iframe: on a busy
    # machine it attaches after the buttons render, so wait for it before pressing
    page.locator("iframe").first.wait_for(state="attached", timeout=60_000)
    page.wait_for_timeout(1500)
    page.keyboard.press("1")  # keyboard verdict "correct"
    page.get_by_text(re.compile(r"^1/\d+ reviewed in this queue \(1 verdicts\)")).first.wait_for(timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "citation_review.png"), full_page=True)
    assert page.get_by_text("Clear caches").count() == 0  # the shortcut did not trigger Streamlit's own "c"
    assert page.locator('[data-testid="stMetricValue"]').count() >= 1
