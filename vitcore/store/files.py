"""Reading a run's files safely, whatever they hold: every read is bounded before it starts.

A file is read only if it is a plain file (never a link: nothing is followed; never a FIFO or a
device: nothing blocks) within its size limit (LIMITS; never over CEILING, whatever the config says),
checked with fstat on the opened handle before a byte is read and again after, into one buffer of the
file's real size. Parsing is bounded too: JSON nested past Python's
stack, an integer of thousands of digits, or a .npy header claiming 10^12 rows all become BadRun
(the header is checked before any array is made). Every reader of a run goes through here: the
validation, Run.history/confusion/predictions, the index and the Attention page's weights.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np

from vitcore.config.run import RunConfig
from vitcore.data.fashion import TEST_ROWS
from vitcore.data.regular import Refused, open_regular
from vitcore.model import anatomy

PREDICTIONS, WEIGHTS = "predictions.npy", "model.weights.h5"
# Bytes a file may have; the largest committed files are a tenth of these (summary 924 B, config 368 B,
# history 1.7 KB for 15 epochs, confusion 290 B, predictions 10,128 B). history.csv: 1,000 epochs
# (RunConfig's most) of 7 values at up to 25 characters each.
LIMITS = {"summary.json": 64 << 10, "config.json": 16 << 10, "history.csv": 1_000 * 7 * 26 + 64,
          "confusion.csv": 4 << 10, PREDICTIONS: 16 << 10}
WEIGHT_OVERHEAD = 1.5, 64 << 10  # weights file <= 1.5 x 4 bytes x params + 64 KB (committed: 1.13-1.31 x)
# The most bytes any file is read, whatever its config or the store says: a legal config (width 4,096,
# depth 64, MLP 65,536) would allow a 232 GB weights file by its parameter count. 64 MiB holds the
# 2^24 float32 values numpy_vit reads at most (the committed weights files: 0.27-0.92 MB).
CEILING = 64 << 20


def weights_limit(config: RunConfig) -> int:
    """The most bytes cfg's weights file may have (float32 values plus HDF5's bookkeeping), at most CEILING."""
    factor, extra = WEIGHT_OVERHEAD
    return min(int(factor * 4 * anatomy.total(config)) + extra, CEILING)


def weights_fit(config: RunConfig) -> bool:
    """Whether cfg's weights can be stored at all: its model's weights file fits under CEILING (a larger
    model's run is kept without weights)."""
    factor, extra = WEIGHT_OVERHEAD
    return int(factor * 4 * anatomy.total(config)) + extra <= CEILING


def keeps_weights(config: RunConfig) -> bool:
    """Whether a run of cfg keeps its weights: random-seed-0 runs (all three random seeds 0) whose weights
    fit (`weights_fit`). One rule for a local training and a Ray driver storing a remote run."""
    return config.seeds == (0, 0, 0) and weights_fit(config)


def limit_of(name: str, config: RunConfig) -> int:
    """The most bytes a run file `name` may have (LIMITS; the weights file: `weights_limit`)."""
    return weights_limit(config) if name == WEIGHTS else LIMITS[name]


class BadRun(Exception):
    """Why one run folder cannot be read."""


class OutOfMemory(BadRun):
    """A run that could not be judged for want of memory (a MemoryError while it was read): skipped, never
    cached as a verdict, judged again on the next read."""


def read_bounded(path: str | Path, limit: int, name: str | None = None, head: int | None = None) -> bytearray:
    """The bytes of the plain file at `path` (its first `head` bytes if given), or BadRun when it is
    a link, not a plain file (a FIFO is never waited on), unreadable, or over `limit` bytes (never more
    than CEILING) — the size checked before reading, and again after (a file growing meanwhile). The
    bytes are read into one buffer of the size fstat gave (no chunks joined: one copy of the file, not two),
    so the memory a read takes is the file's real size, at most the limit."""
    name, limit = name or os.path.basename(path), min(limit, CEILING)
    try:
        with open_regular(path, limit, follow=False) as handle:
            size = os.fstat(handle).st_size  # <= limit: open_regular refused more
            buffer = bytearray(size if head is None else min(head, size))
            view, got = memoryview(buffer), 0
            while got < len(buffer) and (count := os.readv(handle, [view[got:]])):
                got += count
            view.release()
            grew = head is None and got == size and os.read(handle, 1)
    except Refused as refused:
        raise BadRun(name + refused.words(" unreadable ({reason})", " is not a plain file",
                                          f" is {{size}} bytes, over its limit of {limit:,}")) from None
    except OSError as error:
        raise BadRun(f"{name} unreadable ({error.strerror})") from None
    if grew:
        raise BadRun(f"{name} grew while read (over the {size:,} bytes it had)")
    del buffer[got:]  # a file cut short while read: what it held
    return buffer


def read(folder: Path, name: str, limit: int | None = None, head: int | None = None) -> bytearray:
    return read_bounded(os.path.join(folder, name), LIMITS[name] if limit is None else limit, name, head)


def text(folder: Path, name: str) -> str:
    return decoded(read(folder, name), name)


def decoded(data: bytes | bytearray, name: str) -> str:
    """A run file's bytes as text, or BadRun naming it."""
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise BadRun(f"{name} is not text") from None


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number")


def json_object(folder: Path, name: str) -> dict:
    try:
        data = json.loads(text(folder, name), parse_constant=_no_constants)  # NaN, Infinity
    except ValueError as error:  # also an integer of over 4,300 digits
        raise BadRun(f"{name} unreadable ({str(error)[:200]})") from None
    except RecursionError:  # nested deeper than Python's stack: not one of our files
        raise BadRun(f"{name} unreadable (nested too deep)") from None
    if not isinstance(data, dict):
        raise BadRun(f"{name} is not a JSON object")
    return data


def predictions_array(data: bytes | bytearray, name: str = PREDICTIONS) -> np.ndarray:
    """The (TEST_ROWS,) uint8 array of a .npy file's bytes, its header checked before any array is
    made (np.load allocates whatever shape the header claims), or BadRun."""
    buffer = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buffer)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read_header is None:
            raise ValueError(f"format version {version}")
        shape, fortran, dtype = read_header(buffer)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as error:
        raise BadRun(f"{name} unreadable ({str(error)[:200]})") from None
    if shape != (TEST_ROWS,) or dtype != np.uint8 or fortran:
        raise BadRun(f"{name}: must be {TEST_ROWS:,} uint8 classes, got {dtype} {shape}")
    body = data[buffer.tell():]
    if len(body) != TEST_ROWS:
        raise BadRun(f"{name}: {len(body):,} bytes of data for {TEST_ROWS:,} classes")
    return np.frombuffer(bytes(body), dtype=np.uint8)  # 10 KB: a read-only array
