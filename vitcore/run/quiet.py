"""TensorFlow's native notices kept off a training process's stderr; everything else passes through unchanged.

TensorFlow's C++ code, and XLA's through absl, write straight to file descriptor 2, below Python:
TF_CPP_MIN_LOG_LEVEL=2 silences TensorFlow's own logging, but on some machines absl's still comes through at the
first compile, e.g.

    WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
    I0000 00:00:1733268390.123456   12345 cpu_feature_guard.cc:210] This TensorFlow binary is optimized to use ...
    W0000 00:00:1733268391.654321   12345 xla_bridge.cc:123] ...

`quiet()` puts a pipe in front of file descriptor 2 for the rest of the process; a thread passes every line on to
the real stderr except those two kinds (absl's preamble, and its INFO / WARNING lines in absl's own format). Python's
warnings and errors, absl's ERROR and FATAL lines and anything else are kept, in order. Only for processes whose
stderr carries no terminal display: the training CLI's `run` (its bar is on stdout), a sweep's workers, the app's
training child — a pipe is not a terminal, so a progress bar on stderr would switch itself off.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
import threading

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
