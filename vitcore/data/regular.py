"""Open a file only when it is a regular one, without blocking: the one way vitcore opens a file it reads
(the data set's IDX files, a run's files). A FIFO or a device is refused at once, never waited on; a
file larger than its limit is refused before a byte is read."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path


class Refused(Exception):
    """Why a file was not opened. `kind`: "unreadable" (`reason`: the OS's), "special" (not a regular file)
    or "size" (`size`: its bytes); each reader words it for its own messages (`words`)."""

    def __init__(self, kind: str, reason: str = "", size: int = 0):
        super().__init__(kind, reason, size)
        self.kind, self.reason, self.size = kind, reason, size

    def words(self, unreadable: str, special: str, size: str) -> str:
        """The reader's phrase for this kind; `{reason}` and `{size}` (formatted with thousands commas) filled in."""
        return {"unreadable": unreadable, "special": special, "size": size}[self.kind].format(
            reason=self.reason, size=f"{self.size:,}")


@contextlib.contextmanager
def open_regular(path: str | Path, limit: int, follow: bool = True) -> Iterator[int]:
    """A read-only descriptor of the regular file at `path`, opened with O_NONBLOCK (and O_NOFOLLOW unless
    `follow`), closed on exit. Refused when it cannot be opened, is not a regular file or is over `limit`
    bytes. An OSError while reading is the caller's to word."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        handle = os.open(path, flags)
    except OSError as error:
        raise Refused("unreadable", reason=error.strerror or str(error)) from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("special")
        if info.st_size > limit:
            raise Refused("size", size=info.st_size)
        yield handle
    finally:
        os.close(handle)
