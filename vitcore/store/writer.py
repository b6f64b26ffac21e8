"""The one way a run reaches a store: render its files as bytes, then install them atomically.

    files = render(cfg, history, confusion, metrics, model, predictions)  # wherever it trained
    install(store_root, cfg, files)                                       # on the store's machine

A local training does both in one process (RunStore.save); a Ray task renders on its node and returns
the bytes through Ray's object store, and the driver installs them (vitcore.run.cluster), so a node
never writes to the driver's disk and both executors store the same bytes through the same checks.
Files are rendered in memory; the weights in a private temp folder (Keras' writer needs a file), never in the store.
`install` treats the bytes as untrusted (they may come from another machine): only the run files'
names, each within its size limit before a byte is written, the summary written last (the completion
marker), then every rule of vitcore.store.validate before the folder is renamed into place.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from vitcore.config.run import SCHEMA_VERSION, TRAINING_VERSION, RunConfig
from vitcore.data.fashion import NUM_CLASSES
from vitcore.data.regular import kind
from vitcore.store.files import limit_of
from vitcore.store.validate import HISTORY_COLUMNS, PREDICTIONS, TEMP_PREFIX, WEIGHTS, BadRun, read_run

SUMMARY = "summary.json"
# Every file a run folder may hold, in the order they are written: the summary last.
RUN_FILES = ("config.json", "history.csv", "confusion.csv", PREDICTIONS, WEIGHTS, SUMMARY)


def json_bytes(data: dict) -> bytes:
    """A run's JSON file as render writes it (indented, keys sorted, a final newline)."""
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()


def render(cfg: RunConfig, history: list[dict], confusion: np.ndarray, metrics: dict, model=None,
           predictions: np.ndarray | None = None) -> dict[str, bytes]:
    """A finished run's files, {name: bytes} (names from RUN_FILES): what `install` writes. `model`
    (anything with Keras' save_weights) adds the weights; `predictions` must agree with `confusion`."""
    config = {"schema": SCHEMA_VERSION, "training_version": TRAINING_VERSION, "run_id": cfg.run_id,
              "config": cfg.identity()}
    files = {"config.json": json_bytes(config),
             "history.csv": pd.DataFrame(history, columns=HISTORY_COLUMNS).to_csv(index=False).encode(),
             "confusion.csv": _bytes_of(np.savetxt, np.asarray(confusion).reshape(NUM_CLASSES, NUM_CLASSES),
                                        fmt="%d", delimiter=",")}
    if predictions is not None:
        files[PREDICTIONS] = _bytes_of(np.save, as_predictions(predictions, confusion), allow_pickle=False)
    if model is not None:  # Keras' weights writer needs a file name: a private temp folder, never the store
        scratch = Path(tempfile.mkdtemp(prefix="vitcore-render-"))
        try:
            model.save_weights(scratch / WEIGHTS)
            files[WEIGHTS] = (scratch / WEIGHTS).read_bytes()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    files[SUMMARY] = json_bytes({**config, **metrics, "has_weights": model is not None})
    return files


def _bytes_of(write, *args, **options) -> bytes:
    """What write(file, *args, **options) puts in a file (np.savetxt, np.save), as bytes: the same bytes, no file."""
    out = io.BytesIO()
    write(out, *args, **options)
    return out.getvalue()


def sizes_problem(cfg: RunConfig, files) -> str | None:
    """Why `files` cannot be a rendered run of cfg before a byte of it is written or parsed (None when it
    can): a dict of bytes named from RUN_FILES, each within its size limit (vitcore.store.files.limit_of;
    a forged 1 GiB file is refused by its length alone)."""
    unknown = sorted(map(str, set(files) - set(RUN_FILES))) if isinstance(files, dict) else ["(not a dict)"]
    if unknown or not all(isinstance(data, bytes) for data in files.values()):
        return (f"files must be bytes named {', '.join(RUN_FILES)}; got "
                f"{', '.join(map(repr, unknown[:5])) or 'a non-bytes value'}")
    over = [f"{name} is {len(data):,} bytes, over its limit of {limit_of(name, cfg):,}" for name, data in files.items()
            if len(data) > limit_of(name, cfg)]
    return "; ".join(over) or None


def install(root: Path, cfg: RunConfig, files: dict[str, bytes], replace: bool = False) -> None:
    """Write a rendered run into the store at `root` atomically: into `<root>/.tmp-*`, validated in
    full, then renamed to `<root>/<run_id>`. If a valid twin is there already (another writer stored
    it first) it is kept, unless `replace`. A run that would not be valid raises ValueError and
    leaves nothing behind."""
    run_id = cfg.run_id
    if (problem := sizes_problem(cfg, files)) is not None:  # before anything is written, not even a .tmp-* folder
        raise ValueError(f"refusing to store run {run_id} ({cfg.label()}): {problem}")
    root.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{run_id}-", dir=root))
    lock = os.open(temp, os.O_RDONLY)
    aside = None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # `check` leaves a held .tmp-* folder alone: a write in progress
        os.chmod(temp, 0o755)  # mkdtemp makes 0700; a shared store must be readable by all
        for name in RUN_FILES:  # the summary last: the completion marker
            if name in files:
                handle = os.open(temp / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                with os.fdopen(handle, "wb") as out:
                    out.write(files[name])
        try:
            read_run(temp, run_id)
        except BadRun as error:
            raise ValueError(f"refusing to store run {run_id} ({cfg.label()}): {error}") from None
        if replace and _existing_folder(root, cfg):
            aside = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}old-{run_id}-", dir=root))
            os.rename(root / run_id, aside / run_id)
        try:
            os.rename(temp, root / run_id)
        except OSError:  # the folder exists: a complete twin, or debris of a bad run
            if not _existing_folder(root, cfg):
                raise
            try:
                read_run(root / run_id, run_id)
            except BadRun:
                shutil.rmtree(root / run_id, ignore_errors=True)
                os.rename(temp, root / run_id)
    finally:
        os.close(lock)
        shutil.rmtree(temp, ignore_errors=True)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


def _existing_folder(root: Path, cfg: RunConfig) -> bool:
    """True when a folder is at the run's name in the store, False when nothing is; ValueError when something
    else is (a link, FIFO, device or file: never followed, opened or replaced — removing a FIFO's folder
    would have waited on it forever)."""
    try:
        mode = os.lstat(root / cfg.run_id).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(mode):
        raise ValueError(f"refusing to store run {cfg.run_id} ({cfg.label()}): {cfg.run_id} in the store is "
                         f"{kind(mode)}, not a run folder (left alone: remove it)")
    return True


def as_predictions(predictions: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """uint8 predictions whose per-class counts equal the confusion matrix's column sums."""
    values = np.asarray(predictions)
    confusion = np.asarray(confusion).reshape(NUM_CLASSES, NUM_CLASSES)
    if values.shape != (int(confusion.sum()),) or values.min(initial=0) < 0 or values.max(initial=0) > 9:
        raise ValueError(f"predictions must be {int(confusion.sum()):,} classes 0-9; got shape {values.shape}")
    if not np.array_equal(np.bincount(values, minlength=NUM_CLASSES), confusion.sum(axis=0)):
        raise ValueError("predictions disagree with the confusion matrix's predicted-class counts")
    return values.astype(np.uint8)
