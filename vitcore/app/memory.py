"""The server's memory: freed memory goes back to the system, and big results are kept once, in a
cache bounded in MB.

glibc's malloc serves a large block from an mmap of its own (returned to the system when freed)
only while the block is above its mmap threshold, and it raises that threshold to the size of each
such block freed, up to 32 MB: after one attention pass, the NumPy temporaries of the next (tens of
MB each) come from the heap, and a heap seldom shrinks. Fixing the threshold (mallopt) keeps every
large array in its own mapping, so each is returned when freed. No-op where there is no glibc.

Smaller blocks stay in the heaps (one per thread that allocates, up to 8 per core: 30 visitors keep 30-60
script and I/O threads busy), and glibc gives a heap back only from its top: the free chunks between
live ones stay resident. `keep_trimming` asks glibc (malloc_trim) every second to return the whole free
pages inside its heaps. With 30 concurrent visitors the heaps held tens of MB free between live blocks at the peak
(bench/memory_bench.py; figures in bench/RESULTS.md).

Arrow's buffers (pandas' string columns, the Arrow tables Streamlit builds for every dataframe and chart
it sends a session) come from Arrow's own allocator, mimalloc in the pyarrow wheels, which keeps what a
finished script thread freed: tens of MB of one mimalloc segment stayed resident during a 30-visitor crowd.
`arrow_uses_malloc` hands them to glibc's malloc, under the threshold and trimming above (a
30-visitor crowd peaked about 60 MB lower with it: bench/RESULTS.md).

`SizedLRU` holds the attention maps (vitcore.app.walkthrough.probes): st.cache_data bounds entries, not
bytes (32 patch-2 maps are 300 MB), and hands every session its own unpickled copy; this cache bounds
the bytes, shares one read-only copy between sessions, and computes each key once while others wait.
Measured with bench/app_bench.py --memory (the 13 attention URLs, 6 concurrent visitors).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pyarrow  # a dependency of Streamlit: the server and every page load it anyway

M_MMAP_THRESHOLD = -3     # mallopt's parameter number (malloc.h)
MMAP_THRESHOLD = 1 << 20  # blocks of 1 MB and more get their own mapping: arrays, not Python objects
TRIM_SECONDS = 1.0        # how often keep_trimming returns the heaps' free pages


@functools.cache
def _libc():
    """The C library (glibc on Linux) through ctypes, or None."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


def return_freed_memory() -> bool:
    """Fix glibc's mmap threshold for this process; False where that is not possible."""
    try:
        return bool(_libc() is not None and _libc().mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except AttributeError:
        return False


def arrow_uses_malloc() -> bool:
    """Make glibc's malloc (Arrow's "system" pool) the default memory pool of pyarrow in this process; False
    where pyarrow was built without it. The numbers are the same: only where bytes live moves."""
    try:
        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    except NotImplementedError:
        return False
    return pyarrow.default_memory_pool().backend_name == "system"


def trim() -> bool:
    """Return the free pages inside glibc's heaps to the system now (malloc_trim(0): a few ms for a
    heap of hundreds of MB); True if some were returned (False where there is no glibc)."""
    try:
        return bool(_libc() is not None and _libc().malloc_trim(0))
    except AttributeError:
        return False


def freeze_survivors() -> int:
    """Take every object alive now out of the garbage collector's reach (gc.freeze), after one collection; returns
    how many. Called once the server's warm-up is done: its imports and warmed caches (~200,000 objects) then stay
    out of the full collection Streamlit runs after every script run (runner.postScriptGC), which otherwise held the
    GIL for ~0.1 s at the end of each page run: the first paint's chart left the server that much later. What a
    visitor's run makes is still collected; a frozen object that later falls into a reference cycle is not (the
    warm-up's Study and caches, once the store changes: later states are made after the freeze)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def keep_trimming(seconds: float = TRIM_SECONDS) -> threading.Thread:
    """A daemon thread calling trim() every `seconds` for the life of the process (the server's)."""
    def loop() -> None:
        while True:
            trim()
            time.sleep(seconds)

    thread = threading.Thread(target=loop, name="vitcore-trim", daemon=True)
    thread.start()
    return thread


def arrays_of(value: Any) -> list[np.ndarray]:
    """The NumPy arrays a result holds: itself, the items of a list/tuple/dict, a dataclass's fields."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    elif hasattr(value, "__dataclass_fields__"):
        value = [getattr(value, name) for name in value.__dataclass_fields__]
    if isinstance(value, (list, tuple)):
        return [array for item in value for array in arrays_of(item)]
    return []


class SizedLRU:
    """Results kept by key, least recently used dropped first once their arrays exceed `limit_mb`;
    a result larger than the limit alone is returned but not kept. Thread-safe: sessions share the
    (read-only) arrays, and a key being computed is computed once, the other callers waiting for it."""

    def __init__(self, limit_mb: float):
        self.limit = int(limit_mb * 2**20)
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._computing: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(size for _, size in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The result for `key`: kept, or computed now (once, whatever the number of callers)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key][0]
            computing = self._computing.setdefault(key, threading.Lock())
        with computing:
            with self._lock:
                if key in self._entries:  # computed by the caller this one waited for
                    self._entries.move_to_end(key)
                    return self._entries[key][0]
            try:
                value = compute()
                arrays = arrays_of(value)
                for array in arrays:
                    array.setflags(write=False)  # shared by every session: nobody may write into it
                self._keep(key, value, sum(array.nbytes for array in arrays))
            finally:
                with self._lock:
                    self._computing.pop(key, None)
            return value

    def _keep(self, key: Hashable, value: Any, size: int) -> None:
        if size > self.limit:
            return
        with self._lock:
            self._entries[key] = (value, size)
            total = sum(entry_size for _, entry_size in self._entries.values())
            while total > self.limit:
                _, (_, dropped) = self._entries.popitem(last=False)
                total -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
