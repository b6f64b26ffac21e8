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
with the wider spread). The verdicts use the crossed random-effects model of vitcore.stats.testset
instead, which estimates the same variance without bias and without random draws (one comparison:
milliseconds, not ~1.5 s): resampling both ways counts the seed x image noise two or three times (Owen
2007, "the pigeonhole bootstrap"), which in our tables (-1/0/+1 per image, that term dominating) makes
this interval wider, while drawing the pairs shrinks their part by (n - 1) / n. It stays as the model's cross-check
(tests/test_testset.py). No pandas, no TensorFlow.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from vitcore.stats.estimates import CONFIDENCE, Estimate, paired_estimate

REPLICATES = 2_000
SEED = 0  # the bootstrap's own random generator: fixed, so a page and metrics.csv show the same interval
CHUNK = 100


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
