"""The test images a switch flips: wrong under the selection and right under the baseline in most
paired random seeds (and the reverse), from the runs' stored per-image predictions.

Pairs are runs with the same random seed and train_rows, as everywhere (vitcore.stats.compare); runs
without `predictions.npy` are left out, and `n_pairs` says how many pairs were used. No TensorFlow.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vitcore.data.fashion import CLASS_NAMES

FLIP_COLUMNS = ["image", "true", "true_name", "direction", "pairs_flipped", "n_pairs", "predicted", "predicted_name"]
BROKEN = "selection wrong, baseline right"
FIXED = "selection right, baseline wrong"


def prediction_pairs(predictions, selection_runs: pd.DataFrame, baseline_runs: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray]]:
    """(selection, baseline) prediction arrays of every (train_rows, seed) pair where both runs kept
    them; `predictions(run_id)` returns a run's array or None."""
    matched = pd.merge(selection_runs[["train_rows", "seed", "run_id"]], baseline_runs[["train_rows", "seed", "run_id"]],
                       on=["train_rows", "seed"], suffixes=("_selection", "_baseline"))
    pairs = []
    for _, row in matched.sort_values(["train_rows", "seed"]).iterrows():
        sel, base = (predictions(row[f"run_id_{side}"]) for side in ("selection", "baseline"))
        if sel is not None and base is not None:
            pairs.append((sel, base))
    return pairs


def flipped_images(pairs: list[tuple[np.ndarray, np.ndarray]], labels: np.ndarray, min_share: float = 0.5) -> pd.DataFrame:
    """Images flipped in more than `min_share` of the pairs, in either direction, most flipped first.
    `predicted` is the class the wrong side chose most often in the flipped pairs."""
    if not pairs:
        return pd.DataFrame(columns=FLIP_COLUMNS)
    sel = np.stack([s for s, _ in pairs]).astype(np.int64)   # (pairs, 10,000)
    base = np.stack([b for _, b in pairs]).astype(np.int64)
    n = len(pairs)
    rows = []
    for direction, wrong_side, flipped in ((BROKEN, sel, (sel != labels) & (base == labels)),
                                           (FIXED, base, (sel == labels) & (base != labels))):
        counts = flipped.sum(axis=0)
        for image in np.flatnonzero(counts > min_share * n):
            chosen = np.bincount(wrong_side[flipped[:, image], image], minlength=len(CLASS_NAMES)).argmax()
            rows.append([int(image), int(labels[image]), CLASS_NAMES[labels[image]], direction, int(counts[image]), n,
                         int(chosen), CLASS_NAMES[chosen]])
    frame = pd.DataFrame(rows, columns=FLIP_COLUMNS)
    return frame.sort_values(["direction", "pairs_flipped", "image"], ascending=[False, False, True], ignore_index=True)
