"""Every kind of damage a run store can suffer, as functions of a run folder, with the words
`check` must say about it. Shared by the store tests and the page tests (a damaged store must
never break a page); each applies to any valid run, synthetic or trained.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np


def _summary(path: Path, **changes) -> None:
    summary = json.loads((path / "summary.json").read_text())
    summary.update(changes)
    (path / "summary.json").write_text(json.dumps(summary))


def _raw_metric(path: Path, key: str, literal: str) -> None:
    """Set a metric to a JSON literal json.dumps would not write (NaN, Infinity)."""
    summary = json.loads((path / "summary.json").read_text())
    summary[key] = "@@"
    (path / "summary.json").write_text(json.dumps(summary).replace('"@@"', literal))


def _history(path: Path, edit) -> None:
    lines = (path / "history.csv").read_text().splitlines()
    (path / "history.csv").write_text("\n".join(edit(lines)) + "\n")


def _cell(lines: list[str], row: int, column: int, value: str) -> list[str]:
    cells = lines[row].split(",")
    cells[column] = value
    return [*lines[:row], ",".join(cells), *lines[row + 1:]]


def _confusion(path: Path, edit) -> None:
    matrix = np.loadtxt(path / "confusion.csv", delimiter=",", dtype=np.int64)
    np.savetxt(path / "confusion.csv", edit(matrix), fmt="%d", delimiter=",")


def _not_best_epoch(path: Path) -> int:
    """An epoch whose validation accuracy is not the best one."""
    values = [float(line.split(",")[4]) for line in (path / "history.csv").read_text().splitlines()[1:]]
    return next(epoch for epoch, value in enumerate(values, 1) if value != max(values))


def _symlink(path: Path, name: str, target: str) -> None:
    (path / name).unlink()
    os.symlink(target, path / name)


# name -> (damage(run folder), words `check` says about it)
RUN_DAMAGE = {
    "summary truncated": (lambda p: (p / "summary.json").write_text('{"schema": 1, "trunc'), "summary.json unreadable"),
    "summary missing": (lambda p: (p / "summary.json").unlink(), "incomplete"),
    "schema": (lambda p: _summary(p, schema=99), "schema version 99"),
    "stale": (lambda p: _summary(p, training_version=0), "stale"),
    "config edited": (lambda p: _summary(p, config={**json.loads((p / "summary.json").read_text())["config"],
                                                    "seed": 12345}), "its config is run"),
    "metric text": (lambda p: _summary(p, test_accuracy="high"), 'test_accuracy "high"'),
    "metric Infinity": (lambda p: _raw_metric(p, "best_val_accuracy", "Infinity"), "Infinity is not a number"),
    "metric NaN": (lambda p: _raw_metric(p, "test_accuracy", "NaN"), "NaN is not a number"),
    "metric true": (lambda p: _summary(p, final_val_accuracy=True), "final_val_accuracy true"),
    "metric 7.5": (lambda p: _summary(p, test_accuracy=7.5), "test_accuracy 7.5 (allowed: 0 to 1)"),
    "metric negative": (lambda p: _summary(p, best_val_accuracy=-0.25), "best_val_accuracy -0.25"),
    "params not whole": (lambda p: _summary(p, params=1.5), "params 1.5"),
    "seconds zero": (lambda p: _summary(p, seconds=0), "seconds 0"),
    "metric moved": (lambda p: _summary(p, test_accuracy=0.5), "test_accuracy 0.5 but its files give"),
    "best epoch": (lambda p: _summary(p, best_epoch=_not_best_epoch(p)), "has val_accuracy"),
    "history garbage": (lambda p: (p / "history.csv").write_bytes(b"\x00\xff garbage"), "history.csv"),
    "history empty": (lambda p: (p / "history.csv").write_text(""), "history.csv: columns must be"),
    "history NaN": (lambda p: _history(p, lambda lines: _cell(lines, 1, 1, "nan")), "must be finite"),
    "history columns": (lambda p: _history(p, lambda lines: [lines[0].replace("val_accuracy", "val_acc"), *lines[1:]]),
                        "columns must be exactly"),
    "history short": (lambda p: _history(p, lambda lines: lines[:-1]), "expected"),
    "history accuracy 1.5": (lambda p: _history(p, lambda lines: _cell(lines, 1, 2, "1.5")), "accuracy outside 0 to 1"),
    "history missing": (lambda p: (p / "history.csv").unlink(), "missing history.csv"),
    "confusion fraction": (lambda p: (p / "confusion.csv").write_text(
        (p / "confusion.csv").read_text().replace(",", ".5,", 1)), "whole numbers"),
    "confusion 9x9": (lambda p: _confusion(p, lambda m: m[:9, :9]), "must be 10x10"),
    "confusion negative": (lambda p: _confusion(p, lambda m: m - 2000 * np.eye(10, dtype=np.int64)), "negative counts"),
    "confusion row sums": (lambda p: _confusion(p, lambda m: m + np.eye(10, dtype=np.int64)), "row sums"),
    "config.json garbage": (lambda p: (p / "config.json").write_text('{"garbage": '), "config.json unreadable"),
    "symlinked file": (lambda p: _symlink(p, "confusion.csv", "/etc/passwd"), "confusion.csv is a symbolic link"),
    "subfolder": (lambda p: (p / "extra").mkdir(), "extra is not a plain file"),
    "predictions short": (lambda p: np.save(p / "predictions.npy", np.zeros(9_999, np.uint8)),
                          "predictions.npy: must be"),
    "weights flag": (lambda p: _summary(p, has_weights=not (p / "model.weights.h5").exists()), "model.weights.h5 is"),
}


def symlink_run(store: Path, run_id: str, outside: Path) -> None:
    """Replace a run folder by a symbolic link to a copy of it outside the store."""
    shutil.move(store / run_id, outside)
    os.symlink(outside, store / run_id)


def tamper_index_row(store: Path) -> str:
    """Mark one valid run damaged in .index.json, keeping its mtime; returns the run id."""
    index = store / ".index.json"
    stamp = os.stat(index)
    header, body = index.read_bytes().split(b"\n", 1)
    verdicts = json.loads(body)
    run_id = next(run_id for run_id, verdict in verdicts.items() if verdict[1] is None)
    verdicts[run_id][1] = "made up"
    index.write_bytes(header + b"\n" + json.dumps(verdicts, separators=(",", ":")).encode())
    os.utime(index, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    return run_id


def forge_index(store: Path, run_id: str, secret: bytes = b"") -> None:
    """Declare `run_id` valid in .index.json under its current stamp, with the checksum recomputed
    as a forger would: a plain sha256, or an HMAC under a guessed `secret`."""
    from vitcore.store import index as store_index

    path = store / ".index.json"
    header, body = path.read_bytes().split(b"\n", 1)
    verdicts = json.loads(body)
    verdicts[run_id] = [store_index.stamp(store / run_id), None]
    body = json.dumps(verdicts, separators=(",", ":")).encode()
    meta = json.loads(header)
    meta.pop("hmac", None)
    meta["sha256"] = hashlib.sha256(body).hexdigest()
    if secret:
        meta["hmac"] = hmac.new(secret, body, hashlib.sha256).hexdigest()
    path.write_bytes(json.dumps(meta).encode() + b"\n" + body)


def debris(store: Path, age_seconds: float = 0) -> str:
    """A .tmp-* folder as a killed writer leaves it, `age_seconds` old; returns its name."""
    name = ".tmp-0123456789ab-killed"
    (store / name).mkdir()
    (store / name / "history.csv").write_text("epoch\n")
    then = time.time() - age_seconds
    os.utime(store / name, (then, then))
    return name


def damage_store(store: Path, outside: Path, run_ids: list[str] | None = None) -> dict[str, str]:
    """Damage a store in every way at once, one run per kind, taking the runs in `run_ids` order
    (default: sorted; it needs len(RUN_DAMAGE) + 2 valid runs, and the next one is the original of
    a duplicated folder); returns {entry name: words check must say about it}."""
    run_ids = run_ids or sorted(p.name for p in store.iterdir() if len(p.name) == 12 and not p.name.startswith("."))
    expected = {}
    for run_id, (damage, words) in zip(run_ids, RUN_DAMAGE.values()):
        damage(store / run_id)
        expected[run_id] = words
    linked, original = run_ids[len(RUN_DAMAGE):len(RUN_DAMAGE) + 2]
    symlink_run(store, linked, outside / "moved-run")
    expected[linked] = "the run folder is a symbolic link"
    shutil.copytree(store / original, store / "aaaaaaaaaaaa")
    expected["aaaaaaaaaaaa"] = f"a duplicate of run {original}, which is kept"
    (store / "notes").mkdir()
    expected["notes"] = "not a run folder"
    expected[debris(store, age_seconds=7200)] = "unfinished write"
    return expected
