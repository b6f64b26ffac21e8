"""The test images a switch flips, against what random-seed noise alone flips.

Pairs are runs with the same random seed and train_rows (as in vitcore.stats.compare); runs without
`predictions.npy` are left out and `n_pairs` says how many pairs were used. For each test image and
pair the image is *newly wrong* (selection wrong, baseline right), *newly right* (the reverse) or
neither. Two different random seeds of one config already disagree on hundreds of images, so a count
of "images flipped in most pairs" means nothing without its null:

- per image, the exact sign test (McNemar's test over the pairs): under "the switch changes nothing"
  the two runs of a pair are exchangeable, so of the d pairs where the image is discordant the number
  newly wrong is Binomial(d, 1/2). No p-value can be below 2 / 2^d, so only images discordant in at
  least MIN_DISCORDANT pairs can ever reach q < 5%: those are tested (filtering on d, which carries
  no information on the direction, keeps the false-discovery rate; Gilbert 2005), the others get no
  q. p-values are Benjamini-Hochberg adjusted over the tested images (q); an image is *listed* when
  q < 5%. Fewer than MIN_PAIRS (= MIN_DISCORDANT) pairs can list nothing: the gallery says so
  instead of ranking images.
- null counts for the old "flipped in more than half of the pairs" rule: expected under the same
  sign-swap null (exact, no simulation; it conditions on each image's discordant pairs), measured on
  the baseline against itself over disjoint random-seed pairs (seeds 0-1, 2-3, ...), and expected
  from that baseline-against-itself flip rate at the comparison's own number of pairs (a binomial
  model per image: what random seeds alone list with this many pairs).
- per pair, McNemar's counts (newly wrong / newly right over all 10,000 images) and its exact test.

No TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from vitcore.data.fashion import CLASS_NAMES

BROKEN = "selection wrong, baseline right"
FIXED = "selection right, baseline wrong"
TIED = "as often each way"
DIRECTIONS = (BROKEN, FIXED)
FDR = 0.05  # Benjamini-Hochberg level for listing an image
# The fewest discordant pairs whose smallest possible p-value (2 / 2^d) is below FDR: 6 at 5%. Below
# MIN_PAIRS pairs no image can be listed, so the gallery does not rank images.
MIN_DISCORDANT = int(np.ceil(np.log2(2 / FDR)))
MIN_PAIRS = MIN_DISCORDANT
FLIP_COLUMNS = ["image", "true", "true_name", "direction", "newly_wrong", "newly_right", "n_pairs", "flip_rate",
                "null_rate", "seed_null_rate", "p_value", "q_value", "listed", "predicted", "predicted_name"]
PAIR_COLUMNS = ["train_rows", "seed", "newly_wrong", "newly_right", "p_value"]


@dataclass(frozen=True)
class Paired:
    """The per-image predictions of the pairs that kept them: keys (train_rows, seed per pair),
    selection and baseline as (pairs, 10,000) int arrays, and `baseline_alone`: every baseline run
    with predictions (for the baseline-against-itself null), (runs, 10,000)."""
    keys: pd.DataFrame
    selection: np.ndarray
    baseline: np.ndarray
    baseline_alone: np.ndarray

    @property
    def n(self) -> int:
        return len(self.keys)


def paired_predictions(predictions, selection_runs: pd.DataFrame, baseline_runs: pd.DataFrame) -> Paired:
    """Match the two sides' runs on (train_rows, seed) and load both predictions where both kept them;
    `predictions(run_id)` returns a run's (10,000,) array or None."""
    base_cols = ["train_rows", "seed", "run_id"]
    matched = pd.merge(selection_runs[base_cols], baseline_runs[base_cols], on=["train_rows", "seed"],
                       suffixes=("_selection", "_baseline")).sort_values(["train_rows", "seed"])
    keys, sel, base = [], [], []
    for row in matched.itertuples(index=False):
        s, b = predictions(row.run_id_selection), predictions(row.run_id_baseline)
        if s is not None and b is not None:
            keys.append((int(row.train_rows), int(row.seed)))
            sel.append(np.asarray(s, dtype=np.int64))
            base.append(np.asarray(b, dtype=np.int64))
    alone = [np.asarray(p, dtype=np.int64) for run_id in baseline_runs.sort_values(["train_rows", "seed"])["run_id"]
             if (p := predictions(run_id)) is not None]
    width = len(sel[0]) if sel else (len(alone[0]) if alone else 0)

    def table(arrays) -> np.ndarray:  # (runs, images); (0, width) when no run kept its predictions
        return np.array(arrays, dtype=np.int64).reshape(len(arrays), width)

    return Paired(pd.DataFrame(keys, columns=["train_rows", "seed"]), table(sel), table(base), table(alone))


