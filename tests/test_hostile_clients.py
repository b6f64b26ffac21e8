"""A real `streamlit run` server and clients that do what Streamlit lets any client do.

Streamlit accepts a "clear cache" message (BackMsg.clear_cache) from every websocket client, and it
empties st.cache_data and st.cache_resource for all sessions. Before issue 19 the training slot lived
in st.cache_resource: one such message during a training gave the next visitor "Train now" (a second
training started) and every visitor saw Cancel for someone else's training. Here session A starts a
training in Chromium (Playwright, Debian's /usr/bin/chromium), a raw websocket client sends the
message, and session B must see the server busy, no Train now, no Cancel; only A can cancel.
"""

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_browser import CHROMIUM, ROOT, free_port, open_page

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}")]
URL_QUERY = "/?train_rows=1000"  # any config: the scratch store is empty, so every config is uncached


@pytest.fixture
def server(tmp_path):
    port = free_port()
    log = tmp_path / "streamlit.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VITCORE_ALLOW_TRAINING": "1", "VITCORE_STORE": str(tmp_path / "store"),
           "VITCORE_MAX_TRAIN_MINUTES": "3"}  # the training is cancelled by the test; the budget is the backstop
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, text=True)
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
        yield process, url, tmp_path / "store"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


def training_children(process) -> list:
    """The server's live training processes (an exited one not yet reaped is not training)."""
    import psutil

    found = []
    for child in psutil.Process(process.pid).children(recursive=True):
        try:
            if "vitcore.app.training.child" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:  # exited (a zombie until reaped) or gone
            pass
    return found


def clear_caches_as_a_client(url: str) -> None:
    """What any visitor's browser may send: BackMsg(clear_cache=True) on its own websocket session."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from websockets.sync.client import connect

    with connect(url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"]) as socket:
        socket.send(BackMsg(clear_cache=True).SerializeToString())
        time.sleep(2)  # handled on the server's event loop: give it time before hanging up


def test_a_client_clearing_the_caches_gets_no_second_training_and_no_cancel(server, browser):
    process, url, store = server
    starter = open_page(browser, url + URL_QUERY)
    starter.get_by_role("button", name="Train now").click()
    starter.get_by_text("Training this config").first.wait_for(timeout=60_000)
    assert len(training_children(process)) == 1

    clear_caches_as_a_client(url)
    other = open_page(browser, url + URL_QUERY)
    try:
        assert other.get_by_text("started by another session").first.is_visible()
        assert other.get_by_role("button", name="Train now").count() == 0
        assert other.get_by_role("button", name="Cancel").count() == 0
        assert len(training_children(process)) == 1  # still the first training alone
    finally:
        other.close()

    starter.get_by_role("button", name="Cancel").click()  # the session that started it can
    deadline = time.monotonic() + 30
    while training_children(process) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert training_children(process) == []
    assert not [entry for entry in store.iterdir() if not entry.name.startswith(".")]  # nothing stored
    starter.close()
