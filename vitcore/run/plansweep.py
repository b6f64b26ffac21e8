"""`sweep plan NAME` on local workers: train a registered plan until every question is decided or at its cap,
re-planning as each chunk finishes, so a question's next look starts while a slow cell (patch 2) still trains.

One worker lane takes the most expensive chunk left (the slowest cells start at once), the others the cheapest
(vitcore.run.order.schedule's rule, applied as workers free up). After every finished chunk the plan is judged
again on the store (vitcore.run.planned.next_configs: the views' own verdicts) and what it asks for next, less
what is stored or training, is queued. Resumable as every sweep: a stored run is never trained again.
"""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context

from vitcore.run import planned
from vitcore.run.order import chunks, cost, pending
from vitcore.run.overlap import new_session
from vitcore.run.spawn import neutral_main, worker_start
from vitcore.run.sweep import _finished, _train_chunk
from vitcore.store.runs import RunStore


def run_plan(store: RunStore, name: str | None, workers: int = 1, progress=None, rows=None, seeds=None) -> list[dict]:
    """Train the plan `name` (None: the built-in one) in `store` until nothing more is asked; `rows` / `seeds`
    (low, high) restrict what is trained. Returns the results of the runs trained now."""
    threads = max(1, (os.cpu_count() or 1) // workers)
    session, results, lanes = new_session(), [], {}  # lanes: future -> (lane, its configs)

    def asked() -> list[list]:
        busy = {cfg for _, configs in lanes.values() for cfg in configs}
        todo = [cfg for cfg in pending(planned.next_configs(store, name), store) if cfg not in busy
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
