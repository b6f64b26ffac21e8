"""Named grids of RunConfigs, trained resumably by worker processes (local pool or a Ray cluster).

    python -m vitcore sweep --list
    python -m vitcore sweep default --workers 2              # 500 runs; rerun to resume
    python -m vitcore sweep headline --model vit --rows 1000 --seeds 0-3 --workers 1
    python -m vitcore sweep tokens --executor ray --address ray://head:10001
    python -m vitcore sweep plan --dry-run                   # the seeds the sequential plan asks for next

A worker imports TensorFlow once and trains many runs; the seeds of one cell go to the same
worker in chunks, so the second seed on reuses the compiled graph (train.Trainer), bit for bit
the result of `python -m vitcore run` at the same thread count. Resumable by construction: a run
is complete once its folder is renamed into the store, so a killed sweep loses only the runs in
flight, and a rerun skips everything already stored. Local workers get `cores // workers` TensorFlow
threads each, so N workers never oversubscribe the CPU; on Ray, each node's own (vitcore.run.cluster).
"""

from __future__ import annotations

import itertools
import math
import os
import re
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from multiprocessing import get_context

import numpy as np

from vitcore.config import switches
from vitcore.config.run import MODELS, RunConfig
from vitcore.config.switches import PAPER_VARIANTS, SMALL_DATA_VARIANT
from vitcore.run.overlap import new_session
from vitcore.run.spawn import neutral_main, worker_start
from vitcore.stats import plan_store, plans, testset
from vitcore.stats.compare import paired_delta
from vitcore.stats.families import planned_family, runs_of
from vitcore.store import upkeep
from vitcore.store.runs import PREDICTIONS, RunStore
from vitcore.store.upkeep import REPLACED_LOG, REPLACED_METRICS  # noqa: F401 (re-exported: where they lived)

SEEDS = tuple(range(10))       # 10 random seeds per cell: enough to resolve a ~0.005 accuracy effect
TOKEN_SEEDS = tuple(range(5))  # patch 2 (196 tokens) costs ~10 min a run: 5 random seeds
ROWS = (1_000, 4_000)
SCALING_ROWS = (1_000, 2_000, 4_000, 8_000, 16_000)
GRID_ROWS = tuple(sorted({*ROWS, *SCALING_ROWS}))  # every row count a grid trains (the sidebar offers each)
LOSS_TOLERANCE = 1e-5  # a backfill's largest allowed per-epoch loss difference (float32 rounding)


def _default() -> list[RunConfig]:
    """The full factorial of the registry's grid switches (today 2 x 2 x 2 x 3 = 24 ViTs: position embedding,
    norm placement, norm, patch 7/4/14) + the convnet, 2 sizes, 10 random seeds."""
    factors = [switches.SWITCH[name] for name in switches.FACTORS]
    vits = [RunConfig(**{f.name: level for f, level in zip(factors, levels)})
            for levels in itertools.product(*(f.grid for f in factors))]
    cells = [*vits, RunConfig(model="convnet")]
    return [cell.replace(train_rows=rows, seed=seed) for seed in SEEDS for rows in ROWS for cell in cells]


def _tokens() -> list[RunConfig]:
    """The article's ViT at 196 / 49 / 16 / 4 tokens: the measured cost of token count (patch 2: 5 random seeds)."""
    patches = sorted(switches.LEVELS["patch_size"], reverse=True)  # 14, 7, 4, 2: 4 to 196 tokens
    return [RunConfig(patch_size=patch, train_rows=rows, seed=seed)
            for rows in ROWS for patch in patches for seed in (TOKEN_SEEDS if patch == min(patches) else SEEDS)]


def _warmup() -> list[RunConfig]:
    """Pre- vs post-norm with and without 2 epochs of warm-up: the article's "post-norm needs warm-up"."""
    return [RunConfig(norm_placement=place, warmup_epochs=warmup, seed=seed)
            for seed in SEEDS for place in switches.LEVELS["norm_placement"] for warmup in (0, 2)]


