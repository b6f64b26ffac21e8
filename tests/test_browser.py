"""Real-browser smoke test: `streamlit run streamlit_app.py` on a loopback port, headless Debian
Chromium driven by Playwright (never a downloaded browser). Every page must render without a
Streamlit exception box; the ablations page must show the baseline's test accuracy as computed
from the store. Screenshots go to screenshots/ (git-ignored): of the parts some tests look at, always; of every
page in full, with VITCORE_TEST_SCREENSHOTS=1 (tests/browsing.py: SCREENSHOTS). The server must also
report that its start-up hook warmed the caches (streamlit_app.py's st.App lifespan).
"""

import contextlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote_plus

import pytest
from browsing import (
    CHROMIUM,
    OUTSIDE,
    ROOT,
    SCREENSHOTS,
    laid_out,
    open_page,
    settle,
    shoot,
    streamlit_server,
    visit,
)
from narrow import grid, lines, overflowing

from vitcore.analysis import work
from vitcore.app import charts, claims_view, fmt, state, tables
from vitcore.app.selection import BASELINE, VIEWS, seed_counts
from vitcore.stats import summaries as stats
from vitcore.stats.estimates import NOT_COMPARABLE
from vitcore.store.runs import RunStore

SHOTS = ROOT / "screenshots"
# url path (st.Page's default: the file name) -> screenshot name
PAGES = {"": "ablations", "claims": "claims", "plans": "plans", "noise": "noise", "runs": "runs",
         "patching": "patching",
         "anatomy": "anatomy", "token_cost": "token_cost", "attention": "attention", "vit_vs_convnet": "vit_vs_convnet"}

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} "
                                "(apt-get install chromium; the test never downloads a browser)")]


# The Ablations page's views with a variant selected (narrow_<name>.png at 400 px)
VIEW_PAGES = {f"?norm=batch&view={quote_plus(view)}": f"ablations_{view.split()[0].lower()}" for view in VIEWS}
VARIANT_EFFECTS, VARIANT_FLIPS = "?norm=batch&view=Main+effects", "?norm=batch&view=Flip+one+switch"


@dataclass(frozen=True)
class Seen:
    """What the walk saw on one page once it was drawn: its exception boxes' text, and what overflowing() found."""
    exceptions: list[str]
    overflow: list[dict]


@dataclass
class Walk:
    """One width's walk: the pages some tests read again, kept open ({name: page}), and what every page showed."""
    held: dict
    seen: dict[str, Seen] = field(default_factory=dict)

    def __getitem__(self, name: str):
        return self.held[name]


def looked_at(page, width: int) -> Seen:
    boxes = page.locator('[data-testid="stException"]')
    return Seen([boxes.nth(i).inner_text()[:500] for i in range(boxes.count())], overflowing(page, width))


@contextlib.contextmanager
def walked(browser, url: str, pages: dict, width: int, keep: set, shot: str = "{}.png"):
    """`pages` ({path: name}) visited one after the other on a `width` × 800 screen, where the tests measure (a
    full-page screenshot each, shot.format(name), when SCREENSHOTS asks: the viewport is then made tall for it and put
    back), each page's exceptions and overflow noted (Seen). The pages named in `keep` are kept open until the block
    ends, for the tests that read them; the others are visited in one tab, each the next link in it (visit: ~1 CPU-s
    of the browser less than a tab each), that tab ending on a kept page."""
    SHOTS.mkdir(exist_ok=True)  # the parts' screenshots (sidebar.png, forest_<width>.png...) are always taken
    walk, tab = Walk({}), None
    order = sorted(pages.items(), key=lambda item: item[1] in keep)  # the passing pages first, in their order
    try:
        for path, name in order:
            if tab is None:
                tab = page = open_page(browser, f"{url}/{path}", width=width, height=800)
            elif name in keep and tab in walk.held.values():
                page = open_page(browser, f"{url}/{path}", width=width, height=800)
            else:
                page = tab
                visit(page, f"{url}/{path}")
            if SCREENSHOTS:
                shoot(page, SHOTS / shot.format(name))  # open_page / visit made it tall
                page.set_viewport_size({"width": width, "height": 800})  # a screen again: tests measure there
                laid_out(page)
            walk.seen[name] = looked_at(page, width)
            if name in keep:
                walk.held[name] = page
        yield walk
    finally:
        for page in dict.fromkeys([*walk.held.values(), tab]):  # the walking tab is also held: closed once
            if page is not None:
                page.close()


