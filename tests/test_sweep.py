"""Grids, resumability and both executors, with real (tiny) training runs."""

import math
import os
import re

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli
from fakes import write_run

from vitcore.config.run import RunConfig
from vitcore.config.switches import REGISTRY
from vitcore.run.sweep import chunks, grid, run_sweep
from vitcore.store.runs import RunStore

TINY = dict(train_rows=100, epochs=1)


CELLS = math.prod(len(s.grid) for s in REGISTRY if s.grid)  # the default factorial's ViT cells (24)


def test_grid_sizes_and_contents():
    default = grid("default")  # every ViT cell and the convnet, at 2 row counts and random seeds 0-9
    assert len(default) == (CELLS + 1) * 2 * 10 and len({c.config_id for c in default}) == (CELLS + 1) * 2
    assert sum(c.model == "convnet" for c in default) == 20
    assert {c.patch_size for c in default if c.model == "vit"} == {4, 7, 14}
    assert {(c.train_rows, c.seed) for c in default} == {(r, s) for r in (1000, 4000) for s in range(10)}
    tokens, warmup = grid("tokens"), grid("warmup")
    assert {c.tokens for c in tokens} == {196, 49, 16, 4}
    assert {(c.train_rows, c.seed) for c in tokens if c.patch_size == 2} == {
        (r, s) for r in (1000, 4000) for s in range(5)}
    assert len(warmup) == 40 and {(c.norm_placement, c.warmup_epochs) for c in warmup} == {
        ("pre", 0), ("pre", 2), ("post", 0), ("post", 2)}
    headline, scaling = grid("headline"), grid("scaling")
    assert len(headline) == 40 and {c.seed for c in headline} == set(range(10))
    assert {(c.model, c.train_rows) for c in headline} == {(m, r) for m in ("vit", "convnet") for r in (1000, 4000)}
    assert {c.config_id for c in headline} <= {c.config_id for c in default}  # the same cells, more seeds
    assert len(scaling) == 100 and set(headline) <= set(scaling)
    assert {c.train_rows for c in scaling} == {1000, 2000, 4000, 8000, 16000}
    papers, papers_scaling = grid("papers"), grid("papers-scaling")
    assert len(papers) == 100 and {c.label() for c in papers} == {
        "ViT p7 pre-LN sincos", "ViT p7 pre-LN pos cls", "ViT p7 pre-LN pos SPT", "ViT p7 pre-LN pos LSA",
        "ViT p7 pre-LN pos SPT LSA"}
    assert {(c.train_rows, c.seed) for c in papers} == {(r, s) for r in (1000, 4000) for s in range(10)}
    assert {c.label() for c in papers_scaling} == {"ViT p7 pre-LN pos SPT LSA"} and len(papers_scaling) == 30
    curve = {c.train_rows for c in papers_scaling} | {c.train_rows for c in papers if c.tokenizer == "shifted"}
    assert curve == {c.train_rows for c in scaling}  # with "papers": the data-size grid's every size
    everything = set().union(default, tokens, warmup, headline, scaling, papers, papers_scaling)
    assert len(grid("all")) == len(everything)
    with pytest.raises(ValueError, match="unknown grid"):
        grid("huge")


def test_grid_slices():
    sliced = grid("default", seeds=(3, 4), rows=(1000,), model="vit")
    assert len(sliced) == CELLS * 2 and {(c.seed, c.train_rows, c.model) for c in sliced} == {
        (s, 1000, "vit") for s in (3, 4)}


def test_chunks_keep_a_cells_seeds_together():
    configs = [RunConfig(seed=seed, **TINY) for seed in range(7)] + [RunConfig(model="convnet", **TINY)]
    parts = chunks(configs, size=5)
    assert [len(part) for part in parts] == [4, 3, 1]
    assert all(len({c.config_id for c in part}) == 1 for part in parts)
    assert sorted(c.seed for part in parts[:2] for c in part) == list(range(7))


