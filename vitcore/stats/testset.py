"""The test set's own sampling error in a paired Δ of test accuracy: random seeds × test images.

A seed-paired interval (vitcore.stats.estimates.paired_estimate) treats the 10,000 test images as
fixed: it says how far the Δ would move with other random seeds on *this* test set. Another draw of
10,000 test images from the same distribution would move it too, and that part does not shrink with
more random seeds: for small effects it is the floor.

The model: d[s, i] = selection right - baseline right (-1, 0 or +1) for pair s and test image i is a
two-way crossed random-effects table, d = μ + a_s + b_i + e_si (seeds, images, their interaction and
the rest). The Δ is the grand mean, and its variance is σ²_a/n + σ²_b/N + σ²_e/(nN). From the mean
squares of the table (rows: pairs, columns: images) the unbiased estimate is

    Var(Δ) = (MS_seeds + MS_images - MS_residual) / (n N)

(Cornfield & Tukey 1956; the same algebra as a two-way ANOVA without replication). The seed-only
variance is MS_seeds / (n N) = var(per-pair Δ) / n, so the test images add (MS_images - MS_residual) /
(n N), the `floor`, clipped at 0 (then, or when its share of Var(Δ) is below NEGLIGIBLE, the verdict keeps
the seed-only interval and its `interval` column says "random seeds"). The t quantile keeps the seeds' n - 1 degrees of
freedom (conservative: the images' part has thousands). A paired bootstrap over seeds and images (the tests'
reference, tests/paired_bootstrap.py) estimates the same variance but counts the seed × image term two or three
times (Owen 2007), so on our tables it errs wide; a test checks this model's variance against simulated tables
with known components.

The 10,000 official test images are not a simple random sample: they are stratified by class, exactly
1,000 per class, and another test set would hold the same 1,000 per class. So the verdict's model nests
the images in their classes (d = μ + a_s + γ_c + b_i(c) + e_si, the class effects γ fixed strata): the
images' term is the *within-class* one, (MS_images|class - MS_residual|class) / (n N), whose mean squares
are the table's with each image's mean taken about its class's mean (N - C and (n - 1)(N - C) degrees of
freedom). The crossed term above counts the spread between the ten classes' Δs as if another test set
could mix the classes differently; it is kept as `test_se_srs`, the check of a borderline verdict
(vitcore.stats.readings), with the Satterthwaite degrees of freedom of the seeds-plus-images standard
error (`df_satterthwaite`, in place of n - 1).

Used by the verdict: every view of a comparison (card, forest plot, flip table, single-cell main effect,
claims, `compare`, `report`) passes the store's TestSet to vitcore.stats.compare.paired_delta, so the
comparison has one verdict everywhere. Which metrics get the term is their registry entry's `test_set`
(vitcore.config.metrics.has_test_set: test accuracy's, and any other accuracy on the official test images
marked so), never their name; when a pair lacks its predictions the Δ stays over random seeds only, and says
so (`interval`). No pandas, no TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

import numpy as np

from vitcore.config.metrics import has_test_set
from vitcore.data.fashion import DataError, shipped_test_labels
from vitcore.stats.estimates import CONFIDENCE, Estimate, t_quantile, two_sided_p
from vitcore.store.files import BadRun

SEEDS_ONLY, WITH_TEST = "random seeds", "random seeds and test images"  # which interval the verdict used
# compare's and the forest plot's extra columns: the verdict's interval kind, the seed-only interval beside
# it, and the test images' share of the standard error
# and the two checks of a borderline verdict: the images' term as a simple random sample, and the Satterthwaite df
TEST_COLUMNS = ["interval", "ci_low_seeds", "ci_high_seeds", "test_se", "n_pairs_with_test", "test_se_srs",
                "df_satterthwaite"]
CACHED_RUNS = 4_096  # predictions kept in memory per TestSet: 10,000 bytes each, at most 41 MB
# The images' share of Var(Δ) below which the interval is the seeds' alone: such a term widens the interval in
# the seventh significant digit at most, far below any printed one, so "random seeds and test images" would name
# a term that changed nothing (LSA at 1,000 rows: a term of exactly 0, yet a width one ulp wider, was labelled so).
NEGLIGIBLE = 1e-6


@dataclass(frozen=True, eq=False)
class TestSet:
    """The official test labels and a reader of each run's predictions (`predictions(run_id)` -> uint8
    array or None): what a paired Δ of test accuracy needs to include the test set's sampling."""
    predictions: Callable[[str], np.ndarray | None]
    labels: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "_correct", lru_cache(maxsize=CACHED_RUNS)(self._read))

    def _read(self, run_id: str) -> np.ndarray | None:
        predicted = self.predictions(run_id)
        if predicted is None or np.shape(predicted) != np.shape(self.labels):
            return None
        correct = np.asarray(predicted) == self.labels
        correct.setflags(write=False)
        return correct

    def differences(self, selection_ids, baseline_ids) -> np.ndarray | None:
        """(pairs, images): selection right - baseline right, pair by pair; None when any run of the
        pairs has no predictions (a subset's Δ would be another number: never mixed). combinations' numbers (its
        sums of ±1 x right are exact) from one stack per side: a Δ of every view of every comparison reads it."""
        pairs = list(zip(selection_ids, baseline_ids))
        sides = [[self._correct(str(run_id)) for run_id in side] for side in zip(*pairs)]
        if not pairs or any(correct is None for side in sides for correct in side):
            return None
        return np.subtract(np.stack(sides[0]), np.stack(sides[1]), dtype=np.float64)  # (pairs, images)

    def combinations(self, terms_per_seed) -> np.ndarray | None:
        """(seeds, images): for each random seed, sum of weight x (run right) over its (run_id, weight)
        terms (a main effect: +1/cells on the level's runs, -1/cells on the reference's); None when any
        run lacks predictions."""
        rows = []
        for terms in terms_per_seed:
            row = np.zeros(len(self.labels))
            for run_id, weight in terms:
                correct = self._correct(str(run_id))
                if correct is None:
                    return None
                row += weight * correct
            rows.append(row)
        return np.stack(rows) if rows else None


