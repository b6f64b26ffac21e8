"""The test set's own sampling error: a paired bootstrap over random seeds *and* test images.

A seed-paired interval (vitcore.stats.estimates.paired_estimate) treats the 10,000 test images as
fixed: it says how much the Δ would move with other random seeds on *this* test set. Another draw of
10,000 test images from the same distribution would move it too, and that part does not shrink with
more random seeds: for small effects it is the floor. Given each pair's per-image correctness
(selection right - baseline right: -1, 0 or +1 per image), one bootstrap replicate draws the pairs
with replacement and, independently, the test images with replacement (the same images for every
pair, as the runs share one test set), and takes the mean Δ. Replicates are computed in chunks as
a (pairs, images) x (images, replicates) product of image counts, so 2,000 replicates over 10 pairs
take well under a second.

The interval is mean +- t(n - 1) x the bootstrap's standard deviation (the seed-only interval's form,
with the wider spread). It is shown beside the verdict, not used for it: the verdict of a comparison is the
same on every view (vitcore.stats.families), and the other views have no predictions to resample.
Resampling both ways counts the seed x image noise twice (Owen 2007, "the pigeonhole bootstrap"), so
the interval errs wide. No pandas, no TensorFlow.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from vitcore.stats.estimates import CONFIDENCE, Estimate, paired_estimate

REPLICATES = 2_000
SEED = 0  # the bootstrap's own random generator: fixed, so a page and metrics.csv show the same interval
CHUNK = 100
SEEDS_ONLY, WITH_TEST = "random seeds", "random seeds and test images"  # which interval is meant


def differences(selection: np.ndarray, baseline: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(pairs, images) int8: +1 where only the selection is right, -1 where only the baseline is,
    0 elsewhere. Row j's mean is pair j's test-accuracy Δ."""
    labels = np.asarray(labels)
    return ((np.asarray(selection) == labels).astype(np.int8) - (np.asarray(baseline) == labels).astype(np.int8))


def replicates(diffs: np.ndarray, reps: int = REPLICATES, seed: int = SEED) -> np.ndarray:
    """(reps,) bootstrap means of the paired Δ, resampling pairs and test images independently."""
    diffs = np.asarray(diffs, dtype=np.float64)
    n, images = diffs.shape
    if n == 0 or images == 0:
        raise ValueError("the bootstrap needs at least one pair and one test image")
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, reps, CHUNK):
        k = min(CHUNK, reps - start)
        drawn = rng.integers(0, images, size=(k, images)) + images * np.arange(k)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=k * images).reshape(k, images)   # (k, images)
        per_pair = diffs @ counts.T.astype(np.float64) / images                        # (pairs, k)
        pick = rng.integers(0, n, size=(k, n))                                         # (k, pairs)
        out.append(per_pair[pick, np.arange(k)[:, None]].mean(axis=1))
    return np.concatenate(out)


def seed_and_test_estimate(diffs: np.ndarray, reps: int = REPLICATES, seed: int = SEED) -> Estimate:
    """The paired Δ of test accuracy with an interval over random seeds and test images; `scale` stays
    the seed-only sd of the per-pair Δs (the part more random seeds can shrink)."""
    diffs = np.asarray(diffs)
    per_pair = paired_estimate(diffs.mean(axis=1))
    n = per_pair.n
    if n < 2:
        return per_pair
    se = float(replicates(diffs, reps, seed).std(ddof=1))
    mean = per_pair.mean
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * se
    p = float(2 * stats.t.sf(abs(mean / se), n - 1)) if se > 0 else float(mean == 0)
    return Estimate(mean, mean - half, mean + half, p, n, n - 1, se, per_pair.scale)


def wider(seed_only: Estimate, with_test: Estimate) -> tuple[Estimate, str]:
    """The estimate whose 95% interval is wider, and which it is ("random seeds" or "random seeds and
    test images")."""
    width = [e.ci_high - e.ci_low for e in (seed_only, with_test)]
    if np.isfinite(width[1]) and (not np.isfinite(width[0]) or width[1] > width[0]):
        return with_test, WITH_TEST
    return seed_only, SEEDS_ONLY


def sentence(seed_only: Estimate, with_test: Estimate, digits: int = 4) -> str:
    """One sentence on how the test set's sampling changes the interval (the verdict stays over random seeds)."""
    if not np.isfinite(with_test.ci_low):
        return "No interval over test images: fewer than two pairs kept their per-image predictions."
    _, used = wider(seed_only, with_test)
    ratio = (with_test.ci_high - with_test.ci_low) / (seed_only.ci_high - seed_only.ci_low)
    return (f"Resampling the test images as well as the random seeds gives [{with_test.ci_low:+.{digits}f}, "
            f"{with_test.ci_high:+.{digits}f}] against [{seed_only.ci_low:+.{digits}f}, "
            f"{seed_only.ci_high:+.{digits}f}] over random seeds alone ({ratio:.2f}× as wide; the wider: {used}); "
            "the verdict is judged over random seeds, as on every view of this comparison.")


TEST_COLUMNS = ["ci_low_with_test", "ci_high_with_test", "n_pairs_with_test", "interval", "wider"]


def with_test_set(frame, pairs, predictions, labels, margin: float, metric: str = "test_accuracy"):
    """compare's metrics frame with TEST_COLUMNS: for `metric` (test accuracy: per-image correctness is
    what the predictions give), the interval over random seeds and test images when every pair kept its
    predictions (`predictions(run_id)` -> array or None). It is shown beside the verdict, which stays the
    seed-paired one every view gives this comparison (its family's, vitcore.stats.families): `interval`
    names the interval the verdict used, and `wider` which of the two is wider. Other rows: NaN."""
    frame = frame.assign(ci_low_with_test=np.nan, ci_high_with_test=np.nan, n_pairs_with_test=0, interval=SEEDS_ONLY,
                         wider=SEEDS_ONLY)
    matched = pairs[pairs["metric"] == metric] if len(pairs) else pairs
    if not len(matched) or metric not in set(frame["metric"]):
        return frame
    kept = [(predictions(s), predictions(b)) for s, b in zip(matched["selection_run_id"], matched["baseline_run_id"])]
    kept = [(s, b) for s, b in kept if s is not None and b is not None]
    index = frame.index[frame["metric"] == metric][0]
    frame.loc[index, "n_pairs_with_test"] = len(kept)
    if len(kept) < 2 or len(kept) < len(matched):  # a subset's Δ is another number: never mix the two
        return frame
    diffs = differences(np.stack([s for s, _ in kept]), np.stack([b for _, b in kept]), labels)
    test = seed_and_test_estimate(diffs)
    _, which = wider(paired_estimate(matched["delta"]), test)
    frame.loc[index, ["ci_low_with_test", "ci_high_with_test", "wider"]] = [test.ci_low, test.ci_high, which]
    return frame