def _headline() -> list[RunConfig]:
    """The article's ViT and convnet at 1,000 and 4,000 rows, 10 random seeds: its headline, settled."""
    return [RunConfig(model=model, train_rows=rows, seed=seed) for seed in SEEDS for rows in ROWS for model in MODELS]


def _scaling() -> list[RunConfig]:
    """The article's ViT and convnet at 1,000 to 16,000 rows, 10 random seeds: where does the convnet win?"""
    return [RunConfig(model=model, train_rows=rows,
                      seed=seed) for seed in SEEDS for rows in SCALING_ROWS for model in MODELS]


# 2,000 / 8,000 / 16,000: "papers" has the rest
PAPERS_SCALING_ROWS = tuple(rows for rows in SCALING_ROWS if rows not in ROWS)


def _papers() -> list[RunConfig]:
    """The article's ViT with one paper's change (sincos, class token, SPT, LSA, SPT + LSA), 1,000 and 4,000 rows,
    10 random seeds; the article's ViT itself is in "headline"."""
    return [RunConfig(train_rows=rows, seed=seed, **changes)
            for rows in ROWS for changes in PAPER_VARIANTS.values() for seed in SEEDS]


def _papers_scaling() -> list[RunConfig]:
    """SPT + LSA at the scaling grid's other sizes (with "papers": 1,000 to 16,000 rows), 10 random seeds."""
    return [RunConfig(train_rows=rows, seed=seed, **PAPER_VARIANTS[SMALL_DATA_VARIANT])
            for rows in PAPERS_SCALING_ROWS for seed in SEEDS]


# The noise grid's crossed design: 4 data samples x 4 initialisations x 2 batch orders
# per cell, 32 runs; the 4,000-row convnet (minutes of a worker a run) 3 x 3 x 2. See _noise.
NOISE_DESIGN = {"data": 4, "init": 4, "order": 2}
NOISE_DESIGN_CONVNET_4000 = {"data": 3, "init": 3, "order": 2}


def _noise() -> list[RunConfig]:
    """Where the seed noise comes from: the article's ViT (with and without position embedding, for
    the paired Δ) and its convnet at 1,000 and 4,000 rows, every data sample crossed with every
    initialisation and every batch order (random seed = data sample; init and order seeds set).

    Why 4 x 4 x 2: the data sample and the initialisation get 3 degrees of freedom each for their
    main effects; the batch order only 1 — a given order seed permutes a different sample in each
    data seed, so a consistent order effect is not expected, and its interactions (3 + 3 + 9 df)
    still measure what the order adds. 178 runs, about 1.2 worker-hours on this shared 2-core box."""
    configs = []
    for rows in ROWS:
        for cell in (RunConfig(), RunConfig(pos_embedding="none"), RunConfig(model="convnet")):
            design = NOISE_DESIGN_CONVNET_4000 if (cell.model, rows) == ("convnet", 4_000) else NOISE_DESIGN
            configs += [cell.replace(train_rows=rows, seed=data, init_seed=init, order_seed=order)
                        for data in range(design["data"]) for init in range(design["init"])
                        for order in range(design["order"])]
    return configs


GRIDS = {"default": _default, "tokens": _tokens, "warmup": _warmup, "headline": _headline, "scaling": _scaling,
         "papers": _papers, "papers-scaling": _papers_scaling, "noise": _noise}
GRIDS["all"] = lambda: list(dict.fromkeys(config for name in ("default", "warmup", "tokens", "headline", "scaling",
                                                              "papers", "papers-scaling")
                                          for config in GRIDS[name]()))
GRIDS["all"].__doc__ = "Every grid above but noise, each config once."
PLAN = "plan"  # the grid that reads the store: what the sequential plan asks for next (next_configs below)


