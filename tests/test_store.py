"""RunStore: atomic writes, contents validated once and cached, every kind of damage found by check()
and skipped by every reader, debris cleaned, files readable by all."""

import json
import multiprocessing
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import warnings

import fakes
import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from damage import RUN_DAMAGE, debris, symlink_run, tamper_index_row

from vitcore import cli
from vitcore.config.metrics import SUMMARY
from vitcore.config.run import RunConfig
from vitcore.data.fashion import shipped_test_labels
from vitcore.run.spawn import neutral_main
from vitcore.store.runs import INDEX, RunStore, StoreWarning, check_run_id


def quiet_table(store: RunStore):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StoreWarning)
        return store.table()


def test_save_then_read_everything(store):
    run = fakes.write_run(store, RunConfig(seed=1), 0.61)
    assert store.get(RunConfig(seed=1)).summary["test_accuracy"] == 0.61
    assert store.get(RunConfig(seed=2)) is None
    assert sorted(os.listdir(run.path)) == ["config.json", "confusion.csv", "history.csv", "summary.json"]
    table = store.table()
    row = table.iloc[0]
    assert row["run_id"] == run.run_id and row["seed"] == 1 and not row["has_weights"] and not row["has_predictions"]
    assert row["timing_group"] == "v1/legacy" and not row["collapsed"]
    assert store.histories().columns.tolist()[:3] == ["run_id", "epoch", "loss"]
    assert len(store.confusions()) == 100 and store.confusions()["count"].sum() == 10_000
    assert store.check() == []


def test_runs_and_the_index_are_readable_by_everyone(store):
    run = fakes.write_run(store, RunConfig())
    store.table()
    assert stat.S_IMODE(os.stat(run.path).st_mode) == 0o755
    assert {stat.S_IMODE(os.stat(path).st_mode) for path in run.path.iterdir()} == {0o644}
    assert stat.S_IMODE(os.stat(store.root / INDEX).st_mode) == 0o644


def test_convnet_rows_leave_vit_fields_empty(store):
    fakes.write_run(store, RunConfig(model="convnet"))
    row = store.table().iloc[0]
    assert row["model"] == "convnet" and row["patch_size"] is None and row["norm"] is None


def write_with(store: RunStore, cfg: RunConfig, accuracy: float = 0.8, **summary_extra):
    summary = {**fakes.metrics(cfg, accuracy), **summary_extra}
    return store.save(cfg, fakes.history(cfg, summary), fakes.confusion(accuracy), summary)


@pytest.mark.parametrize("extra, group", [
    ({"timing": {"code": 2, "threads": 1, "workers": 2, "compile": "reused"}, "threads": 1},
     "v2/threads1/workers2/reused"),
    ({"threads": 2}, "v2/threads2/workers2/fresh"),
    ({"timing": {"code": 2, "threads": 1, "workers": 1, "compile": "cached"}, "threads": 1},
     "v2/threads1/workers1/cached"),
    ({}, "v1/legacy"),
])
def test_timing_group_says_how_a_run_was_timed(store, extra, group):
    write_with(store, RunConfig(), **extra)
    assert store.table()["timing_group"].tolist() == [group]


def test_collapsed_runs_learned_their_rows_but_not_the_test_split(store):
    write_with(store, RunConfig(seed=0), 0.1, final_train_accuracy=0.9, gap=0.8)
    write_with(store, RunConfig(seed=1), 0.1, final_train_accuracy=0.4, gap=0.3)
    fakes.write_run(store, RunConfig(seed=2), 0.8)
    assert store.table().set_index("seed")["collapsed"].to_dict() == {0: True, 1: False, 2: False}


@pytest.mark.parametrize("kind", list(RUN_DAMAGE))
def test_each_kind_of_damage_is_reported_and_skipped_by_every_reader(store, kind):
    damage, words = RUN_DAMAGE[kind]
    good, bad = fakes.write_run(store, RunConfig(seed=0)), fakes.write_run(store, RunConfig(seed=1))
    store.table()  # the index now holds both as valid: damage must still be seen
    damage(bad.path)
    problems = dict(store.check())
    assert words in problems[bad.run_id] and good.run_id not in problems
    with pytest.warns(StoreWarning, match=bad.run_id):
        assert store.table()["run_id"].tolist() == [good.run_id]
    assert list(store.scan().skipped) == [bad.run_id]
    for reader in (store.histories, store.confusions):  # each reader says so too
        with pytest.warns(StoreWarning, match=bad.run_id):
            assert reader()["run_id"].unique().tolist() == [good.run_id]
    assert store.get(bad.config) is None


