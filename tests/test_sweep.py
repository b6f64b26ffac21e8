"""Grids, resumability and both executors, with real (tiny) training runs."""

import pytest

from vitcore.config import RunConfig
from vitcore.store import RunStore
from vitcore.sweep import grid, run_sweep

from conftest import run_cli

TINY = dict(train_rows=100, epochs=1)


def test_grid_sizes_and_contents():
    default = grid("default")
    assert len(default) == 150 and len({c.config_id for c in default}) == 50
    assert sum(c.model == "convnet" for c in default) == 6
    assert {c.patch_size for c in default if c.model == "vit"} == {4, 7, 14}
    assert {(c.train_rows, c.seed) for c in default} == {(r, s) for r in (1000, 4000) for s in (0, 1, 2)}
    tokens, warmup = grid("tokens"), grid("warmup")
    assert len(tokens) == 24 and {c.tokens for c in tokens} == {196, 49, 16, 4}
    assert len(warmup) == 12 and {(c.norm_placement, c.warmup_epochs) for c in warmup} == {
        ("pre", 0), ("pre", 2), ("post", 0), ("post", 2)}
    headline = grid("headline")
    assert len(headline) == 40 and {c.seed for c in headline} == set(range(10))
    assert {(c.model, c.train_rows) for c in headline} == {(m, r) for m in ("vit", "convnet") for r in (1000, 4000)}
    assert {c.config_id for c in headline} <= {c.config_id for c in default}  # the same cells, more seeds
    assert len(grid("all")) == len(set(default) | set(tokens) | set(warmup) | set(headline)) == 190
    with pytest.raises(ValueError, match="unknown grid"):
        grid("huge")


def test_list_and_dry_run(tmp_path):
    listed = run_cli("sweep", "--list")
    assert listed.returncode == 0 and "default   150 runs" in listed.stdout
    dry = run_cli("sweep", "warmup", "--dry-run", "--store", str(tmp_path))
    assert dry.returncode == 0 and "12 to train" in dry.stdout and len(list(tmp_path.iterdir())) == 0


def test_local_pool_trains_then_resumes(tmp_path):
    store = RunStore(tmp_path)
    configs = [RunConfig(seed=seed, **TINY) for seed in (3, 4)]
    results = run_sweep(configs, store, workers=2)
    assert sorted(r["run_id"] for r in results) == sorted(c.run_id for c in configs)
    assert store.check() == [] and len(store.table()) == 2
    assert run_sweep(configs, store, workers=2) == []  # everything stored: nothing to do


def test_ray_executor_writes_to_the_same_store(tmp_path):
    pytest.importorskip("ray", reason="Ray is optional: pip install -r requirements-ray.txt")
    import ray

    store = RunStore(tmp_path)
    configs = [RunConfig(model="convnet", seed=5, **TINY), RunConfig(pos_embedding="none", seed=5, **TINY)]
    try:
        results = run_sweep(configs, store, workers=2, executor="ray")
    finally:
        ray.shutdown()
    assert len(results) == 2 and store.check() == []
    assert {cfg.run_id for cfg in configs} == set(store.table()["run_id"])
