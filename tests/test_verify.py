"""Retrain before trust (vitcore.run.verify, through the driver's vitcore.run.cluster.store_result): a Ray
worker's reply that passes every check of vitcore.run.remote (its results are its weights') but is not a training
of the config it is labelled with is refused, because the driver retrains the first run of each worker's cell and
a seeded share after it. The attack: a committed 4,000-row run relabelled as the 1,000-row config."""

import json

import pytest
from fakes import confusion, history, metrics
from stores import COMMITTED

from vitcore.config.run import RunConfig
from vitcore.data import testsplit
from vitcore.run import cluster, remote, verify
from vitcore.store import writer
from vitcore.store.runs import RunStore
from vitcore.store.writer import RUN_FILES, json_bytes

CLAIMED = RunConfig(patch_size=14, train_rows=1000, seed=0)   # what the reply says it is
REAL = RunConfig(patch_size=14, train_rows=4000, seed=0)      # what it is: 2885f681e73b, with its weights
needs_test_split = pytest.mark.skipif(testsplit.images() is None, reason="the official test split is not here")


def files_of(cfg: RunConfig) -> dict[str, bytes]:
    folder = COMMITTED / cfg.run_id
    return {name: (folder / name).read_bytes() for name in RUN_FILES if (folder / name).exists()}


def relabelled() -> dict[str, bytes]:
    """The 4,000-row run's files as a worker would send them for the 1,000-row config: summary and config
    rewritten, everything else (weights, predictions, confusion, history) the real run's."""
    files = files_of(REAL)
    summary = json.loads(files["summary.json"])
    summary["config"]["train_rows"], summary["run_id"] = CLAIMED.train_rows, CLAIMED.run_id
    return {**files, "summary.json": json_bytes(summary), "config.json": json_bytes(CLAIMED.identity())}


def reply(cfg: RunConfig, files) -> dict:
    return {"run_id": cfg.run_id, "files": files}


@pytest.mark.slow  # over 1 s of its own (the weights check on the test images): the slow tier (docs/contributing.md)
@needs_test_split
def test_the_relabelled_run_passes_the_weights_check_but_not_a_retrain(tmp_path):
    """Without a retrain the forgery is stored (that config's accuracy 0.792 for 0.717)."""
    assert remote.checked_reply(CLAIMED, relabelled())  # every recomputation holds: the weights are a real run's
    store = RunStore(tmp_path)
    honest = verify.Verifier(store, retrain=lambda cfg, threads: files_of(cfg))  # the 1,000-row run, bit for bit
    result = cluster.store_result(CLAIMED, reply(CLAIMED, relabelled()), store, honest, worker=0)
    assert "retrain at 1 thread(s) differs in predictions.npy, confusion.csv, history.csv" in result["error"]
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []
    genuine = cluster.store_result(CLAIMED, reply(CLAIMED, files_of(CLAIMED)), RunStore(tmp_path / "b"), honest, 1)
    assert genuine["verified"] is True and genuine["test_accuracy"] == json.loads(files_of(CLAIMED)["summary.json"])[
        "test_accuracy"]


@pytest.mark.slow
@needs_test_split
def test_the_driver_retrains_the_claimed_config_and_stores_nothing(tmp_path):
    """The issue's check, for real: store_result with no verifier of the test's retrains the 1,000-row config here
    (a fresh process, many seconds) and refuses the relabelled 4,000-row run."""
    store = RunStore(tmp_path)
    result = cluster.store_result(CLAIMED, reply(CLAIMED, relabelled()), store)
    assert "refusing remote run" in result["error"] and "predictions.npy" in result["error"]
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []
    genuine = cluster.store_result(CLAIMED, reply(CLAIMED, files_of(CLAIMED)), store)  # the committed run: reproduced
    assert genuine.get("verified") is True and store.check() == []


def test_a_retrain_that_fails_refuses_the_run_without_blaming_its_worker(tmp_path, monkeypatch):
    monkeypatch.setattr(remote, "checked_reply", lambda cfg, files: files)

    def broken(cfg, threads):
        raise ModuleNotFoundError("No module named 'tensorflow'")

    checker = verify.Verifier(RunStore(tmp_path), broken)
    result = cluster.store_result(CELL, reply(CELL, rendered(CELL)), checker.store, checker, 0)
    assert "could not retrain it to verify it (ModuleNotFoundError" in result["error"] and checker.caught == {}


CELL = RunConfig(train_rows=300, epochs=2)


