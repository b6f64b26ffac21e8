"""Benchmarks (never timed tests): training speed vs a plain `model.fit`, and the store's table().

    python -m vitcore bench            # 3 side-by-side pairs (seeds 0-2) of whole-process wall times
    python -m vitcore bench --what cache   # the same run with the persistent compile cache off vs warm
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from vitcore.config.run import RunConfig, full_batches
from vitcore.config.switches import PAPER_VARIANTS
from vitcore.data.fashion import load_split
from vitcore.data.patches import model_inputs
from vitcore.model.work import macs
from vitcore.run.sweep import run_sweep
from vitcore.store.runs import INDEX, RunStore

PACKAGE_PARENT = Path(__file__).resolve().parents[2]  # where `python -m vitcore…` finds this vitcore


def _timed(cmd: list[str]) -> tuple[float, str]:
    """Wall seconds and stdout of `cmd`, which imports this very package (a checkout or an install)."""
    path = os.pathsep.join(filter(None, [str(PACKAGE_PARENT), os.environ.get("PYTHONPATH")]))
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": path})
    return time.perf_counter() - start, done.stdout


def bench_training(repeats: int = 3) -> int:
    """Alternate the plain script and `python -m vitcore run` (fresh store each time), pair i with
    seed i on both sides, and report median whole-process wall times, their ratio, and each metric's
    mean over the seeds (one seed's difference is mostly shuffle luck: the seed sd of test accuracy
    is ~0.01 at 4,000 rows)."""
    plain_times, ours_times, plain, ours = [], [], [], []
    for seed in range(repeats):
        seconds, out = _timed([sys.executable, "-m", "vitcore.run.plain_fit", str(seed)])
        plain_times.append(seconds)
        plain.append(json.loads(out.strip().splitlines()[-1]))
        with tempfile.TemporaryDirectory() as store:
            seconds, _ = _timed([sys.executable, "-m", "vitcore", "run", "--seed", str(seed), "--store", store])
            ours_times.append(seconds)
            ours.append(json.loads(next(Path(store).glob("*/summary.json")).read_text()))
        print(f"pair {seed + 1} (seed {seed}): plain model.fit {plain_times[-1]:.1f} s, "
              f"vitcore run {ours_times[-1]:.1f} s", flush=True)
    ratio = statistics.median(ours_times) / statistics.median(plain_times)
    print(f"median wall: plain {statistics.median(plain_times):.1f} s, vitcore {statistics.median(ours_times):.1f} s, "
          f"ratio {ratio:.2f} (goal <= 0.40)")
    for key in ("best_val_accuracy", "final_train_accuracy", "test_accuracy"):
        a, b = [run[key] for run in plain], [run[key] for run in ours]
        print(f"{key} over seeds 0-{repeats - 1}: plain {_mean_sd(a)}, vitcore {_mean_sd(b)}, "
              f"diff of means {statistics.mean(b) - statistics.mean(a):+.4f} (goal within ±0.01)")
    return 0


def _mean_sd(values: list[float]) -> str:
    spread = f" ± {statistics.stdev(values):.4f}" if len(values) > 1 else ""
    return f"{statistics.mean(values):.4f}{spread}"


def bench_table(runs: int = 10_000) -> float:
    """Seconds for RunStore.table() over `runs` synthetic valid runs (a real run's layout and sizes)."""
    epochs = RunConfig().epochs
    history = [{"epoch": e, "loss": 1.0 / e, "accuracy": 0.5 + e / 100, "val_loss": 1.0 / e, "val_accuracy": 0.5,
                "lr": 1e-3, "seconds": 1.0} for e in range(1, epochs + 1)]
    confusion = np.full((10, 10), 50, dtype=int) + np.eye(10, dtype=int) * 500  # rows sum to 1,000; trace 10,000 * 0.55
    metrics = {"test_loss": 1.0, "test_accuracy": 0.55, "best_val_accuracy": 0.5, "best_epoch": 1,
               "final_train_accuracy": history[-1]["accuracy"], "final_val_accuracy": 0.5,
               "gap": history[-1]["accuracy"] - 0.5, "params": 71_946, "seconds": 15.0,
               "per_class_accuracy": [0.55] * 10}
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(folder)
        for seed in range(runs):
            store.save(RunConfig(seed=seed), history, confusion, metrics)
        (store.root / INDEX).unlink(missing_ok=True)
        times = []
        for _ in range(4):  # the first call reads every summary and writes the index
            start = time.perf_counter()
            table = store.table()
            times.append(time.perf_counter() - start)
        assert len(table) == runs
    warm = statistics.median(times[1:])
    print(f"table() over {runs:,} runs: cold (no index) {times[0]:.2f} s, warm median {warm:.2f} s of 3 (goal <= 1 s)")
    return warm


def bench_workers(runs: int = 6) -> dict[int, float]:
    """Runs/hour of the local sweep pool with 1 and with 2 workers, on `runs` fresh configs each
    (the article's ViT at 1,000 rows with unused seeds), process start-up and TF import included."""
    rates = {}
    for workers in (1, 2):
        configs = [RunConfig(train_rows=1_000, seed=1_000 * workers + index) for index in range(runs)]
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            run_sweep(configs, RunStore(folder), workers=workers)
            seconds = time.perf_counter() - start
        rates[workers] = runs / seconds * 3600
        print(f"{workers} worker(s): {runs} runs in {seconds:.0f} s = {rates[workers]:.0f} runs/hour", flush=True)
    print(f"2 workers / 1 worker: {rates[2] / rates[1]:.2f}x")
    return rates


def bench_sweep(rows=(1_000, 4_000), runs: int = 4, repeats: int = 2) -> dict[int, float]:
    """Runs/hour of the sweep worker (one process, compiled once per cell) against one
    `python -m vitcore run` process per run, side by side (A B A B) on the same run list: the
    article's ViT with unused random seeds, at the same thread count. Beside it, each reused run's
    seconds ÷ its floor (floor_seconds below: its counted FLOPs at this box's float32 matmul rate on the same
    threads, measured here before every pair and after the last: the highest counts). Returns the median ratio
    (worker runs/hour ÷ process-per-run runs/hour) per row count."""
    threads = str(os.cpu_count() or 1)  # what run_sweep gives 1 worker
    ratios = {}
    for train_rows in rows:
        configs = [RunConfig(train_rows=train_rows, seed=2_000 + index) for index in range(runs)]
        # The box's matmul rate moves with its host's other load (it can more than halve within minutes): measured
        # before every pair and after the last, the floor takes the highest (what the cores can do, a strict floor).
        rates: list[float] = []

        def measure(when: str) -> None:
            rates.append(matmul_rate(int(threads), backends=("numpy",))["best"])
            print(f"{train_rows:,} rows, {when}: float32 matmul {rates[-1] / 1e9:.0f} GFLOP/s on {threads} threads "
                  f"(NumPy's BLAS; load {os.getloadavg()[0]:.1f})", flush=True)

        worker, fresh, reused = [], [], []
        for pair in range(repeats):
            measure(f"before pair {pair + 1}")
            with tempfile.TemporaryDirectory() as folder:
                start = time.perf_counter()
                run_sweep(configs, RunStore(folder), workers=1)
                worker.append(runs / (time.perf_counter() - start) * 3600)
                summaries = [RunStore(folder).get(cfg).summary for cfg in configs]
                reused += [s["seconds"] for s in summaries if s["timing"]["compile"] == "reused"]
            with tempfile.TemporaryDirectory() as folder:
                start = time.perf_counter()
                for cfg in configs:
                    subprocess.run([sys.executable, "-m", "vitcore", "run", "--train-rows", str(train_rows),
                                    "--seed", str(cfg.seed), "--store", folder], check=True, capture_output=True,
                                   env={**os.environ, "VITCORE_THREADS": threads})
                fresh.append(runs / (time.perf_counter() - start) * 3600)
            print(f"{train_rows:,} rows: worker {worker[-1]:.0f} runs/hour, one process per run {fresh[-1]:.0f} "
                  f"runs/hour (load {os.getloadavg()[0]:.1f})", flush=True)
        measure("after the pairs")
        best, counted = max(rates), sum(run_flops(configs[0]).values())
        print(f"{train_rows:,} rows: a run's counted {counted / 1e9:.0f} GFLOP at the highest rate, {best / 1e9:.0f} "
              f"GFLOP/s: floor {floor_seconds(configs[0], best):.2f} s", flush=True)
        ratios[train_rows] = statistics.median(w / f for w, f in zip(worker, fresh))
        for line in sweep_report(configs[0], worker, fresh, reused, best):
            print(line, flush=True)
    return ratios


def sweep_report(cfg: RunConfig, worker: list[float], fresh: list[float], reused: list[float],
                 rate: float) -> list[str]:
    """bench_sweep's summary of one row count: the worker's runs/hour against one process per run (pairs in
    order), the cell's time as a multiple of the processes', and each reused run's seconds × its floor at `rate`
    FLOP/s (the floor, below), then their median."""
    ratio = statistics.median(w / f for w, f in zip(worker, fresh, strict=True))
    rows = f"{cfg.train_rows:,} rows"
    lines = [f"{rows}, {len(worker)} side-by-side pairs: worker median {statistics.median(worker):.0f} runs/hour "
             f"(min {min(worker):.0f}, max {max(worker):.0f}), one process per run {statistics.median(fresh):.0f} "
             f"(min {min(fresh):.0f}, max {max(fresh):.0f}); median ratio {ratio:.2f}x (goal >= 2x), cell time "
             f"{1 / ratio:.2f}x the processes' (goal <= 0.40)"]
    if reused:
        times = [times_floor(seconds, cfg, rate) for seconds in reused]
        each = ", ".join(f"{seconds:.2f} s = {times:.2f}x" for seconds, times in zip(reused, times))
        lines.append(f"{rows}, {len(reused)} reused runs (floor {floor_seconds(cfg, rate):.2f} s): {each}; "
                     f"median {statistics.median(reused):.2f} s = {statistics.median(times):.2f}x the floor "
                     f"(goal <= 2.5x)")
    return lines


def bench_cache(repeats: int = 3, rows: int = 4_000) -> float:
    """Whole `python -m vitcore run` processes (the article's ViT at `rows` rows) with the persistent compile
    cache (vitcore.run.compile_cache) off and warm, side by side (off, warm, off, warm...; an untimed first
    run fills a fresh cache), random seeds 0 to repeats - 1 on both sides. Prints median wall and CPU seconds
    (user + sys: less sensitive to other load) of each side; returns the median wall saving per process."""
    def one(setting: str, seed: int) -> tuple[float, float]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with tempfile.TemporaryDirectory() as store:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "vitcore", "run", "--train-rows", str(rows), "--seed", str(seed),
                            "--store", store], check=True, capture_output=True,
                           env={**os.environ, "VITCORE_XLA_CACHE": setting, "PYTHONPATH": os.pathsep.join(
                               filter(None, [str(PACKAGE_PARENT), os.environ.get("PYTHONPATH")]))})
            wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime

    times: dict[str, list[tuple[float, float]]] = {"off": [], "warm": []}
    with tempfile.TemporaryDirectory() as cache:
        one(cache, repeats)  # compiles and stores the programs: untimed
        for seed in range(repeats):
            for side, setting in (("off", "off"), ("warm", cache)):
                times[side].append(one(setting, seed))
            print(f"pair {seed + 1} (seed {seed}): cache off {times['off'][-1][0]:.1f} s wall, "
                  f"{times['off'][-1][1]:.1f} s CPU; warm {times['warm'][-1][0]:.1f} s, {times['warm'][-1][1]:.1f} s",
                  flush=True)
    wall, cpu = ({side: statistics.median(t[i] for t in times[side]) for side in times} for i in (0, 1))
    print(f"median per process: wall {wall['off']:.1f} s off, {wall['warm']:.1f} s warm (saves "
          f"{wall['off'] - wall['warm']:.1f} s); CPU {cpu['off']:.1f} s off, {cpu['warm']:.1f} s warm "
          f"(saves {cpu['off'] - cpu['warm']:.1f} s)")
    return wall["off"] - wall["warm"]


