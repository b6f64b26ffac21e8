"""Benchmark the dashboard (not a test): first render of the ablations page and a view-only session's RSS.

    python bench/app_bench.py            # uses cached_runs/ (or $VITCORE_STORE)

Measures, on fresh `streamlit run streamlit_app.py` servers with training off:
  1. script time: the ablations page's script in a fresh process (AppTest on app.py) to its metric
     cards (its first paint, then the timed rerun that draws them), first session without and with the
     server's start-up warm-up run first, and a second session;
  2. browser render: headless Chromium (Debian's, via Playwright) from navigation to the metric cards,
     (a) the first visitor the moment the server answers (its warm-up still running: a wake-up from
     sleep), then a second visitor; (b) on a second fresh server, the first visitor after the
     warm-up has finished (a server that started before anyone came);
  3. server RSS after a view-only session opened the Ablations and Runs pages, and whether TensorFlow
     was loaded into the server (it must not be). Budgets (issue 4): render <= 1.5 s, RSS <= 300 MB;
  4. server RSS after that session then visited every page (Attention runs its stored weights in
     NumPy, Anatomy counts from formulas), page by page. Budget (issue 11): <= 400 MB;
  5. first paint (issue 13): the Ablations page against a trivial one-metric page in the same browser,
     servers side by side and visits interleaved, median of 9: the landing (time to its forest plot
     and to its cards) and a flipped switch (time to the cards). Goal: <= 1.5x the trivial page. The
     forest plot also against a trivial one-chart page: what any page costs whose first paint is a chart.

  6. server CPU (issue 20): one pass over every page (10 views: the 9 pages, the Seed noise page
     included, and a flipped switch) on a fresh server with the shipped .streamlit/config.toml (file watcher off)
     against the same with the watcher on, servers one after the other in rounds, median of 3. Goal: <= 0.5x. Run it
     from a checkout with its .venv inside (the README's first command), where the watcher has the most to walk.

    python bench/app_bench.py --paint    # only 5 (about a minute)
    python bench/app_bench.py --cpu      # only 6 (about five minutes)
    python bench/app_bench.py --memory   # issue 19's RSS under any URL (bench/memory_bench.py, ~10 minutes)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
from served import ALL_PAGES, ARGS, CHROMIUM, ROOT, served, tensorflow_loaded, warm_line

COLD = """
import time
from streamlit.testing.v1 import AppTest
from vitcore.app.sidebar import PAINTED
if {warm!r}:  # what streamlit_app.py's start-up hook does before anyone visits
    from vitcore.app.ablations.panels import warm_caches
    warm_caches()
times = []
for session in range(2):  # a fresh session each time; the second finds imports and st.cache_data warm
    start = time.perf_counter()
    at = AppTest.from_file({app!r}, default_timeout=120).run()  # the first paint: the page without its cards
    at.session_state[PAINTED] = True  # what the sidebar fragment's timed rerun does (AppTest fires no timers)
    at.run()  # the rerun that draws the cards
    times.append(time.perf_counter() - start)
    assert not at.exception and at.metric, "ablations page did not render its metric cards"
print(*times)
"""


def script_seconds(warm: bool = False) -> tuple[float, float]:
    """(first, second) script run of the ablations page in a fresh process (AppTest, no browser),
    with or without the server's start-up warm-up run first."""
    code = COLD.format(app=str(ROOT / "app.py"), warm=warm)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "VITCORE_ALLOW_TRAINING": "0"}, check=True)
    first, second = map(float, done.stdout.strip().splitlines()[-1].split())
    return first, second


TRIVIAL = """import streamlit as st
st.title("Trivial page")
st.metric("A number", 1)
"""
# Streamlit's own floor for a page whose first paint is a chart: a title and one two-point Vega-Lite chart
# (the chart component's code is fetched and compiled by the browser when the first chart arrives).
TRIVIAL_CHART = """import streamlit as st
st.title("Trivial chart")
st.vega_lite_chart({"data": {"values": [{"a": 1, "b": 2}, {"a": 2, "b": 3}]}, "mark": "point",
                    "encoding": {"x": {"field": "a", "type": "quantitative"},
                                 "y": {"field": "b", "type": "quantitative"}}}, width="stretch")
"""