@pytest.fixture(scope="module")
def at_1400(app_server, app_browser):
    """Every page, and a variant's Main effects and Flip-one-switch views, walked once at 1,400 px (screenshots
    <name>.png): what each showed, and those the tests read again kept open."""
    variant = {path: VIEW_PAGES[path] for path in (VARIANT_EFFECTS, VARIANT_FLIPS)}
    keep = {"ablations", "claims", "vit_vs_convnet", "anatomy", *variant.values()}
    with walked(app_browser, app_server.url, {**PAGES, **variant}, 1400, keep) as walk:
        yield walk


@pytest.fixture(scope="module")
def at_400(app_server, app_browser):
    """Every page and each view of the Ablations page with a variant selected, walked once on a 400 × 800 phone
    screen (narrow_<name>.png): what each showed, and those the tests read again kept open."""
    keep = {"ablations", "claims", "anatomy", VIEW_PAGES[VARIANT_FLIPS],
            VIEW_PAGES[f"?norm=batch&view={quote_plus(VIEWS[0])}"]}
    with walked(app_browser, app_server.url, {**PAGES, **VIEW_PAGES}, 400, keep, "narrow_{}.png") as walk:
        yield walk


@pytest.fixture(scope="module")
def tab(app_browser):
    """One tab (1,400 × 1,000) for the tests that follow a link and click: each link is the next visit in it (visit),
    not a tab of its own. go(url) -> the tab, drawn."""
    opened = []

    def go(url: str):
        if not opened:
            opened.append(open_page(app_browser, url))
        else:
            opened[0].set_viewport_size({"width": 1400, "height": 1000})  # a full-page screenshot made it tall
            visit(opened[0], url)
        return opened[0]

    yield go
    for page in opened:
        page.close()


def test_every_page_renders_in_a_real_browser(at_1400):
    base = stats.runs_of(RunStore(state.STORE_PATH).table(), BASELINE)["test_accuracy"]
    expected = fmt.number(base.mean())  # the landing's first card: the baseline's mean over its random seeds
    assert len(at_1400.seen) == len(PAGES) + 2  # every page and the variant's two views
    for name, seen in at_1400.seen.items():
        assert seen.exceptions == [], f"{name}: {seen.exceptions[0]}"
    assert at_1400["ablations"].get_by_text(expected, exact=False).first.is_visible(), expected
    assert OUTSIDE == [], OUTSIDE[:5]  # the tab icon and fonts come from this server, never a font server


def test_every_page_fits_a_400_px_screen(at_400):
    """On a 400 × 800 phone screen no page draws a chart, table or image past the right edge, and no
    chart cuts its key or an axis title; a table may scroll inside its own frame. Every page, the Seed noise
    page included, and each view of the Ablations page with a variant selected (narrow_<page>.png)."""
    assert len(at_400.seen) == len(PAGES) + len(VIEWS)
    for name, seen in at_400.seen.items():
        assert seen.exceptions == [], f"{name}: {seen.exceptions[0]}"
    found = {name: seen.overflow[:3] for name, seen in at_400.seen.items() if seen.overflow}
    assert not found, "\n".join(f"{name}: {items}" for name, items in found.items())


def test_a_shared_link_to_any_page_works_on_a_fresh_server(app_browser, tmp_path):
    """A visitor's first request to a just-started server is a link to /claims: the frame's navigation and
    sidebar come with it. (With the pages in a folder named pages/, Streamlit served its auto-discovered
    page list — "app, ablations, anatomy…" — and no sidebar switches until someone opened /.)"""
    with streamlit_server(tmp_path / "fresh.log", VITCORE_ALLOW_TRAINING="0") as (_, url):
        page = open_page(app_browser, f"{url}/claims")  # waits for the sidebar's switches
        try:
            assert page.locator('[data-testid="stMain"] h1').first.inner_text() == "Claims, checked"
            nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
            assert "Seed noise" in nav and "vit_vs_convnet" not in nav, nav  # app.py's titles, not file names
        finally:
            page.close()