def sign_test(k, d) -> np.ndarray:
    """Two-sided exact sign test (McNemar's exact test): P of a split at least as uneven as k of d under
    Binomial(d, 1/2); 1 where d = 0. Vectorised over arrays of counts."""
    k, d = np.asarray(k, dtype=float), np.asarray(d, dtype=float)
    tail = np.minimum(stats.binom.cdf(k, d, 0.5), stats.binom.sf(k - 1, d, 0.5))
    return np.where(d > 0, np.minimum(1.0, 2 * tail), 1.0)


def benjamini_hochberg(p) -> np.ndarray:
    """Benjamini-Hochberg q-values (step-up, monotone) of a family of p-values."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


def majority_count(newly: np.ndarray, n: int) -> int:
    """The old listing rule: images flipped (this way) in more than half of the n pairs."""
    return int((newly > n / 2).sum())


def expected_majority(discordant: np.ndarray, n: int) -> float:
    """The majority rule's expected count per direction under the sign-swap null: sum over images of
    P(Binomial(d, 1/2) > n/2) for each image's d discordant pairs."""
    return float(stats.binom.sf(np.floor(n / 2), discordant, 0.5).sum()) if n else 0.0


def seed_null(alone: np.ndarray, labels: np.ndarray) -> tuple[int, dict[str, int]]:
    """The baseline against itself over disjoint random-seed pairs (runs 0-1, 2-3, ... in seed order):
    (pairs, majority-rule count per direction). By symmetry both directions measure the same noise. flip_report
    passes the first 2n runs, so the count is taken at no more pairs than the comparison's n (the majority rule's
    count falls as pairs are added: 20 pairs against 10 would understate the noise)."""
    m = len(alone) // 2
    if m == 0:
        return 0, {}
    right = alone == labels
    first, second = right[0:2 * m:2], right[1:2 * m:2]
    return m, {BROKEN: majority_count((~first & second).sum(axis=0), m),
               FIXED: majority_count((first & ~second).sum(axis=0), m)}


@dataclass(frozen=True)
class FlipReport:
    """Every image discordant in at least one pair (FLIP_COLUMNS), the per-pair McNemar counts
    (PAIR_COLUMNS) and the counts against their nulls: `observed` / `expected_null` (majority rule,
    per direction), `seed_null` (the same rule on the baseline against itself over `seed_null_pairs`
    disjoint random-seed pairs)."""
    images: pd.DataFrame
    pairs: pd.DataFrame
    n_pairs: int
    observed: dict
    expected_null: dict
    seed_null_pairs: int
    seed_null: dict
    seed_null_expected: float = np.nan

    @property
    def enough(self) -> bool:
        """Enough pairs that the per-image test can separate a switch from random-seed noise."""
        return self.n_pairs >= MIN_PAIRS

    @property
    def listed(self) -> pd.DataFrame:
        """The images whose flips beat the null (BH q < FDR), most significant first."""
        return self.images[self.images["listed"]]


def flip_report(paired: Paired, labels: np.ndarray) -> FlipReport:
    """The flip statistics of a comparison's prediction pairs (see the module docstring)."""
    labels = np.asarray(labels, dtype=np.int64)
    n = paired.n
    if not n and paired.selection.shape[1] != len(labels):  # no run on either side kept its predictions
        empty = np.zeros((0, len(labels)), dtype=np.int64)
        paired = Paired(paired.keys, empty, empty, empty)
    sel_right, base_right = paired.selection == labels, paired.baseline == labels    # (pairs, images)
    wrong_new, right_new = ~sel_right & base_right, sel_right & ~base_right
    b, c = wrong_new.sum(axis=0), right_new.sum(axis=0)                              # (images,)
    d = b + c
    pairs = pd.DataFrame({**{k: paired.keys[k].to_numpy() for k in ("train_rows", "seed")},
                          "newly_wrong": wrong_new.sum(axis=1), "newly_right": right_new.sum(axis=1)})
    pairs["p_value"] = sign_test(pairs["newly_wrong"], pairs["newly_wrong"] + pairs["newly_right"])
    images = np.flatnonzero(d > 0)
    p = sign_test(b[images], d[images])
    tested = d[images] >= MIN_DISCORDANT
    q = np.full(len(images), np.nan)
    q[tested] = benjamini_hochberg(p[tested])
    direction = np.where(b[images] > c[images], BROKEN, np.where(c[images] > b[images], FIXED, TIED))
    k = len(paired.baseline_alone)
    alone_wrong = (paired.baseline_alone != labels).sum(axis=0) if k else np.zeros(len(labels))
    seed_rate = alone_wrong * (k - alone_wrong) / (k * (k - 1)) if k >= 2 else np.full(len(labels), np.nan)
    predicted = [_chosen(paired, wrong_new if dir_ == BROKEN else right_new, dir_, i)
                 for i, dir_ in zip(images, direction)]
    frame = pd.DataFrame({
        "image": images, "true": labels[images], "true_name": [CLASS_NAMES[t] for t in labels[images]],
        "direction": direction, "newly_wrong": b[images], "newly_right": c[images], "n_pairs": n,
        "flip_rate": np.maximum(b[images], c[images]) / max(n, 1), "null_rate": d[images] / (2 * max(n, 1)),
        "seed_null_rate": seed_rate[images], "p_value": p, "q_value": q, "listed": np.nan_to_num(q, nan=1.0) < FDR,
        "predicted": predicted, "predicted_name": [CLASS_NAMES[x] if x >= 0 else "" for x in predicted]},
        columns=FLIP_COLUMNS)
    frame = frame.sort_values(["q_value", "p_value", "flip_rate", "image"], ascending=[True, True, False, True],
                              ignore_index=True)
    null_pairs, null_counts = seed_null(paired.baseline_alone[:2 * n], labels)  # at most n pairs: like for like
    seed_expected = float(stats.binom.sf(np.floor(n / 2), n, seed_rate).sum()) if k >= 2 and n else np.nan
    return FlipReport(frame, pairs[PAIR_COLUMNS], n, {BROKEN: majority_count(b, n), FIXED: majority_count(c, n)},
                      {direction_: expected_majority(d, n) for direction_ in DIRECTIONS}, null_pairs, null_counts,
                      seed_expected)


