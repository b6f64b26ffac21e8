"""An empty store: every page renders, through the real frame, and no rendered text names
a server path — not the store's, the checkout's, the data set's or any other absolute one.

Before: the Runs page said "No runs stored yet in `/abs/path/to/store`", and the Patching and Attention
pages named the test split's folder ("Images from the test split (/usr/share/datasets/...)")."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app_damaged_store import frame_opening, page_title, pages

from vitcore.app import state
from vitcore.app.sidebar import PAINTED
from vitcore.data.fashion import DEBIAN_DIR

ROOT = Path(__file__).resolve().parents[1]
# An absolute path: a slash that starts a word (not inside a URL or "1/N"), then a top-level folder of a server.
ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:usr|tmp|home|root|work|mount|var|opt|srv|app|etc|mnt|proc|data)(?:/|\b)")


def rendered_text(at: AppTest) -> str:
    """Every element's protobuf, as text: what the browser would receive (markdown, captions, notes,
    tables, chart specs, widget labels and help)."""
    texts = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            texts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(texts)


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
@pytest.mark.parametrize("page", pages())
def test_an_empty_store_shows_no_server_path_on_any_page(page, tmp_path, monkeypatch):
    store = tmp_path / "empty store"
    store.mkdir()
    monkeypatch.setattr(state, "STORE_PATH", str(store))
    at = AppTest.from_file(str(frame_opening(page, tmp_path)), default_timeout=180)
    at.session_state[PAINTED] = True  # AppTest fires no fragment timers: the cards have painted
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.title and at.title[0].value == page_title(page)
    text = rendered_text(at)
    for path in (store, tmp_path, ROOT, DEBIAN_DIR, Path.home()):
        assert str(path) not in text, f"{path} shown on {page}"
    assert not ABSOLUTE.findall(text), [text[max(0, m.start() - 60):m.end() + 60] for m in ABSOLUTE.finditer(text)]