def grid(name: str, seeds: tuple[int, int] | None = None, rows: tuple[int, ...] | None = None,
         model: str | None = None, store: RunStore | None = None, plan: str | None = None) -> list[RunConfig]:
    """A named grid, optionally sliced: seeds in [low, high], these train_rows, this model (`plan`: the next looks
    of the registered plan of that name in `store`, default the built-in plan)."""
    if name not in (*GRIDS, PLAN):
        raise ValueError(f"unknown grid {name!r}; grids: {', '.join([*GRIDS, PLAN])}")
    if plan is not None and name != PLAN:
        raise ValueError(f"a plan name goes with the grid {PLAN!r} (`sweep plan {plan}`), not with {name!r}")
    configs = next_configs(store, plan) if name == PLAN else list(dict.fromkeys(GRIDS[name]()))
    if seeds is not None:
        configs = [cfg for cfg in configs if seeds[0] <= cfg.seed <= seeds[1]]
    if rows is not None:
        configs = [cfg for cfg in configs if cfg.train_rows in rows]
    if model is not None:
        configs = [cfg for cfg in configs if cfg.model == model]
    return configs


_TRAINER = None  # one per worker process: its compiled cells survive from task to task (train.CELLS)


def _trainer(threads: int, workers: int, session: str | None = None):
    global _TRAINER
    os.environ["VITCORE_THREADS"] = str(threads)
    if _TRAINER is None:
        from vitcore.run.train import Trainer  # noqa: PLC0415 - TensorFlow, in the worker only

        _TRAINER = Trainer(workers, session)
    _TRAINER.workers, _TRAINER.session = workers, session or _TRAINER.session  # a reused (Ray) worker: this sweep's
    return _TRAINER


def _train_chunk(configs: list[RunConfig], store_path: str, threads: int, workers: int,
                 backfill: bool = False, replace: bool = False, session: str | None = None) -> list[dict]:
    """Runs in a worker process: train (or backfill) each config of one cell and return headlines.
    `session`: the sweep's, shared by its workers (their overlap is planned: vitcore.run.overlap)."""
    trainer, store = _trainer(threads, workers, session), RunStore(store_path)
    results = []
    for cfg in configs:
        if backfill:
            results.append(backfill_predictions(trainer, cfg, store, replace))
            continue
        run = trainer.train(cfg, store)
        results.append({"run_id": run.run_id, "label": cfg.label(), "train_rows": cfg.train_rows, "seed": cfg.seed,
                        "test_accuracy": run.summary["test_accuracy"], "seconds": run.summary["seconds"]})
    return results


def backfill_predictions(trainer, cfg: RunConfig, store: RunStore, replace: bool = False) -> dict:
    """Retrain a stored run in memory and store its predictions if the retrain reproduces the run:
    the same confusion matrix, the same per-epoch accuracies, losses within LOSS_TOLERANCE.
    Otherwise, with replace=True, the retrain (current code, this machine) replaces the stored run
    and the result carries the old run's numbers (the sweep logs them in REPLACED_LOG).

    Why not bit for bit: on this machine a retrain at the same thread count is bit for bit (tests),
    but the committed runs were trained on another machine of the same kind, whose XLA code for
    the same graph rounds a float32 loss differently in its last bit (~1e-7), which at 4,000 rows
    can grow into different predictions."""
    run = store.get(cfg)
    fit = trainer.fit(cfg, store=store)  # holds a marker: other trainings see this one (vitcore.run.overlap)
    stored, fresh = run.history(), {name: [row[name] for row in fit["history"]] for name in fit["history"][0]}
    loss_gap = max(float(np.abs(stored[name].to_numpy() - fresh[name]).max()) for name in ("loss", "val_loss"))
    same = (np.array_equal(run.confusion(), fit["confusion"]) and loss_gap <= LOSS_TOLERANCE
            and all(np.array_equal(stored[name].to_numpy(), fresh[name]) for name in ("accuracy", "val_accuracy")))
    result = {"run_id": cfg.run_id, "label": cfg.label(), "train_rows": cfg.train_rows, "seed": cfg.seed,
              "test_accuracy": run.summary["test_accuracy"], "seconds": fit["summary"]["seconds"],
              "backfilled": same, "replaced": False, "loss_gap": loss_gap}
    if same:
        store.add_predictions(run, fit["predictions"])
    elif replace:
        fit["summary"]["timing"]["context"] = "replaced"  # timed on another occasion than its cell: its own group
        store.replace(cfg, fit["history"], fit["confusion"], fit["summary"],
                      fit["model"] if run.weights_path is not None else None, predictions=fit["predictions"])
        result.update(replaced=True, **{f"old_{name}": run.summary[name] for name in REPLACED_METRICS},
                      **{f"new_{name}": fit["summary"][name] for name in REPLACED_METRICS})
    return result


