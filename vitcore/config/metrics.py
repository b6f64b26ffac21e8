"""The metric names, once: what a run stores and what the statistics compare; and the margin's one rule.

SUMMARY: the metrics every run's summary.json holds, in the runs table's (runs.csv's) column order.
COMPARED: the metrics the statistics compare by default (effects, flips, `compare`), in display order.
JUDGED: every metric a Δ may be taken over (each has a good direction: vitcore.stats.estimates.HIGHER_IS_BETTER).
`checked` and `checked_margin` are what the public API (vitcore.study.Study) and the CLI refuse, in one message.
"""

from __future__ import annotations

from numbers import Real

SUMMARY = ("test_loss", "test_accuracy", "best_val_accuracy", "best_epoch", "final_train_accuracy",
           "final_val_accuracy", "gap", "params", "seconds")
COMPARED = ("test_accuracy", "best_val_accuracy", "final_train_accuracy", "gap", "seconds")
JUDGED = COMPARED + ("final_val_accuracy", "test_loss", "params")  # best_epoch: no good direction, no Δ


def checked(metrics) -> tuple[str, ...]:
    """`metrics` (one name or several) as a tuple; ValueError listing JUDGED for a name no Δ is taken over (a
    misspelt name used to surface as a KeyError deep in a DataFrame, without the names that work)."""
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    for name in names or ("",):
        if name not in JUDGED:
            raise ValueError(f"metric {name!r} is not one of {', '.join(JUDGED)}")
    return names


def checked_margin(margin) -> float:
    """The equivalence margin for accuracies and the gap, strictly between 0 and 1 (the CLI's --margin rule);
    ValueError otherwise: a margin of 0 or below makes every equivalence test fail, 1 or more makes it vacuous."""
    if isinstance(margin, bool) or not isinstance(margin, Real) or not 0 < margin < 1:
        raise ValueError(f"margin must be between 0 and 1 (exclusive), got {margin!r}")
    return float(margin)
