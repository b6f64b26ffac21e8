"""The `plan` grid: exactly the random seeds the sequential plan asks for next (vitcore.stats.plan).

    python -m vitcore sweep plan --dry-run      # what the next looks need, on the store
    python -m vitcore sweep plan --workers 2    # train it; rerun after it finishes for the look after

For every planned comparison (a single-switch change of the article's ViT at 1,000 or 4,000 rows, test
accuracy) that is not decided and not at its cap: both sides at random seeds 0 … n - 1 of its next look
(n paired random seeds), the ones not stored yet. A decided comparison, or one at its cap, asks for
nothing. The verdict is the one every view shows (compare.paired_delta with the store's test set), so
the sweep trains what the cards say is needed. Unlike the other grids it reads the store; resumable as
every sweep (a stored run is never trained again).
"""

from __future__ import annotations

import numpy as np

from vitcore.config.run import RunConfig
from vitcore.stats import plan, testset
from vitcore.stats.compare import paired_delta
from vitcore.stats.families import family_of, runs_of
from vitcore.store.runs import RunStore


def status(store: RunStore) -> list[dict]:
    """One row per planned question: switch, level, train_rows and the plan's row (verdict, look, plan,
    seeds_needed: the next look's paired random seeds, NaN when decided, inf at the cap)."""
    runs, test_set = store.table(), testset.from_store(store)
    rows = []
    for field, level, train_rows in plan.questions():
        base = RunConfig(train_rows=train_rows)
        variant = base.replace(**{field: level})
        delta = paired_delta(runs_of(runs, base), runs_of(runs, variant), plan.METRIC,
                             family=family_of(runs, variant, base), test_set=test_set)
        rows.append({"switch": field, "level": level, "train_rows": train_rows, "base": base, "variant": variant,
                     **delta.row})
    return rows


def next_configs(store: RunStore | None) -> list[RunConfig]:
    """Both sides of every undecided planned comparison below its cap, at random seeds 0 … n - 1 of its next
    look (stored ones included: `sweep.pending` drops them), each config once, in question order."""
    if store is None:
        raise ValueError("the plan grid needs the store it plans for (--store)")
    configs = []
    for row in status(store):
        needed = row["seeds_needed"]
        if not np.isfinite(needed):  # decided (NaN) or at the plan's cap (inf)
            continue
        configs += [cfg.replace(seed=seed) for cfg in (row["base"], row["variant"]) for seed in range(int(needed))]
    return list(dict.fromkeys(configs))
