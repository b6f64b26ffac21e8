import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

from vitcore.config import RunConfig
from vitcore.store import RunStore, StoreWarning, check_run_id

from conftest import ROOT

HISTORY = [{"epoch": 1, "loss": 1.0, "accuracy": 0.5, "val_loss": 1.1, "val_accuracy": 0.45, "lr": 1e-3, "seconds": 1.0}]
METRICS = {"test_loss": 1.0, "test_accuracy": 0.44, "best_val_accuracy": 0.45, "best_epoch": 1,
           "final_train_accuracy": 0.5, "final_val_accuracy": 0.45, "gap": 0.05, "params": 71_946, "seconds": 1.0,
           "per_class_accuracy": [0.44] * 10}


def save(store: RunStore, cfg: RunConfig, **metrics):
    return store.save(cfg, HISTORY, np.eye(10, dtype=int) * 100, {**METRICS, **metrics})


def test_save_then_read_everything(tmp_path):
    store = RunStore(tmp_path)
    run = save(store, RunConfig(seed=1), test_accuracy=0.61)
    assert store.get(RunConfig(seed=1)).summary["test_accuracy"] == 0.61
    assert store.get(RunConfig(seed=2)) is None
    assert sorted(os.listdir(run.path)) == ["config.json", "confusion.csv", "history.csv", "summary.json"]
    table = store.table()
    assert table.loc[0, "run_id"] == run.run_id and table.loc[0, "seed"] == 1 and not table.loc[0, "has_weights"]
    assert store.histories().columns.tolist()[:3] == ["run_id", "epoch", "loss"]
    assert len(store.confusions()) == 100 and store.confusions()["count"].sum() == 1_000
    assert store.check() == []


def test_convnet_rows_leave_vit_fields_empty(tmp_path):
    store = RunStore(tmp_path)
    save(store, RunConfig(model="convnet"))
    row = store.table().iloc[0]
    assert row["model"] == "convnet" and row["patch_size"] is None and row["norm"] is None


@pytest.mark.parametrize("damage, reason", [
    (lambda p: (p / "summary.json").write_text('{"schema": 1, "trunc'), "summary.json unreadable"),
    (lambda p: (p / "summary.json").unlink(), "incomplete"),
    (lambda p: _edit(p, schema=99), "schema version 99"),
    (lambda p: _edit(p, training_version=0), "stale"),
    (lambda p: _edit(p, config={"seed": 7}), "does not match"),
    (lambda p: _edit(p, test_accuracy="high"), "lacks metrics"),
    (lambda p: (p / "history.csv").unlink(), "missing history.csv"),
])
def test_bad_runs_are_reported_and_skipped(tmp_path, damage, reason):
    store = RunStore(tmp_path)
    good, bad = save(store, RunConfig(seed=0)), save(store, RunConfig(seed=1))
    damage(bad.path)
    problems = dict(store.check())
    assert reason in problems[bad.run_id] and good.run_id not in problems
    if reason not in ("missing history.csv", "does not match"):  # deep checks: check(), histories()
        with pytest.warns(StoreWarning, match=bad.run_id):
            assert store.table()["run_id"].tolist() == [good.run_id]
    with pytest.warns(StoreWarning, match=bad.run_id):
        assert store.histories()["run_id"].unique().tolist() == [good.run_id]


def _edit(path, **changes):
    summary = json.loads((path / "summary.json").read_text())
    summary.update(changes)
    (path / "summary.json").write_text(json.dumps(summary))


def test_stray_folders_and_run_id_validation(tmp_path):
    store = RunStore(tmp_path)
    (tmp_path / "notes").mkdir()
    assert store.check() == [("notes", "not a run folder (name is not a run id)")]
    for bad in ("../etc", "ABCDEF012345", "abc", "0123456789abc"):
        with pytest.raises(ValueError, match="12 lowercase hex"):
            check_run_id(bad)
    with pytest.raises(ValueError):
        store.load("../../x")


KILLED_WRITER = """
import sys, time, numpy as np
sys.path.insert(0, {root!r})
from vitcore.config import RunConfig
from vitcore.store import RunStore
class SlowModel:  # stands in for Keras: the writer is killed while "saving weights"
    def save_weights(self, path):
        open(path, "wb").write(b"partial"); print("writing", flush=True); time.sleep(60)
RunStore({store!r}).save(RunConfig(), [], np.eye(10, dtype=int), {{}}, SlowModel())
"""


def test_sigkill_mid_write_leaves_nothing_that_looks_complete(tmp_path):
    code = KILLED_WRITER.format(root=str(ROOT), store=str(tmp_path))
    writer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    store = RunStore(tmp_path)
    assert store.get(RunConfig()) is None and len(store.table()) == 0
    [(name, reason)] = store.check()
    assert name.startswith(".tmp-") and "interrupted" in reason
    save(store, RunConfig())  # a rerun completes despite the debris
    assert store.get(RunConfig()) is not None


def _concurrent_save(path, accuracy, barrier):
    barrier.wait()
    save(RunStore(path), RunConfig(), test_accuracy=accuracy)


def test_concurrent_writers_leave_one_valid_run(tmp_path):
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(4)
    writers = [context.Process(target=_concurrent_save, args=(str(tmp_path), 0.1 * i, barrier)) for i in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    store = RunStore(tmp_path)
    assert store.check() == [] and len(store.table()) == 1
    assert store.get(RunConfig()).summary["test_accuracy"] in {0.0, 0.1, 0.2, 0.30000000000000004}


def test_missing_store_is_empty_not_an_error(tmp_path):
    store = RunStore(tmp_path / "absent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.table().empty and store.histories().empty and store.check() == []


def test_table_index_follows_edits_and_survives_damage(tmp_path):
    store = RunStore(tmp_path)
    run = save(store, RunConfig(), test_accuracy=0.5)
    assert store.table()["test_accuracy"].tolist() == [0.5]
    assert (tmp_path / ".index.json").exists()
    summary = json.loads((run.path / "summary.json").read_text())
    (run.path / "summary.json").write_text(json.dumps({**summary, "test_accuracy": 0.7}))
    os.utime(run.path / "summary.json", ns=(time.time_ns(), time.time_ns() + 10**9))
    assert store.table()["test_accuracy"].tolist() == [0.7]  # a changed summary is re-read
    (tmp_path / ".index.json").write_text("{broken")
    assert store.table()["test_accuracy"].tolist() == [0.7] and store.check() == []
    save(store, RunConfig(seed=1))
    assert len(store.table()) == 2  # a new run appears
