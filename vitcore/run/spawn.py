"""Starting `spawn` children: from a process whose `__main__` is not its real entry point, and so that
they die with their parent.

A spawn child re-imports the parent's `__main__` from its file before it does any work. After
Streamlit's AppTest has run a page in this process (the test suite), `__main__` is the dashboard
script (`app.py`: no `__spec__`, a `__file__` that is not `sys.argv[0]`), so every child would
first re-run the whole dashboard. `neutral_main()` hides such a `__main__` while children start.

A worker whose parent is killed (SIGKILL: no clean-up runs) would go on training into the store with
nobody to report to: a sweep SIGKILLed with 2 workers left them running, the store grew from 4 to 8
runs, then they sat ~4.5 minutes at ~1.1 GB each. `die_with_parent` (the pool's initializer) ends them.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
import types

from vitcore.run.quiet import quiet

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>: the signal this process gets when the thread that started it ends
WATCH_SECONDS = 1.0   # where there is no prctl: how often a worker checks that its parent is alive


def foreign_main() -> bool:
    """True when `__main__` is a script exec'd into this process rather than what was launched
    (`python script.py` and `python -m package` are left alone: children may need their functions)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or getattr(main, "__spec__", None) is not None or path is None:
        return False
    launched = sys.argv[0] if sys.argv and sys.argv[0] else None
    return launched is None or os.path.abspath(path) != os.path.abspath(launched)


@contextlib.contextmanager
def neutral_main():
    """Within this block, processes started with the spawn method do not re-run a foreign
    `__main__` (see foreign_main): it is replaced by an empty module, and restored on exit."""
    if not foreign_main():
        yield
        return
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def worker_start(parent: int) -> None:
    """Initializer of a sweep's worker process: dies with `parent` (die_with_parent), and TensorFlow's native
    notices stay off its stderr (vitcore.run.quiet: a worker's stderr carries no terminal display)."""
    quiet()
    die_with_parent(parent)


def die_with_parent(parent: int) -> None:
    """Initializer of a worker process started by `parent` (its pid): the worker is SIGKILLed when the parent
    ends, however it ends. Linux: prctl(PR_SET_PDEATHSIG) — the kernel sends it when the parent's thread that
    started the worker ends, so start workers from a thread that outlives them (run_sweep's `with` does).
    Elsewhere, or if prctl fails: a daemon thread that exits once the worker's parent is no longer `parent`
    (an orphan is adopted by init or a subreaper). Either way, a parent already gone by now ends it at once."""
    if not (sys.platform.startswith("linux") and _pdeathsig(signal.SIGKILL)):
        threading.Thread(target=_watch, args=(parent,), name="vitcore-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # it died before the signal was asked for: none will come
        os._exit(1)


def _pdeathsig(signum: int) -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc prctl
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)
