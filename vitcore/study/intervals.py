"""The interval that goes with each verdict, for frames: what a chart draws, a table prints and a sentence says beside
a verdict, chosen once (vitcore.stats.plan.chosen, handed out as vitcore.study.words.chosen) and given to the views
under names no view has to choose from. The CSVs keep their own interval columns (the statistics' names); no module
of vitcore/app, vitcore/article, vitcore/cli or views/ names them (tests/test_intervals.py reads their source).

    frame = with_chosen(study.flip_effects(cfg))   # + chosen_low, chosen_high, chosen90_low, chosen90_high, chosen_kind

No Streamlit, no pandas import: a frame in, the same frame with the chosen columns out.
"""

from __future__ import annotations

import numpy as np

from vitcore.config.numbers import missing
from vitcore.study.words import chosen

# the 95% interval the verdict goes with, its 90% one (the equivalence test's), and the 95% one's name in full
LOW, HIGH, LOW90, HIGH90, KIND = "chosen_low", "chosen_high", "chosen90_low", "chosen90_high", "chosen_kind"
COLUMNS = [LOW, HIGH, LOW90, HIGH90, KIND]


def with_chosen(frame):
    """The frame with COLUMNS from each row's `chosen`: its 95% ends (simultaneous over a family of several, a plan's
    repeated CI at its look, else the row's own), its 90% ends (NaN where the row has none, e.g. a curve's Δs) and
    the 95% one's name ('95% CI over random seeds and test images', 'repeated CI at look 2 of 4, ×20')."""
    said = [chosen(row) for row in frame.to_dict("records")]
    ends = np.array([(*c.interval, *c.ninety) for c in said], dtype=float).reshape(len(said), 4)
    return frame.assign(**{name: ends[:, i] for i, name in enumerate(COLUMNS[:4])}, **{KIND: [c.kind for c in said]})


def beside_test_set(row) -> tuple[tuple, tuple] | None:
    """(the row's own 95% interval over random seeds and test images, the one over random seeds alone): both
    unadjusted, like for like, what a test accuracy card says the test images add; None where the row has no
    seed-only interval (no pair kept its predictions, or another metric)."""
    if missing(row.get("ci_low_seeds")):
        return None
    return (row["ci_low"], row["ci_high"]), (row["ci_low_seeds"], row["ci_high_seeds"])
