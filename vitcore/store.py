"""RunStore: every run in a folder named by its run id, written atomically, read defensively.

Layout of one run, `<store>/<run_id>/`:
    config.json        the RunConfig identity, run id, schema and training versions
    history.csv        epoch, loss, accuracy, val_loss, val_accuracy, lr, seconds (one row per epoch)
    confusion.csv      10x10 test confusion matrix: row = true class, column = predicted class
    model.weights.h5   Keras weights (seed-0 runs only; the attention views load them)
    predictions.npy    the 10,000 predicted test classes, uint8, official test order (runs trained
                       since predictions were kept, or backfilled by a bit-for-bit retrain)
    summary.json       written last: metrics + config; its presence marks the run complete
A run is written into `<store>/.tmp-*` and renamed into place in one step, so a reader never
sees half a run; a killed writer leaves only a `.tmp-*` folder, which `check()` reports.
No TensorFlow here: the dashboard reads the store without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vitcore.config import SCHEMA_VERSION, TRAINING_VERSION, VIT_FIELDS, RunConfig

PREDICTIONS = "predictions.npy"
INDEX = ".index.json"  # a cache of table() rows; safe to delete, never committed
RUN_ID = re.compile(r"[0-9a-f]{12}")
HISTORY_COLUMNS = ["epoch", "loss", "accuracy", "val_loss", "val_accuracy", "lr", "seconds"]
METRICS = ["test_loss", "test_accuracy", "best_val_accuracy", "best_epoch", "final_train_accuracy",
           "final_val_accuracy", "gap", "params", "seconds"]
CONFIG_FIELDS = list(RunConfig.__dataclass_fields__)


class StoreWarning(UserWarning):
    """A run folder was skipped: partial, corrupt, or from another schema/training version."""


class BadRun(Exception):
    """Why one run folder cannot be read."""


@dataclass(frozen=True)
class Run:
    run_id: str
    config: RunConfig
    summary: dict
    path: Path

    def history(self) -> pd.DataFrame:
        return pd.read_csv(self.path / "history.csv")

    def confusion(self) -> np.ndarray:
        return np.loadtxt(self.path / "confusion.csv", delimiter=",", dtype=np.int64).reshape(10, 10)

    def predictions(self) -> np.ndarray | None:
        """The predicted class of each official test image (uint8, 10,000), or None if not kept."""
        path = self.path / PREDICTIONS
        return np.load(path, allow_pickle=False) if path.is_file() else None

    @property
    def weights_path(self) -> Path | None:
        path = self.path / "model.weights.h5"
        return path if path.exists() else None


def check_run_id(run_id: str) -> str:
    """Only 12 lowercase hex digits ever reach a file path."""
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise ValueError(f"a run id is 12 lowercase hex digits; got {run_id!r}")
    return run_id


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


class RunStore:
    def __init__(self, path: str | os.PathLike = "cached_runs"):
        self.root = Path(path)

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r})"

    # -- reading ---------------------------------------------------------------------------
    def load(self, run_id: str, deep: bool = True) -> Run:
        """One complete, valid run, or BadRun saying what is wrong with it."""
        folder = self.root / check_run_id(run_id)
        try:
            summary = json.loads((folder / "summary.json").read_text())
        except FileNotFoundError:
            raise BadRun("no summary.json (incomplete run)") from None
        except (OSError, ValueError) as error:
            raise BadRun(f"summary.json unreadable ({error})") from None
        if not isinstance(summary, dict):
            raise BadRun("summary.json is not an object")
        if summary.get("schema") != SCHEMA_VERSION:
            raise BadRun(f"schema version {summary.get('schema')!r}, this code reads {SCHEMA_VERSION}")
        if summary.get("training_version") != TRAINING_VERSION:
            raise BadRun(f"trained by training version {summary.get('training_version')!r}, this code is "
                         f"{TRAINING_VERSION}: stale, retrain it")
        try:
            config = RunConfig.from_dict(summary["config"])
        except (KeyError, TypeError, ValueError) as error:
            raise BadRun(f"bad config in summary.json ({error})") from None
        if deep and config.run_id != run_id:  # only a hand-edited config can fail this
            raise BadRun(f"folder name does not match its config's run id {config.run_id}")
        missing = [key for key in METRICS if not isinstance(summary.get(key), (int, float))]
        if missing:
            raise BadRun(f"summary.json lacks metrics {missing}")
        if deep:  # the folder is renamed into place whole, so a summary implies the rest; check() looks anyway
            for name in ("history.csv", "confusion.csv"):
                if not (folder / name).is_file():
                    raise BadRun(f"missing {name}")
        return Run(run_id, config, summary, folder)

    def get(self, cfg: RunConfig) -> Run | None:
        """The stored run of cfg if it is complete and valid, else None."""
        try:
            return self.load(cfg.run_id)
        except BadRun:
            return None

    def run_ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(entry.name for entry in os.scandir(self.root) if entry.is_dir() and RUN_ID.fullmatch(entry.name))

    def runs(self, deep: bool = False) -> list[Run]:
        """Every valid run; each bad one is skipped with a StoreWarning naming it and why."""
        good = []
        for run_id in self.run_ids():
            try:
                good.append(self.load(run_id, deep))
            except BadRun as error:
                warnings.warn(f"skipping run {run_id} in {self.root}: {error}", StoreWarning, stacklevel=2)
        return good

    def check(self) -> list[tuple[str, str]]:
        """(folder, reason) for every partial, corrupt, stale or stray entry; [] when all is well."""
        problems = []
        if not self.root.is_dir():
            return problems
        for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
            if entry.name == INDEX or entry.name.startswith(".index-"):
                continue
            if entry.name.startswith(".tmp-"):
                problems.append((entry.name, "partial write left by an interrupted run (safe to delete)"))
            elif entry.is_dir() and RUN_ID.fullmatch(entry.name):
                try:
                    self.load(entry.name)
                except BadRun as error:
                    problems.append((entry.name, str(error)))
            elif entry.is_dir():
                problems.append((entry.name, "not a run folder (name is not a run id)"))
        return problems

    def table(self) -> pd.DataFrame:
        """One row per valid run: run_id, config_id, label, config fields, metrics, has_weights.
        ViT-only fields are empty (None) for convnet rows.

        Rows are cached in `<store>/.index.json`, keyed by run id and the mtime of its summary.json,
        so a store of 10,000 runs costs one stat per run instead of parsing and validating 10,000
        summaries (README, "Speed"). Bad runs are never cached: they are warned about every time."""
        index = self._read_index()
        rows, fresh = [], {}
        for run_id in self.run_ids():
            try:
                stamp = os.stat(self.root / run_id / "summary.json").st_mtime_ns
            except OSError:
                stamp = None
            cached = index.get(run_id)
            if stamp is not None and cached is not None and cached[0] == stamp:
                row = cached[1]
            else:
                try:
                    row = self._row(self.load(run_id, deep=False))
                except BadRun as error:
                    warnings.warn(f"skipping run {run_id} in {self.root}: {error}", StoreWarning, stacklevel=2)
                    continue
            fresh[run_id] = (stamp, row)
            rows.append(row)
        if fresh != index and self.root.is_dir():
            self._write_index(fresh)
        columns = ["run_id", "config_id", "label", *CONFIG_FIELDS, *METRICS, "has_weights"]
        table = pd.DataFrame(rows, columns=columns)
        for name in VIT_FIELDS:  # keep None (not NaN) for the convnet's inapplicable fields
            table[name] = table[name].astype(object)
        return table

    @staticmethod
    def _row(run: Run) -> dict:
        fields = run.config.identity()
        row = {"run_id": run.run_id, "config_id": run.config.config_id, "label": run.config.label()}
        row.update({name: fields.get(name) for name in CONFIG_FIELDS})
        row.update({key: run.summary[key] for key in METRICS})
        row["has_weights"] = bool(run.summary.get("has_weights"))
        return row

    def _read_index(self) -> dict:
        try:
            data = json.loads((self.root / INDEX).read_text())
            if data.get("schema") == SCHEMA_VERSION and data.get("training_version") == TRAINING_VERSION:
                return {run_id: tuple(entry) for run_id, entry in data["rows"].items()}
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            pass  # no index, or a damaged one: rebuild it from the summaries
        return {}

    def _write_index(self, rows: dict) -> None:
        try:
            handle, temp = tempfile.mkstemp(prefix=".index-", dir=self.root)
            with os.fdopen(handle, "w") as out:
                json.dump({"schema": SCHEMA_VERSION, "training_version": TRAINING_VERSION, "rows": rows}, out)
            os.replace(temp, self.root / INDEX)
        except OSError:  # a read-only store (e.g. a deploy) just stays unindexed
            pass

    def histories(self) -> pd.DataFrame:
        """Long format: run_id + HISTORY_COLUMNS, one row per run and epoch."""
        frames = [run.history().assign(run_id=run.run_id) for run in self.runs(deep=True)]
        if not frames:
            return pd.DataFrame(columns=["run_id", *HISTORY_COLUMNS])
        return pd.concat(frames, ignore_index=True)[["run_id", *HISTORY_COLUMNS]]

    def confusions(self) -> pd.DataFrame:
        """Long format: run_id, true, predicted, count (100 rows per run)."""
        true, predicted = np.divmod(np.arange(100), 10)
        frames = [pd.DataFrame({"run_id": run.run_id, "true": true, "predicted": predicted,
                                "count": run.confusion().ravel()}) for run in self.runs(deep=True)]
        if not frames:
            return pd.DataFrame(columns=["run_id", "true", "predicted", "count"])
        return pd.concat(frames, ignore_index=True)

    def export_frames(self) -> dict[str, pd.DataFrame]:
        """The three CSV exports as DataFrames, shared by the CLI and the dashboard's downloads."""
        return {"runs.csv": self.table(), "histories.csv": self.histories(), "confusions.csv": self.confusions()}

    # -- writing ---------------------------------------------------------------------------
    def save(self, cfg: RunConfig, history: list[dict], confusion: np.ndarray, metrics: dict, model=None,
             predictions: np.ndarray | None = None) -> Run:
        """Write a finished run atomically; if another process stored it first, keep theirs."""
        self.root.mkdir(parents=True, exist_ok=True)
        run_id = check_run_id(cfg.run_id)
        temp = Path(tempfile.mkdtemp(prefix=f".tmp-{run_id}-", dir=self.root))
        try:
            config = {"schema": SCHEMA_VERSION, "training_version": TRAINING_VERSION, "run_id": run_id,
                      "config": cfg.identity()}
            _write_json(temp / "config.json", config)
            pd.DataFrame(history, columns=HISTORY_COLUMNS).to_csv(temp / "history.csv", index=False)
            np.savetxt(temp / "confusion.csv", np.asarray(confusion).reshape(10, 10), fmt="%d", delimiter=",")
            if predictions is not None:
                np.save(temp / PREDICTIONS, _as_predictions(predictions, confusion), allow_pickle=False)
            if model is not None:
                model.save_weights(temp / "model.weights.h5")
            _write_json(temp / "summary.json", {**config, **metrics, "has_weights": model is not None})  # last: the completion marker
            try:
                os.rename(temp, self.root / run_id)
            except OSError:  # the folder exists: a complete twin, or debris of a bad run
                if self.get(cfg) is None:
                    shutil.rmtree(self.root / run_id, ignore_errors=True)
                    os.rename(temp, self.root / run_id)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
        return self.load(run_id)

    def add_predictions(self, run: Run, predictions: np.ndarray) -> None:
        """Give a complete run its predictions (a backfill): checked against its confusion matrix,
        written to a temp file and renamed into place, so the run never holds half a file."""
        values = _as_predictions(predictions, run.confusion())
        handle, temp = tempfile.mkstemp(prefix=".tmp-", suffix=".npy", dir=run.path)
        try:
            with os.fdopen(handle, "wb") as out:
                np.save(out, values, allow_pickle=False)
            os.chmod(temp, 0o644)
            os.replace(temp, run.path / PREDICTIONS)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)


def _as_predictions(predictions: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """uint8 predictions whose per-class counts equal the confusion matrix's column sums."""
    values = np.asarray(predictions)
    confusion = np.asarray(confusion).reshape(10, 10)
    if values.shape != (int(confusion.sum()),) or values.min(initial=0) < 0 or values.max(initial=0) > 9:
        raise ValueError(f"predictions must be {int(confusion.sum()):,} classes 0-9; got shape {values.shape}")
    if not np.array_equal(np.bincount(values, minlength=10), confusion.sum(axis=0)):
        raise ValueError("predictions disagree with the confusion matrix's predicted-class counts")
    return values.astype(np.uint8)
