"""What the real-browser tests share (tests/test_browser.py, tests/test_hostile_clients.py): a real
`streamlit run streamlit_app.py` on a free loopback port with the file watcher off, Debian's Chromium
(/usr/bin/chromium, never a downloaded browser) driven by Playwright, and opening a page the way a
visitor does (the first paint, then the sidebar's run).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Full-page screenshots of the pages the tests open (screenshots/, git-ignored) are for a person to look at, so they are
# taken only on request: VITCORE_TEST_SCREENSHOTS=1. Each needs the viewport made as tall as the page (settle), and
# the two cost the browser ~14 CPU-s per walk of 12 pages (tests/test_browser.py), ~30 CPU-s of the suite.
SCREENSHOTS = os.environ.get("VITCORE_TEST_SCREENSHOTS") == "1"
OUTSIDE: list[str] = []  # every request a page made to a host other than the server (none)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(log: Path, **env: str):
    """The app served as `streamlit run` serves it, `env` added to the environment (VITCORE_* settings);
    yields (process, url) once /_stcore/health answers (60 s at most, else RuntimeError with the log's
    tail), and stops the server after."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, stdout=log.open("w"), stderr=subprocess.STDOUT,
        text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.3)
        yield process, url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextlib.contextmanager
def chromium():
    """Debian's Chromium, headless, with nothing that phones home. Playwright's sync API runs once per process: a test
    takes the session's (conftest: app_browser) instead of a second."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"])
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser, url: str, width: int = 1400, height: int = 1000, timeout: int = 60_000,
              tall: bool = SCREENSHOTS):
    """A new page at `url`, once its title and its sidebar's switches are there (`timeout` ms each). `browser`: a
    Playwright Browser (each page its own context: nothing cached) or a BrowserContext (its pages share the HTTP
    cache: Streamlit's scripts are fetched and compiled once). `tall`: the viewport then holds the whole page (settle),
    for a full-page screenshot."""
    if hasattr(browser, "new_context"):
        page = browser.new_page(viewport={"width": width, "height": height})
    else:
        page = browser.new_page()
        page.set_viewport_size({"width": width, "height": height})
    server = url.split("/")[2]
    page.on("request", lambda request: OUTSIDE.append(request.url)
            if request.url.split("/")[2:3] != [server] and not request.url.startswith(("data:", "blob:")) else None)
    visit(page, url, timeout, tall)
    return page


def visit(page, url: str, timeout: int = 60_000, tall: bool = SCREENSHOTS) -> None:
    """`page` (a tab open_page opened, its viewport kept) loads `url` and is waited for as open_page waits for a new
    one: the visitor's next link in the same tab. The renderer it already runs in draws it: ~1 CPU-s less than a new
    tab's first page (its process, the browser's work for it)."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout)
    # A session's first run paints the page alone; the sidebar (and the Ablations page's charts) follow
    # 0.6 s later (vitcore.app.sidebar._then_the_rest): wait for its switches, then for that run.
    page.wait_for_selector('[data-testid="stSidebar"] [data-testid="stRadio"]', timeout=timeout, state="attached")
    settle(page, tall)


# True once the page's charts and images are drawn: every Vega-Lite chart on screen holds its svg or canvas
# with a box, every image in the viewport has loaded (lazy images below it load when a tall viewport shows
# them). Polled every animation frame.
LAID_OUT = """() => {
  const drawn = el => { const box = el.getBoundingClientRect(); return box.width > 0 && box.height > 0; };
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main) return false;
  const shown = selector => [...main.querySelectorAll(selector)].filter(drawn);  // not in a closed expander or tab
  return shown('[data-testid="stVegaLiteChart"]').every(chart => [...chart.querySelectorAll('svg, canvas')].some(drawn))
    && [...main.querySelectorAll('img')].filter(img => img.getBoundingClientRect().top < innerHeight)  // lazy below
      .every(img => img.complete);
}"""
TWO_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def laid_out(page) -> None:
    """Wait until the charts and images are drawn (LAID_OUT), then two frames more for the layout
    that follows them; at most 30 s. (A fixed 0.8 s sleep did this before, twice per page.)"""
    page.wait_for_function(LAID_OUT, polling="raf", timeout=30_000)
    page.evaluate(TWO_FRAMES)


def settle(page, tall: bool = SCREENSHOTS) -> None:
    """Wait for the script run to end and the page to be drawn; `tall`: then size the viewport to the page for a
    full-page screenshot (SCREENSHOTS). The run's end is the app's own script state (stApp's
    data-test-script-state): the status widget shows only after a run has lasted a moment, so its absence alone
    passed a run that had just begun."""
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"
        " && !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=90_000)
    laid_out(page)
    if not tall:
        return
    # The app scrolls inside its main container, so a "full page" screenshot needs a tall viewport.
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": page.viewport_size["width"], "height": max(1000, min(int(height) + 40, 12_000))})
    laid_out(page)


def shoot(page, path: Path) -> None:
    """A full-page screenshot of `page` at `path` (settle made the viewport as tall as the page), when SCREENSHOTS
    asks for them; nothing otherwise."""
    if SCREENSHOTS:
        path.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(path), full_page=True)
