"""Which trainings overlapped: a marker file per training in the store, held (flock) while it runs.

Runs compare in wall seconds only when timed alike (vitcore.store.index.timing_group: code, threads,
workers, compile). A training that shared the machine with a training it did not plan for (the app's
Train while a sweep runs, two sweeps into one store) ran slower for a reason its summary could not
show; now its summary says timing.context = "overlapped", and its seconds are a group of their own.
A sweep's own workers share one `session`: they overlap by design, and `workers` already says so.

Each training holds `<store>/.training-<id>` (flock LOCK_EX, the file holding its session) from start
to end. At start it lists the live markers (one nobody holds is a killed training's: removed); one of
another session means both overlap: it marks itself and leaves `<marker>.overlapped` beside the
other's, which that training reads when it ends. Two trainings that overlap in time always see each
other: the later one starts while the earlier one's marker is held. Only trainings into the same
store are seen (another store's sweep on this machine is not).

Whoever can write the store can plant entries at these names: a marker is opened only when it is a
regular file (vitcore.data.regular: a FIFO, device or link is never opened or followed), a flag is
created with O_EXCL (a link planted at its name creates or touches nothing outside the store) and counts
only when it is a regular file. A planted regular flag still tags a run "overlapped": timing tags are
not a security boundary.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vitcore.data.regular import Refused, create, open_entry

MARKER = ".training-"          # <store>/.training-<32 hex>: a training in progress
NEW = MARKER + "new-"          # a marker being created (locked, then renamed into place)
FLAG = ".overlapped"           # <marker>.overlapped: left by a later training that saw it live
CONTEXT = "overlapped"         # the summary's timing.context of such a run


@dataclass
class Watch:
    overlapped: bool = False


def new_session() -> str:
    """A session id for trainings that may overlap each other by design (one sweep's workers)."""
    return uuid.uuid4().hex


def live(root: Path) -> dict[str, str]:
    """{marker name: its session} of the trainings running now in the store at `root`; markers no
    training holds (a killed one's) and flags whose marker is gone are removed on the way."""
    try:
        names = os.listdir(root)
    except OSError:
        return {}
    found = {}
    for name in names:
        if not name.startswith(MARKER) or name.startswith(NEW) or name.endswith(FLAG):
            continue
        try:  # looked at first: a FIFO, device or link named like a marker is not one (never opened, left alone)
            handle = open_entry(root / name)
        except Refused:
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: a training is running
            found[name] = os.read(handle, 64).decode(errors="replace")
            continue
        finally:
            os.close(handle)
        with contextlib.suppress(OSError):
            os.unlink(root / name)
    for name in names:
        if name.endswith(FLAG) and name[:-len(FLAG)] not in found:
            with contextlib.suppress(OSError):
                os.unlink(root / name)
    return found


@contextlib.contextmanager
def watch(root: Path, session: str) -> Iterator[Watch]:
    """Hold a marker in the store at `root` while the body (one training) runs; the Watch says, once
    the body is done, whether a training of another session ran at any moment of it."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=NEW, dir=root)
    name = f"{MARKER}{uuid.uuid4().hex}"
    try:
        os.write(handle, session.encode())
        fcntl.flock(handle, fcntl.LOCK_EX)
        os.rename(temp, root / name)  # the lock stays with the file: never seen unheld
    except BaseException:
        os.close(handle)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    seen = Watch()
    try:
        for other, other_session in live(root).items():
            if other != name and other_session != session:
                seen.overlapped = True
                _leave_flag(root / (other + FLAG))
        yield seen
    finally:
        with contextlib.suppress(OSError):
            os.unlink(root / name)
        flag = root / (name + FLAG)
        with contextlib.suppress(OSError):
            seen.overlapped |= stat.S_ISREG(os.lstat(flag).st_mode)  # a link or FIFO there is no flag of ours
            os.unlink(flag)  # whatever it is: never followed or opened
        os.close(handle)


def _leave_flag(path: Path) -> None:
    """Create the flag at `path`, a new empty file (O_EXCL). An entry already there is left as it is,
    never opened or followed: a regular file is the flag already; a link planted at the name creates or
    touches nothing, and then no flag is left (the other training does not learn of this one)."""
    with contextlib.suppress(OSError):
        os.close(create(path))
