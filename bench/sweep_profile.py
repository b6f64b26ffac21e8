"""Where a reused run's seconds go in the sweep worker, phase by phase, beside its counted work (issue 40).

    python bench/sweep_profile.py [--rows 1000] [--runs 3] [--threads 2]

Trains the article's ViT (random seeds 3_000 on, a temporary store) through the sweep worker's own path
(`vitcore.run.sweep._train_chunk` → `Trainer.train`), the first run untimed (it traces and compiles), then
`--runs` reused runs with a wall-clock timer around each phase; prints each phase's median seconds, its
counted FLOPs and those FLOPs' seconds at this box's float32 matmul rate (measured first, same threads).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PHASES = ("data sample", "initialisation", "epoch loop", "validation", "test pass", "predictions",
          "files written", "other")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    from vitcore.run import spawn

    with spawn.imports():
        import vitcore.run.train as train
        from vitcore.config.run import RunConfig
        from vitcore.run import bench, sweep
        from vitcore.run.loop import Loop
        from vitcore.store.runs import RunStore
    threads = train.configure_tensorflow(args.threads)
    rate = bench.matmul_rate(threads)
    print(f"float32 matmul, {threads} threads: numpy {rate['numpy'] / 1e9:.1f} GFLOP/s, "
          f"XLA {rate['tensorflow'] / 1e9:.1f} GFLOP/s", flush=True)

    seconds: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = defaultdict(float)  # this process's CPU seconds (all its threads) per phase
    stack: list[str] = []

    @contextlib.contextmanager
    def phase(name: str):
        """Time spent in `name`, less what nested phases took (each second counted once)."""
        start, cpu_start = time.perf_counter(), time.process_time()
        stack.append(name)
        try:
            yield
        finally:
            stack.pop()
            spent, cpu_spent = time.perf_counter() - start, time.process_time() - cpu_start
            seconds[name] += spent
            cpu[name] += cpu_spent
            if stack:
                seconds[stack[-1]] -= spent
                cpu[stack[-1]] -= cpu_spent

    def timed(name, function):
        def wrapper(*a, **k):
            with phase(name):
                return function(*a, **k)
        return wrapper

    train.load_split = timed("data sample", train.load_split)
    train.model_inputs = timed("data sample", train.model_inputs)
    train.build_model = timed("initialisation", train.build_model)
    train.keras.utils.set_random_seed = timed("initialisation", train.keras.utils.set_random_seed)
    Loop.reset_optimizer = timed("initialisation", Loop.reset_optimizer)
    if hasattr(train.Trainer, "_initial_weights"):  # issue 40's second round: a reused run's weights replayed
        train.Trainer._initial_weights = timed("initialisation", train.Trainer._initial_weights)
    Loop.train_epoch = timed("epoch loop", Loop.train_epoch)
    Loop.evaluate = timed("validation", Loop.evaluate)
    predict = Loop.predict
    Loop.predict = lambda self, x: (predict(self, x) if stack and stack[-1] == "validation"
                                    else timed("test pass", predict)(self, x))
    for name in ("confusion_matrix", "log_loss"):
        setattr(train, name, timed("predictions", getattr(train, name)))
    train.Trainer.render = staticmethod(timed("files written", train.Trainer.render))
    train.RunStore.put = timed("files written", train.RunStore.put)

    cfg = RunConfig(train_rows=args.rows)
    configs = [cfg.replace(seed=3_000 + index) for index in range(args.runs + 1)]
    flops = bench.run_flops(cfg)
    work = {"epoch loop": flops["epochs"], "validation": flops["validation"], "test pass": flops["test"]}
    per_run: list[dict[str, float]] = []
    per_run_cpu: list[dict[str, float]] = []
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as store:
        sweep._train_chunk(configs[:1], store, threads, 1)  # traces and compiles (or loads) the cell: untimed
        for config in configs[1:]:
            seconds.clear()
            cpu.clear()
            with phase("other"):
                sweep._train_chunk([config], store, threads, 1)
            per_run.append(dict(seconds))
            per_run_cpu.append(dict(cpu))
        assert RunStore(store).get(configs[-1]).summary["timing"]["compile"] == "reused"
    load.append(os.getloadavg()[0])
    total = statistics.median(sum(run.values()) for run in per_run)
    print(f"the article's ViT, {args.rows:,} rows, {threads} threads, median of {args.runs} reused runs: "
          f"{total:.2f} s; counted {sum(work.values()) / 1e9:.0f} GFLOP = {sum(work.values()) / rate['best']:.2f} s "
          f"at {rate['best'] / 1e9:.1f} GFLOP/s: {total / (sum(work.values()) / rate['best']):.2f}x the floor; "
          f"CPU {statistics.median(sum(run.values()) for run in per_run_cpu):.2f} s; "
          f"load {load[0]:.1f} -> {load[1]:.1f}")
    print(f"{'phase':16s} {'seconds':>8s} {'CPU s':>7s} {'GFLOP':>7s} {'floor s':>8s} {'x floor':>8s}")
    for name in PHASES:
        spent = statistics.median(run.get(name, 0.0) for run in per_run)
        used = statistics.median(run.get(name, 0.0) for run in per_run_cpu)
        if name in work:
            floor_s = work[name] / rate["best"]
            print(f"{name:16s} {spent:8.3f} {used:7.3f} {work[name] / 1e9:7.1f} {floor_s:8.3f} {spent / floor_s:8.2f}")
        else:
            print(f"{name:16s} {spent:8.3f} {used:7.3f} {'-':>7s} {'-':>8s} {'-':>8s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
