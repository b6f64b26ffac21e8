"""Flipped images from per-image predictions, and the data-size curve's sign-change sentence."""

import numpy as np
import pandas as pd
from fakes import run_row, runs_table

from vitcore.analysis import flips, scaling
from vitcore.config.run import RunConfig


def test_flipped_images_count_pairs_in_each_direction():
    labels = np.array([0, 1, 2, 3, 4] * 2)
    base = labels.copy()
    sel = labels.copy()
    sel[0] = 6                     # broken in every pair
    base2 = base.copy()
    base2[3] = 5                   # fixed in one pair of three: not "most"
    base3 = base.copy()
    base3[4] = 9
    base3[3] = 5
    pairs = [(sel, base), (sel, base2), (sel.copy(), base3)]
    frame = flips.flipped_images(pairs, labels)
    broken = frame[frame["direction"] == flips.BROKEN]
    fixed = frame[frame["direction"] == flips.FIXED]
    assert broken["image"].tolist() == [0] and broken.iloc[0]["pairs_flipped"] == 3 and broken.iloc[0]["predicted"] == 6
    assert fixed["image"].tolist() == [3] and fixed.iloc[0]["pairs_flipped"] == 2 and fixed.iloc[0]["predicted"] == 5
    assert (frame["n_pairs"] == 3).all()
    assert flips.flipped_images([], labels).empty


def test_prediction_pairs_skip_runs_without_predictions():
    sel = pd.DataFrame({"train_rows": [1000, 1000, 4000], "seed": [0, 1, 0], "run_id": ["s0", "s1", "s4"]})
    base = pd.DataFrame({"train_rows": [1000, 1000, 1000], "seed": [0, 1, 2], "run_id": ["b0", "b1", "b2"]})
    stored = {"s0": np.zeros(3), "b0": np.ones(3), "s1": np.zeros(3)}  # b1 has none
    pairs = flips.prediction_pairs(stored.get, sel, base)
    assert len(pairs) == 1 and pairs[0][1][0] == 1


def test_crossover_is_stated_only_when_the_intervals_resolve_it():
    rows = []
    for rows_, lead in ((1000, 0.03), (4000, 0.0), (16000, -0.03)):
        for seed in range(6):
            noise = 0.002 * ((seed * 7) % 5 - 2)
            rows.append(run_row(RunConfig(train_rows=rows_, seed=seed), test_accuracy=0.8 + lead + noise,
                                final_val_accuracy=0.8 + lead + noise))
            rows.append(run_row(RunConfig(model="convnet", train_rows=rows_, seed=seed), test_accuracy=0.8,
                                final_val_accuracy=0.8))
    frame = scaling.deltas(runs_table(rows))
    text = scaling.crossover(frame)
    assert "changes sign between 4,000 and 16,000" not in text and "between 1,000 and 16,000" in text
    curve = scaling.curve(runs_table(rows))
    assert set(curve["train_rows"]) == {1000, 4000, 16000} and (curve["n"] == 6).all()
    flat = scaling.crossover(frame[frame["train_rows"] == 4000])
    assert "No resolved change of sign" in flat and "neither model leads" in flat