CARDS = '[data-testid="stMetric"]'
CHART = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'  # a chart drawn, not its box


# Timed inside the page: the first animation frame in which `selector` matches an element with a non-empty box,
# from the navigation's start (performance.now()). Playwright's own wait_for_selector polls at backing-off
# intervals (0, 20, 50, 100, 100, then every 500 ms), so a page that paints after ~0.3 s of polling was
# rounded up by as much as 0.5 s: a one-chart page read 1.07 s or 1.51 s, visit by visit.
PAINT_WATCH = """selector => {
  const seen = () => [...document.querySelectorAll(selector)].some(el => {
    const box = el.getBoundingClientRect(); return box.width > 0 && box.height > 0; });
  const frame = () => {
    if (seen()) { window.__vitcorePainted = performance.now(); } else { requestAnimationFrame(frame); } };
  requestAnimationFrame(frame);
}"""


def browser_render_seconds(browser, url: str, selector: str = CARDS) -> float:
    """Seconds from navigation start to the first frame that shows `selector` (PAINT_WATCH), in a new
    browser context (a first visit: nothing cached)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.add_init_script(f"({PAINT_WATCH})({selector!r})")
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function("() => window.__vitcorePainted !== undefined", timeout=120_000)
    seconds = page.evaluate("window.__vitcorePainted") / 1000
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)
    page.close()
    return seconds


def view_pages(browser, url: str, paths=("", "runs"), server: psutil.Process | None = None) -> dict[str, float]:
    """Open each page in turn (one tab, as a visitor clicking through); the server's RSS in MB after each."""
    page = browser.new_page()
    rss = {}
    for path in paths:
        page.goto(f"{url}/{path}", wait_until="domcontentloaded")
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=300_000)
        if server is not None:
            rss[path or "ablations"] = server.memory_info().rss / 2**20
    page.close()
    return rss


def first_paint(browser, folder: Path, rounds: int = 9) -> None:
    """Issue 13's first paint: the Ablations page (landing, flipped switch) against a trivial page, and
    the landing's forest plot also against a trivial one-chart page (Streamlit's floor for a chart-first
    page); each server warm, visits interleaved round by round so the machine's load hits all alike."""
    import statistics

    (folder / "trivial_paint.py").write_text(TRIVIAL)
    (folder / "trivial_chart.py").write_text(TRIVIAL_CHART)
    with (served(folder / "paint_app.log") as (_, url),
          served(folder / "paint_trivial.log", str(folder / "trivial_paint.py")) as (_, floor),
          served(folder / "paint_chart.log", str(folder / "trivial_chart.py")) as (_, chart_floor)):
        warm_line(folder / "paint_app.log")
        visits = {"trivial page, to its metric": (floor, CARDS),
                  "trivial chart page, to its chart": (chart_floor, CHART),
                  "landing, to the forest plot": (url, CHART), "landing, to the cards": (url, CARDS),
                  "flipped switch (?norm=batch), to the cards": (f"{url}/?norm=batch", CARDS)}
        for target, selector in visits.values():  # one visit each first: browser and server caches
            browser_render_seconds(browser, target, selector)
        seconds = {name: [] for name in visits}
        for _ in range(rounds):
            for name, (target, selector) in visits.items():
                seconds[name].append(browser_render_seconds(browser, target, selector))
    base = statistics.median(seconds["trivial page, to its metric"])
    chart = statistics.median(seconds["trivial chart page, to its chart"])
    print(f"first paint, median of {rounds} (load average {os.getloadavg()[0]:.1f}):")
    for name, values in seconds.items():
        median = statistics.median(values)
        against_chart = f", {median / chart:.2f}x the trivial chart page" if "forest plot" in name else ""
        print(f"  {name}: {median:.2f} s = {median / base:.2f}x the trivial page (goal <= 1.5x){against_chart}; "
              + " ".join(f"{value:.2f}" for value in values))


def cpu_seconds(server: psutil.Process) -> float:
    """User + system CPU of the server process and its children so far."""
    times = server.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


