"""Keeping a store healthy: the full check behind `python -m vitcore check`, and the removal of
unfinished writes behind `check --fix`.

A writer (RunStore.save) fills a `<store>/.tmp-*` folder while holding an exclusive flock on it, so
a folder nobody holds is debris of a killed writer. Writers that take no lock (a backfill's
`<run>/.tmp-*.npy`, an index temp file, or code from before the lock) are told apart by age only:
`clean` removes nothing younger than STALE_SECONDS.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import fcntl
import io
import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

import numpy as np

from vitcore.config.metrics import known
from vitcore.data.regular import Refused, kind, open_entry, open_or_create
from vitcore.store import index, weights
from vitcore.store.index import RUN_ID
from vitcore.store.validate import TEMP_PREFIX, copy_of


class RunStore(Protocol):
    """What upkeep needs of a vitcore.store.runs.RunStore (which imports this module, never the reverse)."""
    root: Path

    def run_ids(self) -> list[str]: ...


INDEX = index.NAME
Progress = Callable[[list[os.DirEntry]], Iterable[os.DirEntry]]  # the same entries, reported as they go (a bar)

STALE_SECONDS = 3600  # `check --fix` removes unheld debris older than this
DEBRIS = (TEMP_PREFIX, index.INDEX_TEMP_PREFIX)
PLANS = "plans"  # the registered plans' folder (vitcore.stats.plans.FOLDER)


def check(store: RunStore, labels: np.ndarray | None = None, progress: Progress | None = None
          ) -> list[tuple[str, str]]:
    """(entry, reason) for every invalid run, stray folder (hidden ones, like a repository's .git, are not the
    store's), unfinished write and damaged index;
    [] when all is well. Every run is validated from its files (the index is not trusted, and is
    rewritten from these verdicts), its weights on every official test image (index.judge_in_full: once
    per content); `labels`, the official test labels, also checks each predictions.npy cell by cell.
    Writes in progress (held by their writer) are not problems. `progress(entries)`: an iterable over the same
    entries that reports as they go (the CLI passes tqdm: a fresh machine verifies every run's weights, minutes)."""
    root = store.root
    if not root.is_dir():
        return []
    try:
        listing = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as error:
        return [(".", f"the store folder is unreadable ({error.strerror})")]
    cached, damaged = index.read(root, sum(1 for entry in listing if RUN_ID.fullmatch(entry.name)))
    problems = [(INDEX, damaged)] if damaged else []
    verdicts, copies = {}, {}  # copies: folder -> the run id its config is (a copy or a hand edit)
    for entry in listing if progress is None else progress(listing):
        path = root / entry.name
        if entry.name.startswith(DEBRIS):
            if not _held(path):
                problems.append((entry.name, _debris_reason(path)))
        elif RUN_ID.fullmatch(entry.name):
            is_dir = entry.is_dir(follow_symlinks=False)
            verdict, _ = index.judge_in_full(path, entry.name, labels, is_dir)
            verdicts[entry.name], before = verdict, cached.get(entry.name)
            if verdict[1] is not None:
                problems.append((entry.name, verdict[1]))
                if is_dir and (other := copy_of(path)):
                    copies[entry.name] = other
            if before is not None and verdict[0] is not None and before[0] == verdict[0] and before[1] != verdict[1] \
                    and not (before[1] is None and weights.FULL_CHECK in verdict[1]):  # a scan only screens weights
                problems.append((INDEX, f"its verdict on {entry.name} disagreed with the run's files (rebuilt)"))
            if is_dir:
                problems += [(f"{entry.name}/{name}", _debris_reason(path / name)) for name in _listing(path)
                             if name.startswith(TEMP_PREFIX)]
        elif entry.name == PLANS and entry.is_dir(follow_symlinks=False):
            # registered plans (vitcore.stats.plans) are read by their own reader; here only a killed register's file
            problems += [(f"{PLANS}/{name}", _debris_reason(path / name)) for name in _listing(path)
                         if name.startswith(TEMP_PREFIX) and not _held(path / name)]
        elif entry.name.startswith("."):
            continue  # a hidden folder (.git of a store at a repository's root, .ipynb_checkpoints): never a run's
        elif entry.is_dir(follow_symlinks=False):
            problems.append((entry.name, "not a run folder (name is not a run id)"))
    if verdicts != cached:
        index.write(root, verdicts)
    return [(name, _duplicate_note(reason, copies.get(name), verdicts)) for name, reason in problems]


def _listing(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:  # an unreadable run folder: its verdict already says so
        return []


def _duplicate_note(reason: str, other: str | None, verdicts: dict) -> str:
    """A folder holding another run's config is a duplicate when that run is stored: say which one wins."""
    if other is not None and other in verdicts and verdicts[other][1] is None:
        return f"{reason}; a duplicate of run {other}, which is kept"
    return reason


def clean(store: RunStore, older_than: float = STALE_SECONDS) -> list[str]:
    """Remove unfinished writes (`.tmp-*` folders and files, index temp files) that no writer
    holds and that are older than `older_than` seconds; returns what it removed."""
    root = store.root
    if not root.is_dir():
        return []
    if not is_store(root):
        raise ValueError(f"{root} is not a run store (no run folder, no {INDEX}): nothing there is removed")
    candidates = [root / name for name in os.listdir(root) if name.startswith(DEBRIS)]
    if (root / PLANS).is_dir() and not (root / PLANS).is_symlink():  # a killed `plan register`'s temporary file
        candidates += [root / PLANS / name for name in os.listdir(root / PLANS) if name.startswith(TEMP_PREFIX)]
    for run_id in store.run_ids():
        if stat.S_ISDIR(os.lstat(root / run_id).st_mode):
            candidates += [root / run_id / name for name in os.listdir(root / run_id) if name.startswith(TEMP_PREFIX)]
    removed = []
    for path in sorted(candidates):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
            continue  # a FIFO, device or link named like debris: no writer of ours made it (check names it)
        if time.time() - info.st_mtime < older_than or _held(path):
            continue
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        if not os.path.lexists(path):  # a read-only store keeps it: then it is not "removed" (check still lists it)
            removed.append(str(path.relative_to(root)))
    return removed


WRITE = re.compile(rf"{re.escape(TEMP_PREFIX)}(old-)?[0-9a-f]{{12}}-.+")  # a folder RunStore.save fills


def is_store(root: Path) -> bool:
    """True when the folder at `root` holds a run folder, the store's index, a run being written or registered
    plans (plans/SHA256SUMS): what destructive upkeep (clean) requires, so `--store` naming another folder never
    loses a file."""
    try:
        with os.scandir(root) as entries:
            return any(entry.name == INDEX or RUN_ID.fullmatch(entry.name) or WRITE.fullmatch(entry.name)
                       or (entry.name == PLANS and os.path.isfile(root / PLANS / "SHA256SUMS")) for entry in entries)
    except OSError:
        return False


def _held(path: Path) -> bool:
    """True while a writer (RunStore.save) holds the flock on `path`, the .tmp-* folder it is filling.
    Opened only when a folder or a plain file, looked at first (vitcore.data.regular): a FIFO or device
    named .tmp-* is never opened, never held."""
    try:
        handle = open_entry(path, folders=True)
    except Refused:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(handle)


def _debris_reason(path: Path) -> str:
    try:
        info = os.lstat(path)
    except OSError:
        return "vanished while checking"
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        return (f"named like an unfinished write but {kind(info.st_mode)}, not a file or folder (never opened; "
                "`check --fix` leaves it)")
    age = time.time() - info.st_mtime
    when = "now" if age >= STALE_SECONDS else f"once it is {STALE_SECONDS // 60} min old"
    return (f"unfinished write, {age / 60:.0f} min old, held by no writer: left by an interrupted one "
            f"(safe to delete; `check --fix` removes it {when})")


# `<store>/replaced_runs.csv`: one row per run a backfill replaced by its retrain (`sweep
# --backfill-predictions --replace-unreproducible`), its old and new numbers — the only record of the old ones.
#
# Appended to only when it is a regular file (vitcore.data.regular): a link there is never followed (a row
# appended outside the store), a FIFO or device never opened (a FIFO hung the sweep after the run was replaced).
# The sweep checks it before it trains (`check_replaced_log`), so a refusal never comes after a run was replaced.

REPLACED_LOG = "replaced_runs.csv"
REPLACED_METRICS = known("test_accuracy", "best_val_accuracy", "final_train_accuracy", "test_loss", "seconds")
COLUMNS = ["run_id", "label", "train_rows", "seed", "replaced_on",
           *(f"{age}_{name}" for name in REPLACED_METRICS for age in ("old", "new"))]


def log_replaced(root: str | Path, result: dict) -> None:
    """Append one replaced run's old and new numbers (a backfill's result: old_<metric>, new_<metric>) to the
    log of the store at `root`, its header first when the file is new."""
    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS, extrasaction="ignore")
    with os.fdopen(_open_replaced_log(Path(root)), "a", newline="") as out:
        if os.fstat(out.fileno()).st_size == 0:
            writer.writeheader()
        writer.writerow({**result, "replaced_on": datetime.date.today().isoformat()})
        out.write(text.getvalue())  # one write: a row is never split among other appends


def check_replaced_log(root: str | Path) -> None:
    """ValueError now when the store's log exists and could not be appended to (see `_open`)."""
    if os.path.lexists(Path(root) / REPLACED_LOG):
        os.close(_open_replaced_log(Path(root)))


def _open_replaced_log(root: Path) -> int:
    """A descriptor appending to the log, created if missing; ValueError when it is not a regular file."""
    path = root / REPLACED_LOG
    try:
        return open_or_create(path, os.O_WRONLY | os.O_APPEND)[0]
    except Refused as refused:
        raise ValueError(f"{path} " + refused.words("cannot be appended to ({reason}; a link is never followed)",
                                                    "is {what}: never opened (only a regular file of its own "
                                                    "is appended to)", "")
                         + "; remove it (replaced runs' old numbers are logged there)") from None