@pytest.mark.slow
def test_list_and_dry_run(tmp_path, capsys):
    listed = run_cli("sweep", "--list")
    size = f"{len(grid('default')):,}"  # 500 today: (CELLS + 1) x 2 row counts x 10 random seeds, from the registry
    assert listed.returncode == 0 and re.search(rf"^default +{size} runs", listed.stdout, re.M), listed.stdout
    dry = run_cli("sweep", "warmup", "--seeds", "0-2", "--dry-run", "--store", str(tmp_path))
    assert dry.returncode == 0 and "12 to train" in dry.stdout and len(list(tmp_path.iterdir())) == 0
    from vitcore import cli  # bad inputs in this process: tests/test_cli.py runs some in a fresh one

    for bad in (["--seeds", "3-1"], ["--seeds", "x"], ["--rows", "5"], ["--model", "mlp"]):
        assert cli.main(["sweep", "warmup", *bad, "--dry-run", "--store", str(tmp_path)]) == 2, bad
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
@pytest.mark.parametrize("cell", [RunConfig(train_rows=300, epochs=2),
                                  RunConfig(train_rows=300, epochs=2, norm="batch", norm_placement="post"),
                                  RunConfig(model="convnet", train_rows=300, epochs=2)],
                         ids=["vit", "bn-vit", "convnet"])
