"""vitcore.store.shipped: a fresh clone reads the committed verdicts instead of judging every run again, and a shipped
file never decides anything its bytes do not match: a run changed, replaced or added after it was written is
judged in full, and a file of other versions, forged or in any other store than the checkout's is ignored."""

from __future__ import annotations

import json
import os
import shutil

import fakes
import pytest

from vitcore.config import environment
from vitcore.config.run import RunConfig
from vitcore.data.fashion import shipped_test_labels
from vitcore.store import index, shipped
from vitcore.store.runs import RunStore


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A store standing in for the checkout's cached_runs/ (the one place a shipped file is read), three valid runs
    shipped, and no local index: a fresh clone."""
    root = tmp_path / "cached_runs"
    monkeypatch.setattr(environment, "REPOSITORY_STORE", root)
    monkeypatch.setattr(index, "RACY_NS", 0)
    store = RunStore(root)
    labels = shipped_test_labels()
    runs = [fakes.write_predicted_run(store, RunConfig(seed=seed), labels, labels) for seed in range(3)]
    shipped.write(root, [run.run_id for run in runs])
    return store, [run.run_id for run in runs]


@pytest.fixture
def judged(monkeypatch):
    """The run ids judged in full (index.judge) during a test."""
    calls = []
    judge = index.judge
    monkeypatch.setattr(index, "judge",
                        lambda folder, run_id, *a, **kw: calls.append(run_id) or judge(folder, run_id, *a, **kw))
    return calls


def fresh(store: RunStore):
    (store.root / index.NAME).unlink(missing_ok=True)  # a clone has no local index
    return store.scan()


def test_a_fresh_clone_judges_no_shipped_run_and_gets_the_same_table(repository, judged):
    store, ids = repository
    full = RunStore(store.root).scan()  # judged by the writer's own index (no shipped file read: it exists)
    judged.clear()
    scan = fresh(store)
    assert judged == [] and [row[0] for row in scan.rows] == sorted(ids) and scan.skipped == {}
    assert scan.table().equals(full.table())


def test_a_run_changed_since_it_was_shipped_is_judged_and_skipped(repository, judged):
    store, ids = repository
    confusion = store.root / ids[0] / "confusion.csv"
    confusion.write_text(confusion.read_text().replace("1000", "999", 1))  # damaged after shipping
    scan = fresh(store)
    assert judged == [ids[0]] and ids[0] in scan.skipped and len(scan.rows) == 2


def test_a_run_added_after_shipping_is_judged(repository, judged):
    store, ids = repository
    added = fakes.write_run(store, RunConfig(seed=7))
    judged.clear()
    scan = fresh(store)
    assert judged == [added.run_id] and len(scan.rows) == 4


@pytest.mark.parametrize("forgery", ["version", "data", "digest", "not json", "a link"])
def test_a_shipped_file_that_does_not_match_is_ignored(repository, judged, forgery, tmp_path):
    store, ids = repository
    path = store.root / shipped.NAME
    content = json.loads(path.read_text())
    if forgery == "version":
        content["validation"] -= 1
    elif forgery == "data":
        content["data"] = "0" * 64
    elif forgery == "digest":  # an entry for bytes the run does not have: that run is judged
        content["runs"][ids[1]] = "f" * 64
    path.write_text(json.dumps(content))
    if forgery == "not json":
        path.write_bytes(b"{\x00")
    if forgery == "a link":
        os.replace(path, tmp_path / "elsewhere.json")
        os.symlink(tmp_path / "elsewhere.json", path)
    judged.clear()
    fresh(store)
    assert judged == ([ids[1]] if forgery == "digest" else sorted(ids))


def test_no_other_store_reads_a_shipped_file(repository, judged, tmp_path):
    """A copy ($VITCORE_STORE, a test's copy) holds the file but not the checkout's trust: every run judged."""
    store, ids = repository
    copy = RunStore(shutil.copytree(store.root, tmp_path / "elsewhere", ignore=shutil.ignore_patterns(index.NAME)))
    judged.clear()
    assert len(copy.scan().rows) == 3 and judged == sorted(ids)


@pytest.mark.slow
def test_every_run_the_committed_file_lists_is_valid_by_a_full_judgement():
    """The committed cached_runs/verdicts.json vouches only for runs a full judgement (predictions against the
    official test labels, weights on the check images) finds valid, byte for byte as they are committed."""
    root = environment.REPOSITORY_STORE
    listed = shipped.load(root, len(os.listdir(root)))
    assert len(listed) > 1_000, "the committed file is missing, of other versions or unreadable"
    for run_id, value in listed.items():
        if shipped.digest(root / run_id) != value:
            continue  # changed or replaced since: judged in full by every reader, the file decides nothing
        verdict, _ = index.judge(root / run_id, run_id)
        assert verdict[1] is None, (run_id, verdict[1])