def bench_papers(repeats: int = 3, rows: int = 4_000) -> dict[str, float]:
    """Median seconds of one training epoch (`rows` rows, batch 64, compiled) of the article's ViT and each
    papers' variant (vitcore.config.switches), measured round-robin in one process so load hits all alike;
    prints each median and its ratio to the article's ViT. Returns variant -> median seconds."""
    from vitcore.model.build import build_model  # noqa: PLC0415 - TensorFlow
    from vitcore.run.loop import Loop  # noqa: PLC0415 - TensorFlow
    from vitcore.run.train import _optimizer, configure_tensorflow  # noqa: PLC0415 - TensorFlow

    configure_tensorflow()
    loops = {}
    for name, changes in {"the article's ViT": {}, **PAPER_VARIANTS}.items():
        cfg = RunConfig(train_rows=rows, **changes)
        data = load_split(cfg.train_rows, cfg.seed)
        x = model_inputs(cfg, data.x_train)
        loop = Loop(build_model(cfg), _optimizer(cfg, len(x) // cfg.batch_size))
        order = np.random.default_rng(0).permutation(len(x))
        loop.train_epoch(x, data.y_train, order, cfg.batch_size)  # trace and compile, untimed
        loops[name] = (loop, x, data.y_train, order, cfg.batch_size)
    times: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(repeats):
        for name, (loop, x, y, order, batch) in loops.items():
            start = time.perf_counter()
            loop.train_epoch(x, y, order, batch)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["the article's ViT"]
    for name, value in medians.items():
        print(f"{name:18s} one epoch of {rows:,} rows: median {value:.2f} s over {repeats} "
              f"(range {min(times[name]):.2f}-{max(times[name]):.2f}), {value / base:.2f}x the article's ViT",
              flush=True)
    return medians


# The floor of a run: its counted FLOPs at this machine's sustained float32 matmul rate.
#
# A run cannot take less wall time than its multiply-adds (vitcore.model.work, ×2 for FLOPs) at the
# rate the box's cores multiply large float32 matrices; `× the floor` is a run's seconds over that. The
# rate is measured here, not looked up: the same process, the same threads, the same moment's load.

VAL_ROWS, TEST_ROWS = 5_000, 10_000  # vitcore.data.fashion's fixed validation set and the official test split


def run_flops(cfg: RunConfig) -> dict[str, float]:
    """Counted FLOPs of one run of cfg, phase by phase: the training epochs (forward + backward ≈ 3×
    the forward pass, over the full batches actually trained), the validation passes, the test pass."""
    steps, batch = full_batches(cfg.train_rows, cfg.batch_size)
    forward = 2.0 * macs(cfg)  # FLOPs of one image's forward pass
    return {"epochs": cfg.epochs * steps * batch * 3 * forward,
            "validation": cfg.epochs * VAL_ROWS * forward,
            "test": TEST_ROWS * forward}


def floor_seconds(cfg: RunConfig, rate: float) -> float:
    """The least wall time a run of cfg can take: its counted FLOPs (run_flops) at `rate` FLOP/s."""
    return sum(run_flops(cfg).values()) / rate


def times_floor(seconds: float, cfg: RunConfig, rate: float) -> float:
    """A run of cfg that took `seconds`, in multiples of its floor at `rate` FLOP/s ("× the floor")."""
    return seconds / floor_seconds(cfg, rate)


def matmul_rate(threads: int, side: int = 2_048, seconds: float = 2.0,
                backends: tuple[str, ...] = ("numpy", "tensorflow")) -> dict[str, float]:
    """Sustained float32 FLOP/s of square matmuls (side × side) on `threads` cores, by NumPy's BLAS and by
    TensorFlow's XLA-compiled matmul (configure TensorFlow first: its intra-op pool is then the run's), and
    the best of them ("best"). Each is repeated for about `seconds` after one untimed warm-up call; the best
    of three windows counts (a rate the box sustains, not its average under other load)."""

    a = np.random.default_rng(0).standard_normal((side, side), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((side, side), dtype=np.float32)
    flops = 2.0 * side ** 3
    calls = {"numpy": lambda: np.matmul(a, b)}
    if "tensorflow" in backends:
        import tensorflow as tf  # noqa: PLC0415 - TensorFlow

        xla = tf.function(lambda x, y: tf.linalg.matmul(x, y), jit_compile=True)
        ta, tb = tf.constant(a), tf.constant(b)
        calls["tensorflow"] = lambda: xla(ta, tb).numpy()

    rates = {}
    with threadpool_limits(limits=threads, user_api="blas"):
        for name in backends:
            call = calls[name]
            call()
            best = 0.0
            for _ in range(3):
                count, start = 0, time.perf_counter()
                while time.perf_counter() - start < seconds / 3:
                    call()
                    count += 1
                best = max(best, count * flops / (time.perf_counter() - start))
            rates[name] = best
    rates["best"] = max(rates.values())
    return rates