@dataclass(frozen=True)
class MeanSquares:
    """The (pairs, images) table's mean squares (module doc); images about their class's mean when stratified."""
    seeds: float
    images: float
    residual: float
    n: int
    images_count: int
    df_images: int
    df_residual: int

    @property
    def image_variance(self) -> float:
        """What the test images add to Var(Δ): (MS_images - MS_residual) / (n N), at least 0 (a difference at the
        level of the mean squares' rounding counts as 0)."""
        excess = self.images - self.residual
        if excess <= 1e-12 * (self.seeds + self.images + self.residual):
            return 0.0
        return float(excess / (self.n * self.images_count))

    def satterthwaite_df(self) -> float:
        """Satterthwaite's degrees of freedom of the seeds-plus-images variance (MS_seeds + MS_images -
        MS_residual) / (n N); the seeds' n - 1 when the images add nothing."""
        scale = self.n * self.images_count
        if self.image_variance == 0:
            return float(self.n - 1)
        total = (self.seeds + self.images - self.residual) / scale
        parts = ((self.seeds / scale) ** 2 / (self.n - 1) + (self.images / scale) ** 2 / self.df_images
                 + (self.residual / scale) ** 2 / self.df_residual)
        return float(total ** 2 / parts)


def mean_squares(diffs: np.ndarray, strata=None) -> MeanSquares | None:
    """The table's mean squares, images nested in `strata` (one class label per image; None: one stratum,
    the crossed model); None below 2 pairs or with no image beside another in its stratum."""
    d = np.asarray(diffs, dtype=np.float64)
    n, images = d.shape
    groups = np.zeros(images, np.int64) if strata is None else np.unique(np.asarray(strata), return_inverse=True)[1]
    classes = int(groups.max()) + 1 if images else 0
    if n < 2 or images - classes < 1:
        return None
    counts = np.bincount(groups, minlength=classes)
    by_image = d.mean(axis=0)                                                    # (images,)
    class_mean = np.bincount(groups, by_image, classes) / counts                 # (classes,)
    pair_class = np.stack([np.bincount(groups, row, classes) for row in d]) / counts  # (pairs, classes)
    image_effect = by_image - class_mean[groups]                                 # (images,): about its class
    ss_images = n * (image_effect ** 2).sum()
    ss_residual = ((d - pair_class[:, groups] - image_effect) ** 2).sum()       # the seed × image-in-class term
    by_pair = d.mean(axis=1)
    ms_seeds = images * ((by_pair - by_pair.mean()) ** 2).sum() / (n - 1)
    df_images = images - classes
    return MeanSquares(float(ms_seeds), float(ss_images / df_images), float(ss_residual / ((n - 1) * df_images)),
                       n, images, df_images, (n - 1) * df_images)


def image_variance(diffs: np.ndarray, strata=None) -> float:
    """What the test images add to Var(Δ), at least 0 (module doc): within the classes of `strata`, or
    over the whole set as a simple random sample (None)."""
    squares = mean_squares(diffs, strata)
    return np.nan if squares is None else squares.image_variance


def widened(est: Estimate, diffs: np.ndarray, strata=None) -> Estimate:
    """The seed-paired estimate of test accuracy's Δ with the test images' variance (within the classes of
    `strata`) added to its standard error (floor = that part's sd); the mean, n, df and scale stay the seeds'."""
    return with_floor(est, image_variance(diffs, strata))