def test_an_edit_with_its_mtime_put_back_is_still_seen(store):
    run = fakes.write_run(store, RunConfig())
    assert len(store.table()) == 1
    before = os.stat(run.path / "summary.json")
    summary = json.loads((run.path / "summary.json").read_text())
    (run.path / "summary.json").write_text(json.dumps({**summary, "test_accuracy": 0.7}).ljust(before.st_size))
    os.utime(run.path / "summary.json", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(run.path / "summary.json").st_size == before.st_size
    assert quiet_table(store).empty  # the ctime moved: re-validated, and 0.7 disagrees with the confusion matrix


def test_a_tampered_index_row_is_rebuilt_not_trusted(store):
    run = fakes.write_run(store, RunConfig(), 0.8)
    store.table()
    assert tamper_index_row(store.root) == run.run_id
    assert store.table()["test_accuracy"].tolist() == [0.8]
    tamper_index_row(store.root)
    assert store.check() == [(INDEX, "checksum mismatch: edited or damaged (rebuilt from the run folders)")]
    assert store.check() == []  # check rewrote it


@pytest.mark.parametrize("secret", [b"", b"a guessed key"])
def test_a_forged_index_cannot_make_a_damaged_run_valid(store, tmp_path, secret, monkeypatch):
    """Before: an index row with a recomputed sha256 made `export` write 0.999 for a run whose files
    said otherwise. Now the index holds verdicts only, under a key outside the store."""
    from damage import forge_index

    from vitcore.store import index

    monkeypatch.setattr(index, "RACY_NS", 0)  # stamps of files written a moment ago count

    run = fakes.write_run(store, RunConfig(), 0.8)
    summary = json.loads((run.path / "summary.json").read_text())
    (run.path / "summary.json").write_text(json.dumps({**summary, "test_accuracy": 0.999}))
    time.sleep(0.01)
    assert quiet_table(store).empty
    forge_index(store.root, run.run_id, secret)
    assert quiet_table(store).empty
    with pytest.warns(StoreWarning, match=run.run_id):  # export skips it and says so
        assert cli.main(["export", "--store", str(store.root), "--out", str(tmp_path / "out")]) == 0
    assert "0.999" not in (tmp_path / "out" / "runs.csv").read_text()


def test_an_index_signed_under_another_caches_key_is_rebuilt_not_called_damaged(store, tmp_path, monkeypatch):
    """A store shared by two caches (another user; a test run under a temporary XDG_CACHE_HOME): the index the
    other wrote is judged again, and `check` reports no problem. Before: "checksum mismatch: edited or damaged".
    An edit under this cache's own key is still damage."""
    from vitcore.store import index, memo

    monkeypatch.setattr(index, "RACY_NS", 0)  # stamps of files written a moment ago count
    fakes.write_run(store, RunConfig(), 0.8)
    store.table()
    assert index.read(store.root, 1)[1] is None and index.read(store.root, 1)[0]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other cache"))
    memo.key.cache_clear()
    try:
        assert index.read(store.root, 1) == ({}, None)  # not ours: validate everything, no problem
        assert store.check() == []
        store.table()  # rewritten under this cache's key
        header, _, body = (store.root / INDEX).read_bytes().partition(b"\n")
        (store.root / INDEX).write_bytes(header + b"\n" + body.replace(b"null", b"null "))
        assert index.read(store.root, 1)[1].startswith("checksum mismatch")
    finally:
        memo.key.cache_clear()


def test_no_number_shown_comes_from_the_index(store, tmp_path, monkeypatch):
    """An index written by the store's own writer (so its checksum is right) whose entries are
    edited: the table and `export` still show the run's files' 0.8. Before: they showed 0.999. (Only the
    derived metrics' values are kept in the index, vitcore.store.derived: summary.json's never.)"""
    from vitcore.store import index

    monkeypatch.setattr(index, "RACY_NS", 0)  # stamps of files written a moment ago count
    fakes.write_run(store, RunConfig(), 0.8)
    store.table()
    body = (store.root / INDEX).read_bytes().split(b"\n", 1)[1]
    index.write(store.root, json.loads(body.replace(b"0.8", b"0.999")))
    assert store.table()["test_accuracy"].tolist() == [0.8]
    assert cli.main(["export", "--store", str(store.root), "--out", str(tmp_path / "out")]) == 0
    shown = pd.read_csv(tmp_path / "out" / "runs.csv").iloc[0][list(SUMMARY)].to_dict()
    assert shown == pytest.approx({key: fakes.metrics(RunConfig(), 0.8)[key] for key in SUMMARY})


@pytest.mark.parametrize("shape", [7, [1, 2, 3], ["stamp", 0.5], {"a": 1}, [None, ["row"]], "x"])
def test_an_index_entry_of_the_wrong_shape_is_judged_again(store, shape):
    """Before: a number where a list belongs, or a string accuracy, crashed every page and `export`."""
    from vitcore.store import index

    run = fakes.write_run(store, RunConfig(), 0.8)
    store.table()
    verdicts, _ = index.read(store.root, 1)
    verdicts[run.run_id] = shape
    index.write(store.root, verdicts)  # a well-signed index holding a wrong-shaped entry
    assert store.table()["test_accuracy"].tolist() == [0.8]
    assert index.read(store.root, 1)[0][run.run_id][1] is None  # rebuilt


def test_a_damaged_index_file_is_rebuilt(store):
    fakes.write_run(store, RunConfig(), 0.5)
    (store.root / INDEX).write_text("{broken")
    assert store.table()["test_accuracy"].tolist() == [0.5] and store.check() == []
    fakes.write_run(store, RunConfig(seed=1))
    assert len(store.table()) == 2  # a new run appears


def test_a_duplicated_folder_is_reported_and_the_run_named_by_its_config_is_kept(store):
    run = fakes.write_run(store, RunConfig())
    shutil.copytree(run.path, store.root / "aaaaaaaaaaaa")
    assert quiet_table(store)["run_id"].tolist() == [run.run_id]
    [(name, reason)] = store.check()
    assert name == "aaaaaaaaaaaa" and reason.endswith(f"a duplicate of run {run.run_id}, which is kept")


def test_a_symlinked_run_folder_is_never_followed(store, tmp_path):
    run, other = fakes.write_run(store, RunConfig()), fakes.write_run(store, RunConfig(seed=1))
    symlink_run(store.root, run.run_id, tmp_path / "elsewhere")
    assert quiet_table(store)["run_id"].tolist() == [other.run_id]
    assert dict(store.check())[run.run_id] == "the run folder is a symbolic link (never followed)"


def test_predictions_are_checked_against_the_test_labels_by_every_reader(store):
    """One judgement: table() and check() both compare predictions.npy cell by cell with the
    shipped official labels, so whoever wrote the index last, they agree."""
    labels = shipped_test_labels()
    run = fakes.write_run(store, RunConfig())
    truth = np.empty(len(labels), np.uint8)
    for true, row in enumerate(run.confusion()):  # each class's images predicted as its confusion row says
        truth[labels == true] = np.repeat(np.arange(10), row)
    store.add_predictions(run, truth)
    assert store.table()["has_predictions"].tolist() == [True]  # the new file refreshed the cached row
    assert store.check() == []
    swapped = truth.copy()  # a class-0 and a class-1 image swap predictions: same counts, other cells
    i = int(np.flatnonzero((labels == 0) & (truth == 0))[0])
    j = int(np.flatnonzero((labels == 1) & (truth == 1))[0])
    swapped[[i, j]] = swapped[[j, i]]
    store.add_predictions(run, swapped)
    with pytest.warns(StoreWarning, match="another confusion matrix"):
        assert store.table().empty  # before one judgement: table() checked counts only, check() the cells
    assert "another confusion matrix" in dict(store.check())[run.run_id]
    (store.root / INDEX).unlink()
    with pytest.warns(StoreWarning, match="another confusion matrix"):
        assert store.table().empty


def test_save_refuses_a_run_that_would_not_be_valid(store):
    cfg = RunConfig()
    summary = {**fakes.metrics(cfg), "test_accuracy": float("nan")}
    with pytest.raises(ValueError, match="refusing to store"):
        store.save(cfg, fakes.history(cfg, summary), fakes.confusion(0.8), summary)
    assert os.listdir(store.root) == []


def test_check_counts_stray_folders_apart_from_valid_runs(store, capsys):
    fakes.write_run(store, RunConfig(seed=0))
    fakes.write_run(store, RunConfig(seed=1))
    (store.root / "notes").mkdir()
    assert cli.main(["check", "--store", str(store.root)]) == 1
    out = capsys.readouterr().out
    assert "notes: not a run folder" in out and "2 valid runs, 1 problems" in out
    assert "2 valid runs without predictions.npy" in out  # fakes.write_run keeps none


def test_check_passes_a_store_at_a_repository_root(store, capsys):
    """A store that is a git repository's root holds .git beside its runs: not a problem, exit 0."""
    fakes.write_run(store, RunConfig(seed=0))
    (store.root / ".git" / "objects").mkdir(parents=True)
    assert cli.main(["check", "--store", str(store.root)]) == 0
    assert ".git" not in capsys.readouterr().out


def test_check_says_when_every_run_has_its_predictions(store, capsys):
    labels = shipped_test_labels()
    fakes.write_predicted_run(store, RunConfig(seed=0), labels, labels)
    assert cli.main(["check", "--store", str(store.root)]) == 0
    assert "every valid run has its predictions.npy" in capsys.readouterr().out


def test_check_names_each_skipped_run_once(store, capsys):
    """Before: a damaged run was named by `check`, then again by the table it prints counts from, as a Python warning
    line with a source location."""
    fakes.write_run(store, RunConfig(seed=0))
    damaged = fakes.write_run(store, RunConfig(seed=1))
    (damaged.path / "summary.json").write_text("{")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cli.main(["check", "--store", str(store.root)]) == 1
    out = capsys.readouterr().out
    said = out + "".join(str(w.message) for w in caught) + "".join(capsys.readouterr())
    assert said.count(damaged.run_id) == 1 and f"{damaged.run_id}: summary.json unreadable" in out


def test_debris_is_reported_and_cleaned_only_when_stale_and_unheld(store, capsys):
    import fcntl

    fakes.write_run(store, RunConfig())
    fresh, stale = debris(store.root), ".tmp-stale"
    shutil.copytree(store.root / fresh, store.root / stale)
    os.utime(store.root / stale, (time.time() - 7200,) * 2)
    (store.root / ".index-x1").write_text("{")  # a killed index writer's temp file
    os.utime(store.root / ".index-x1", (time.time() - 7200,) * 2)
    assert {name for name, _ in store.check()} == {fresh, stale, ".index-x1"}
    held = os.open(store.root / fresh, os.O_RDONLY)  # as RunStore.save holds its folder
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        assert {name for name, _ in store.check()} == {stale, ".index-x1"}  # a write in progress is no problem
    finally:
        os.close(held)
    assert cli.main(["check", "--fix", "--store", str(store.root)]) == 1  # the fresh one stays: an hour's grace
    assert "removed" in capsys.readouterr().out
    assert sorted(n for n in os.listdir(store.root) if n.startswith(".")) == [INDEX, fresh]
    assert store.clean(older_than=0) == [fresh] and store.check() == []


def test_stray_folders_and_run_id_validation(store):
    store.root.mkdir()
    (store.root / "notes").mkdir()
    assert store.check() == [("notes", "not a run folder (name is not a run id)")]
    (store.root / ".git").mkdir()  # a store at a repository's root: its VCS folder is not a run folder
    (store.root / ".ipynb_checkpoints").mkdir()
    assert store.check() == [("notes", "not a run folder (name is not a run id)")]
    for bad in ("../etc", "ABCDEF012345", "abc", "0123456789abc"):
        with pytest.raises(ValueError, match="12 lowercase hex"):
            check_run_id(bad)
    with pytest.raises(ValueError):
        store.load("../../x")


def test_missing_store_is_empty_not_an_error(tmp_path):
    store = RunStore(tmp_path / "absent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.table().empty and store.histories().empty and store.check() == []


KILLED_WRITER = """
import sys, time, numpy as np
sys.path.insert(0, {root!r})
from vitcore.config.run import RunConfig
from vitcore.data.fashion import shipped_test_labels
from vitcore.store import writer
from vitcore.store.runs import RunStore
def slow_check(folder, run_id):  # the writer is killed with every file in its .tmp-* folder, before the rename
    print("writing", flush=True); time.sleep(60)
writer.read_run = slow_check
RunStore({store!r}).save(RunConfig(), [], np.eye(10, dtype=int), {{}})
"""


@pytest.mark.slow
def test_sigkill_mid_write_leaves_nothing_that_looks_complete(tmp_path):
    code = KILLED_WRITER.format(root=str(ROOT), store=str(tmp_path))
    writer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "writing"
    store = RunStore(tmp_path)
    assert store.check() == []  # the writer holds its folder: a write in progress is no problem
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert store.get(RunConfig()) is None and len(store.table()) == 0
    [(name, reason)] = store.check()
    assert name.startswith(".tmp-") and "interrupted" in reason
    fakes.write_run(store, RunConfig())  # a rerun completes despite the debris
    assert store.get(RunConfig()) is not None
    assert store.clean(older_than=0) == [name] and store.check() == []


class InPlaceStore(RunStore):
    """A writer without the temp folder and rename: each file straight into the run's folder."""

    def save(self, cfg, history, confusion, metrics, model=None, predictions=None):
        import pandas as pd

        folder = self.root / cfg.run_id
        folder.mkdir(parents=True, exist_ok=True)
        head = {"schema": 1, "training_version": 1, "run_id": cfg.run_id, "config": cfg.identity()}
        (folder / "config.json").write_text(json.dumps(head))
        pd.DataFrame(history).to_csv(folder / "history.csv", index=False)
        np.savetxt(folder / "confusion.csv", confusion, fmt="%d", delimiter=",")
        time.sleep(0.3)  # a write that takes a while (a weights file did, before weights needed predictions too)
        (folder / "summary.json").write_text(json.dumps({**head, **metrics, "has_weights": False}))


def _concurrent_save(store_class, path, accuracy, barrier):
    cfg = RunConfig()
    summary = fakes.metrics(cfg, accuracy)
    barrier.wait()
    store_class(path).save(cfg, fakes.history(cfg, summary), fakes.confusion(accuracy), summary)


def race_writers(store_class, path) -> list[str]:
    """Four spawned writers save the same config (each with its own accuracy) at once, while this
    process reads it; returns what the reader saw that was neither "no run yet" nor a valid run."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(4)
    writers = [context.Process(target=_concurrent_save, args=(store_class, str(path), accuracy, barrier))
               for accuracy in ACCURACIES]
    with neutral_main():  # after a page test, __main__ is app.py: children must not re-run it
        for writer in writers:
            writer.start()
    seen, store = [], RunStore(path)
    while any(writer.is_alive() for writer in writers):
        try:
            store.load(RunConfig().run_id)
        except Exception as error:  # noqa: BLE001 - anything but "not there yet" is a torn read
            if "no such run folder" not in str(error):
                seen.append(str(error))
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    return seen


ACCURACIES = (0.6, 0.7, 0.8, 0.9)  # one per writer, each exact in the confusion matrix's 10,000 test images


@pytest.mark.slow
@pytest.mark.parametrize("store_class, torn", [(RunStore, False), (InPlaceStore, True)])
def test_concurrent_writers_leave_one_valid_run_and_readers_never_see_half(tmp_path, store_class, torn):
    seen = race_writers(store_class, tmp_path)
    store = RunStore(tmp_path)
    if torn:  # the same race against an in-place writer is caught: the test can fail
        assert seen
        return
    assert seen == []
    assert store.check() == [] and len(store.table()) == 1
    assert store.get(RunConfig()).summary["test_accuracy"] in ACCURACIES  # exactly one writer's whole run



def test_check_hands_every_entry_to_its_progress(store):
    """What `check` judges passes through `progress` (the CLI's bar), each entry once."""
    for seed in range(3):
        fakes.write_run(store, RunConfig(seed=seed), 0.8)
    store.table()  # its index is an entry too
    seen = []

    def progress(entries):
        for entry in entries:
            seen.append(entry.name)
            yield entry

    assert store.check(progress=progress) == [] and sorted(seen) == sorted(os.listdir(store.root))


@pytest.mark.slow
def test_the_cli_check_shows_a_bar_only_on_a_terminal(store):
    """Before: `check` on a fresh machine verified every run's weights for minutes with no output at all."""
    import fcntl
    import pty
    import struct
    import termios

    for seed in range(3):
        fakes.write_run(store, RunConfig(seed=seed), 0.8)
    command = [sys.executable, "-m", "vitcore", "check", "--store", str(store.root)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    piped = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert piped.returncode == 0 and piped.stderr == ""  # a pipe or a file gets the report only
    terminal, other = pty.openpty()
    fcntl.ioctl(other, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal's size: 24 x 100
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=other, text=True, env=env, timeout=120)
        os.close(other)
        shown = b""
        while True:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(terminal)
    assert done.returncode == 0 and done.stdout == piped.stdout
    total = len(os.listdir(store.root))  # every entry it judges: the 3 runs and the index
    assert re.search(rf"checking: +0%\|.*\| 0/{total} ".encode(), shown), shown