def rendered(cfg: RunConfig, accuracy: float = 0.8) -> dict[str, bytes]:
    summary = {**metrics(cfg, accuracy), "threads": 2}
    return writer.render(cfg, history(cfg, summary), confusion(accuracy), summary)


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_which_runs_are_retrained_first_per_worker_and_cell_then_a_seeded_share(tmp_path):
    asked = []

    def retrain(cfg, threads):
        asked.append((cfg.seed, threads))
        return rendered(cfg)

    picks = {}
    for share in (0.0, 0.1, 1.0):
        asked.clear()
        checker = verify.Verifier(RunStore(tmp_path), retrain, share=share)
        for worker in (0, 1):
            for seed in range(40):
                checker.check(worker, CELL.replace(seed=seed), rendered(CELL.replace(seed=seed)))
            checker.check(worker, CELL.replace(depth=1), rendered(CELL.replace(depth=1)))  # another cell: its first
        picks[share] = list(asked)
    assert picks[0.0] == [(0, 2), (0, 2), (0, 2), (0, 2)]  # each worker's first run of each cell, at its threads
    assert picks[1.0] == [(seed, 2) for seed in [*range(40), 0]] * 2
    assert 4 < len(picks[0.1]) < 20 and picks[0.1][0] == (0, 2) and {t for _, t in picks[0.1]} == {2}
    again = verify.Verifier(RunStore(tmp_path), lambda cfg, threads: asked.append(cfg.seed) or rendered(cfg), 0.1)
    asked.clear()
    for seed in range(40):
        again.check(0, CELL.replace(seed=seed), rendered(CELL.replace(seed=seed)))
    assert asked == [seed for seed, _ in picks[0.1][:len(asked)]]  # the same seeded draw: reproducible


def test_a_caught_worker_loses_its_unverified_runs_and_the_rest_of_its_task(tmp_path, monkeypatch):
    """Honest on its first run, then lying: the sampled lie is refused, the worker's unverified runs already stored
    are taken back out of the store, its runs to come are refused unread; another worker's runs stay."""
    monkeypatch.setattr(remote, "checked_reply", lambda cfg, files: files)  # synthetic runs carry no weights
    store, lies = RunStore(tmp_path), {3}
    checker = verify.Verifier(store, lambda cfg, threads: rendered(cfg), share=0.0)
    results = [cluster.store_result(cfg, reply(cfg, rendered(cfg, 0.7 if cfg.seed in lies else 0.8)), store,
                                    checker, worker) for worker, seeds in ((0, range(3)), (1, range(10, 13)))
               for cfg in (CELL.replace(seed=seed) for seed in seeds)]
    assert [r.get("verified") for r in results] == [True, False, False, True, False, False]
    checker.share = 1.0  # the next runs are sampled: worker 0's lie is caught
    caught = cluster.store_result(CELL.replace(seed=3), reply(CELL.replace(seed=3), rendered(CELL, 0.7)), store,
                                  checker, 0)
    assert "retrain at 2 thread(s) differs in confusion.csv" in caught["error"]
    assert [(cfg.seed, why[:10]) for cfg, why in checker.withdrawn] == [(1, "withdrawn:"), (2, "withdrawn:")]
    later = cluster.store_result(CELL.replace(seed=4), reply(CELL.replace(seed=4), rendered(CELL.replace(seed=4))),
                                 store, checker, 0)
    assert "its worker returned run" in later["error"] and CELL.replace(seed=3).run_id in later["error"]
    assert sorted(store.table()["seed"]) == [0, 10, 11, 12] and store.check() == []


def test_run_reports_a_withdrawn_run_as_a_failure(tmp_path, monkeypatch):
    from test_cluster_driver import FakeRay

    chunk = [CELL.replace(seed=seed) for seed in range(3)]
    fake, seen = FakeRay(lambda configs: [reply(c, rendered(c, 0.7 if c.seed == 2 else 0.8)) for c in configs]), []
    monkeypatch.setattr(cluster, "connect", lambda address: fake)
    monkeypatch.setattr(remote, "checked_reply", lambda cfg, files: files)
    monkeypatch.setattr(verify, "retrain_locally", lambda cfg, threads: rendered(cfg))
    results = cluster.run([chunk], RunStore(tmp_path), None, 1, seen.append, "session", verify_share=1.0)
    assert [("error" in r, r["seed"]) for r in results] == [(False, 0), (False, 1), (True, 2)]
    assert sorted(RunStore(tmp_path).table()["seed"]) == [0, 1]  # every one verified: nothing withdrawn
    results = cluster.run([[CELL.replace(seed=s) for s in (5, 6, 2)]], RunStore(tmp_path / "b"), None, 1,
                          seen.append, "session", verify_share=0.0)  # seed 2 unsampled: the lie is the worker's word
    assert all("error" not in r for r in results)
