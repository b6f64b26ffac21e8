"""The dedicated timing set, and (re-exported from vitcore.stats.seconds) which group a seconds mean uses.

The dedicated timing set (`python -m vitcore bench-timing`, `bench_timing`): the configs alternated pair by
pair (A B, B A, …) in one process, each run started only when the machine is quiet, into a store of its own
(bench/timing_runs), context "reference". It needs an idle machine for about 10 pairs × 2 runs; until it has
been run the views use vitcore.stats.seconds' reference group (the largest clean one) and say so.
"""

from __future__ import annotations

import time
from pathlib import Path

from vitcore.config.run import RunConfig
from vitcore.stats.seconds import (  # noqa: F401
    CONTEXTS,
    REFERENCE,
    context,
    group_text,
    one_group,
    ranked_groups,
    reference_group,
    seconds_summary,
)

TIMING_STORE = Path(__file__).resolve().parents[2] / "bench" / "timing_runs"
QUIET_LOAD = 0.5  # a run of the timing set starts only when the 1-minute load average is below this


def interleaved(configs: list[RunConfig], pairs: int = 10) -> list[RunConfig]:
    """The timing set's order: random seed i of every config, the order reversed every other seed (A B, B A …),
    so a drift of the machine's speed falls on both sides alike."""
    if len(configs) < 2 or pairs < 2:
        raise ValueError("the timing set needs at least 2 configs and 2 pairs")
    order = []
    for seed in range(pairs):
        row = [cfg.replace(seed=seed) for cfg in configs]
        order += row if seed % 2 == 0 else row[::-1]
    return order


def wait_quiet(limit: float = QUIET_LOAD, most: float = 3600.0, poll: float = 15.0, load=None, sleep=time.sleep) -> bool:
    """Wait until the 1-minute load average is below `limit` (True) or `most` seconds passed (False)."""
    import os

    load = load or (lambda: os.getloadavg()[0])
    waited = 0.0
    while load() >= limit:
        if waited >= most:
            return False
        sleep(poll)
        waited += poll
    return True


def bench_timing(configs: list[RunConfig], pairs: int = 10, store_path: Path = TIMING_STORE, progress=print) -> int:
    """Train the timing set (interleaved, one worker, each run on a quiet machine) into its own store; the runs'
    timing context is "reference". Returns how many runs were trained (a run already stored is kept)."""
    from vitcore.run.train import Trainer
    from vitcore.store.runs import RunStore

    store, trainer, trained = RunStore(store_path), Trainer(workers=1), 0
    for cfg in interleaved(configs, pairs):
        if store.get(cfg) is not None:
            continue
        if not wait_quiet():
            raise RuntimeError(f"the machine never went quiet (1-minute load below {QUIET_LOAD}) within an hour")
        result = trainer.fit(cfg, store=store)
        result["summary"]["timing"]["context"] = result["summary"]["timing"].get("context") or REFERENCE
        store.save(cfg, result["history"], result["confusion"], result["summary"], None,
                   predictions=result["predictions"])
        trained += 1
        progress(f"{cfg.label()} random seed {cfg.seed}: {result['summary']['seconds']:.1f} s")
    return trained