def test_first_hour_layout(at_1400, at_400):
    """The first hour's layout, one screenshot each: the sidebar's baseline box in full (sidebar.png), the
    Runs page's sorted seeds, fitted table and file-by-file downloads (runs.png), the Claims table's Source
    beside each claim (claims.png), a variant's metric control inside the views it changes
    (ablations_main.png) and the Ablations landing 400 px wide, its forest plot and every verdict
    in words inside the screen (narrow_ablations.png)."""
    sidebar = at_1400["ablations"].locator('[data-testid="stSidebar"]')
    sidebar.screenshot(path=str(SHOTS / "sidebar.png"))
    # the box (an input) cuts "the article's ViT at the selected rows"; the caption below names it in full
    table = RunStore(ROOT / "cached_runs").table()
    seeds = seed_counts(table)[BASELINE.config_id]  # what the committed store holds today
    assert sidebar.get_by_text(f"Baseline: ViT p7 pre-LN pos · 4,000 rows, {seeds} seeds stored.").is_visible()
    # a variant's first view (VIEWS[0], Learning curves), as at_400 opened it: the control would change nothing there
    learning = at_400[VIEW_PAGES[f"?norm=batch&view={quote_plus(VIEWS[0])}"]]
    assert learning.get_by_text("Metric for the effects").count() == 0
    assert at_1400[VIEW_PAGES[VARIANT_EFFECTS]].get_by_text("Metric for the effects").count() == 1  # in its view
    page = at_400["ablations"]
    assert page.locator('[data-testid="stException"]').count() == 0
    forest = page.locator('[data-testid="stVegaLiteChart"]').first.locator("svg").first
    box = forest.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 400, box  # the whole plot on a 400-px screen
    words = set(tables.flip_frame(state.flip_effects(BASELINE), "test_accuracy")["verdict_short"])  # the app's
    for text in words:  # every row's verdict in words, uncut and inside the screen
        drawn = forest.locator("text", has_text=text)
        assert drawn.count() >= 1, f"{text!r}: not drawn in full"
        word = drawn.first.bounding_box()
        assert 0 <= word["x"] and word["x"] + word["width"] <= 400, (text, word)


@pytest.mark.parametrize("walk, width", [("at_1400", 1400), ("at_400", 400)], ids=["1400", "400"])
def test_every_forest_row_names_its_source(request, walk, width):
    """The landing's forest plot at 1,400 and 400 px (the landing as that width's walk opened it, on a width × 800
    screen): every row's third line — blind / seen / fixed sample and a confirmed question's outcome
    (charts.with_source) — drawn in full and inside the screen (forest_<width>.png)."""
    frame = charts.with_source(tables.flip_frame(state.flip_effects(BASELINE), "test_accuracy"))
    page = request.getfixturevalue(walk)["ablations"]
    forest = page.locator('[data-testid="stVegaLiteChart"]').first
    forest.screenshot(path=str(SHOTS / f"forest_{width}.png"))
    drawn = [t.strip() for t in forest.locator("svg text").evaluate_all("all => all.map(t => t.textContent)")]
    for source in frame["source"]:
        assert drawn.count(source) >= (frame["source"] == source).sum(), (source, drawn)  # one per row, uncut
    for text in forest.locator("svg text", has_text=re.compile(r"^(blind|seen|fixed sample|exploratory)")).all():
        box = text.bounding_box()
        assert 0 <= box["x"] and box["x"] + box["width"] <= width, (text.text_content(), box)


def test_training_rows_read_by_the_number_rule_and_links_keep_plain_numbers(app_server, tab):
    """The sidebar's training rows read '1,000' as every page does, while a link's `?train_rows=1000`
    still restores the view, a click writes the plain number back, and a page switch keeps it
    (sidebar_rows.png)."""
    page = tab(f"{app_server.url}/?train_rows=1000")
    rows = page.locator('[data-testid="stSidebar"] [data-testid="stRadio"]', has_text="Training rows")
    checked = rows.locator("label", has=page.locator("input:checked"))
    assert checked.inner_text().startswith("1,000"), checked.inner_text()
    assert rows.get_by_text("16,000", exact=True).count() == 1 and rows.get_by_text("1000", exact=True).count() == 0
    rows.get_by_text("8,000", exact=True).click()
    page.wait_for_url("**train_rows=8000**", timeout=60_000)
    settle(page)
    assert page.get_by_text("8,000 rows").first.is_visible()  # the page follows
    rows.screenshot(path=str(SHOTS / "sidebar_rows.png"))
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Claims", exact=True).click()
    page.wait_for_url("**/claims**", timeout=60_000)
    settle(page)
    assert checked.inner_text().startswith("8,000") and "train_rows=8000" in page.url, page.url


