"""Issue 28's crowd, traced (not a test): a warmed server's RSS before, during and after 30 visitors.

    python bench/crowd_trace.py [--rounds 3] [--visitors 30] [ROOT ...]   # ~2 minutes a run

Each ROOT (a checkout with .venv; default: this one; e.g. main's code from `git archive main | tar -x -C
/tmp/main`) serves `streamlit run streamlit_app.py` under `nice -n 10`, roots alternating round by round.
Per run: the server starts and finishes its warm-up (its "caches warm" line), then 3 s later its RSS is
the baseline; the CROWD of bench/memory_bench.py arrives at once and the server's RSS is sampled every
0.1 s until every visitor has settled: the peak; the visitors leave and 10 s later the RSS is "after".

The visitors are not browsers but websocket clients speaking Streamlit's protocol (`visitor`): 30 headless
Chromium tabs on the 2-core box took the CPU from the server (a crowd took over 10 minutes, or a tab
timed out), while the server's work is the same: every script run, the after-paint rerun, the query
string. What it leaves out: the browser fetching media files and static assets (1.3 MB for the crowd).
Also printed: the load average at each run's start and end, and the shared libraries the started
server had mapped before any visitor (which extension modules its imports loaded).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from memory_bench import CROWD, PeakRSS
from served import ROOT, start_server, warm_line


def libraries(server: psutil.Process) -> list[str]:
    """The site-packages each mapped extension module comes from (top-level package names)."""
    names = set()
    for mapping in server.memory_maps():
        if "site-packages/" in mapping.path:
            names.add(mapping.path.split("site-packages/")[1].split("/")[0])
    return sorted(names)


def visitor(url: str, path: str, leave: threading.Event, settled_at: dict, key: int = 0) -> None:
    """One visitor as Streamlit's frontend speaks to the server (its websocket, protobuf messages), no
    browser: the first run of `path`, the timed fragment reruns the server asks for (the sidebar's
    "after paint" rerun, vitcore.app.sidebar), the query string the app writes back; settled once a full
    run has finished with no timed rerun pending for 1.5 s (settled_at[key]: seconds since it connected).
    Stays connected until `leave` is set."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    page, _, query = path.partition("?")
    page_hash, timers, last_full, start = "", {}, None, time.monotonic()

    def rerun(fragment: str = "") -> None:
        msg = BackMsg()
        msg.rerun_script.query_string, msg.rerun_script.page_script_hash = query, page_hash
        msg.rerun_script.page_name = "" if page_hash else page
        if fragment:
            msg.rerun_script.fragment_id = fragment
        socket.send(msg.SerializeToString())

    with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"], max_size=None,
                 open_timeout=600) as socket:
        rerun()
        while not leave.is_set():
            now = time.monotonic()
            for fragment, (interval, due) in list(timers.items()):
                if now >= due:
                    timers[fragment] = (interval, now + interval)
                    rerun(fragment)
            if key not in settled_at and last_full is not None and not timers and now - last_full > 1.5:
                settled_at[key] = now - start
            wait = min([due for _, due in timers.values()] + [now + 0.5]) - now
            try:
                raw = socket.recv(timeout=max(0.01, wait))
            except TimeoutError:
                continue
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "navigation":
                page_hash = msg.navigation.page_script_hash
            elif kind == "page_info_changed":
                query = msg.page_info_changed.query_string
            elif kind == "auto_rerun":
                timers[msg.auto_rerun.fragment_id] = (msg.auto_rerun.interval,
                                                      time.monotonic() + msg.auto_rerun.interval)
            elif kind == "new_session":  # a full run starts: the frontend drops its timers, the run sets its own
                timers.clear()
            elif kind == "stop_auto_rerun":
                for fragment in msg.stop_auto_rerun.fragment_ids:
                    timers.pop(fragment, None)
            elif kind == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                last_full = time.monotonic()


def run(root: Path, folder: Path, visitors: int) -> dict:
    paths = (CROWD * (visitors // len(CROWD) + 1))[:visitors]
    log = folder / f"server_{time.strftime('%H%M%S')}.log"
    load = os.getloadavg()[0]
    process, url = start_server(log, root=root, python=str(root / ".venv" / "bin" / "python"),
                                prefix=("nice", "-n", "10"))
    try:
        server = psutil.Process(process.pid)  # nice execs the interpreter: the same process
        warm_line(log)
        time.sleep(3)
        base, libs = server.memory_info().rss / 2**20, libraries(server)
        peak, leave, settled_at = PeakRSS(server), threading.Event(), {}
        threads = [threading.Thread(target=visitor, args=(url, path, leave, settled_at, key), daemon=True)
                   for key, path in enumerate(paths)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 1200
        while len(settled_at) < len(threads) and time.monotonic() < deadline:
            time.sleep(0.2)
        if len(settled_at) < len(threads):
            late = [path for key, path in enumerate(paths) if key not in settled_at]
            raise RuntimeError(f"never settled: {late}; the server's log: {log}")
        held = server.memory_info().rss / 2**20
        peak.running = False
        leave.set()
        for thread in threads:
            thread.join(10)
        time.sleep(10)
        after = server.memory_info().rss / 2**20
        return {"base": base, "peak": peak.peak, "held": held, "after": after, "load": (load, os.getloadavg()[0]),
                "libs": libs, "seconds": max(settled_at.values())}
    finally:
        process.terminate()
        process.wait(10)


def main() -> int:
    args = sys.argv[1:]
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 3
    visitors = int(args[args.index("--visitors") + 1]) if "--visitors" in args else len(CROWD)
    roots = [Path(arg).resolve() for arg in args if not arg.startswith("--") and Path(arg).is_dir()] or [ROOT]
    folder = tempfile.mkdtemp(prefix="crowd_trace_")  # kept: the servers' logs
    for index in range(rounds):
        for root in roots:
            got = run(root, Path(folder), visitors)
            print(f"round {index + 1} {root}: before {got['base']:.0f} MB, peak {got['peak']:.0f} MB, "
                  f"all settled {got['held']:.0f} MB, 10 s after they left {got['after']:.0f} MB; last visitor "
                  f"settled after {got['seconds']:.0f} s; load {got['load'][0]:.1f} -> {got['load'][1]:.1f}",
                  flush=True)
            if index == 0:
                print(f"  extension packages mapped before any visitor: {', '.join(got['libs'])}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
