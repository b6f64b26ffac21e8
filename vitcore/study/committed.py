"""What is measured once and committed with the package, not computed from a store: the BatchNorm diagnosis
(vitcore/analysis/bn.csv) and one attention layer's forward time (vitcore/analysis/attention_cost.csv), each read
once per state of its file (a file measured again is read again); and `diagnose_bn`, which measures the first again
from a store's BatchNorm runs (`python -m vitcore diagnose-bn`; TensorFlow, imported only then).

Not Study methods: a Study is one store state, and these numbers are the same whatever store is open. Frames are
handed out as copies: a caller may change its own.
"""

from __future__ import annotations

import functools

import pandas as pd

from vitcore.analysis import bn, cost
from vitcore.store.runs import RunStore

BN_FILE = bn.BN_CSV.name  # what diagnose-bn writes: bn.csv


def _stamp(path) -> int:
    return path.stat().st_mtime_ns if path.is_file() else 0


@functools.lru_cache(maxsize=2)
def _bn_read(stamp: int) -> pd.DataFrame | None:
    return bn.read_diagnosis(bn.BN_CSV)


def bn_diagnosis() -> pd.DataFrame | None:
    """The committed BatchNorm diagnosis (analysis.bn.read_diagnosis of vitcore/analysis/bn.csv), or None before it
    is measured; read again when the file changes."""
    found = _bn_read(_stamp(bn.BN_CSV))
    return None if found is None else found.copy()


def diagnose_bn(store: RunStore, progress=None) -> pd.DataFrame:
    """The diagnosis table of a store's BatchNorm ViT runs that kept their weights (analysis.bn.diagnose_bn: test
    accuracy with stored, debiased and re-estimated BatchNorm statistics), in bn.csv's columns; progress(done, total,
    row) after each run (its words: vitcore.study.words.bn_text). ValueError when the store holds no such run."""
    if not bn.bn_runs(store):
        raise ValueError(f"no BatchNorm ViT runs with weights in {store.root} (weights are kept for random seed 0)")
    return bn.diagnose_bn(store, progress=progress)


@functools.lru_cache(maxsize=2)
def _bench_read(stamp: int):
    bench = cost.load_attention_bench()
    if bench is None:
        return None
    a, b, r2 = cost.quadratic_fit(bench["tokens"], bench["median_ms"])
    slope = cost.loglog_slope(bench["tokens"], bench["median_ms"])
    return bench, cost.with_n2_curve(bench), {"a": a, "b": b, "r2": r2, "slope": slope}


def attention_bench() -> tuple[pd.DataFrame, pd.DataFrame, dict] | None:
    """(the committed attention measurements, the chart's long frame with the a + b·N² fit, the fit: a, b, r2 and
    the log-log slope) from analysis/attention_cost.csv (cost.load_attention_bench), or None before it is
    measured; read again when the file changes."""
    found = _bench_read(_stamp(cost.BENCH_CSV))
    return None if found is None else (found[0].copy(), found[1].copy(), dict(found[2]))