def test_a_bad_link_shows_the_note_in_the_browser(app_server, tab):
    page = tab(f"{app_server.url}/?patch_size=5&norm=%3Cscript%3Ealert(1)%3C/script%3E")
    shoot(page, SHOTS / "bad_link.png")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("patch_size=5").first.is_visible()
    assert page.get_by_text("is not a valid value").count() == 2


def test_the_server_warms_its_caches_at_start(app_server):
    deadline = time.monotonic() + 60
    while "vitcore: caches warm in" not in app_server.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.5)
    text = app_server.log.read_text()
    assert "vitcore: caches warm in" in text, text[-3000:]
    assert "failed" not in text and "Traceback" not in text, text[-3000:]
    assert re.search(r"caches warm in .*; [\d,]{6,} objects frozen", text), text[-3000:]  # vitcore.app.memory


def test_claims_and_vit_vs_convnet_show_their_tables_and_charts(at_1400):
    """The Claims table (who claims it, the verdict and the link to the runs in view at 1,400 px, each
    setting in full below it) and its download; the ViT vs convnet page's data-size curve, paired Δ and gap
    bars (screenshots claims.png and vit_vs_convnet.png)."""
    page = at_1400["claims"]
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stDataFrame"]').count() >= 2  # the claims, the runs behind one
    assert page.get_by_text("claims.csv").first.is_visible()
    # At 1,400 px the grid draws (and lists for screen readers) only the columns in view: the claim, what we
    # found (verdict, its interval, direction), the comparison that tells apart rows whose claim reads alike
    # (the seed-noise rows), and the link to the runs, inside the grid
    shown = page.locator('[data-testid="stDataFrame"]').first.locator('[role="columnheader"]').all_inner_texts()
    assert shown[:9] == ["Claim", "Verdict", "Interval", "Direction", "Δ = selection − baseline", "Rows", "Metric",
                         "Δ", "Runs"], shown
    assert sum(claims_view.WIDTHS[name] for name in shown[:9]) <= 938  # the grid's frame beside the sidebar
    origins = page.locator('[data-testid="stTable"]')  # each setting in full, wrapped inside the screen
    box = origins.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1400, box
    longest = max(tables.claims(state.margin({}))["setting"], key=len)  # the page's own ledger (the app's Study: once)
    assert origins.get_by_text(longest, exact=True).is_visible()
    nav = page.locator('[data-testid="stSidebarNav"]')  # served through app.py's st.navigation
    assert nav.get_by_text("Claims", exact=True).count() == 1 and nav.get_by_text("Runs & downloads").count() == 1
    page = at_1400["vit_vs_convnet"]
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 3
    assert page.get_by_text("How small can the data be before the convnet wins?").first.is_visible()


def test_ablations_landing_a_flipped_switch_and_flipped_images(app_server, tab):
    """The landing (the forest plot, then the cards) and one click to a variant (the cards lead,
    with their verdicts); the collapse note with the BatchNorm diagnosis and the flipped
    images (screenshots ablations_landing.png, ablations_flipped.png, ablations_collapse_flips.png)."""
    page = tab(app_server.url)
    shoot(page, SHOTS / "ablations_landing.png")
    assert page.locator('[data-testid="stException"]').count() == 0
    first = page.locator('[data-testid="stVegaLiteChart"], [data-testid="stMetric"]').first
    assert first.get_attribute("data-testid") == "stVegaLiteChart"  # the forest plot leads
    assert page.locator('[data-testid="stMetric"]').count() == len(stats.METRICS)  # a card per compared metric
    picker = page.locator('[data-testid="stButtonGroup"]', has_text="Select a variant")  # pills: role radio
    picker.get_by_text("norm layer → batch", exact=True).click()
    page.get_by_text("against the baseline").first.wait_for(timeout=60_000)  # the flipped state's header
    settle(page)
    shoot(page, SHOTS / "ablations_flipped.png")
    assert page.locator('[data-testid="stException"]').count() == 0
    first = page.locator('[data-testid="stVegaLiteChart"], [data-testid="stMetric"]').first
    assert first.get_attribute("data-testid") == "stMetric"  # the cards lead
    # four accuracy cards with their interval; seconds has none: "not comparable" (no interleaved timing of these)
    assert "norm=batch" in page.url and page.get_by_text("95% CI").count() >= 4
    assert page.get_by_text(NOT_COMPARABLE).count() >= 1
    page = tab(f"{app_server.url}/?norm=batch&patch_size=4&train_rows=1000&view=Flipped+images")
    shoot(page, SHOTS / "ablations_collapse_flips.png")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("random seeds collapsed").first.is_visible()
    assert page.get_by_text("re-estimating").count() + page.get_by_text("recalibrat").count() >= 1
    assert page.get_by_text("Per pair (McNemar)").count() >= 1  # the per-pair counts and their test
    # images beating noise (charts draw on canvas), or the note that there are too few pairs; the gallery's grey
    # placeholders can outlast the script run on a busy machine, so wait for one or the other
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stMain\"] img').length > 0"
                           " || document.body.innerText.includes('cannot separate the switch')", timeout=60_000)
    gallery = page.locator('[data-testid="stMain"] img').count()
    assert gallery > 0 or page.get_by_text("cannot separate the switch").count() >= 1


