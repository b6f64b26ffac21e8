"""Starting `spawn` children: from a process whose `__main__` is not its real entry point, and so that
they die with their parent.

A spawn child re-imports the parent's `__main__` from its file before it does any work. After
Streamlit's AppTest has run a page in this process (the test suite), `__main__` is the dashboard
script (`app.py`: no `__spec__`, a `__file__` that is not `sys.argv[0]`), so every child would
first re-run the whole dashboard. `neutral_main()` hides such a `__main__` while children start.

A worker whose parent is killed (SIGKILL: no clean-up runs) would go on training into the store with
nobody to report to: a sweep SIGKILLed with 2 workers left them running, the store grew from 4 to 8
runs, then they sat for minutes, each holding a training process's memory. `die_with_parent` (the pool's
initializer) ends them.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import os
import re
import signal
import sys
import threading
import time
import types
from typing import NoReturn

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
    """Initializer of a sweep's worker process (and of a Ray driver's retrain, vitcore.run.verify): dies with `parent`
    (die_with_parent), and TensorFlow's native notices stay off its stderr: TF_CPP_MIN_LOG_LEVEL=2 before TensorFlow
    loads (its multi-line CPU-feature notice), then quiet() below for absl's (a worker's stderr carries no terminal
    display)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
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


# A command's own start-up and exit: seconds of `python -m vitcore run` that train nothing.
#
# Two costs of every training process that change nothing it computes or stores (docs/speed.md):
# - Python's cyclic garbage collector walks every live object on each full collection. Importing
#   TensorFlow, Keras, pandas and SciPy makes millions of them, so the collections during those imports,
#   and during the tracing after them (which walk them all again), cost about a second of CPU per process.
#   `imports()` keeps the collector off while they import, then freezes what they made out of every
#   later collection (gc.freeze) and turns it back on: the run traces and trains with it on as before.
# - Tearing the interpreter down after the run is stored (freeing every module's objects, TensorFlow's
#   C++ destructors and thread pools) took most of a second. `exit()` ends a process that imported TensorFlow as
#   Python's own exit would (exit handlers, flushed stdout and stderr, the same exit code) without it.

@contextlib.contextmanager
def imports():
    """Import inside this block with the cyclic garbage collector off; afterwards every object that
    exists is frozen (never walked again: modules, classes and functions that live as long as the
    process) and the collector is as it was before the block."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def exit(code: int | None) -> NoReturn:  # noqa: A001 - what the function does, as sys.exit
    """End the process with `code`. After TensorFlow was imported: run the exit handlers (atexit:
    logging's flush, temporary folders, pools), flush stdout and stderr, then leave without the
    interpreter's teardown (os._exit). Otherwise, or while another non-daemon thread still runs (Python
    would wait for it), exit normally. A flush that fails (the reader of stdout went away) gives exit
    code 120, as Python's own exit does."""
    code = code or 0  # None: success, as SystemExit(None)
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if "tensorflow" not in sys.modules or others:
        raise SystemExit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, or a stream closed by the program
            code = code or 120
    os._exit(code)


# TensorFlow's native notices kept off a training process's stderr; everything else passes through unchanged.
#
# TensorFlow's C++ code, and XLA's through absl, write straight to file descriptor 2, below Python:
# TF_CPP_MIN_LOG_LEVEL=2 silences TensorFlow's own logging, but on some machines absl's still comes through at the
# first compile, e.g.
#
#     WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
#     I0000 00:00:1733268390.123456   12345 cpu_feature_guard.cc:210] This TensorFlow binary is optimized to use ...
#     W0000 00:00:1733268391.654321   12345 xla_bridge.cc:123] ...
#
# `quiet()` puts a pipe in front of file descriptor 2 for the rest of the process; a thread passes every line on to
# the real stderr except those two kinds (absl's preamble, and its INFO / WARNING lines in absl's own format). Python's
# warnings and errors, absl's ERROR and FATAL lines and anything else are kept, in order. Only for processes whose
# stderr carries no terminal display: the training CLI's `run` (its bar is on stdout), a sweep's workers, the app's
# training child — a pipe is not a terminal, so a progress bar on stderr would switch itself off.

NATIVE = re.compile(rb"^(?:WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
                    rb"|[IW]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ +[\w./+-]+:\d+\] )")
CHUNK = 1 << 16
_state: dict = {}


def notice(line: bytes) -> bool:
    """Whether one line of stderr is a native notice `quiet` drops (absl's preamble or an INFO / WARNING line)."""
    return NATIVE.match(line) is not None


def kept(data: bytes) -> tuple[bytes, bytes]:
    """(what to pass on now, what to hold until its line ends) of stderr bytes: whole lines but notices, and a
    line still being written once it holds a carriage return (a bar redrawn in place, never a notice)."""
    *lines, rest = data.split(b"\n")
    out = b"".join(line + b"\n" for line in lines if not notice(line))
    if b"\r" in rest:
        cut = rest.rindex(b"\r") + 1
        out, rest = out + rest[:cut], rest[cut:]
    return out, rest


def _write(fd: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(fd, data):]
        except OSError:  # the real stderr went away: nothing more can be said
            return


def _pump(read: int, real: int) -> None:
    rest = b""
    with os.fdopen(read, "rb", buffering=0) as pipe:
        while chunk := pipe.read(CHUNK):
            out, rest = kept(rest + chunk)
            _write(real, out)
    if rest and not notice(rest):
        _write(real, rest)


def quiet() -> None:
    """Filter this process's file descriptor 2 as the module says, until it exits (once; later calls do nothing)."""
    if _state:
        return
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    real = os.dup(2)
    read, write = os.pipe()
    os.dup2(write, 2)
    os.close(write)
    thread = threading.Thread(target=_pump, args=(read, real), name="vitcore-quiet-stderr", daemon=True)
    thread.start()
    _state.update(real=real, thread=thread)
    atexit.register(_restore)


def _restore() -> None:
    """At exit: the real stderr back on file descriptor 2, and what the pipe still holds written out."""
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os.dup2(_state["real"], 2)  # the pipe's write end closes (unless a child still holds it): the pump ends
    _state["thread"].join(timeout=2)
