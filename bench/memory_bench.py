"""Issue 19's memory goal (<= 400 MB under any URL), measured on fresh `streamlit run` servers:
server RSS after the 13 attention URLs in a row (and the peak during them), with 6 concurrent
visitors, and after a training started from the app (a child process: TensorFlow never enters the
server); then issue 28's: the peak with 30 concurrent visitors (15 attention URLs, every page, heavy
views) and after 500 store changes (a run folder renamed away and back, a page visit after each, so
every store-keyed cache gets new keys). Run through `python bench/app_bench.py --memory [--visitors N]
[--changes N]` (about 40 minutes at 30 and 500: the machine must be otherwise idle).
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

import psutil
from served import ALL_PAGES, ROOT, served, tensorflow_loaded


@contextlib.contextmanager
def served_with(log: Path, env: dict):
    """A fresh `streamlit run streamlit_app.py` as served() starts it, with these environment
    variables for the server (its store, training on), stopped on exit."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, stdout=log.open("w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        yield process, url
    finally:
        process.terminate()
        process.wait(10)


ATTENTION_URLS = [  # 13 attention views with stored weights, the two patch-2 ones (196 tokens) first
    "attention?patch_size=2&train_rows=1000", "attention?patch_size=2&train_rows=4000",
    "attention?patch_size=4&train_rows=1000", "attention?patch_size=4", "attention?train_rows=1000",
    "attention?train_rows=2000", "attention", "attention?train_rows=8000", "attention?train_rows=16000",
    "attention?patch_size=14&train_rows=1000", "attention?patch_size=14", "attention?patch_size=4&pos_embedding=none",
    "attention?norm=batch"]
# Issue 28's 30 visitors: 15 attention views, every page, and the heavy views of the Ablations page.
CROWD = [*ATTENTION_URLS, "attention?patch_size=4&norm=batch", "attention?pos_embedding=none", *ALL_PAGES, "noise",
         "?norm=batch", "?patch_size=4", "?norm_placement=post", "?pos_embedding=none", "?patch_size=14",
         "?model=convnet"]


class PeakRSS:
    """A server's RSS sampled every 0.1 s in a thread: its peak (MB) since started."""

    def __init__(self, server: psutil.Process):
        import threading

        self.server, self.peak, self.running = server, 0.0, True
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while self.running:
            with contextlib.suppress(psutil.Error):
                self.peak = max(self.peak, self.server.memory_info().rss / 2**20)
            time.sleep(0.1)


def settled(page, timeout: int = 600_000) -> None:
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout)
    page.wait_for_timeout(1500)  # a session's first paint is the page alone; the rest follows
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)


