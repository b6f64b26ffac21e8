"""Benchmark the dashboard (not a test): first render of the ablations page and a view-only session's RSS.

    python bench/app_bench.py            # uses cached_runs/ (or $VITCORE_STORE)

Measures, on a fresh `streamlit run` server with training off:
  1. script time: the ablations page's script in a fresh process (AppTest), first and second session;
  2. browser first render: headless Chromium (Debian's, via Playwright) from navigation to the metric cards
     on the server's first session, and again for a second session (store reads now cached);
  3. server RSS after a view-only session opened the Ablations and Runs pages, and whether TensorFlow
     was loaded into the server (it must not be). Budgets (issue 4): render <= 1.5 s, RSS <= 300 MB.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
COLD = """
import time
from streamlit.testing.v1 import AppTest
times = []
for session in range(2):  # a fresh session each time; the second finds imports and st.cache_data warm
    start = time.perf_counter()
    at = AppTest.from_file({app!r}, default_timeout=120).run()
    times.append(time.perf_counter() - start)
    assert not at.exception and at.metric, "ablations page did not render its metric cards"
print(*times)
"""


def script_seconds() -> tuple[float, float]:
    """(first, second) script run of the ablations page in a fresh process (AppTest, no browser)."""
    code = COLD.format(app=str(ROOT / "streamlit_app.py"))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "VITCORE_ALLOW_TRAINING": "0"}, check=True)
    first, second = map(float, done.stdout.strip().splitlines()[-1].split())
    return first, second


def start_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "VITCORE_ALLOW_TRAINING": "0"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            return process, url
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("streamlit did not start")


def browser_render_seconds(browser, url: str) -> float:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    start = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector('[data-testid="stMetric"]', timeout=120_000)
    seconds = time.perf_counter() - start
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)
    page.close()
    return seconds


def view_pages(browser, url: str) -> None:
    page = browser.new_page()
    for path in ("", "runs"):
        page.goto(f"{url}/{path}", wait_until="domcontentloaded")
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)
    page.close()


def main() -> int:
    from playwright.sync_api import sync_playwright

    first, second = script_seconds()
    print(f"ablations page script (AppTest, fresh process): first session {first:.2f} s "
          f"(imports + store reads), second session {second:.2f} s; load average {os.getloadavg()[0]:.1f}")
    process, url = start_server()
    try:
        server = psutil.Process(process.pid)
        print(f"server RSS after start-up: {server.memory_info().rss / 2**20:.0f} MB")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            first = browser_render_seconds(browser, url)
            second = browser_render_seconds(browser, url)
            view_pages(browser, url)
            browser.close()
        rss = server.memory_info().rss / 2**20
        tensorflow = any("tensorflow" in (m.path or "") for m in server.memory_maps())
        print(f"browser: navigation -> metric cards, first session {first:.2f} s, second session {second:.2f} s "
              f"(budget 1.5 s)")
        print(f"server RSS after a view-only session (ablations + runs): {rss:.0f} MB (budget 300 MB); "
              f"TensorFlow loaded in the server: {tensorflow}")
    finally:
        process.terminate()
        process.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
