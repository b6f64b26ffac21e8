"""What the dashboard benchmarks share (bench/app_bench.py, bench/memory_bench.py, bench/crowd_trace.py): the
checkout, the browser's flags, a fresh `streamlit run` server and what to read off it. The benchmarks import
this module, never each other's (app_bench.py only hands `--memory` to memory_bench.py)."""

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

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
ALL_PAGES = ("", "claims", "noise", "runs", "patching", "anatomy", "token_cost", "attention", "vit_vs_convnet")


@contextlib.contextmanager
def served(log: Path, script: str = "streamlit_app.py", watcher: str | None = "none"):
    """(process, url) of a fresh `streamlit run script` (output to `log`), stopped on exit; `watcher`
    overrides server.fileWatcherType (None: the shipped .streamlit/config.toml decides)."""
    process, url = start_server(log, script, watcher)
    try:
        yield process, url
    finally:
        process.terminate()
        process.wait(10)


def start_server(log: Path, script: str = "streamlit_app.py", watcher: str | None = "none", root: Path = ROOT,
                 python: str = sys.executable, prefix: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """`streamlit run script` from `root` with `python` (after `prefix`, e.g. nice), training off, on a free
    port; (the process, its URL) once it answers its health check."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [*prefix, str(python), "-m", "streamlit", "run", script, "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         *(["--server.fileWatcherType", watcher] if watcher else [])],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root), "VITCORE_ALLOW_TRAINING": "0"},
        stdout=log.open("w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            return process, url
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("streamlit did not start")


def warm_line(log: Path, timeout: float = 120) -> str:
    """The server's "caches warm" line, once its start-up warm-up has printed it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [line for line in log.read_text().splitlines() if "vitcore: caches warm" in line]
        if lines:
            return lines[0]
        time.sleep(0.2)
    raise RuntimeError(f"no warm-up line in {log}")


def tensorflow_loaded(server: psutil.Process) -> bool:
    return any("tensorflow" in (m.path or "") for m in server.memory_maps())
