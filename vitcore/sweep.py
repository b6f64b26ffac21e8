"""Named grids of RunConfigs, trained resumably by a local process pool or on a Ray cluster.

    python -m vitcore sweep --list
    python -m vitcore sweep default --workers 2          # 150 runs; rerun to resume
    python -m vitcore sweep headline --workers 2         # the seed's ViT and convnet at seeds 0-9
    python -m vitcore sweep tokens --executor ray --address ray://head:10001

Resumable by construction: a run is complete once its folder is renamed into the store, so a
killed sweep loses only the runs in flight, and a rerun skips everything already stored.
Workers get `cores // workers` TensorFlow threads each, so N workers never oversubscribe the CPU.
"""

from __future__ import annotations

import itertools
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

from vitcore.config import RunConfig
from vitcore.store import RunStore

SEEDS = (0, 1, 2)
HEADLINE_SEEDS = tuple(range(10))  # the `headline` grid's cells get more seeds
ROWS = (1_000, 4_000)


def _default() -> list[RunConfig]:
    """The full factorial of the four switches (2 x 2 x 2 x 3 = 24 ViTs) + the convnet, 2 sizes, 3 seeds."""
    vits = [RunConfig(pos_embedding=pos, norm_placement=place, norm=norm, patch_size=patch)
            for pos, place, norm, patch in itertools.product(("learned", "none"), ("pre", "post"),
                                                              ("layer", "batch"), (7, 4, 14))]
    cells = [*vits, RunConfig(model="convnet")]
    return [cell.replace(train_rows=rows, seed=seed) for seed in SEEDS for rows in ROWS for cell in cells]


def _tokens() -> list[RunConfig]:
    """The baseline ViT at 196 / 49 / 16 / 4 tokens: the measured cost of token count."""
    return [RunConfig(patch_size=patch, train_rows=rows, seed=seed)
            for seed in SEEDS for rows in ROWS for patch in (14, 7, 4, 2)]


def _warmup() -> list[RunConfig]:
    """Pre- vs post-norm with and without 2 epochs of warm-up: the seed's "post-norm needs warm-up"."""
    return [RunConfig(norm_placement=place, warmup_epochs=warmup, seed=seed)
            for seed in SEEDS for place in ("pre", "post") for warmup in (0, 2)]


def _headline() -> list[RunConfig]:
    """The seed page's ViT and convnet at 1,000 and 4,000 rows, seeds 0-9: its headline, settled.

    At 3 seeds the 4,000-row ViT - convnet interval of best val accuracy still straddled 0.
    """
    return [RunConfig(model=model, train_rows=rows, seed=seed)
            for seed in HEADLINE_SEEDS for rows in ROWS for model in ("vit", "convnet")]


GRIDS = {"default": _default, "tokens": _tokens, "warmup": _warmup, "headline": _headline}
GRIDS["all"] = lambda: list(dict.fromkeys(config for name in ("default", "warmup", "tokens", "headline")
                                          for config in GRIDS[name]()))


def grid(name: str) -> list[RunConfig]:
    if name not in GRIDS:
        raise ValueError(f"unknown grid {name!r}; grids: {', '.join(GRIDS)}")
    return list(dict.fromkeys(GRIDS[name]()))  # de-duplicated, order kept


def _train_task(cfg: RunConfig, store_path: str, threads: int) -> dict:
    """Runs in a worker process: train one config (or find it stored) and return its headline."""
    os.environ["VITCORE_THREADS"] = str(threads)
    from vitcore.train import train

    run = train(cfg, RunStore(store_path))
    return {"run_id": run.run_id, "label": cfg.label(), "train_rows": cfg.train_rows, "seed": cfg.seed,
            "test_accuracy": run.summary["test_accuracy"], "seconds": run.summary["seconds"]}


def _cost(cfg: RunConfig) -> int:
    """A rough relative cost, so cheap runs land first and a stopped sweep has the most cells."""
    per_row = 40 if cfg.model == "convnet" else cfg.tokens + cfg.tokens ** 2 / 16  # MLPs ~ N, attention ~ N^2
    return int(per_row * cfg.train_rows * cfg.epochs)


def pending(configs: list[RunConfig], store: RunStore) -> list[RunConfig]:
    """The configs not yet in the store, cheapest first (the order a sweep trains them)."""
    return sorted((cfg for cfg in configs if store.get(cfg) is None), key=_cost)


def run_sweep(configs: list[RunConfig], store: RunStore, workers: int = 1, executor: str = "local",
              address: str | None = None, progress=None) -> list[dict]:
    """Train every config not yet in the store; returns the results of the ones trained now."""
    todo = pending(configs, store)
    if not todo:
        return []
    threads = max(1, (os.cpu_count() or 1) // workers)
    if executor == "ray":
        return _run_ray(todo, store, address, threads, progress)
    results = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_train_task, cfg, str(store.root), threads) for cfg in todo]
        for future in as_completed(futures):
            results.append(future.result())
            if progress:
                progress(results[-1])
    return results


def _run_ray(todo: list[RunConfig], store: RunStore, address: str | None, threads: int, progress) -> list[dict]:
    try:
        import ray
    except ImportError:
        raise ValueError("--executor ray needs Ray: pip install -r requirements-ray.txt") from None
    ray.init(address=address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    task = ray.remote(num_cpus=threads)(_train_task)
    pending = [task.remote(cfg, str(store.root.resolve()), threads) for cfg in todo]
    results = []
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        results.append(ray.get(done[0]))
        if progress:
            progress(results[-1])
    return results


def sweep_command(args) -> int:
    from tqdm import tqdm

    from vitcore.cli import UsageError

    if args.list:
        for name in GRIDS:
            configs, summary = grid(name), (GRIDS[name].__doc__ or "").partition("\n")[0]
            print(f"{name:8} {len(configs):4} runs  ({len({c.config_id for c in configs})} configs x seeds)  "
                  f"{summary}".rstrip())
        return 0
    if not args.grid:
        raise UsageError(f"name a grid ({', '.join(GRIDS)}) or use --list")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    try:
        configs = grid(args.grid)
    except ValueError as error:
        raise UsageError(str(error)) from None
    store = RunStore(args.store)
    todo = pending(configs, store)
    print(f"grid {args.grid}: {len(configs)} runs, {len(configs) - len(todo)} already in {store.root}, "
          f"{len(todo)} to train")
    if args.dry_run:
        for cfg in todo:
            print(f"  {cfg.run_id}  {cfg.label():28} rows {cfg.train_rows:5}  seed {cfg.seed}")
        return 0
    started = time.perf_counter()
    with tqdm(total=len(todo), unit="run") as bar:
        def progress(result):
            bar.set_postfix_str(f"last: {result['label']} rows {result['train_rows']} seed {result['seed']} "
                                f"test {result['test_accuracy']:.4f} ({result['seconds']:.0f} s)")
            bar.update(1)
        try:
            results = run_sweep(todo, store, args.workers, args.executor, args.address, progress)
        except ValueError as error:
            raise UsageError(str(error)) from None
    hours = (time.perf_counter() - started) / 3600
    if results:
        print(f"trained {len(results)} runs in {hours * 3600:.0f} s: {len(results) / hours:.0f} runs/hour "
              f"with {args.workers} worker(s)")
    return 0
