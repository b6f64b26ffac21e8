"""The floor of a run: its counted FLOPs at this machine's sustained float32 matmul rate.

A run cannot take less wall time than its multiply-adds (vitcore.model.work, ×2 for FLOPs) at the
rate the box's cores multiply large float32 matrices; `× the floor` is a run's seconds over that. The
rate is measured here, not looked up: the same process, the same threads, the same moment's load.
"""

from __future__ import annotations

import time

from vitcore.config.run import RunConfig, full_batches
from vitcore.model.work import macs

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
    import numpy as np
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).standard_normal((side, side), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((side, side), dtype=np.float32)
    flops = 2.0 * side ** 3
    calls = {"numpy": lambda: np.matmul(a, b)}
    if "tensorflow" in backends:
        import tensorflow as tf

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
