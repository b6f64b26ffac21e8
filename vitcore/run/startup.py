"""A command's own start-up and exit: seconds of `python -m vitcore run` that train nothing.

Two costs of every training process that change nothing it computes or stores (README, "Speed"):
- Python's cyclic garbage collector walks every live object on each full collection. Importing
  TensorFlow, Keras, pandas and SciPy makes millions of them, so the collections during those imports,
  and during the tracing after them (which walk them all again), cost ~1 s of CPU per process.
  `imports()` keeps the collector off while they import, then freezes what they made out of every
  later collection (gc.freeze) and turns it back on: the run traces and trains with it on as before.
- Tearing the interpreter down after the run is stored (freeing every module's objects, TensorFlow's
  C++ destructors and thread pools) took ~0.7 s. `exit()` ends a process that imported TensorFlow as
  Python's own exit would (exit handlers, flushed stdout and stderr, the same exit code) without it.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
from typing import NoReturn


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