def _chosen(paired: Paired, flipped: np.ndarray, direction: str, image: int) -> int:
    """The class the wrong side chose most often where the image flipped its way (-1 for a tie)."""
    if direction == TIED:
        return -1
    wrong_side = paired.selection if direction == BROKEN else paired.baseline
    return int(np.bincount(wrong_side[flipped[:, image], image], minlength=len(CLASS_NAMES)).argmax())


def pairs_to_list(report: FlipReport, most: int = 200) -> tuple[int, int]:
    """(pairs, images): the fewest pairs at which the same test would list some image if every image kept
    its flips per pair (newly wrong and newly right scaled from n to that many pairs), and how many it would
    list; (0, 0) when none up to `most` would. A projection of this comparison, not a power calculation."""
    n = report.n_pairs
    wrong, right = report.images["newly_wrong"].to_numpy(float), report.images["newly_right"].to_numpy(float)
    for pairs in range(max(n, MIN_PAIRS), most + 1):
        b, c = np.round(wrong * pairs / max(n, 1)), np.round(right * pairs / max(n, 1))
        tested = b + c >= MIN_DISCORDANT
        if tested.any():
            listed = int((benjamini_hochberg(sign_test(b[tested], (b + c)[tested])) < FDR).sum())
            if listed:
                return pairs, listed
    return 0, 0


def summary(report: FlipReport) -> str:
    """The counts against their nulls, in one paragraph (the gallery's caption, `compare`'s printout)."""
    n = report.n_pairs
    counts = "; ".join(f"{what}: {report.observed[what]:,} images in more than half of the pairs, "
                       f"{report.expected_null[what]:,.0f} expected if the switch picked no direction"
                       for what in DIRECTIONS)
    text = f"{n} pairs with predictions. {counts[0].upper()}{counts[1:]}."
    if report.seed_null_pairs:
        text += (f" Random-seed noise alone: the baseline against itself lists {report.seed_null[BROKEN]:,} / "
                 f"{report.seed_null[FIXED]:,} by the same rule over {report.seed_null_pairs} disjoint random-seed "
                 f"pairs, about {report.seed_null_expected:,.0f} per direction expected at {n} pairs.")
    if not report.enough:
        return (text + f" With fewer than {MIN_PAIRS} pairs no image's flips can be told apart from random-seed "
                f"noise (the smallest possible p-value is {2 / 2 ** n if n else 1:.2f}), so no image is ranked.")
    listed = report.listed
    by_way = {what: int((listed["direction"] == what).sum()) for what in DIRECTIONS}
    tested = int(report.images["q_value"].notna().sum())
    text += (f" Listed: images whose flips beat that noise (exact sign test per image over the {tested:,} images "
             f"discordant in at least {MIN_DISCORDANT} pairs, Benjamini-Hochberg q < {FDR:.0%}): {by_way[BROKEN]:,} "
             f"newly wrong, {by_way[FIXED]:,} newly right.")
    if len(listed):
        return text
    needed, would = pairs_to_list(report)
    return text + (f" Too few random seeds to list any image: at {n} pairs no image's flips clear the cut among "
                   f"{tested:,} tested. " + (f"If every image kept its flips per pair, about {needed} pairs would list "
                   f"{would:,} (a projection, not a promise)." if needed else
                   "Even 200 pairs at these flip rates would list none: the switch moves no image consistently."))
