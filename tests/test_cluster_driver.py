"""The Ray driver's side without Ray (vitcore.run.cluster, vitcore.store.writer): the one writer, the
bytes a task returns checked like a local run's, failures reported with their configs; fast."""

import sys
from types import SimpleNamespace

import pytest
from fakes import confusion, history, metrics, write_run

from vitcore.config.run import RunConfig
from vitcore.run import cluster
from vitcore.store import writer
from vitcore.store.runs import RunStore

CELL = RunConfig(train_rows=300, epochs=2)


def rendered(cfg: RunConfig, accuracy: float = 0.8, **timing) -> dict[str, bytes]:
    summary = {**metrics(cfg, accuracy),
               "timing": {"code": 2, "threads": 2, "workers": 1, "compile": "fresh", **timing}}
    return writer.render(cfg, history(cfg, summary), confusion(accuracy), summary)


def test_put_writes_the_bytes_save_writes(tmp_path):
    saved = write_run(RunStore(tmp_path / "a"), CELL)
    summary = {**metrics(CELL), "trained_at": saved.summary["trained_at"]}  # write_run stamps when it wrote
    put = RunStore(tmp_path / "b").put(CELL, writer.render(CELL, history(CELL, summary), confusion(0.8), summary))
    names = sorted(p.name for p in saved.path.iterdir())
    assert names == sorted(p.name for p in put.path.iterdir()) == sorted(writer.RUN_FILES[:3] + ("summary.json",))
    assert all((saved.path / name).read_bytes() == (put.path / name).read_bytes() for name in names)


@pytest.mark.parametrize("damage", [
    lambda files: {**files, "../escape.json": b"{}"},           # a name outside the run's files
    lambda files: {**files, "history.csv": "text, not bytes"},
    lambda files: {k: v for k, v in files.items() if k != "history.csv"},
    lambda files: {**files,
                   "summary.json": files["summary.json"].replace(b'"test_accuracy": 0.8', b'"test_accuracy": 2')},
    lambda files: rendered(CELL.replace(seed=9)),               # another run's files
])
def test_put_refuses_files_that_are_not_a_valid_run_and_leaves_nothing(tmp_path, damage):
    store = RunStore(tmp_path)
    with pytest.raises(ValueError, match=f"refusing to store run {CELL.run_id}"):
        store.put(CELL, damage(rendered(CELL)))
    assert list(tmp_path.iterdir()) == [] and not (tmp_path.parent / "escape.json").exists()


def test_a_ray_node_kind_is_its_own_timing_group(tmp_path):
    store = RunStore(tmp_path)
    store.put(CELL, rendered(CELL, node="AMD EPYC x2"))
    store.put(CELL.replace(seed=1), rendered(CELL.replace(seed=1)))
    groups = dict(zip(store.table()["seed"], store.table()["timing_group"]))
    assert groups == {0: "v2/threads2/workers1/fresh/node AMD EPYC x2", 1: "v2/threads2/workers1/fresh"}
    with pytest.raises(ValueError, match="node kind"):
        store.put(CELL.replace(seed=2), rendered(CELL.replace(seed=2), node="two\nlines"))
    assert cluster.node_kind().rsplit(" x", 1)[1].isdigit()


def test_task_cpus_are_the_smallest_live_nodes_over_workers():
    nodes = [{"Alive": True, "Resources": {}}, {"Alive": True, "Resources": {"CPU": 8.0}},
             {"Alive": True, "Resources": {"CPU": 4.0}}, {"Alive": False, "Resources": {"CPU": 1.0}}]
    assert [cluster.task_cpus(nodes, workers) for workers in (1, 2, 3, 8)] == [4, 2, 1, 1]
    assert cluster.task_cpus(nodes[:1], 1) == 1  # no CPU yet (an autoscaler's cluster): 1-CPU tasks


class FakeRay:
    """Enough of Ray for cluster.run: each task is an iterator of what its generator would yield."""
    exceptions = SimpleNamespace(RayError=type("RayError", (Exception,), {}))

    def __init__(self, outcome):
        self.outcome, self.options = outcome, None

    def nodes(self):
        return [{"Alive": True, "Resources": {"CPU": 2.0}}]

    def remote(self, **options):
        self.options = options
        return lambda function: SimpleNamespace(remote=lambda chunk, session: iter(self.outcome(chunk)))

    def wait(self, generators, num_returns):
        return generators[:num_returns], generators[num_returns:]

    def get(self, item):
        if isinstance(item, Exception):
            raise item
        return item


