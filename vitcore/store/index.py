"""The store's verdict cache, `<store>/.index.json`: for each run folder, what it was judged from
(its stamp) and the verdict: its table() row if it is a valid run, else why not.

A verdict is reused only while the folder's stamp is unchanged (vitcore.store.validate.stamp: size, mtime
and ctime of every file), so a store of 10,000 runs costs a listing and a few stats per run instead
of reading 40,000 files. The file is two lines: a header with the versions and the sha256 of the
second line, the verdicts. An edited verdict fails the checksum and the whole index is rebuilt from
the run folders, never trusted. Safe to delete; never committed.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from vitcore.config.run import SCHEMA_VERSION, TRAINING_VERSION, RunConfig
from vitcore.store.validate import METRICS, TEMP_PREFIX, VALIDATION_VERSION, BadRun, Contents, read_run

NAME = ".index.json"
INDEX_TEMP_PREFIX = ".index-"  # an index being written (or the debris of a killed writer)
CONFIG_FIELDS = list(RunConfig.__dataclass_fields__)
COLUMNS = ["run_id", "config_id", "label", *CONFIG_FIELDS, *METRICS, "has_weights", "has_predictions",
           "timing_group", "collapsed"]
# A collapsed run learned its training rows but predicts the test split at about chance (10 classes):
# e.g. post-norm BatchNorm runs whose batch statistics do not carry over to inference.
COLLAPSED_TEST, COLLAPSED_TRAIN = 0.2, 0.5
RACY_NS = 2_000_000_000  # file times tick coarsely (ms on Linux, up to 2 s elsewhere)

Verdict = list  # [stamp (None: judge again next time), row or None, reason or None]: a list, as from JSON


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


def timing_group(summary: dict) -> str:
    """Runs whose wall seconds compare: equal strings were timed by the same code, threads, workers
    and compile mode. Summaries without "timing" but with "threads" came from the one-launch-per-epoch
    code in fresh processes of 2-worker sweeps; summaries with neither from the one-launch-per-step code."""
    timing = summary.get("timing")
    if timing is not None:
        return f"v{timing['code']}/threads{timing['threads']}/workers{timing['workers']}/{timing['compile']}"
    if "threads" in summary:
        return f"v2/threads{summary['threads']}/workers2/fresh"
    return "v1/legacy"


def row(run_id: str, contents: Contents) -> list:
    """One table() row, values in COLUMNS order, from a validated run; ViT-only fields are None for
    the convnet. (Lists, not dicts: half the index's size and a faster DataFrame.)"""
    cfg, summary = contents.config, contents.summary
    fields = cfg.identity()
    collapsed = summary["test_accuracy"] < COLLAPSED_TEST and summary["final_train_accuracy"] > COLLAPSED_TRAIN
    return [run_id, cfg.config_id, cfg.label(), *(fields.get(name) for name in CONFIG_FIELDS),
            *(summary[key] for key in METRICS), contents.has_weights, contents.predictions is not None,
            timing_group(summary), collapsed]


def judge(folder: Path, run_id: str, labels: np.ndarray | None = None, is_dir: bool = True) -> Verdict:
    """Validate one run folder now. The stamp is taken first, so a change during the read shows next time."""
    folder_stamp = stamp(folder, is_dir)
    try:
        return [folder_stamp, row(run_id, read_run(folder, run_id, labels)), None]
    except BadRun as error:
        return [folder_stamp, None, str(error)]


def read(root: Path) -> tuple[dict[str, Verdict], str | None]:
    """({run_id: verdict}, None), or ({}, why the index on disk cannot be used) — ({}, None) when
    there is none or it was written by another version (both simply mean: validate everything)."""
    try:
        header, _, body = (root / NAME).read_bytes().partition(b"\n")
    except OSError:
        return {}, None
    try:
        meta = json.loads(header)
        if (meta.get("schema"), meta.get("training_version"), meta.get("validation"), meta.get("columns")) != \
                (SCHEMA_VERSION, TRAINING_VERSION, VALIDATION_VERSION, COLUMNS):
            return {}, None
        if meta.get("sha256") != hashlib.sha256(body).hexdigest():
            return {}, "checksum mismatch: edited or damaged (rebuilt from the run folders)"
        verdicts = json.loads(body)
        if isinstance(verdicts, dict):
            return verdicts, None
    except (ValueError, AttributeError):
        pass
    return {}, "unreadable (rebuilt from the run folders)"


def write(root: Path, verdicts: dict[str, Verdict]) -> None:
    """Replace the index atomically (temp file, then rename), readable by everyone like the runs."""
    body = json.dumps(verdicts, separators=(",", ":")).encode()
    header = json.dumps({"schema": SCHEMA_VERSION, "training_version": TRAINING_VERSION,
                         "validation": VALIDATION_VERSION, "columns": COLUMNS,
                         "sha256": hashlib.sha256(body).hexdigest()})
    try:
        handle, temp = tempfile.mkstemp(prefix=INDEX_TEMP_PREFIX, dir=root)
        try:
            with os.fdopen(handle, "wb") as out:
                os.fchmod(out.fileno(), 0o644)  # mkstemp makes 0600
                out.write(header.encode() + b"\n" + body)
            os.replace(temp, root / NAME)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
    except OSError:  # a read-only store (e.g. a deploy) just stays unindexed
        pass
