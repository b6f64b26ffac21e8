"""Give freed memory back to the system, so the server's RSS follows what it holds, not its peak.

glibc's malloc serves a large block from an mmap of its own (returned to the system when freed)
only while the block is above its mmap threshold, and it raises that threshold to the size of each
such block freed, up to 32 MB: after one attention pass, the NumPy temporaries of the next (tens of
MB each) come from the heap, and a heap seldom shrinks. Fixing the threshold (mallopt) keeps every
large array in its own mapping, so each is returned when freed. Measured with bench/app_bench.py
--memory (the 13 attention URLs, 6 concurrent visitors). No-op where there is no glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3     # mallopt's parameter number (malloc.h)
MMAP_THRESHOLD = 1 << 20  # blocks of 1 MB and more get their own mapping: arrays, not Python objects


def return_freed_memory() -> bool:
    """Fix glibc's mmap threshold for this process; False where that is not possible."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return bool(libc is not None and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):
        return False
