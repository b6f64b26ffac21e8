"""The store's verdict cache, `<store>/.index.json`: for each run folder, what it was judged from
(its stamp) and the verdict: valid, or why not. Verdicts, and the derived metrics' values computed from the
run's own files (vitcore.store.derived): no number of summary.json comes from the index.

A verdict is reused only while the folder's stamp is unchanged (`stamp`: name, size and ctime of
every file), so a store of 10,000 runs reads one small summary.json per valid run (its table()
row, read from the run's own file) instead of validating 40,000 files. The file is two lines: a
header with the versions, the data the predictions were compared with, and a keyed checksum
(HMAC-SHA256) of the second line, the verdicts. The key lives outside the store, readable by this
user only (KEY_FILE; a process that cannot keep one uses its own), so whoever can write the store
but not read the key cannot forge a verdict: a recomputed plain checksum no longer passes. It is read like a run file
(vitcore.store.files: bounded, never a link or a FIFO); an edited, damaged or wrong-shaped index or entry is discarded
and judged again from the run folders, never trusted. A link, FIFO or device at its name is never opened nor replaced:
`check` names it and the store stays unindexed until it is removed. Safe to delete; never committed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import stat
import tempfile
import time
from pathlib import Path

import numpy as np

from vitcore.config import metrics
from vitcore.config.metrics import TABLE
from vitcore.config.run import SCHEMA_VERSION, SEED_FIELDS, TRAINING_VERSION, RunConfig
from vitcore.data import testsplit
from vitcore.data.fashion import SHIPPED_TEST_LABELS, DataError, shipped_test_labels
from vitcore.data.regular import Refused, kind, replace
from vitcore.data.samples import CHECK_PATH
from vitcore.store import derived, shipped
from vitcore.store.files import PREDICTIONS, BadRun, OutOfMemory, json_object, read_bounded
from vitcore.store.memo import _key_file, key  # noqa: F401 (re-exported: the index key lives in memo)
from vitcore.store.timing import busy, timing_group  # noqa: F401 (re-exported: where they lived)
from vitcore.store.validate import METRICS, TEMP_PREFIX, VALIDATION_VERSION, Contents, _number, read_run

NAME = ".index.json"
RUN_ID = re.compile(r"[0-9a-f]{12}")  # a run folder's name
INDEX_TEMP_PREFIX = ".index-"  # an index being written (or the debris of a killed writer)
CONFIG_FIELDS = list(RunConfig.__dataclass_fields__)
# Config fields that hold whole numbers (the optional seeds too): the CSVs write them as integers.
WHOLE_FIELDS = tuple(name for name, field in RunConfig.__dataclass_fields__.items()
                     if name in SEED_FIELDS or type(field.default) is int)
COLUMNS = ["run_id", "config_id", "label", *CONFIG_FIELDS, *TABLE, "has_weights", "has_predictions",
           "timing_group", "collapsed", "trained_at"]  # trained_at: UTC text, None for older runs
# A collapsed run learned its training rows but predicts the test split at about chance (10 classes):
# e.g. post-norm BatchNorm runs whose batch statistics do not carry over to inference.
COLLAPSED_TEST, COLLAPSED_TRAIN = 0.2, 0.5
RACY_NS = 2_000_000_000  # file times tick coarsely (ms on Linux, up to 2 s elsewhere)

# What read() says of an .index.json that is not a regular file: never opened, never replaced by the writer.
SPECIAL = ("is {what}, not a regular file: never opened or replaced, so the store stays unindexed (every run "
           "judged on each read) until it is removed")
ENTRY_BYTES = 4 << 10  # the index may hold this much per run folder (a stamp and a reason: under 1 KB)

def collapsed(test_accuracy, final_train_accuracy):
    """True where a run fits its training rows but not the test split (runs.csv's `collapsed`, the
    BatchNorm diagnosis); works on scalars and on pandas columns alike."""
    return (test_accuracy < COLLAPSED_TEST) & (final_train_accuracy > COLLAPSED_TRAIN)


# [stamp (None: judge again next time), reason (None: a valid run)], and a valid run's derived metrics
# {key: value} third while the registry has any (vitcore.store.derived): a list, as from JSON
Verdict = list


def stamp(folder: str | Path, is_dir: bool = True) -> str | None:
    """What a verdict on `folder` depends on: name, size and ctime of each entry (ctime moves on
    every write, rename, chmod or utime and cannot be set back, so an edit with a restored mtime
    still shows). `.tmp-*` entries are left out: writes in progress, not part of the run. None
    (never equal to a cached stamp) when unreadable, or when a file changed in the last RACY_NS:
    another write in the same clock tick would leave the same stamp ("racy git")."""
    try:
        if not is_dir:  # a symbolic link or a file where a run folder should be
            return f"entry:{os.lstat(folder).st_ctime_ns}"
        with os.scandir(folder) as entries:  # (name, lstat) of each entry: the cost of a warm table()
            found = [(entry.name, entry.stat(follow_symlinks=False)) for entry in entries
                     if not entry.name.startswith(TEMP_PREFIX)]
    except OSError:
        return None
    if found and time.time_ns() - max(info.st_ctime_ns for _, info in found) < RACY_NS:
        return None
    found.sort()
    return "|".join([f"{name}:{info.st_size}:{info.st_ctime_ns}" for name, info in found])


def row(run_id: str, config: RunConfig, summary: dict, has_predictions: bool, values: dict | None = None) -> list:
    """One table() row, values in COLUMNS order, from a valid run's summary and its derived metrics' `values`;
    ViT-only fields are None for the convnet. (Lists, not dicts: a faster DataFrame.)"""
    fields = config.identity()
    return [run_id, config.config_id, config.label(), *(fields.get(name) for name in CONFIG_FIELDS),
            *(summary[key] for key in METRICS), *(values[name] for name in metrics.DERIVED),
            summary.get("has_weights", False), has_predictions,
            timing_group(summary), bool(collapsed(summary["test_accuracy"], summary["final_train_accuracy"])),
            summary.get("trained_at")]


def row_from_files(folder: Path, run_id: str, verdict: Verdict) -> tuple[list, Verdict]:
    """The table() row of a run judged valid (`verdict`: its stamp, and its derived metrics' cached values),
    read from its summary.json, and the verdict to keep (with any derived value it lacked; BadRun if the
    summary no longer reads as a valid run's)."""
    summary = json_object(folder, "summary.json")
    try:
        config = RunConfig.from_dict(summary["config"])
        if config.run_id != run_id or not all(_number(summary.get(key)) for key in METRICS):
            raise ValueError("not this run's summary")
        has_predictions = any(entry.startswith(PREDICTIONS + ":") for entry in verdict[0].split("|"))
        if metrics.DERIVED:
            values = derived.values(folder, config, verdict[2] if len(verdict) > 2 else None)
            verdict = [verdict[0], None, derived.cached(values)]
            return row(run_id, config, summary, has_predictions, values), verdict
        return row(run_id, config, summary, has_predictions), verdict
    except (KeyError, TypeError, ValueError) as error:
        raise BadRun(f"summary.json changed ({error})") from None


def judge(folder: Path, run_id: str, labels: np.ndarray | None = None,
          is_dir: bool = True) -> tuple[Verdict, list | None]:
    """Validate one run folder now, in full: (its verdict, its table() row or None). Every scan judges
    alike: predictions.npy is compared cell by cell with the official test labels (`labels`, default the
    shipped copy) and the weights are screened on the shipped check images (vitcore.store.weights.screen).
    The stamp is taken first, so a change during the read shows next time."""
    verdict, contents, values = _judge(folder, run_id, labels, is_dir, deep=True)
    if contents is None:
        return verdict, None
    return verdict, row(run_id, contents.config, contents.summary, contents.predictions is not None, values)


def judge_in_full(folder: Path, run_id: str, labels: np.ndarray | None = None,
                  is_dir: bool = True) -> tuple[Verdict, str | None]:
    """`judge` with the weights verified on every official test image (vitcore.store.weights.verify:
    `check`'s verdict, kept in the index like a scan's): (its verdict, why a valid run's weights were not
    verified in full here, or None)."""
    verdict, contents, _ = _judge(folder, run_id, labels, is_dir, deep="full")
    return verdict, None if contents is None else contents.unverified


def _judge(folder: Path, run_id: str, labels, is_dir: bool,
           deep: bool | str) -> tuple[Verdict, Contents | None, dict]:
    """(verdict, the run's contents or None, its derived metrics' values)."""
    folder_stamp = stamp(folder, is_dir)
    try:
        contents = read_run(folder, run_id, _labels() if labels is None else labels, deep=deep)
        values = derived.values(folder, contents.config, parsed={
            "confusion.csv": contents.confusion, PREDICTIONS: derived.with_labels(contents.predictions)}
        ) if metrics.DERIVED else {}
    except OutOfMemory as error:  # not a verdict on the run: no stamp, so it is judged again next time
        return [None, str(error)], None, {}
    except BadRun as error:  # a run file changed while read too (a derived metric's): named, the run skipped
        return [folder_stamp, str(error)], None, {}
    return ([folder_stamp, None, derived.cached(values)] if metrics.DERIVED else [folder_stamp, None]), contents, values


def from_shipped(folder: Path, run_id: str, expected: str) -> tuple[Verdict | None, list | None]:
    """(verdict, row) of a run whose bytes are those the shipped file judged valid (vitcore.store.shipped), else
    (None, None): judge it."""
    folder_stamp = stamp(folder)  # taken first, as judge() does: a change meanwhile shows next time
    if shipped.digest(folder) != expected:
        return None, None
    listing = folder_stamp or "|".join(f"{name}:" for name in sorted(os.listdir(folder)))
    try:
        row, verdict = row_from_files(folder, run_id, [listing, None])
    except (BadRun, OSError):
        return None, None
    return [folder_stamp, *verdict[1:]], row


def _labels() -> np.ndarray | None:
    try:
        return shipped_test_labels()
    except DataError:  # a damaged install: counts are still checked against confusion.csv
        return None


def well_formed(verdict) -> bool:
    """A verdict as write() writes it: [stamp str or None, reason str or None] (and a valid run's derived values)."""
    if isinstance(verdict, list) and len(verdict) == 3 and verdict[1] is None and derived.well_formed(verdict[2]):
        verdict = verdict[:2]
    return (isinstance(verdict, list) and len(verdict) == 2
            and all(v is None or (isinstance(v, str) and len(v) < ENTRY_BYTES) for v in verdict))


def _checksum(body: bytes) -> str:
    return hmac.new(key(), body, hashlib.sha256).hexdigest()


def _signer() -> str:
    """Which cache's key signed an index (a digest of the key, never the key): an index another cache wrote
    (another user, a test's temporary cache) is simply rebuilt, not reported as damaged."""
    return hashlib.sha256(b"vitcore index signer " + key()).hexdigest()[:16]


def data_stamp() -> str:
    """What the verdicts were judged with: the shipped test labels and check images (their sizes and
    mtimes) and the local official test images (vitcore.data.testsplit.stamp: a run's weights are verified
    in full only where they are). When they change, every verdict is judged again."""
    try:
        return "|".join([*(f"{path.name}:{path.stat().st_size}:{path.stat().st_mtime_ns}"
                           for path in (SHIPPED_TEST_LABELS, CHECK_PATH)), testsplit.stamp()])
    except OSError:
        return "unreadable"


def read(root: Path, entries: int) -> tuple[dict[str, Verdict], str | None]:
    """({run_id: verdict}, None), or ({}, why the index on disk cannot be used) — ({}, None) when
    there is none or it was written by another version, against other data or under another cache's key
    (all simply mean: validate everything). `entries`: the run folders there are (the index may hold
    ENTRY_BYTES each)."""
    try:
        mode = os.lstat(root / NAME).st_mode
    except FileNotFoundError:
        return {}, None
    except OSError as error:
        return {}, f"unreadable ({error.strerror}) (rebuilt from the run folders)"
    if not stat.S_ISREG(mode):
        return {}, SPECIAL.format(what=kind(mode))
    try:
        header, _, body = read_bounded(root / NAME, (entries + 16) * ENTRY_BYTES).partition(b"\n")
    except BadRun as error:
        return {}, f"{str(error).removeprefix(NAME + ' ')} (rebuilt from the run folders)"
    try:
        meta = json.loads(header)
        if (meta.get("schema"), meta.get("training_version"), meta.get("validation"), meta.get("data")) != \
                (SCHEMA_VERSION, TRAINING_VERSION, VALIDATION_VERSION, data_stamp()) or meta.get("signer") != _signer():
            return {}, None
        if not hmac.compare_digest(str(meta.get("hmac")), _checksum(body)):
            return {}, "checksum mismatch: edited or damaged (rebuilt from the run folders)"
        verdicts = json.loads(body)
    except (ValueError, AttributeError, RecursionError):
        return {}, "unreadable (rebuilt from the run folders)"
    if not isinstance(verdicts, dict):
        return {}, "unreadable (rebuilt from the run folders)"
    kept = {run_id: verdict for run_id, verdict in verdicts.items() if well_formed(verdict)}
    if len(kept) < len(verdicts):
        return kept, f"{len(verdicts) - len(kept)} entries of the wrong shape (judged again)"
    return kept, None


def write(root: Path, verdicts: dict[str, Verdict]) -> None:
    """Replace the index atomically (temp file, then rename), readable by everyone like the runs; only a
    regular file is replaced (anything else there is left alone, and the store stays unindexed)."""
    body = json.dumps(verdicts, separators=(",", ":")).encode()
    header = json.dumps({"schema": SCHEMA_VERSION, "training_version": TRAINING_VERSION,
                         "validation": VALIDATION_VERSION, "data": data_stamp(),
                         "signer": _signer(), "hmac": _checksum(body)})
    try:
        if os.path.lexists(root / NAME) and not stat.S_ISREG(os.lstat(root / NAME).st_mode):
            return  # a special file or a link: never replaced (read() names it); the store stays unindexed
        handle, temp = tempfile.mkstemp(prefix=INDEX_TEMP_PREFIX, dir=root)
        try:
            with os.fdopen(handle, "wb") as out:
                os.fchmod(out.fileno(), 0o644)  # mkstemp makes 0600
                out.write(header.encode() + b"\n" + body)
            replace(temp, root / NAME)  # checked again: only a regular file is replaced
        finally:
            if os.path.lexists(temp):
                os.unlink(temp)
    except (OSError, Refused):  # a read-only store (e.g. a deploy) just stays unindexed
        pass
