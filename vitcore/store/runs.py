"""RunStore: every run in a folder named by its run id, written atomically, validated once.

Layout of one run, `<store>/<run_id>/`:
    config.json        the RunConfig identity, run id, schema and training versions
    history.csv        epoch, loss, accuracy, val_loss, val_accuracy, lr, seconds (one row per epoch)
    confusion.csv      10x10 test confusion matrix: row = true class, column = predicted class
    model.weights.h5   Keras weights (seed-0 runs only; the attention views load them)
    predictions.npy    the 10,000 predicted test classes, uint8, official test order (runs trained
                       since predictions were kept, or backfilled by a bit-for-bit retrain)
    summary.json       written last: metrics + config; its presence marks the run complete
A run is rendered as bytes, then written into `<store>/.tmp-*` and renamed into place in one step
(vitcore.store.writer: the one writer, for local and Ray runs alike), so a reader never sees half a run; a
killed writer leaves only a `.tmp-*` folder, which `check()` reports and `clean()` removes
(vitcore.store.upkeep). Readers see only valid runs (every rule: vitcore.store.validate); each verdict is
cached in `<store>/.index.json` with the stamps it was judged from (vitcore.store.index). No TensorFlow here.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vitcore.config.run import VIT_FIELDS, RunConfig
from vitcore.data import regular
from vitcore.data.fashion import NUM_CLASSES
from vitcore.store import files, index, shipped, upkeep, validate, writer
from vitcore.store.index import (  # noqa: F401 (re-exported)
    COLUMNS,
    CONFIG_FIELDS,
    RUN_ID,
    WHOLE_FIELDS,
    stamp,
    timing_group,
)
from vitcore.store.validate import (  # noqa: F401
    HISTORY_COLUMNS,
    METRICS,
    PREDICTIONS,
    TEMP_PREFIX,
    WEIGHTS,
    BadRun,
    read_run,
)

INDEX = index.NAME


class StoreWarning(UserWarning):
    """A run folder was skipped: partial, corrupt, or from another schema/training version."""


@dataclass(frozen=True)
class Run:
    run_id: str
    config: RunConfig
    summary: dict
    path: Path

    # Each read goes through vitcore.store.files (bounded, no link followed) and the validation's
    # parser: a file damaged since the run was loaded raises BadRun, never anything else.
    def history(self) -> pd.DataFrame:
        rows = validate.parse_history(files.text(self.path, "history.csv"), self.config)
        return pd.DataFrame(rows, columns=HISTORY_COLUMNS).astype({"epoch": np.int64})

    def confusion(self) -> np.ndarray:
        return validate.parse_confusion(files.text(self.path, "confusion.csv"))

    def predictions(self) -> np.ndarray | None:
        """The predicted class of each official test image (uint8, 10,000), or None if not kept."""
        if not os.path.lexists(self.path / PREDICTIONS):
            return None
        return files.predictions_array(files.read(self.path, PREDICTIONS))

    @property
    def weights_path(self) -> Path | None:
        path = self.path / WEIGHTS
        return path if path.exists() else None


@dataclass(frozen=True)
class Scan:
    """One pass over the store: the valid runs' table() rows and why each other run folder was skipped."""
    rows: list[list]  # values in COLUMNS order
    skipped: dict[str, str]  # run id -> reason

    def table(self) -> pd.DataFrame:
        """The valid runs as RunStore.table() returns them."""
        table = pd.DataFrame(self.rows, columns=COLUMNS)
        for name in VIT_FIELDS:  # keep None (not NaN) for the convnet's inapplicable fields
            table[name] = table[name].astype(object)
        return table


def check_run_id(run_id: str) -> str:
    """Only 12 lowercase hex digits ever reach a file path."""
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise ValueError(f"a run id is 12 lowercase hex digits; got {run_id!r}")
    return run_id


