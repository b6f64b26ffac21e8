"""`sweep --executor ray` on a real two-node cluster whose worker node shares no disk with the driver
(tests/raycluster.py): every run lands in the driver's store, bit for bit a local sweep's, and a
worker node killed mid-sweep loses no run. Root only (mount namespaces), ~4 minutes on 2 busy cores. Every wait is
on the sweep's next step, for as long as it moves (raycluster.Progress): a loaded machine is slower, never failed."""

import os
import shutil
import signal
import time

import numpy as np
import pytest
from conftest import TINY
from raycluster import TwoNodeCluster

from vitcore.run.sweep import run_sweep
from vitcore.run.verify import LOG
from vitcore.store.runs import RunStore
from vitcore.store.validate import TEMP_PREFIX

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("ray"),  # one Ray at a time on the machine (tests/conftest.py)
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root for unshare --mount"),
]

@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pytest.importorskip("ray", reason="Ray is optional: pip install -r requirements-dev.txt")
    hidden = tmp_path_factory.mktemp("driver-disk")  # the driver's stores live here; the worker node sees tmpfs
    cluster = TwoNodeCluster(hidden)
    try:
        cluster.start_head()
        cluster.start_worker()
        yield cluster
    finally:
        cluster.stop()


def test_a_worker_without_the_driver_disk_trains_into_the_driver_store(cluster, monkeypatch):
    configs = [TINY.replace(seed=0), TINY.replace(seed=1)]  # one cell: one task; seed 0 keeps its weights
    store = RunStore(cluster.hidden / "cluster")
    results = cluster.finish(cluster.driver(store.root, configs))
    assert [r["run_id"] for r in results] == [c.run_id for c in configs] and not any("error" in r for r in results)
    assert store.check() == [] and sorted(store.table()["run_id"]) == sorted(c.run_id for c in configs)

    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # the local sweep's threads: the worker node's 2 CPUs
    local = RunStore(cluster.hidden / "local")
    run_sweep(configs, local, workers=1)
    for cfg in configs:
        ours, theirs = store.get(cfg), local.get(cfg)
        assert ours.summary["threads"] == theirs.summary["threads"] == 2
        history = [c for c in ours.history().columns if c != "seconds"]
        assert ours.history()[history].equals(theirs.history()[history])
        np.testing.assert_array_equal(ours.confusion(), theirs.confusion())
        np.testing.assert_array_equal(ours.predictions(), theirs.predictions())
        for name in ("config.json", "confusion.csv", "predictions.npy"):
            assert (ours.path / name).read_bytes() == (theirs.path / name).read_bytes()
        assert (ours.weights_path is None) == (theirs.weights_path is None) == (cfg.seed != 0)
        assert ours.summary["timing"]["node"] and "node" not in theirs.summary["timing"]
    groups = dict(zip(store.table()["run_id"], store.table()["timing_group"]))
    from vitcore.run.train import TIMING_VERSION  # here, not at the top: collecting the file imports no TensorFlow

    assert groups[configs[0].run_id].startswith(f"v{TIMING_VERSION}/threads2/workers1/fresh/node ")


def test_a_killed_worker_node_loses_no_run(cluster):
    # The second run trains longer than the driver takes to recompute and store the first from its weights
    # (vitcore.run.remote), so it is still training on the worker node when that node is killed.
    configs = [TINY.replace(seed=2), TINY.replace(seed=3, epochs=8)]
    store = RunStore(cluster.hidden / "killed")
    driver = cluster.driver(store.root, configs)
    # the first run is stored; the second is still training
    cluster.wait_for(driver, lambda: store.get(configs[0]) is not None, "the first run was not stored")
    cluster.kill_worker()
    time.sleep(2)
    assert [name for name in os.listdir(store.root) if name not in (".index.json", LOG)] == [configs[0].run_id]
    assert store.check() == [] and driver.poll() is None  # the task waits to be retried

    cluster.start_worker()  # a node joins: the task is retried there (Ray replays it; run 1 is not stored twice)
    results = cluster.finish(driver)
    assert [r["run_id"] for r in results] == [c.run_id for c in configs] and not any("error" in r for r in results)
    assert store.check() == [] and not any(name.startswith(TEMP_PREFIX) for name in os.listdir(store.root))
    assert sorted(store.table()["run_id"]) == sorted(c.run_id for c in configs)  # a rerun finds nothing to train


def test_a_killed_driver_is_finished_by_a_rerun(cluster):
    configs = [TINY.replace(seed=6), TINY.replace(seed=7)]
    store = RunStore(cluster.hidden / "driver")
    driver = cluster.driver(store.root, configs)
    cluster.wait_for(driver, lambda: store.get(configs[0]) is not None, "the first run was not stored")
    os.kill(driver.pid, signal.SIGKILL)  # the driver dies; Ray stops its task on the worker node
    driver.wait()
    assert store.get(configs[1]) is None
    results = cluster.finish(cluster.driver(store.root, configs))  # the rerun trains exactly what is missing
    assert [r["run_id"] for r in results] == [configs[1].run_id] and "error" not in results[0]
    store.clean(older_than=0)  # a driver killed mid-write leaves at most an unheld .tmp-* folder
    assert store.check() == [] and sorted(store.table()["run_id"]) == sorted(c.run_id for c in configs)
