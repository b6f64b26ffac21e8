"""Results checked wherever they come from: what a Ray task returns is stored by the
driver's `vitcore.run.cluster.store_result` only after vitcore.run.remote has checked its sizes (before a
byte is written) and recomputed its predictions, confusion matrix, test accuracy and loss from its weights
on the official test split. Each test hands store_result a forged reply directly, as a hostile worker
node would send it (the real two-node cluster: tests/test_cluster.py, slow). The genuine reply is a
committed run's files as bytes (the ViT at patch 14, random seed 0: it keeps its weights)."""

import json
import os

import numpy as np
import pytest
from stores import COMMITTED

from vitcore.config.run import RunConfig
from vitcore.data import testsplit
from vitcore.data.fashion import official_test_labels
from vitcore.run import cluster, remote, verify
from vitcore.store.runs import RunStore
from vitcore.store.writer import RUN_FILES, json_bytes

RUN = "2885f681e73b"  # ViT p14 pre-LN pos, 4,000 rows, random seed 0
pytestmark = pytest.mark.skipif(testsplit.images() is None, reason="the official test split is not on this machine")


@pytest.fixture
def cfg() -> RunConfig:
    return RunConfig.from_dict(json.loads((COMMITTED / RUN / "summary.json").read_text())["config"])


@pytest.fixture
def reply() -> dict[str, bytes]:
    return {name: (COMMITTED / RUN / name).read_bytes() for name in RUN_FILES if (COMMITTED / RUN / name).exists()}


@pytest.fixture
def store(tmp_path) -> RunStore:
    (tmp_path / "store").mkdir()
    return RunStore(tmp_path / "store")


def stored(store: RunStore, cfg: RunConfig, files) -> dict:
    """store_result with a retrain that reproduces the reply: the recomputation from weights is under test here
    (the retrain itself: tests/test_verify.py)."""
    trusting = verify.Verifier(store, retrain=lambda config, threads: files)
    return cluster.store_result(cfg, {"run_id": cfg.run_id, "files": files}, store, trusting)


def test_a_genuine_reply_is_stored_as_it_came(store, cfg, reply):
    result = stored(store, cfg, reply)
    assert "error" not in result and store.check() == []
    assert all((store.root / RUN / name).read_bytes() == data for name, data in reply.items())


def test_weights_are_dropped_when_the_config_keeps_none(store, cfg, reply, monkeypatch):
    monkeypatch.setattr(remote, "keeps_weights", lambda config: False)  # as for random seed 1
    assert "error" not in stored(store, cfg, reply) and store.check() == []
    run = store.get(cfg)
    assert run.weights_path is None and run.summary["has_weights"] is False
    assert (store.root / RUN / "predictions.npy").read_bytes() == reply["predictions.npy"]


@pytest.mark.parametrize("name", ["predictions.npy", "model.weights.h5", "summary.json"])
def test_a_forged_1_gib_reply_writes_nothing(store, cfg, reply, name):
    """bytes(1 GiB) is calloc'd: untouched pages cost no memory unless something reads or writes them."""
    result = stored(store, cfg, {**reply, name: bytes(1 << 30)})
    assert f"{name} is 1,073,741,824 bytes, over its limit" in result["error"]
    assert os.listdir(store.root) == []  # not a .tmp-* folder, not an index


def test_a_reply_without_weights_is_refused(store, cfg, reply):
    del reply["model.weights.h5"]
    assert "returned no model.weights.h5" in stored(store, cfg, reply)["error"]
    assert os.listdir(store.root) == []


def fabricated(cfg: RunConfig, reply: dict[str, bytes]) -> dict[str, bytes]:
    """A self-consistent run of 100% test accuracy: predictions the official labels, a diagonal confusion
    matrix and the summary to match (every rule of vitcore.store.validate holds), beside real weights."""
    labels = official_test_labels()
    summary = json.loads(reply["summary.json"])
    summary.update(test_accuracy=1.0, per_class_accuracy=[1.0] * 10, test_loss=0.001)
    buffer = __import__("io").BytesIO()
    np.save(buffer, labels.astype(np.uint8), allow_pickle=False)
    return {**reply, "predictions.npy": buffer.getvalue(), "summary.json": json_bytes(summary),
            "confusion.csv": ("\n".join(",".join("1000" if i == j else "0" for j in range(10))
                                         for i in range(10)) + "\n").encode()}


def test_a_fabricated_self_consistent_run_is_refused(store, cfg, reply, tmp_path):
    forged = fabricated(cfg, reply)
    other = RunStore(tmp_path / "plain")  # the premise: stored by a local writer, it would be a valid run
    other.put(cfg, forged)
    assert other.get(cfg).summary["test_accuracy"] == 1.0
    error = stored(store, cfg, forged)["error"]
    assert error.startswith(f"refusing remote run {RUN}") and "not this run's weights" in error
    assert os.listdir(store.root) == []


@pytest.mark.parametrize("change", ["test_loss", "test_accuracy", "confusion"])
def test_results_that_are_not_the_weights_are_refused(store, cfg, reply, change):
    """Predictions and weights genuine, one result made up (the confusion matrix: one image moved each way
    between classes 0 and 1, so its row and column sums still match the test split and predictions.npy)."""
    summary = json.loads(reply["summary.json"])
    if change == "confusion":
        rows = np.array([[int(v) for v in line.split(",")] for line in reply["confusion.csv"].decode().split()])
        rows[[0, 1], [0, 1]] -= 1
        rows[[0, 1], [1, 0]] += 1
        reply = {**reply, "confusion.csv": ("\n".join(",".join(map(str, row)) for row in rows) + "\n").encode()}
    else:
        summary[change] += 0.01
        reply = {**reply, "summary.json": json_bytes(summary)}
    error = stored(store, cfg, reply)["error"]
    assert "its results are not its weights'" in error, error
    assert os.listdir(store.root) == []


@pytest.mark.parametrize("item", [None, [], {"run_id": "0" * 12, "files": {}}, {"run_id": RUN, "files": None}])
def test_a_reply_of_another_shape_is_refused(store, cfg, item):
    assert "error" in cluster.store_result(cfg, item, store) and os.listdir(store.root) == []


def test_a_driver_without_the_test_split_starts_no_task(monkeypatch):
    monkeypatch.setattr(testsplit, "SHA256", "0" * 64)
    with pytest.raises(ValueError, match="recomputes every remote run from its weights"):
        cluster.run([], RunStore("/nonexistent"), None, 1, None, "session")
