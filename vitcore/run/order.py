"""Which runs of a sweep are left, and in what order they go to the workers: cheapest cell first, a cell's random
seeds together in chunks (one compile per chunk), the slowest cells started at once on one worker."""

from __future__ import annotations

import itertools
import math

from vitcore.config.run import RunConfig
from vitcore.store.runs import PREDICTIONS, RunStore

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