def run_sweep(configs: list[RunConfig], store: RunStore, workers: int = 1, executor: str = "local",
              address: str | None = None, progress=None, backfill: bool = False,
              replace: bool = False) -> list[dict]:
    """Train every config not yet in the store (backfill=True: add predictions to stored runs that
    lack them; replace=True: replace those a retrain cannot reproduce, logged in REPLACED_LOG);
    returns the results of the runs trained now."""
    todo = missing_predictions(configs, store) if backfill else pending(configs, store)
    if not todo:
        return []
    if backfill and replace:
        upkeep.check_replaced_log(store.root)  # refused now, not after a run was replaced
    threads = max(1, (os.cpu_count() or 1) // workers)
    tasks, session = schedule(chunks(todo), workers), new_session()
    if executor == "ray":
        return _run_ray(tasks, store, address, workers, progress, backfill, session)
    if executor != "local":
        raise ValueError(f"executor must be 'local' or 'ray'; got {executor!r}")
    results = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=worker_start,
                             initargs=(os.getpid(),)) as pool:  # its workers die with this process, even SIGKILLed
        with neutral_main():  # the workers start here; they must not re-run a foreign __main__ (vitcore.run.spawn)
            futures = [pool.submit(_train_chunk, chunk, str(store.root), threads, workers, backfill, replace, session)
                       for chunk in tasks]
        for future in as_completed(futures):
            results += _finished(future.result(), store, progress)
    return results


def _run_ray(tasks, store: RunStore, address: str | None, workers: int, progress, backfill: bool,
             session: str) -> list[dict]:
    """The chunks on a Ray cluster; the driver (this process) writes every run (vitcore.run.cluster)."""
    if backfill:
        raise ValueError("--backfill-predictions compares retrains with the runs stored on this machine: "
                         "use --executor local")
    from vitcore.run import cluster  # noqa: PLC0415 - scikit-learn, psutil: for --executor ray only

    return cluster.run(tasks, store, address, workers, progress, session)


def _finished(chunk: list[dict], store: RunStore, progress) -> list[dict]:
    """One finished chunk's results, from either executor: each replaced run logged in REPLACED_LOG, each
    result reported to `progress` as it comes."""
    for result in chunk:
        if result.get("replaced"):
            upkeep.log_replaced(store.root, result)
        if progress:
            progress(result)
    return chunk


# Which runs of a sweep are left, and in what order they go to the workers: cheapest cell first, a cell's random
# seeds together in chunks (one compile per chunk), the slowest cells started at once on one worker.

CHUNK = 5  # seeds of one cell per worker task: compile once, still spread over the workers


def cost(cfg: RunConfig) -> int:
    """A rough relative cost, so cheap runs land first and a stopped sweep has the most cells."""
    per_row = 40 if cfg.model == "convnet" else cfg.tokens + cfg.tokens ** 2 / 16  # MLPs ~ N, attention ~ N^2
    return int(per_row * cfg.train_rows * cfg.epochs)


