"""What a valid run folder is: every rule in one place, checked without TensorFlow (files are read by
vitcore.store.files: bounded, never following a link).

A folder `<store>/<run_id>/` is a valid run when
- it and every entry in it are plain files or folders, never symbolic links (nothing is followed),
  and it holds summary.json, config.json, history.csv and confusion.csv;
- summary.json and config.json are JSON objects (no NaN/Infinity) of this schema and training
  version whose configs are equal and hash to the folder's name;
- history.csv has exactly HISTORY_COLUMNS, epochs 1..n for the config's n epochs, finite values,
  accuracies in [0, 1] and losses, learning rates and seconds >= 0;
- confusion.csv is 10x10 non-negative integers whose rows sum to the test split's class counts;
- the summary's metrics are numbers (not booleans), finite and in range, and agree with the history
  (best/final accuracies, best epoch, gap) and the confusion matrix (test accuracy, per-class accuracy);
- predictions.npy, if present, is 10,000 uint8 classes 0-9 whose counts per predicted class are the
  confusion matrix's column sums (check() also compares them with the official test labels);
- model.weights.h5 is present exactly when the summary says has_weights, only beside predictions.npy,
  and is a self-contained HDF5 file of exactly the config's model, finite, predicting what
  predictions.npy says on the shipped check images (the index's judge) or on all 10,000 official
  test images (`check`; vitcore.store.weights);
- every file is a plain file within its size limit (LIMITS), checked before a byte is read, and
  opened without following links or blocking (a FIFO is refused, never waited on); every number
  is within its physical range: params is the config's count (vitcore.model.anatomy), seconds
  below a day, losses at most MAX_LOSS, learning rates at most the config's, confusion counts at
  most the test split's rows. Whatever a file holds, reading it raises BadRun or returns.
Bump VALIDATION_VERSION when a rule changes: cached verdicts (the store's index) are then redone.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vitcore.config.metrics import SUMMARY
from vitcore.config.run import SCHEMA_VERSION, TRAINING_VERSION, RunConfig
from vitcore.data.fashion import CLASS_NAMES, TEST_CLASS_COUNTS, TEST_ROWS
from vitcore.model import anatomy
from vitcore.store import weights
from vitcore.store.files import PREDICTIONS, WEIGHTS, BadRun, OutOfMemory, json_object, predictions_array, read, text
from vitcore.store.timing import timing_problem, trained_at

VALIDATION_VERSION = 6  # 4: timing may name a Ray node kind (vitcore.run.cluster); 5: the load a run was timed under;
# 6: weights only beside predictions.npy, near ties within TIE = 2e-5 (vitcore.store.weights)
HISTORY_COLUMNS = ["epoch", "loss", "accuracy", "val_loss", "val_accuracy", "lr", "seconds"]
METRICS = list(SUMMARY)  # summary.json's metrics (vitcore.config.metrics)
ACCURACIES = ("test_accuracy", "best_val_accuracy", "final_train_accuracy", "final_val_accuracy")
REQUIRED = ("summary.json", "config.json", "history.csv", "confusion.csv")
IDENTITY = ("schema", "training_version", "run_id", "config")  # config.json: these, as in summary.json
TEMP_PREFIX = ".tmp-"  # a write in progress (or its debris): never part of a run
TOLERANCE = 1e-9  # stored floats round-trip exactly; this only absorbs a last-bit difference
CLASSES = len(CLASS_NAMES)
# Every loss here is a mean of cross-entropies of probabilities clipped away from 0 (Keras clips at
# 1e-7; scikit-learn's log_loss at float64's eps): no mean can exceed -ln(float64 eps) = 36.04.
MAX_LOSS = -math.log(np.finfo(np.float64).eps)
MAX_SECONDS = 24 * 3600.0  # a run (or an epoch) of a day or more on this task is a broken clock, not a run
LR_TOLERANCE = 1e-6  # the history's lr is the config's lr (or a warm-up below it) read back from float32


@dataclass(frozen=True)
class Contents:
    """What validation read, so a caller need not read it again."""
    config: RunConfig
    summary: dict
    confusion: np.ndarray          # (10, 10) int64: row = true class, column = predicted class
    predictions: np.ndarray | None  # (10000,) uint8, or None when the run has none
    has_weights: bool
    unverified: str | None = None   # deep="full": why the weights were not verified in full here


def read_run(folder: Path, run_id: str, labels: np.ndarray | None = None, deep: bool | str = False) -> Contents:
    """Validate one run folder (see the module docstring) and return what it holds, or raise BadRun
    with the first reason it is not a valid run. `labels`: the official test labels, to check
    predictions.npy against the confusion matrix cell by cell; `deep`: also run the weights on the
    shipped check images against predictions.npy (weights.screen; a verdict the index keeps), or "full":
    on every official test image (weights.verify, `check`'s).
    A MemoryError while reading is this run's alone: OutOfMemory (a BadRun the index does not keep)."""
    try:
        return _read_run(folder, run_id, labels, deep)
    except MemoryError:
        raise OutOfMemory("out of memory while read (skipped; judged again next time)") from None


def _read_run(folder: Path, run_id: str, labels: np.ndarray | None, deep: bool | str) -> Contents:
    names = _entries(folder)
    for name in REQUIRED:
        if name not in names:
            raise BadRun("no summary.json (incomplete run)" if name == "summary.json" else f"missing {name}")
    summary = json_object(folder, "summary.json")
    config = _config(summary, "summary.json", run_id)
    written = json_object(folder, "config.json")
    if {key: written.get(key) for key in IDENTITY} != {key: summary.get(key) for key in IDENTITY}:
        raise BadRun(f"config.json and summary.json disagree on {', '.join(IDENTITY)}")
    _check_metrics(summary, config)
    history = parse_history(text(folder, "history.csv"), config)
    confusion = parse_confusion(text(folder, "confusion.csv"))
    _agree(summary, history, confusion)
    predictions = _predictions(folder, confusion, labels) if PREDICTIONS in names else None
    has_weights = summary.get("has_weights", False)
    if not isinstance(has_weights, bool):
        raise BadRun(f"summary.json: has_weights must be true or false, got {has_weights!r}")
    if has_weights != (WEIGHTS in names):
        raise BadRun(f"summary.json says has_weights {str(has_weights).lower()} but {WEIGHTS} is "
                     f"{'missing' if has_weights else 'present'}")
    unverified = None  # weights: self-contained, the config's model, beside predictions; `deep`: the run's own
    if has_weights and deep == "full":
        unverified = weights.verify(folder, config, predictions)
    elif has_weights:
        (weights.screen if deep else weights.beside_predictions)(folder, config, predictions)
    return Contents(config, summary, confusion, predictions, has_weights, unverified)


def _entries(folder: Path) -> set[str]:
    """The entry names of a run folder that is a real folder of plain files (no links, no subfolders)."""
    try:
        info = os.lstat(folder)
    except (FileNotFoundError, NotADirectoryError):
        raise BadRun("no such run folder") from None
    except OSError as error:
        raise BadRun(f"the run folder is unreadable ({error.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise BadRun("the run folder is a symbolic link (never followed)")
    if not stat.S_ISDIR(info.st_mode):
        raise BadRun("not a folder")
    names = set()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(TEMP_PREFIX):
                    continue
                if entry.is_symlink():
                    raise BadRun(f"{entry.name} is a symbolic link (never followed)")
                if not entry.is_file(follow_symlinks=False):
                    raise BadRun(f"{entry.name} is not a plain file")
                names.add(entry.name)
    except OSError as error:
        raise BadRun(f"the run folder is unreadable ({error.strerror})") from None
    return names


def _config(data: dict, name: str, run_id: str) -> RunConfig:
    if data.get("schema") != SCHEMA_VERSION:
        raise BadRun(f"{name}: schema version {data.get('schema')!r}, this code reads {SCHEMA_VERSION}")
    if data.get("training_version") != TRAINING_VERSION:
        raise BadRun(f"{name}: trained by training version {data.get('training_version')!r}, this code is "
                     f"{TRAINING_VERSION}: stale, retrain it")
    try:
        config = RunConfig.from_dict(data["config"])
    except (KeyError, TypeError, ValueError) as error:
        raise BadRun(f"bad config in {name} ({error})") from None
    if config.run_id != run_id:
        raise BadRun(f"{name}: its config is run {config.run_id}, not {run_id}: a copy or a hand edit "
                     f"(a run's folder must be named by its config's run id)")
    if data.get("run_id", run_id) != run_id:
        raise BadRun(f"{name} says run_id {data.get('run_id')!r}")
    return config


def copy_of(folder: Path) -> str | None:
    """The run id summary.json's config is when that is not the folder's name (a copy or a hand edit)."""
    try:
        other = RunConfig.from_dict(json_object(folder, "summary.json")["config"]).run_id
    except (BadRun, KeyError, TypeError, ValueError):
        return None
    return other if other != folder.name else None


def _number(value) -> bool:
    """A finite int or float (not a bool), and an int small enough to be one (math.isfinite of a
    400-digit int raises OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value) < 2 ** 53 if isinstance(value, int) else math.isfinite(value)


def _check_metrics(summary: dict, config: RunConfig) -> None:
    bad = [f"{key} {json.dumps(summary[key]) if key in summary else 'missing'}" for key in METRICS
           if not _number(summary.get(key))]
    if bad:
        raise BadRun(f"summary.json: metrics must be finite numbers, got {', '.join(bad)}")
    wrong = [f"{key} {summary[key]!r} (allowed: 0 to 1)" for key in ACCURACIES if not 0 <= summary[key] <= 1]
    if not 0 <= summary["test_loss"] <= MAX_LOSS:
        wrong.append(f"test_loss {summary['test_loss']!r} (allowed: 0 to {MAX_LOSS:.2f})")
    params = anatomy.total(config)
    if summary["params"] != params or not isinstance(summary["params"], int):
        wrong.append(f"params {summary['params']!r} (the config's model has {params:,})")
    if not isinstance(summary["best_epoch"], int) or not 1 <= summary["best_epoch"] <= config.epochs:
        wrong.append(f"best_epoch {summary['best_epoch']!r} (allowed: 1 to {config.epochs})")
    if not 0 < summary["seconds"] < MAX_SECONDS:
        wrong.append(f"seconds {summary['seconds']!r} (allowed: above 0 and below a day)")
    if (problem := timing_problem(summary.get("timing"))) is not None:
        wrong.append(problem)
    try:
        trained_at(summary.get("trained_at"))
    except ValueError as error:
        wrong.append(str(error))
    if "threads" in summary and not (type(summary["threads"]) is int and summary["threads"] >= 1):
        wrong.append(f"threads {summary['threads']!r} (allowed: a whole number >= 1)")
    if wrong:
        raise BadRun("summary.json: " + "; ".join(wrong))


def parse_history(text: str, config: RunConfig) -> np.ndarray:
    """(epochs, 7) float64 in HISTORY_COLUMNS order."""
    lines = text.splitlines()
    if not lines or lines[0].split(",") != HISTORY_COLUMNS:
        raise BadRun(f"history.csv: columns must be exactly {','.join(HISTORY_COLUMNS)}")
    try:
        rows = np.array([[float(value) for value in line.split(",")] for line in lines[1:]], dtype=np.float64)
    except ValueError as error:
        raise BadRun(f"history.csv: not numbers ({error})") from None
    if rows.shape != (config.epochs, len(HISTORY_COLUMNS)):
        raise BadRun(f"history.csv: {len(lines) - 1} rows of {rows.shape[-1] if rows.ndim == 2 else 0} values, "
                     f"expected {config.epochs} epochs of {len(HISTORY_COLUMNS)}")
    if not np.isfinite(rows).all():
        raise BadRun("history.csv: values must be finite (no NaN or infinity)")
    if not np.array_equal(rows[:, 0], np.arange(1, config.epochs + 1)):
        raise BadRun(f"history.csv: epochs must be 1 to {config.epochs} in order")
    column = {name: rows[:, i] for i, name in enumerate(HISTORY_COLUMNS)}
    for name in ("accuracy", "val_accuracy"):
        if not ((column[name] >= 0) & (column[name] <= 1)).all():
            raise BadRun(f"history.csv: {name} outside 0 to 1")
    for name, top in (("loss", MAX_LOSS), ("val_loss", MAX_LOSS), ("seconds", MAX_SECONDS),
                      ("lr", config.lr * (1 + LR_TOLERANCE))):
        if not ((column[name] >= 0) & (column[name] <= top)).all():
            raise BadRun(f"history.csv: {name} outside 0 to {top:g}")
    return rows


def parse_confusion(text: str) -> np.ndarray:
    try:
        rows = [[int(value) for value in line.split(",")] for line in text.splitlines() if line.strip()]
    except ValueError:
        raise BadRun("confusion.csv: counts must be whole numbers") from None
    if len(rows) != CLASSES or any(len(row) != CLASSES for row in rows):
        raise BadRun(f"confusion.csv: must be {CLASSES}x{CLASSES} counts")
    if any(count < 0 for row in rows for count in row):
        raise BadRun("confusion.csv: negative counts")
    if any(count > TEST_ROWS for row in rows for count in row):  # before int64 can overflow
        raise BadRun(f"confusion.csv: counts above the test split's {TEST_ROWS:,} images")
    matrix = np.array(rows, dtype=np.int64)
    if (matrix < 0).any():
        raise BadRun("confusion.csv: negative counts")
    if tuple(matrix.sum(axis=1)) != TEST_CLASS_COUNTS:
        raise BadRun(f"confusion.csv: row sums {matrix.sum(axis=1).tolist()}, but the test split has "
                     f"{TEST_CLASS_COUNTS[0]:,} images of each class")
    return matrix


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE


def _agree(summary: dict, history: np.ndarray, confusion: np.ndarray) -> None:
    """The summary's metrics are the ones its history and confusion matrix give."""
    accuracy, val = history[:, HISTORY_COLUMNS.index("accuracy")], history[:, HISTORY_COLUMNS.index("val_accuracy")]
    expected = {"best_val_accuracy": val.max(), "final_train_accuracy": accuracy[-1], "final_val_accuracy": val[-1],
                "gap": summary["final_train_accuracy"] - summary["final_val_accuracy"],
                "test_accuracy": np.trace(confusion) / TEST_ROWS}
    wrong = [f"{key} {summary[key]!r} but its files give {float(value)!r}" for key, value in expected.items()
             if not _close(summary[key], float(value))]
    at_best = float(val[summary["best_epoch"] - 1])
    if not _close(at_best, summary["best_val_accuracy"]):
        wrong.append(f"best_epoch {summary['best_epoch']} has val_accuracy {at_best!r}, "
                     f"not the best {summary['best_val_accuracy']!r}")
    per_class = summary.get("per_class_accuracy")
    if per_class is not None:
        truth = confusion.diagonal() / confusion.sum(axis=1)
        if not (isinstance(per_class, list) and len(per_class) == CLASSES and all(map(_number, per_class))
                and all(_close(a, b) for a, b in zip(per_class, truth))):
            wrong.append("per_class_accuracy disagrees with confusion.csv")
    if wrong:
        raise BadRun("summary.json disagrees with its files: " + "; ".join(wrong))


def _predictions(folder: Path, confusion: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
    values = predictions_array(read(folder, PREDICTIONS))
    if values.max() >= CLASSES:
        raise BadRun(f"{PREDICTIONS}: class {values.max()} outside 0-{CLASSES - 1}")
    if not np.array_equal(np.bincount(values, minlength=CLASSES), confusion.sum(axis=0)):
        raise BadRun(f"{PREDICTIONS}: predicted-class counts differ from confusion.csv's column sums")
    if labels is not None:
        cells = np.bincount(labels.astype(np.int64) * CLASSES + values, minlength=CLASSES ** 2)
        if not np.array_equal(cells.reshape(CLASSES, CLASSES), confusion):
            raise BadRun(f"{PREDICTIONS}: with the official test labels it gives another confusion matrix "
                         "than confusion.csv")
    return values