def test_run_stores_what_lands_and_reports_each_failure_with_its_config(tmp_path, monkeypatch):
    good, erring, lost = [CELL, CELL.replace(seed=1)], [CELL.replace(seed=2), CELL.replace(seed=3)], \
        [CELL.replace(seed=4), CELL.replace(seed=5)]

    def outcome(chunk):
        if chunk == good:  # both runs, then a replay's duplicate (Ray drops those; so does run)
            return [{"run_id": c.run_id, "files": rendered(c)} for c in chunk] + [{"run_id": "x", "files": {}}]
        if chunk == erring:  # the first run failed on the node; the second lands
            return [{"run_id": erring[0].run_id, "error": "ValueError: bad config"},
                    {"run_id": erring[1].run_id, "files": rendered(erring[1])}]
        return [{"run_id": lost[0].run_id, "files": {"summary.json": b"{}"}},  # files the store refuses
                FakeRay.exceptions.RayError("NodeDiedError: the node died\nand more")]  # retries used up

    fake, seen = FakeRay(outcome), []
    monkeypatch.setattr(cluster, "connect", lambda address: fake)
    store = RunStore(tmp_path)
    # Synthetic runs have no weights, so the driver's recomputation (vitcore.run.remote) refuses them all:
    assert "returned no model.weights.h5" in cluster.store_result(good[0], outcome(good)[0], store)["error"]
    # here the streaming and the failures are under test (the recomputation: tests/test_remote_replies.py).
    monkeypatch.setattr(cluster.remote, "checked_reply", lambda cfg, files: files)
    monkeypatch.setattr(cluster.verify, "retrain_locally", lambda cfg, threads: rendered(cfg))  # the retrain agrees
    results = cluster.run([good, erring, lost], store, "127.0.0.1:1", 1, seen.append, "session")
    assert fake.options == {"num_cpus": 2, "max_retries": cluster.MAX_RETRIES} and results == seen
    failed = {r["seed"]: r["error"] for r in results if "error" in r}
    assert sorted(failed) == [2, 4, 5] and failed[2] == "ValueError: bad config"
    assert "refusing" in failed[4] and failed[5] == "RayError: NodeDiedError: the node died"
    assert all(r["config"] == RunConfig(**r["config"]).identity() for r in results if "error" in r)
    assert sorted(store.table()["seed"]) == [0, 1, 3] and store.check() == []


def test_the_cli_lists_failed_runs_with_their_configs_and_exits_1(tmp_path, monkeypatch, capsys):
    from vitcore.cli import main
    from vitcore.run import sweep

    def fake_run(configs, store, workers, executor, address, progress, backfill, replace):
        first, second = configs[:2]
        results = [cluster.failure(first, "OutOfMemoryError: the task's worker was killed"),
                   {"run_id": second.run_id, "label": second.label(), "train_rows": second.train_rows,
                    "seed": second.seed, "test_accuracy": 0.5, "seconds": 1.0}]
        for result in results:
            progress(result)
        return results

    monkeypatch.setattr(sweep, "run_sweep", fake_run)
    code = main(["sweep", "headline", "--model", "vit", "--rows", "1000", "--seeds", "0-1", "--store", str(tmp_path),
                 "--executor", "ray", "--address", "127.0.0.1:1"])
    out = capsys.readouterr()
    assert code == 1 and "trained 1 runs" in out.out and "1 runs failed" in out.out
    assert '"seed": 0' in out.out and "OutOfMemoryError" in out.out


def test_backfill_on_ray_is_refused_before_anything_runs(tmp_path, capsys):
    from vitcore.cli import main

    write_run(RunStore(tmp_path), RunConfig(train_rows=1000, seed=0))  # stored without predictions.npy
    assert main(["sweep", "headline", "--model", "vit", "--rows", "1000", "--seeds", "0", "--store", str(tmp_path),
                 "--backfill-predictions", "--executor", "ray", "--address", "127.0.0.1:1"]) == 2
    assert "use --executor local" in capsys.readouterr().err


def test_the_cluster_tests_find_ray_beside_the_interpreter_or_skip_saying_why(tmp_path, monkeypatch):
    """An unactivated venv: its bin/ is not on PATH, so shutil.which("ray") gave None and tests/test_cluster.py died
    in subprocess with a TypeError. conftest.tool looks beside sys.executable first, then on PATH, else skips."""
    from conftest import tool
    from raycluster import TwoNodeCluster

    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").touch()
    (venv / "ray").write_text("#!/bin/sh\n")
    (venv / "ray").chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(venv / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    cluster = TwoNodeCluster(tmp_path / "hidden")
    try:
        assert cluster.ray == tool("ray") == str(venv / "ray")
    finally:
        cluster.stop()
    with pytest.raises(pytest.skip.Exception, match=rf"`streamlit` is neither beside {venv}/python nor on PATH"):
        tool("streamlit")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "streamlit").write_text("#!/bin/sh\n")
    (elsewhere / "streamlit").chmod(0o755)
    monkeypatch.setenv("PATH", str(elsewhere))
    assert tool("streamlit") == str(elsewhere / "streamlit")  # not beside the interpreter: PATH's