def pending(configs: list[RunConfig], store: RunStore) -> list[RunConfig]:
    """The configs not yet in the store, cheapest cell first, a cell's seeds together."""
    return sorted((cfg for cfg in configs if store.get(cfg) is None), key=lambda c: (cost(c), c.graph_id, c.seed))


def missing_predictions(configs: list[RunConfig], store: RunStore) -> list[RunConfig]:
    """Stored configs whose run has no predictions.npy (trained before predictions were kept)."""
    runs = (store.get(cfg) for cfg in configs)
    return sorted((run.config for run in runs if run is not None and not (run.path / PREDICTIONS).exists()),
                  key=lambda c: (cost(c), c.graph_id, c.seed))


def chunks(todo: list[RunConfig], size: int = CHUNK) -> list[list[RunConfig]]:
    """Each cell's configs split into near-equal chunks of at most `size` (one worker task each)."""
    out = []
    for _, group in itertools.groupby(todo, key=lambda c: c.graph_id):  # one compiled graph
        group = list(group)
        parts = math.ceil(len(group) / size)
        out += [group[i::parts] for i in range(parts)]  # interleaved: each chunk spans the seed range
    return [sorted(chunk, key=lambda c: c.seed) for chunk in out]


def schedule(tasks: list[list[RunConfig]], workers: int) -> list[list[RunConfig]]:
    """The order to hand `tasks` (cheapest first) to a pool of `workers`: simulated with _cost, the first worker
    takes the most expensive task left and the others the cheapest, so the slowest cells (patch 2) start at
    once on one worker while the cheap ones finish early on the rest, and nothing waits for them at the end."""
    if workers < 2 or len(tasks) < 3:
        return tasks
    left, order = list(tasks), []
    free = [(0, worker) for worker in range(workers)]
    while left:
        free.sort()
        at, worker = free.pop(0)
        task = left.pop() if worker == 0 else left.pop(0)
        order.append(task)
        free.append((at + sum(cost(cfg) for cfg in task), worker))
    return order


# The `plan` grid: exactly the random seeds a registered plan asks for next (vitcore.stats.plans, .plan).
#
#     python -m vitcore sweep plan --dry-run              # the built-in plan's next looks, on the store
#     python -m vitcore sweep plan confirm --workers 2    # train the plan 'confirm' until every question is decided
#
# For every question of the plan that is not decided and not at its cap: both sides at the plan's first n
# random seeds of its next look, the ones not stored yet. A decided question, or one at its cap, asks for
# nothing. The verdict is the one every view shows (compare.paired_delta with the store's test set, in the
# question's family at the plan's margin), so the sweep trains what the views say is needed. Unlike the
# other grids it reads the store; resumable as every sweep (a stored run is never trained again).

def find(store: RunStore | None, name: str | None) -> plans.Plan:
    """The plan called `name` that judges `store` (None: the built-in plan); ValueError naming the plans there."""
    if name is None or name == plan_store.BUILTIN:
        return plan_store.builtin()
    found, problems = plan_store.load(store.root if store is not None else None)
    for plan in found:
        if plan.name == name:
            return plan
    why = f" ({'; '.join(problems)})" if problems else ""
    raise ValueError(f"no registered plan {name!r} in this store; plans: {', '.join(p.name for p in found)}{why}")


def status(store: RunStore, plan: plans.Plan | None = None, runs=None, test_set=None) -> list[dict]:
    """One row per question of `plan` (default: the built-in one): question, switch, level, train_rows, base,
    variant and the plan's row (verdict, look, plan, seeds_needed: the next look's paired random seeds, NaN when
    decided, inf at the cap)."""
    plan = plan or plan_store.builtin()
    runs = store.table() if runs is None else runs
    test_set = testset.from_store(store) if test_set is None else test_set
    rows = []
    for question in plan.questions:
        base, variant = question.base, question.variant
        delta = paired_delta(runs_of(runs, base), runs_of(runs, variant), plan.metric, plan.margin,
                             family=planned_family(plan, question), test_set=test_set)
        rows.append({"plan": plan.name, "question": question.name, "switch": question.field, "level": question.level,
                     "train_rows": question.train_rows, "base": base, "variant": variant,
                     **{k: v for k, v in delta.row.items() if k != "plan"}, "plan_text": delta.row["plan"]})
    return rows


