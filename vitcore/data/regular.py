"""Open a path only when it is what it must be: the one way vitcore opens a file it reads (the data set's
IDX files, a run's files, the index) and a path of the store it writes (training markers and flags, the
backfill log, the index, plans). A FIFO, socket or device is never opened, not even without blocking (some
devices act on open); a link is never followed unless the caller says so; a file larger than its limit is
refused before a byte is read; a new file is created with O_EXCL (never through a link, never onto
anything there); a replace never replaces anything but a regular file.

How an entry is looked at before it is opened: on Linux, an O_PATH descriptor names the entry without
opening the file (a device's driver never sees it); only a regular file (or a folder where one is asked
for) is then opened, through /proc/self/fd — the very inode looked at, so nothing can be swapped in
between. Without O_PATH or /proc: lstat, then open with O_NOFOLLOW | O_NONBLOCK, and the opened file must
be the inode looked at (an entry swapped in that instant is refused, though it was opened).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO",
         stat.S_IFSOCK: "a socket", stat.S_IFLNK: "a symbolic link", stat.S_IFDIR: "a folder",
         stat.S_IFREG: "a regular file"}
_O_PATH = getattr(os, "O_PATH", 0)
REOPEN = bool(_O_PATH) and os.path.isdir("/proc/self/fd")  # the race-free way (Linux); tests turn it off


def kind(mode: int) -> str:
    """What an entry of this st_mode is, in words ("a FIFO", "a character device", ...)."""
    return KINDS.get(stat.S_IFMT(mode), "a special file")


class Refused(Exception):
    """Why a path was not opened. `kind`: "unreadable" (`reason`: the OS's), "special" (not a regular
    file; `what` says what it is) or "size" (`size`: its bytes); each caller words it for its own
    messages (`words`). A link not followed is "unreadable" with the OS's reason (too many levels of
    symbolic links), `what` "a symbolic link"."""

    def __init__(self, kind: str, reason: str = "", size: int = 0, what: str = ""):
        super().__init__(kind, reason, size, what)
        self.kind, self.reason, self.size, self.what = kind, reason, size, what

    def words(self, unreadable: str, special: str, size: str) -> str:
        """The reader's phrase for this kind; `{reason}`, `{what}` and `{size}` (formatted with thousands
        commas) filled in."""
        return {"unreadable": unreadable, "special": special, "size": size}[self.kind].format(
            reason=self.reason, size=f"{self.size:,}", what=self.what)


def _allowed(info: os.stat_result, folders: bool, alone: bool) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise Refused("unreadable", reason=os.strerror(errno.ELOOP), what=kind(info.st_mode))
    if not (stat.S_ISREG(info.st_mode) or (folders and stat.S_ISDIR(info.st_mode))):
        raise Refused("special", what=kind(info.st_mode))
    if alone and stat.S_ISREG(info.st_mode) and info.st_nlink != 1:
        raise Refused("special", what=f"a regular file with {info.st_nlink - 1:,} other hard link(s)")


def open_entry(path: str | Path, flags: int = os.O_RDONLY, follow: bool = False, folders: bool = False,
               alone: bool = False) -> int:
    """A descriptor (the caller closes it) of the regular file at `path` — or folder, with `folders` —
    opened with `flags`, looked at first and opened only if it is one; Refused otherwise (a link is
    refused unless `follow`; with `alone`, a file with another hard link too: writing to it would write
    to a file elsewhere). No O_CREAT here: see `create` and `open_or_create`."""
    nofollow = 0 if follow else os.O_NOFOLLOW
    if REOPEN:
        try:
            probe = os.open(path, _O_PATH | nofollow)
        except OSError as error:
            raise Refused("unreadable", reason=error.strerror or str(error)) from None
        try:
            _allowed(os.fstat(probe), folders, alone)
            try:
                return os.open(f"/proc/self/fd/{probe}", flags & ~os.O_NOFOLLOW)  # a magic link: followed
            except OSError as error:
                raise Refused("unreadable", reason=error.strerror or str(error)) from None
        finally:
            os.close(probe)
    try:
        looked = os.stat(path, follow_symlinks=follow)
        _allowed(looked, folders, alone)
        handle = os.open(path, flags | nofollow | os.O_NONBLOCK)
    except OSError as error:
        raise Refused("unreadable", reason=error.strerror or str(error)) from None
    opened = os.fstat(handle)
    if (opened.st_dev, opened.st_ino) != (looked.st_dev, looked.st_ino):
        os.close(handle)
        raise Refused("special", what="an entry swapped while it was opened")
    return handle


@contextlib.contextmanager
def open_regular(path: str | Path, limit: int, follow: bool = True) -> Iterator[int]:
    """A read-only descriptor of the regular file at `path` (open_entry; a link followed only if `follow`),
    closed on exit. Refused when it cannot be opened, is not a regular file or is over `limit` bytes. An
    OSError while reading is the caller's to word."""
    handle = open_entry(path, os.O_RDONLY, follow=follow)
    try:
        info = os.fstat(handle)
        if info.st_size > limit:
            raise Refused("size", size=info.st_size)
        yield handle
    finally:
        os.close(handle)


def create(path: str | Path, flags: int = os.O_WRONLY, mode: int = 0o644) -> int:
    """A descriptor of a new regular file at `path`; FileExistsError when anything is there (a link
    included, never followed)."""
    return os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)


def open_or_create(path: str | Path, flags: int = os.O_WRONLY, mode: int = 0o644) -> tuple[int, bool]:
    """(a descriptor, created): a new regular file at `path`, or the regular file there if it has no other
    hard link (open_entry: anything else is Refused, left as it was): a touch, or an append with O_APPEND."""
    try:
        return create(path, flags, mode), True
    except FileExistsError:
        return open_entry(path, flags, alone=True), False


def replace(source: str | Path, target: str | Path) -> None:
    """os.replace(source, target), unless an entry at `target` is not a regular file (a link, FIFO, device
    or folder): then Refused and both are left as they were. (An entry swapped in after the look is
    replaced: a rename cannot check first; nothing is opened either way.)"""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise Refused("special", what=kind(info.st_mode))
    os.replace(source, target)