def test_tables_show_the_verdict_and_its_interval_at_400_and_1400_px(at_400, at_1400):
    """The Flip-one-switch table, the Claims table and Anatomy's counted work show what a row is
    read by (the verdict and the interval it is read from; a part's count) inside a 400-px screen without a
    sideways scroll, and no cell of those columns is cut at 400 or 1,400 px (its words wrapped into the lines its
    row holds, measured with the grid's own font). The grid's columns are exactly the widths the page sets."""
    flips = tables.flip_table(state.flip_effects(BASELINE.replace(norm="batch")), "test_accuracy")
    flips["Δ"] = flips["Δ"].map(lambda d: f"{d:+.4f}")
    claims = tables.claims(state.margin({}))
    macs = work.work_table(BASELINE).assign(macs=lambda f: f["macs"].map(fmt.rows))[["part", "macs", "formula"]]
    cases = [(VARIANT_FLIPS, flips, tables.FLIP_WIDTHS, tables.ROW,
              ["Change", "Verdict", "Interval"]),
             ("claims", claims_view.display(claims, claims_view.links(claims)), claims_view.WIDTHS, claims_view.ROW,
              ["Claim", "Verdict", "Interval"]),
             ("anatomy", macs.rename(columns={"macs": "multiply-adds"}),
              {"part": 170, "multiply-adds": 110, "formula": 420},
              66, ["part", "multiply-adds"])]
    found = []
    for path, table, widths, row, first in cases:
        holds = (row - 8) // 19  # lines of 14-px text a row this tall holds (66 px: 3, 88 px: 4)
        wide = [*first, "Direction", "Verdict in full", "Interval is", "Interval in full"]  # uncut at 1,400 px too
        texts = [value for name in wide if name in table for value in table[name]]
        for width in (400, 1400):
            page = {400: at_400, 1400: at_1400}[width][{**PAGES, **VIEW_PAGES}[path]]  # opened once
            try:
                page.set_viewport_size({"width": width, "height": 1000})
                laid_out(page)
                heads = page.locator('th, [role="columnheader"]', has_text=first[0])  # the grid redrawn at this width
                page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]').filter(has=heads).first.wait_for(
                    state="attached", timeout=30_000)
                drawn = grid(page, first[0], [*texts, *first])
                assert drawn is not None, (path, width, "no grid")
                total = sum(widths[name] for name in table.columns)  # a narrower table: its last column fills the frame
                assert abs(drawn["columns"] - max(total, drawn["visible"])) <= 2, (path, width, drawn["columns"], total)
                right = sum(widths[name] for name in first)  # where the last column read first ends
                if right > drawn["visible"] or drawn["left"]:
                    found.append((path, width, f"{first} end at {right} px, the frame shows {drawn['visible']}"))
                for name in wide if width == 1400 else first:
                    for text in table.get(name, []):
                        if lines(text, widths[name], drawn) > holds:
                            found.append((path, width, name, text))
            finally:
                page.set_viewport_size({"width": width, "height": 800})
    assert not found, "\n".join(map(str, found))


def test_no_chart_cuts_its_key_at_1400_px(at_1400):
    """Before: the attention page's key of the uniform line ('uniform head: 1/N = 0.0625') was cut at the
    edge of its 240-px panel at 1,400 px; every chart text of every page (and of a variant's Main effects view)
    inside its chart."""
    found = {name: cut[:3] for name, seen in at_1400.seen.items()
             if (cut := [item for item in seen.overflow if item["kind"] == "chart text"])}
    assert not found, found