def server_cpu(browser, folder: Path, rounds: int = 3) -> None:
    """Issue 20: a fresh server's CPU from its start to the end of one pass over every page and a flipped
    switch (10 views), shipped config vs the file watcher on, one after the other in each round; median of `rounds`."""
    import statistics

    setups = {"shipped config (watcher off)": None, "watcher on (auto)": "auto"}
    cpu = {name: [] for name in setups}
    overflows = dict.fromkeys(setups, 0)
    for round_ in range(rounds):
        for name, watcher in setups.items():
            log = folder / f"cpu_{round_}_{watcher}.log"
            with served(log, watcher=watcher) as (process, url):
                server = psutil.Process(process.pid)
                warm_line(log)
                view_pages(browser, url, (*ALL_PAGES, "?norm=batch"))
                cpu[name].append(cpu_seconds(server))
            overflows[name] += log.read_text().count("queue overflow")
    shipped, watched = (statistics.median(cpu[name]) for name in setups)
    print(f"server CPU, start + one pass over {len(ALL_PAGES) + 1} views, median of {rounds} (load average "
          f"{os.getloadavg()[0]:.1f}, checkout {ROOT}, .venv inside: {(ROOT / '.venv').is_dir()}):")
    for name in setups:
        print(f"  {name}: {statistics.median(cpu[name]):.1f} s ("
              + ", ".join(f"{value:.1f}" for value in cpu[name]) + f"); 'queue overflow' log lines: {overflows[name]}")
    print(f"  ratio shipped / watcher on: {shipped / watched:.2f} (goal <= 0.5)")


def main() -> int:
    import tempfile

    from memory_bench import memory
    from playwright.sync_api import sync_playwright

    for flag, only in (("--paint", first_paint), ("--cpu", server_cpu), ("--memory", memory)):
        if flag in sys.argv[1:]:
            with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                only(browser, Path(folder))
                browser.close()
            return 0
    first, second = script_seconds()
    warmed, _ = script_seconds(warm=True)
    print(f"ablations page script (AppTest on app.py, fresh process): first session {first:.2f} s without the "
          f"start-up warm-up (imports + store reads), {warmed:.2f} s after it; second session {second:.2f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        log = Path(folder) / "a.log"
        with served(log) as (process, url):
            server = psutil.Process(process.pid)
            at_start = browser_render_seconds(browser, url)
            again = browser_render_seconds(browser, url)
            print(f"browser, navigation -> metric cards: first visitor as the server answers {at_start:.2f} s, "
                  f"second visitor {again:.2f} s (budget 1.5 s)")
            print(f"server: {warm_line(log)}")
            view_pages(browser, url)
            rss = server.memory_info().rss / 2**20
            tensorflow = tensorflow_loaded(server)
            every = view_pages(browser, url, ALL_PAGES, server)  # then every page of the dashboard
            tensorflow_every = tensorflow_loaded(server)
        log = Path(folder) / "b.log"
        with served(log) as (_, url):
            warm_line(log)
            after_warm = browser_render_seconds(browser, url)
            print(f"browser, navigation -> metric cards: first visitor after the warm-up {after_warm:.2f} s")
        trivial = Path(folder) / "trivial.py"
        trivial.write_text(TRIVIAL)
        with served(Path(folder) / "c.log", str(trivial)) as (_, url):
            floor = [browser_render_seconds(browser, url) for _ in range(3)]
            print(f"browser floor: a trivial page (title + one st.metric) takes {sorted(floor)[1]:.2f} s "
                  f"(median of 3) from navigation to its metric")
        first_paint(browser, Path(folder))
        browser.close()
    print(f"server RSS after a view-only session (ablations + runs): {rss:.0f} MB (budget 300 MB); "
          f"TensorFlow loaded in the server: {tensorflow}")
    print(f"server RSS after visiting every page: {max(every.values()):.0f} MB (budget 400 MB, issue 11); "
          f"TensorFlow loaded in the server: {tensorflow_every}; after each page: "
          + ", ".join(f"{name} {mb:.0f}" for name, mb in every.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