def test_sweep_worker_matches_a_fresh_run_bit_for_bit(cell, tmp_path):
    """The worker trains seeds 0, 1 and 2 of one cell, reusing the compiled graph for seeds 1 and 2 (seed 1's
    initial weights from a fresh build, checked against the replay of seed 0's; seed 2's from that replay,
    vitcore.model.initial); `python -m vitcore run` trains seed 2 in a fresh process at the same thread count (1),
    loading the programs the worker compiled from the persistent compile cache (the session's own, conftest)."""
    worker, fresh = RunStore(tmp_path / "worker"), RunStore(tmp_path / "fresh")
    run_sweep([cell.replace(seed=seed) for seed in range(3)], worker, workers=os.cpu_count() or 1)  # 1 thread each
    flags = [f"--{name.replace('_', '-')}={value}" for name, value in cell.identity().items() if name != "seed"]
    done = run_cli("run", *flags, "--seed", "2", "--store", str(fresh.root), env={"VITCORE_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    ours, theirs = worker.get(cell.replace(seed=2)), fresh.get(cell.replace(seed=2))
    assert ours.summary["timing"]["compile"] == "reused" and theirs.summary["timing"]["compile"] == "cached"
    assert ours.summary["threads"] == theirs.summary["threads"] == 1
    columns = ["epoch", "loss", "accuracy", "val_loss", "val_accuracy", "lr"]  # not the wall seconds
    pd.testing.assert_frame_equal(ours.history()[columns], theirs.history()[columns], check_exact=True)
    np.testing.assert_array_equal(ours.confusion(), theirs.confusion())
    np.testing.assert_array_equal(ours.predictions(), theirs.predictions())
    assert ours.summary["test_loss"] == theirs.summary["test_loss"]


@pytest.mark.slow
def test_backfill_adds_predictions_only_when_the_retrain_reproduces_the_run(tmp_path):
    store = RunStore(tmp_path)
    # random seeds 1 and 2 keep no weights: weights without predictions.npy beside them make a run invalid
    trained, invented = RunConfig(seed=1, **TINY), RunConfig(seed=2, **TINY)
    run_sweep([trained], store, workers=os.cpu_count() or 1)
    (store.get(trained).path / "predictions.npy").unlink()
    write_run(store, invented, 0.5)  # a valid run that no training of this config reproduces
    results = {r["seed"]: r for r in run_sweep([trained, invented], store, workers=os.cpu_count() or 1, backfill=True)}
    assert results[1]["backfilled"] and not results[2]["backfilled"]
    run = store.get(trained)
    assert run.predictions().dtype == np.uint8 and len(run.predictions()) == 10_000
    assert np.array_equal(np.bincount(run.predictions(), minlength=10), run.confusion().sum(axis=0))
    assert store.get(invented).predictions() is None


@pytest.mark.slow
def test_backfill_replaces_an_unreproducible_run_and_logs_its_old_numbers(tmp_path):
    store = RunStore(tmp_path)
    invented = RunConfig(seed=2, **TINY)
    write_run(store, invented, 0.5)  # a valid run that no training of this config reproduces
    old = store.get(invented).summary
    [result] = run_sweep([invented], store, workers=1, backfill=True, replace=True)
    assert not result["backfilled"] and result["replaced"]
    run = store.get(invented)
    assert run.predictions() is not None and run.summary["test_accuracy"] != old["test_accuracy"]
    log = pd.read_csv(tmp_path / "replaced_runs.csv")
    assert list(log["run_id"]) == [invented.run_id]
    assert log["old_test_accuracy"][0] == old["test_accuracy"]
    assert log["new_test_accuracy"][0] == run.summary["test_accuracy"]
    # its seconds are not its cell's
    assert store.table()["timing_group"].iloc[0].removesuffix("/busy").endswith("/replaced")
    assert store.check() == [] and run_sweep([invented], store, backfill=True, replace=True) == []


@pytest.mark.slow
def test_local_pool_trains_then_resumes(tmp_path, monkeypatch):
    """Two cells, so both workers train at once: one sweep's workers overlap by design (`workers: 2`),
    never as "overlapped" (vitcore.run.overlap: they share the sweep's session)."""
    monkeypatch.setenv("VITCORE_XLA_CACHE", "off")  # each worker compiles: "fresh", whatever ran before
    store = RunStore(tmp_path)
    configs = [RunConfig(seed=3, **TINY), RunConfig(seed=3, pos_embedding="none", **TINY)]
    results = run_sweep(configs, store, workers=2)
    assert sorted(r["run_id"] for r in results) == sorted(c.run_id for c in configs)
    assert store.check() == [] and len(store.table()) == 2
    # (a "/busy" suffix records the machine's load while the test ran: vitcore.store.index.busy)
    groups = [group.removesuffix("/busy").split("/")[2:] for group in store.table()["timing_group"]]
    assert groups == [["workers2", "fresh"]] * 2
    assert run_sweep(configs, store, workers=2) == []  # everything stored: nothing to do


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # beside tests/test_cluster.py's cluster, never at once (tests/conftest.py)
def test_ray_executor_writes_to_the_same_store(tmp_path):
    pytest.importorskip("ray", reason="Ray is optional: pip install -r requirements-dev.txt")
    import ray

    store = RunStore(tmp_path)
    # Two random seeds of one cell: one Ray task (one worker process importing TensorFlow), whose first run the driver
    # retrains (vitcore.run.verify). The convnet: tests/test_cluster.py sends the ViT through Ray. (Two cells cost a
    # second worker process and a second retrain, ~19 CPU-s, and proved nothing more.)
    configs = [RunConfig(model="convnet", seed=5, **TINY), RunConfig(model="convnet", seed=6, **TINY)]
    try:
        results = run_sweep(configs, store, workers=2, executor="ray")
    finally:
        ray.shutdown()
    assert len(results) == 2 and store.check() == []
    assert {cfg.run_id for cfg in configs} == set(store.table()["run_id"])


def test_the_grid_list_says_each_description_in_whole_sentences(capsys):
    """`sweep --list` cut each description at its docstring's first line ("…24 ViTs: position embedding,")."""
    from vitcore import cli
    from vitcore.run import sweep

    assert cli.main(["sweep", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(sweep.GRIDS) + 1  # every grid and the plan
    for line in lines:
        assert line.rstrip().endswith((".", "?")), line
    assert "patch 7/4/14) + the convnet, 2 sizes, 10 random seeds." in lines[0]
