"""A real `streamlit run` server and clients that do what Streamlit lets any client do.

Streamlit accepts a "clear cache" message (BackMsg.clear_cache) from every websocket client, and it
empties st.cache_data and st.cache_resource for all sessions. Before, the training slot lived
in st.cache_resource: one such message during a training gave the next visitor "Train now" (a second
training started) and every visitor saw Cancel for someone else's training. Here session A starts a
training in Chromium (Playwright, Debian's /usr/bin/chromium), a raw websocket client sends the
message, and session B must see the server busy, no Train now, no Cancel; only A can cancel.
"""

import time
from pathlib import Path

import pytest
from browsing import CHROMIUM, open_page, streamlit_server

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}")]
URL_QUERY = "/?train_rows=1000"  # any config: the scratch store is empty, so every config is uncached


@pytest.fixture
def server(tmp_path):
    with streamlit_server(tmp_path / "streamlit.log", VITCORE_ALLOW_TRAINING="1", VITCORE_STORE=str(tmp_path / "store"),
                          # the test cancels; the budget is the backstop
                          VITCORE_MAX_TRAIN_MINUTES="3") as (process, url):
        yield process, url, tmp_path / "store"


@pytest.fixture
def browser(app_browser):
    """The session's Chromium (conftest: app_browser; Playwright's sync API runs once per process); each page opened
    on it gets a context of its own (open_page): two visitors, not two tabs of one."""
    return app_browser.browser


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
    # Its caches cleared, the server computes them again beside the training and the other test worker:
    # on 2 busy cores this page's sidebar can take over a minute.
    other = open_page(browser, url + URL_QUERY, timeout=180_000)
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
