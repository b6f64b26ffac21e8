"""The README's picture of the app (docs/app.png) is the landing page as a real browser draws it from the committed
store: `streamlit run streamlit_app.py`, Debian's Chromium at 1,400 × 900 px (tests/browsing.py). The test makes it
again into a temporary folder and checks it is a valid PNG of the committed picture's size, drawn without an error
box. To remake the committed picture after the landing page changed: `python tests/test_app_picture.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browsing import CHROMIUM, ROOT, chromium, laid_out, open_page, streamlit_server

PICTURE = ROOT / "docs" / "app.png"
WIDTH, HEIGHT = 1400, 900  # a wide screen's first view of the landing page: the title, sidebar and first cards

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} "
                                "(apt-get install chromium; the test never downloads a browser)")]


def make_picture(path: Path, log: Path) -> None:
    """The landing page served from the committed store, its first screen saved as a PNG at `path`."""
    with streamlit_server(log, VITCORE_ALLOW_TRAINING="0") as (_, url), chromium() as browser:
        draw(browser, url, path)


def draw(browser, url: str, path: Path) -> None:
    """The first screen of the landing page the server at `url` serves, as `browser` (tests/browsing.py: open_page)
    draws it, saved as a PNG at `path`."""
    page = open_page(browser, url, width=WIDTH, height=HEIGHT)  # with SCREENSHOTS, sized to the whole page
    try:
        errors = page.locator('[data-testid="stException"]')
        assert errors.count() == 0, errors.first.inner_text()[:500]
        page.set_viewport_size({"width": WIDTH, "height": HEIGHT})  # one screen
        laid_out(page)
        page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
        page.screenshot(path=str(path))
    finally:
        page.close()


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG that decodes whole; AssertionError if it is not one."""
    from PIL import Image

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    with Image.open(path) as image:
        assert image.format == "PNG"
        image.load()  # every pixel decodes: a truncated or damaged file raises here
        return image.size


def test_the_readme_picture_is_remade_from_the_page(app_server, app_browser, tmp_path):
    """Drawn by the server and browser of tests/test_browser.py (conftest: app_server, app_browser), as the
    committed picture is by its own (make_picture)."""
    fresh = tmp_path / "app.png"
    draw(app_browser, app_server.url, fresh)
    assert png_size(fresh) == png_size(PICTURE) == (WIDTH, HEIGHT)


if __name__ == "__main__":  # remake docs/app.png
    import tempfile

    PICTURE.parent.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        make_picture(PICTURE, Path(folder) / "streamlit.log")
    print(PICTURE, png_size(PICTURE), PICTURE.stat().st_size, "bytes")