def memory(browser, folder: Path) -> None:
    """Issue 19's memory goal: server RSS after the 13 attention URLs, with 6 concurrent visitors,
    after a training started from the app (each on a fresh server)."""
    mb = lambda server: server.memory_info().rss / 2**20  # noqa: E731
    with served(folder / "memory_a.log") as (process, url):
        server = psutil.Process(process.pid)
        peak = PeakRSS(server)
        for path in ATTENTION_URLS:
            page = browser.new_page()
            page.goto(f"{url}/{path}", wait_until="domcontentloaded")
            settled(page)
            page.close()
        print(f"server RSS after the 13 attention URLs in a row: {mb(server):.0f} MB (goal 400 MB; "
              f"peak {peak.peak:.0f} MB during them)")
        peak.running = False
    with served(folder / "memory_b.log") as (process, url):
        server = psutil.Process(process.pid)
        peak = PeakRSS(server)
        pages = [browser.new_context().new_page() for _ in range(6)]
        for page, path in zip(pages, ATTENTION_URLS):  # all six at once: commit, then wait for each
            page.goto(f"{url}/{path}", wait_until="commit")
        for page in pages:
            settled(page)
        print(f"server RSS with 6 concurrent visitors (6 attention URLs, a fresh server): {mb(server):.0f} MB "
              f"(goal 400 MB; peak {peak.peak:.0f} MB)")
        peak.running = False
    store = folder / "scratch_store"  # empty: every config is uncached and Train is offered
    env = {"VITCORE_ALLOW_TRAINING": "1", "VITCORE_STORE": str(store), "VITCORE_MAX_TRAIN_MINUTES": "30"}
    with served_with(folder / "memory_c.log", env) as (process, url):
        server = psutil.Process(process.pid)
        page = browser.new_page()
        page.goto(f"{url}/?train_rows=1000", wait_until="domcontentloaded")
        settled(page)
        start = time.perf_counter()
        page.get_by_role("button", name="Train now").click()
        page.get_by_text("Training this config").first.wait_for(timeout=60_000)
        page.get_by_text("Training this config").first.wait_for(state="detached", timeout=1_800_000)
        settled(page)
        stored = [entry.name for entry in store.iterdir() if len(entry.name) == 12]
        print(f"server RSS after a training from the app ({len(stored)} run stored, {time.perf_counter() - start:.0f} "
              f"s): {mb(server):.0f} MB (goal 400 MB); TensorFlow loaded in the server: {tensorflow_loaded(server)}")
        page.close()
    crowd(browser, folder, _flag("--visitors", len(CROWD)))
    churn(browser, folder, _flag("--changes", 500))


def _flag(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def crowd(browser, folder: Path, visitors: int = 30) -> None:
    """Issue 28: `visitors` at once (CROWD, repeated if more), each in its own browser context, on a fresh server."""
    paths = (CROWD * (visitors // len(CROWD) + 1))[:visitors]
    with served(folder / "memory_d.log") as (process, url):
        server = psutil.Process(process.pid)
        peak = PeakRSS(server)
        pages = [browser.new_context().new_page() for _ in paths]
        for page, path in zip(pages, paths):  # all at once: commit, then wait for each
            page.goto(f"{url}/{path}", wait_until="commit")
        for page in pages:
            settled(page)
        print(f"server RSS with {visitors} concurrent visitors: {server.memory_info().rss / 2**20:.0f} MB "
              f"(goal 400 MB; peak {peak.peak:.0f} MB)")
        peak.running = False
        for page in pages:
            page.context.close()


def churn(browser, folder: Path, changes: int = 500) -> None:
    """Issue 28: a copy of cached_runs/ served while one of its run folders is renamed away and back
    `changes` times, a visit to the Ablations and Runs pages after each (the store's key changes every time)."""
    import shutil

    store = folder / "churn_store"
    shutil.copytree(ROOT / "cached_runs", store, ignore=shutil.ignore_patterns(".*"))
    moving = sorted(entry.name for entry in store.iterdir() if len(entry.name) == 12)[0]
    with served_with(folder / "memory_e.log", {"VITCORE_STORE": str(store)}) as (process, url):
        server = psutil.Process(process.pid)
        peak = PeakRSS(server)
        page = browser.new_page()
        rss = []
        for change in range(changes):
            away, back = (store / moving, folder / moving) if change % 2 == 0 else (folder / moving, store / moving)
            os.rename(away, back)
            time.sleep(1.1)  # the app looks at the store at most once a second (state.STORE_KEY_SECONDS)
            for path in ("", "runs"):
                page.goto(f"{url}/{path}", wait_until="domcontentloaded")
                settled(page)
            rss.append(server.memory_info().rss / 2**20)
            if (change + 1) % max(10, changes // 20) == 0 or change + 1 == changes:
                print(f"  after {change + 1} store changes: RSS {rss[-1]:.0f} MB (peak so far {peak.peak:.0f} MB)",
                      flush=True)
        print(f"server RSS after {changes} store changes: {rss[-1]:.0f} MB (goal 400 MB; first {rss[0]:.0f} MB, "
              f"peak {peak.peak:.0f} MB)")
        peak.running = False

