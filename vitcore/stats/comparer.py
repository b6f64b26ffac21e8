"""The one shape the article's and the analyses' tables ask for a comparison through: a `Comparer`.

`vitcore.study.Study.compare` is one (measured once per store state, judged at each margin); `uncached(runs,
test_set)` is the engine over a table in hand, measuring again on every call (a test, a one-off script). The
article's report and claims and the data-size curve take a Comparer, so every view's Δ comes from the same
engine with the same test set, cached when a Study hands it in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pandas as pd

from vitcore.config.run import RunConfig
from vitcore.stats import compare as engine


class Comparer(Protocol):
    """selection − baseline on `metrics`, judged at `margin`, as stats.compare.Comparison (its .metrics, .pairs)."""

    def __call__(self, selection: RunConfig, baseline: RunConfig, margin: float,
                 metrics: Sequence[str]) -> engine.Comparison: ...


def uncached(runs: pd.DataFrame, test_set=None, plans=()) -> Comparer:
    """stats.compare.compare over `runs` (with the store's `test_set`: test accuracy's interval includes the test
    set's sampling; `plans`: the plans that may judge a comparison, in lead order), measured again on every call: a
    Study's `compare` is the cached one."""
    def comparer(selection: RunConfig, baseline: RunConfig, margin: float,
                 metrics: Sequence[str]) -> engine.Comparison:
        return engine.compare(runs, selection, baseline, margin, metrics=metrics, test_set=test_set, plans=plans)
    return comparer


def or_uncached(compare: Comparer | None, runs: pd.DataFrame, test_set=None) -> Comparer:
    """`compare` when one is handed in (a Study's), else `uncached(runs, test_set)`."""
    return compare if compare is not None else uncached(runs, test_set)