def next_configs(store: RunStore | None, name: str | None = None) -> list[RunConfig]:
    """Both sides of every undecided question of the plan below its cap, at the plan's first n random seeds of
    its next look (stored ones included: `sweep.pending` drops them), each config once, in question order."""
    if store is None:
        raise ValueError("the plan grid needs the store it plans for (--store)")
    plan = find(store, name)
    configs = []
    for row in status(store, plan):
        needed = row["seeds_needed"]
        if not np.isfinite(needed):  # decided (NaN) or at the plan's cap (inf)
            continue
        seeds = range(plan.first_seed, plan.first_seed + int(needed))
        configs += [cfg.replace(seed=seed) for cfg in (row["base"], row["variant"]) for seed in seeds]
    return list(dict.fromkeys(configs))


# `sweep plan NAME` on local workers: train a registered plan until every question is decided or at its cap,
# re-planning as each chunk finishes, so a question's next look starts while a slow cell (patch 2) still trains.
#
# One worker lane takes the most expensive chunk left (the slowest cells start at once), the others the cheapest
# (vitcore.run.sweep.schedule's rule, applied as workers free up). After every finished chunk the plan is judged
# again on the store (vitcore.run.sweep.next_configs: the views' own verdicts) and what it asks for next, less
# what is stored or training, is queued. Resumable as every sweep: a stored run is never trained again.

def run_plan(store: RunStore, name: str | None, workers: int = 1, progress=None, rows=None, seeds=None) -> list[dict]:
    """Train the plan `name` (None: the built-in one) in `store` until nothing more is asked; `rows` / `seeds`
    (low, high) restrict what is trained. Returns the results of the runs trained now."""
    threads = max(1, (os.cpu_count() or 1) // workers)
    session, results, lanes = new_session(), [], {}  # lanes: future -> (lane, its configs)

    def asked() -> list[list]:
        busy = {cfg for _, configs in lanes.values() for cfg in configs}
        todo = [cfg for cfg in pending(next_configs(store, name), store) if cfg not in busy
                and (rows is None or cfg.train_rows in rows) and (seeds is None or seeds[0] <= cfg.seed <= seeds[1])]
        return sorted(chunks(todo), key=lambda chunk: sum(cost(cfg) for cfg in chunk))

    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=worker_start,
                             initargs=(os.getpid(),)) as pool:
        while True:
            queue = asked()
            free = [lane for lane in range(workers) if lane not in {used for used, _ in lanes.values()}]
            for lane in free:
                if not queue:
                    break
                chunk = queue.pop() if lane == 0 else queue.pop(0)  # lane 0: the most expensive chunk left
                with neutral_main():  # workers start here; they must not re-run a foreign __main__ (vitcore.run.spawn)
                    future = pool.submit(_train_chunk, chunk, str(store.root), threads, workers, False, False, session)
                lanes[future] = (lane, chunk)
            if not lanes:
                return results
            done, _ = wait(lanes, return_when=FIRST_COMPLETED)
            for future in done:
                lanes.pop(future)
                results += _finished(future.result(), store, progress)


def summary(name: str) -> str:
    """A grid's one-line description for `sweep --list`: the first sentence of its docstring's first paragraph,
    whole however many lines it spans ('' for a grid without one)."""
    paragraph = " ".join((GRIDS[name].__doc__ or "").split("\n\n")[0].split())
    return re.split(r"(?<=[.?!])\s+(?=[A-Z\"])", paragraph, maxsplit=1)[0]
