"""The seeds x test-images bootstrap (tests/paired_bootstrap.py, the cross-check of vitcore.stats.testset),
recomputed by a plain loop."""

import numpy as np
import paired_bootstrap as bootstrap
import pytest


def synthetic_differences(pairs: int = 8, images: int = 2_000, seed: int = 1) -> np.ndarray:
    """Per-image differences with a per-image effect (some images favour the selection under every
    random seed) and per-pair noise: the test set's sampling then matters."""
    rng = np.random.default_rng(seed)
    favoured = rng.random(images) < 0.06          # images the selection gets right more often
    disfavoured = rng.random(images) < 0.04
    diffs = np.zeros((pairs, images), dtype=np.int8)
    for j in range(pairs):
        noise = rng.random(images)
        diffs[j, favoured & (noise < 0.8)] = 1
        diffs[j, disfavoured & (noise < 0.8)] = -1
        swap = rng.random(images) < 0.05
        diffs[j, swap] = rng.choice([-1, 1], size=swap.sum())
    return diffs


def naive_replicates(diffs: np.ndarray, reps: int, seed: int) -> np.ndarray:
    """The bootstrap as its definition reads: draw pairs, draw images, average."""
    rng = np.random.default_rng(seed)
    n, images = diffs.shape
    out = np.empty(reps)
    for r in range(reps):
        pairs = rng.integers(0, n, size=n)
        chosen = rng.integers(0, images, size=images)
        out[r] = diffs[np.ix_(pairs, chosen)].mean()
    return out


def test_the_interval_matches_a_plain_loop_within_monte_carlo_error():
    diffs = synthetic_differences(images=1_000)
    reps = 1_000
    fast = bootstrap.replicates(diffs, reps, seed=0)
    slow = naive_replicates(diffs, reps, seed=123)
    se_fast, se_slow = fast.std(ddof=1), slow.std(ddof=1)
    # the sd of a bootstrap sd from R replicates is about sd / sqrt(2 R): 2.2% here; allow 4 of those
    assert se_fast == pytest.approx(se_slow, rel=4 / np.sqrt(2 * reps))
    assert fast.mean() == pytest.approx(diffs.mean(), abs=4 * se_fast / np.sqrt(reps))
    est = bootstrap.seed_and_test_estimate(diffs, reps)
    assert est.se == pytest.approx(se_fast) and est.mean == pytest.approx(diffs.mean())
    assert est.ci_high - est.ci_low > 0


def test_one_pair_gives_no_interval_and_an_empty_table_is_refused():
    assert np.isnan(bootstrap.seed_and_test_estimate(synthetic_differences(pairs=1)).ci_low)
    with pytest.raises(ValueError, match="at least one pair"):
        bootstrap.replicates(np.zeros((0, 10)))
