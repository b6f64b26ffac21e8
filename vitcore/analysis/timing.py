"""The dedicated timing set, and (re-exported from vitcore.stats.seconds) which group a seconds mean uses.

The dedicated timing set (`python -m vitcore bench-timing`, `bench_timing`): the configs alternated pair by
pair (A B, B A, …) in one process, after one untimed warm-up round (so every timed run compiles alike:
one compile mode, one timing group), each run started only when the
machine is quiet (the other processes use under 10% of its CPU), into a store of its own (`timing_runs/`
beside the store: vitcore.config.environment.timing_path), context "reference". It needs an idle machine
for about 10 pairs; until it has been run the views use vitcore.stats.seconds' reference group (the
largest clean one) and say so.
"""

from __future__ import annotations

import time
from pathlib import Path

from vitcore.config import environment
from vitcore.config.run import RunConfig
from vitcore.stats.seconds import (  # noqa: F401
    CONTEXTS,
    REFERENCE,
    TIMED_PAIRS,
    context,
    group_text,
    one_group,
    ranked_groups,
    reference_group,
    seconds_summary,
)
from vitcore.store.runs import RunStore

TIMING_STORE = environment.timing_path(environment.REPOSITORY_STORE)  # beside the committed runs
QUIET_SHARE = 0.10  # a run of the timing set starts only when the machine's CPU is less busy than this


def interleaved(configs: list[RunConfig], pairs: int = TIMED_PAIRS) -> list[RunConfig]:
    """The timing set's order: random seed i of every config, the order reversed every other seed (A B, B A …),
    so a drift of the machine's speed falls on both sides alike."""
    if len(configs) < 2 or pairs < 2:
        raise ValueError("the timing set needs at least 2 configs and 2 pairs")
    order = []
    for seed in range(pairs):
        row = [cfg.replace(seed=seed) for cfg in configs]
        order += row if seed % 2 == 0 else row[::-1]
    return order


def cpu_share(seconds: float = 3.0) -> float:
    """The share of the machine's CPU in use over the next `seconds` (0 to 1), by every process: this one is idle
    while it measures, so what it sees is the others' work."""
    import psutil  # noqa: PLC0415 - psutil only when measuring, not at every CLI start

    return psutil.cpu_percent(interval=seconds) / 100


def wait_quiet(limit: float = QUIET_SHARE, most: float = 3600.0, poll: float = 15.0, busy=None,
               sleep=time.sleep) -> bool:
    """Wait until the machine's CPU is less busy than `limit` (True) or `most` seconds passed (False). Unlike
    the load average, which decays over minutes after this process's own last run, this sees only current work."""
    busy = busy or cpu_share
    waited = 0.0
    while busy() >= limit:
        if waited >= most:
            return False
        sleep(poll)
        waited += poll
    return True


def bench_timing(configs: list[RunConfig], pairs: int = TIMED_PAIRS, store_path: Path = TIMING_STORE,
                 progress=print) -> int:
    """Train the timing set (interleaved, one worker, each run on a quiet machine) into its own store; the runs'
    timing context is "reference". Returns how many runs were trained (a run already stored is kept).
    Its runs repeat the store's configs and random seeds at this machine's thread count, so their accuracies
    can differ a little from the store's runs (another summation order): they count for seconds only."""
    from vitcore.run.train import Trainer  # noqa: PLC0415 - TensorFlow

    store, trainer, trained = RunStore(store_path), Trainer(workers=1), 0
    order = [cfg for cfg in interleaved(configs, pairs) if store.get(cfg) is None]
    for cfg in dict.fromkeys(cfg.replace(seed=0) for cfg in order):  # the warm-up round: compiles, never stored
        progress(f"warm-up (not stored): {cfg.label()}")
        trainer.fit(cfg)
    for cfg in order:
        trainer = Trainer(workers=1, session=trainer.session)  # never the step of the run before: all compile alike
        if not wait_quiet():
            raise RuntimeError(f"the machine never went quiet (CPU under {QUIET_SHARE:.0%} busy) within an hour")
        result = trainer.fit(cfg, store=store)
        result["summary"]["timing"]["context"] = result["summary"]["timing"].get("context") or REFERENCE
        store.save(cfg, result["history"], result["confusion"], result["summary"], None,
                   predictions=result["predictions"])
        trained += 1
        progress(f"{cfg.label()} random seed {cfg.seed}: {result['summary']['seconds']:.1f} s")
    return trained