def with_floor(est: Estimate, extra: float, df: float | None = None) -> Estimate:
    """`est` with `extra` variance added to its standard error (and `df` degrees of freedom, if given)."""
    if est.n < 2 or not np.isfinite(extra) or not np.isfinite(est.se):
        return est
    df = est.df if df is None else df
    se = float(np.sqrt(est.scale ** 2 / est.n + extra)) if est.paired else float(np.sqrt(est.se ** 2 + extra))
    half = t_quantile(0.5 + CONFIDENCE / 2, df) * se
    return replace(est, ci_low=est.mean - half, ci_high=est.mean + half, p_value=two_sided_p(est.mean, se, df),
                   se=se, df=df, floor=float(np.sqrt(extra)))


def seeds_only(est: Estimate) -> Estimate:
    """`est` without the test images' term (`floor`): the interval over random seeds alone, mean, n and df kept
    (the check of a verdict that term decides, vitcore.stats.readings)."""
    if not est.floor:
        return est
    return with_floor(replace(est, se=float(np.sqrt(max(est.se ** 2 - est.floor ** 2, 0.0)))), 0.0)


def seed_columns(est: Estimate) -> dict:
    """TEST_COLUMNS of a Δ judged over random seeds alone."""
    return {"interval": SEEDS_ONLY, "ci_low_seeds": est.ci_low, "ci_high_seeds": est.ci_high, "test_se": np.nan,
            "n_pairs_with_test": 0, "test_se_srs": np.nan, "df_satterthwaite": np.nan}


def judged_estimate(est: Estimate, metric: str, pairs, test_set: TestSet | None) -> tuple[Estimate, dict]:
    """(the estimate the verdict uses, TEST_COLUMNS for the row): for a metric with a test-set term (test
    accuracy's) and every pair's predictions, the interval over random seeds and test images (within their
    classes); otherwise the seed-only one."""
    if (not has_test_set(metric) or test_set is None or est.n < 2
            or not {"run_id_variant", "run_id_baseline"} <= set(pairs)):
        return est, seed_columns(est)
    return with_differences(est, test_set.differences(pairs["run_id_variant"], pairs["run_id_baseline"]),
                            test_set.labels)


def with_differences(est: Estimate, diffs: np.ndarray | None, strata=None) -> tuple[Estimate, dict]:
    """judged_estimate's result for a (seeds, images) table of per-image Δs (None: seed-only), the images
    nested in the classes of `strata` (the test labels; None: one stratum). The columns carry the checks:
    the images' term as a simple random sample (`test_se_srs`) and the Satterthwaite df."""
    seeds_only = seed_columns(est)
    if diffs is None or est.n < 2 or len(diffs) != est.n:
        return est, seeds_only
    squares, crossed = mean_squares(diffs, strata), mean_squares(diffs)
    if squares is None or crossed is None:
        return est, seeds_only
    checks = {"n_pairs_with_test": len(diffs), "test_se_srs": float(np.sqrt(crossed.image_variance)),
              "df_satterthwaite": squares.satterthwaite_df()}
    if not squares.image_variance > NEGLIGIBLE * est.se ** 2:  # zero or a tie: the verdict keeps the seeds' own
        return est, {**seeds_only, **checks, "test_se": float(np.sqrt(squares.image_variance))}
    wide = with_floor(est, squares.image_variance)
    return wide, {**seeds_only, **checks, "interval": WITH_TEST, "test_se": wide.floor}


def sentence(row: dict, digits: int = 4) -> str | None:
    """One sentence on what the test set's sampling did to a Δ's interval, or None when it was not included."""
    if row.get("n_pairs_with_test", 0) in (0, None) or row.get("interval") is None:
        return None
    seeds = f"[{row['ci_low_seeds']:+.{digits}f}, {row['ci_high_seeds']:+.{digits}f}]"
    if row["interval"] == SEEDS_ONLY:
        return (f"The test images add no measurable variance here (the seed × image table's image mean square is "
                f"within its residual), so the verdict uses the interval over random seeds alone, {seeds}.")
    ratio = (row["ci_high"] - row["ci_low"]) / (row["ci_high_seeds"] - row["ci_low_seeds"])
    return (f"95% interval over random seeds and test images [{row['ci_low']:+.{digits}f}, "
            f"{row['ci_high']:+.{digits}f}] ({ratio:.2f}× as wide as {seeds} over random seeds alone: another 10,000 "
            f"test images would move the Δ by about ±{row['test_se']:.{digits}f}, however many random seeds); the "
            "verdict uses it, on every view of this comparison.")


def from_store(store) -> TestSet | None:
    """The TestSet of a RunStore: its runs' predictions.npy, read through the store's bounded reader (a
    damaged file counts as missing), and the shipped official test labels (so a server without the data
    set judges as one with it); None only when the package's copy of the labels is damaged."""
    try:
        labels = shipped_test_labels()
    except (DataError, OSError, ValueError):  # only if the package itself was damaged
        return None

    def predictions(run_id: str):
        try:
            return store.predictions(run_id)  # a run of the judged table: its predictions.npy alone
        except (OSError, ValueError, BadRun):  # gone or changed since the table was read: left out
            return None

    return TestSet(predictions, labels)
