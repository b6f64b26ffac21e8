"""`<store>/replaced_runs.csv`: one row per run a backfill replaced by its retrain (`sweep
--backfill-predictions --replace-unreproducible`), its old and new numbers — the only record of the old ones.

Appended to only when it is a regular file (vitcore.data.regular): a link there is never followed (a row
appended outside the store), a FIFO or device never opened (a FIFO hung the sweep after the run was replaced).
The sweep checks it before it trains (`check`), so a refusal never comes after a run was replaced.
"""

from __future__ import annotations

import csv
import datetime
import io
import os
from pathlib import Path

from vitcore.config.metrics import known
from vitcore.data.regular import Refused, open_or_create

REPLACED_LOG = "replaced_runs.csv"
REPLACED_METRICS = known("test_accuracy", "best_val_accuracy", "final_train_accuracy", "test_loss", "seconds")
COLUMNS = ["run_id", "label", "train_rows", "seed", "replaced_on",
           *(f"{age}_{name}" for name in REPLACED_METRICS for age in ("old", "new"))]


def log(root: str | Path, result: dict) -> None:
    """Append one replaced run's old and new numbers (a backfill's result: old_<metric>, new_<metric>) to the
    log of the store at `root`, its header first when the file is new."""
    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS, extrasaction="ignore")
    with os.fdopen(_open(Path(root)), "a", newline="") as out:
        if os.fstat(out.fileno()).st_size == 0:
            writer.writeheader()
        writer.writerow({**result, "replaced_on": datetime.date.today().isoformat()})
        out.write(text.getvalue())  # one write: a row is never split among other appends


def check(root: str | Path) -> None:
    """ValueError now when the store's log exists and could not be appended to (see `_open`)."""
    if os.path.lexists(Path(root) / REPLACED_LOG):
        os.close(_open(Path(root)))


def _open(root: Path) -> int:
    """A descriptor appending to the log, created if missing; ValueError when it is not a regular file."""
    path = root / REPLACED_LOG
    try:
        return open_or_create(path, os.O_WRONLY | os.O_APPEND)[0]
    except Refused as refused:
        raise ValueError(f"{path} " + refused.words("cannot be appended to ({reason}; a link is never followed)",
                                                    "is {what}: never opened (only a regular file of its own "
                                                    "is appended to)", "")
                         + "; remove it (replaced runs' old numbers are logged there)") from None
