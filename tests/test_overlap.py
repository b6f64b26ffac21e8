"""vitcore.run.overlap: a run whose training overlapped another session's training in its store is
its own timing group (timing.context = "overlapped"); a sweep's own workers (one session) are not.

Before: nothing recorded an overlap. Two trainings from two app servers, or the app's Train while a
sweep ran, both wrote `workers: 1`, and their slowed seconds joined the solo timing group."""

import os
import subprocess
import sys
import time

import pytest
from conftest import ROOT
from fakes import confusion, history, metrics

from vitcore.config.run import RunConfig
from vitcore.run import overlap
from vitcore.store import index
from vitcore.store.runs import RunStore


def markers(root) -> list[str]:
    return sorted(name for name in os.listdir(root) if name.startswith(overlap.MARKER))


def test_a_training_alone_is_not_overlapped_and_leaves_no_marker(tmp_path):
    with overlap.watch(tmp_path, "a") as seen:
        assert len(overlap.live(tmp_path)) == 1
    assert not seen.overlapped and markers(tmp_path) == []


def test_two_sessions_that_overlap_both_know_it_whichever_ends_first(tmp_path):
    with overlap.watch(tmp_path, "sweep") as first:
        with overlap.watch(tmp_path, "app") as second:
            pass  # starts and ends inside the first: the first learns of it from the flag left beside its marker
        assert second.overlapped
    assert first.overlapped and markers(tmp_path) == []


def test_one_sessions_trainings_overlap_by_design(tmp_path):
    """A sweep's workers share its session: their concurrency is the summary's `workers`."""
    with overlap.watch(tmp_path, "sweep") as first, overlap.watch(tmp_path, "sweep") as second:
        pass
    assert not first.overlapped and not second.overlapped


def test_trainings_one_after_the_other_do_not_overlap(tmp_path):
    with overlap.watch(tmp_path, "a") as first:
        pass
    with overlap.watch(tmp_path, "b") as second:
        pass
    assert not first.overlapped and not second.overlapped


def test_a_killed_trainings_marker_is_not_a_training(tmp_path):
    """A marker nobody holds (its training was SIGKILLed) and an orphan flag are removed, not counted."""
    (tmp_path / f"{overlap.MARKER}{'0' * 32}").write_text("dead")
    (tmp_path / f"{overlap.MARKER}{'1' * 32}{overlap.FLAG}").touch()
    with overlap.watch(tmp_path, "a") as seen:
        pass
    assert not seen.overlapped and markers(tmp_path) == []


def test_an_overlapped_run_is_valid_and_its_own_timing_group(tmp_path):
    cfg, store = RunConfig(seed=0), RunStore(tmp_path)
    summary = metrics(cfg)
    solo = {"code": 2, "threads": 2, "workers": 1, "compile": "fresh"}
    summary["timing"] = {**solo, "context": overlap.CONTEXT}
    store.save(cfg, history(cfg, summary), confusion(0.8), summary)
    with overlap.watch(tmp_path, "a"):  # a marker in the store is not a problem for `check` either
        assert store.check() == []
    assert store.table()["timing_group"].tolist() == [index.timing_group({"timing": solo}) + "/overlapped"]


TRAIN = """
import sys, time
from pathlib import Path
from vitcore.config.run import RunConfig
from vitcore.run.train import Trainer
from vitcore.store.runs import RunStore

root, go = Path(sys.argv[1]), Path(sys.argv[3])

def progress(epoch, total, row):  # the first training holds its epoch end (and its marker) until told to go on
    deadline = time.monotonic() + 300
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.05)

Trainer().train(RunConfig(train_rows=100, epochs=1, seed=int(sys.argv[2])), RunStore(root), progress)
"""


@pytest.mark.slow
def test_two_real_trainings_at_once_are_both_overlapped(tmp_path):
    """Two processes train into one store at the same time (as two app servers would): the first holds
    its training open until the second has trained; both runs say so, and neither joins the solo group."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    store_root, go = tmp_path / "store", tmp_path / "go"
    store_root.mkdir()

    def start(seed: int, gate) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", TRAIN, str(store_root), str(seed), str(gate)], cwd=ROOT,
                                env=env, stderr=subprocess.PIPE, text=True)

    first = start(0, go)
    deadline = time.monotonic() + 300
    while not overlap.live(store_root) and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # until the first training holds its marker
    assert overlap.live(store_root), "the first training never held its marker"
    go_now = tmp_path / "already"
    go_now.touch()
    second = start(1, go_now)  # trains straight through while the first is held
    assert second.wait(timeout=600) == 0, second.stderr.read()[-2000:]
    go.touch()
    assert first.wait(timeout=600) == 0, first.stderr.read()[-2000:]
    store = RunStore(store_root)
    runs = store.table()
    assert len(runs) == 2 and all(group.removesuffix("/busy").endswith("/overlapped") for group in runs["timing_group"])
    assert {store.get(RunConfig(train_rows=100, epochs=1, seed=s)).summary["timing"]["context"] for s in (0, 1)} \
        == {"overlapped"}
    assert store.check() == [] and markers(store_root) == []