class RunStore:
    def __init__(self, path: str | os.PathLike = "cached_runs"):
        if not str(path).strip():  # Path("") is the current folder: never a store by accident
            raise ValueError("the store path is empty (the current folder); give the store folder")
        self.root = Path(path)

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r})"

    def load(self, run_id: str) -> Run:
        """One complete, valid run (every rule of vitcore.store.validate), or BadRun saying what is wrong."""
        folder = self.root / check_run_id(run_id)
        contents = read_run(folder, run_id)
        return Run(run_id, contents.config, contents.summary, folder)

    def predictions(self, run_id: str) -> np.ndarray | None:
        """A listed run's predicted test classes (uint8, 10,000) read alone, or None if it keeps none: for
        the test set's Δs, which need no other file of a run the scan already judged (load() would read and
        parse all of them again, the weights too: milliseconds a run, seconds over
        a store of thousands at every start). Bounded and
        never through a link (files.read); a file changed since the scan gives BadRun or classes outside 0-9."""
        folder = self.root / check_run_id(run_id)
        if not os.path.lexists(folder / PREDICTIONS):
            return None
        values = files.predictions_array(files.read(folder, PREDICTIONS))
        if values.size and values.max() >= NUM_CLASSES:
            raise BadRun(f"{PREDICTIONS}: class {values.max()} outside 0-{NUM_CLASSES - 1}")
        return values

    def get(self, cfg: RunConfig) -> Run | None:
        """The stored run of cfg if it is complete and valid, else None."""
        try:
            return self.load(cfg.run_id)
        except BadRun:
            return None

    def run_ids(self) -> list[str]:
        """Every entry named like a run (folders, and anything else so named: validation says what is wrong)."""
        return sorted(self._entries())

    def _entries(self) -> dict[str, bool]:
        """{run id: is a real folder (not a symbolic link)} for every entry named like a run."""
        try:
            with os.scandir(self.root) as entries:
                return {e.name: e.is_dir(follow_symlinks=False) for e in entries if RUN_ID.fullmatch(e.name)}
        except OSError:  # no store yet, or an unreadable one (the environment check says which)
            return {}

    def scan(self) -> Scan:
        """Validate every run folder, reusing the index's verdict for each folder whose files are
        unchanged (vitcore.store.index); a valid run's row is read from its own summary.json.
        Costs one listing, a stat per file and one small read per valid run when nothing changed."""
        entries = self._entries()
        cached, _ = index.read(self.root, len(entries))
        verdicts, rows, skipped = {}, [], {}
        ship = shipped.load(self.root, len(entries))  # a fresh clone's verdicts, by content (vitcore.store.shipped)
        for run_id, is_dir in sorted(entries.items()):
            folder, verdict, row = self.root / run_id, cached.get(run_id), None
            if verdict is not None and verdict[0] is not None and verdict[0] == stamp(folder, is_dir):
                if verdict[1] is None:
                    try:
                        row, verdict = index.row_from_files(folder, run_id, verdict)
                    except BadRun:
                        verdict = None  # changed within the stamp's resolution: judge it now
            else:
                verdict = None
            if verdict is None and is_dir and run_id in ship:
                verdict, row = index.from_shipped(folder, run_id, ship[run_id])
            if verdict is None:
                verdict, row = index.judge(folder, run_id, is_dir=is_dir)
            verdicts[run_id] = verdict
            if verdict[1] is None:
                rows.append(row)
            else:
                skipped[run_id] = verdict[1]
        if verdicts != cached and self.root.is_dir():
            index.write(self.root, verdicts)
        return Scan(rows, skipped)

    def table(self) -> pd.DataFrame:
        """One row per valid run (COLUMNS): ids, label, config fields, metrics, has_weights,
        has_predictions, timing_group, collapsed. ViT-only fields are None for convnet rows.
        Each skipped run folder is warned about (StoreWarning); `scan().skipped` lists them."""
        scan = self.scan()
        for run_id, reason in scan.skipped.items():
            warnings.warn(f"skipping run {run_id} in {self.root}: {reason}", StoreWarning, stacklevel=2)
        return scan.table()

    def runs(self) -> list[Run]:
        """Every valid run (as table()), in run id order, each validated again as it is read."""
        return [run for run, _ in self._each(lambda run: None)]

    def _each(self, read, run_ids=None) -> list[tuple[Run, object]]:
        """(run, read(run)) of every valid run (or of `run_ids`); one changed or gone since: warned about, left out."""
        found = []
        for run_id in self.table()["run_id"] if run_ids is None else run_ids:
            try:
                run = self.load(run_id)
                found.append((run, read(run)))
            except BadRun as error:
                warnings.warn(f"skipping run {run_id} in {self.root}: {error}", StoreWarning, stacklevel=3)
        return found

    def frames(self, run_ids=None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(histories, confusions) in one pass over every valid run (or `run_ids`), each run read once: long formats,
        run_id + HISTORY_COLUMNS (a row per epoch) and run_id, true, predicted, count (100 rows per run)."""
        true, predicted = np.divmod(np.arange(NUM_CLASSES ** 2), NUM_CLASSES)
        read = self._each(lambda run: (run.history(), run.confusion()), run_ids)
        histories = [history.assign(run_id=run.run_id) for run, (history, _) in read] or [
            pd.DataFrame(columns=["run_id", *HISTORY_COLUMNS])]
        confusions = [pd.DataFrame({"run_id": run.run_id, "true": true, "predicted": predicted,
                                    "count": confusion.ravel()})
                      for run, (_,
                                confusion) in read] or [pd.DataFrame(columns=["run_id", "true", "predicted", "count"])]
        history = pd.concat(histories, ignore_index=True)[["run_id", *HISTORY_COLUMNS]]
        return history, pd.concat(confusions, ignore_index=True)

    def histories(self) -> pd.DataFrame:
        """Long format: run_id + HISTORY_COLUMNS, one row per valid run and epoch."""
        return self.frames()[0]

    def confusions(self) -> pd.DataFrame:
        """Long format: run_id, true, predicted, count (100 rows per valid run)."""
        return self.frames()[1]

    def check(self, labels: np.ndarray | None = None, progress: upkeep.Progress | None = None
              ) -> list[tuple[str, str]]:
        """(entry, reason) for every invalid run, stray folder, unfinished write and damaged index
        (vitcore.store.upkeep.check); [] when all is well. `progress` wraps the store's entries as they are
        judged (the CLI's bar: tqdm)."""
        return upkeep.check(self, labels, progress)

    def clean(self, older_than: float | None = None) -> list[str]:
        """Remove unfinished writes no writer holds, older than an hour (vitcore.store.upkeep.clean)."""
        return upkeep.clean(self, upkeep.STALE_SECONDS if older_than is None else older_than)

    def export_frames(self) -> dict[str, pd.DataFrame]:
        """The three CSV exports as DataFrames (the CLI and the dashboard's downloads): each run read once;
        whole-number fields as integers ('7', not '7.0')."""
        table = self.table()
        histories, confusions = self.frames(table["run_id"])
        runs = table.astype({name: "Int64" for name in WHOLE_FIELDS})
        return {"runs.csv": runs, "histories.csv": histories, "confusions.csv": confusions}

    def save(self, cfg: RunConfig, history: list[dict], confusion: np.ndarray, metrics: dict, model=None,
             predictions: np.ndarray | None = None) -> Run:
        """Write a finished run atomically; if another process stored it first, keep theirs. A run that
        would not be valid (vitcore.store.validate) raises ValueError and leaves nothing behind."""
        return self._write(cfg, history, confusion, metrics, model, predictions, replace=False)

    def replace(self, cfg: RunConfig, history: list[dict], confusion: np.ndarray, metrics: dict, model=None,
                predictions: np.ndarray | None = None) -> Run:
        """Swap the stored run of cfg for a retrain of it (a backfill that could not reproduce the stored run
        here): the new run is written and validated in full, then the old folder is moved aside and the new
        one renamed into place (readers see one or the other, or for an instant neither, never a mix)."""
        return self._write(cfg, history, confusion, metrics, model, predictions, replace=True)

    def _write(self, cfg, history, confusion, metrics, model, predictions, replace: bool) -> Run:
        return self.put(cfg, writer.render(cfg, history, confusion, metrics, model, predictions), replace)

    def put(self, cfg: RunConfig, files: dict[str, bytes], replace: bool = False) -> Run:
        """Store a run rendered elsewhere (vitcore.store.writer.render, e.g. on a Ray node): the same
        atomic, validated write as save() (replace=True: as replace()). Bad files raise ValueError."""
        run_id = check_run_id(cfg.run_id)
        writer.install(self.root, cfg, files, replace)
        return self.load(run_id)

    def add_predictions(self, run: Run, predictions: np.ndarray) -> None:
        """Give a complete run its predictions (a backfill): checked against its confusion matrix,
        written to a temp file and renamed into place, so the run never holds half a file."""
        values = writer.as_predictions(predictions, run.confusion())
        handle, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".npy", dir=run.path)
        try:
            with os.fdopen(handle, "wb") as out:
                np.save(out, values, allow_pickle=False)
            os.chmod(temp, 0o644)
            try:
                regular.replace(temp, run.path / PREDICTIONS)
            except regular.Refused as refused:
                raise ValueError(f"run {run.run_id}: its {PREDICTIONS} is {refused.what}, not a regular file "
                                 "(left alone, never replaced)") from None
        finally:
            if os.path.exists(temp):
                os.unlink(temp)

