"""The test set's sampling in a paired Δ (vitcore.stats.testset): the crossed random-effects variance against
simulated tables with known components, the bootstrap cross-check, and the verdict it changes."""

from dataclasses import replace

import numpy as np
import paired_bootstrap as bootstrap
import pandas as pd
import pytest
from scipy import stats as sp

from vitcore.stats import testset
from vitcore.stats.compare import paired_delta
from vitcore.stats.estimates import BETTER, INCONCLUSIVE, Estimate, paired_estimate, seeds_needed


def crossed_table(rng, n: int, images: int, seed_sd: float, image_sd: float, rest_sd: float, mean: float = 0.0):
    """d = mean + a_seed + b_image + e, every term normal with the given sd."""
    return (mean + rng.normal(0, seed_sd, (n, 1)) + rng.normal(0, image_sd, (1, images))
            + rng.normal(0, rest_sd, (n, images)))


def test_the_variance_of_the_mean_is_recovered_where_the_seed_only_one_misses_the_images():
    """Over 400 simulated tables with known components the model's Var(Δ), averaged, matches the true
    variance of the grand mean; the seed-only variance misses the images' part by the amount known."""
    rng = np.random.default_rng(0)
    n, images, seed_sd, image_sd, rest_sd = 8, 500, 0.01, 0.2, 0.4
    truth = seed_sd ** 2 / n + image_sd ** 2 / images + rest_sd ** 2 / (n * images)
    means, model, seeds_only = [], [], []
    for _ in range(400):
        d = crossed_table(rng, n, images, seed_sd, image_sd, rest_sd)
        est = paired_estimate(d.mean(axis=1))
        means.append(d.mean())
        model.append(est.se ** 2 + testset.image_variance(d))
        seeds_only.append(est.se ** 2)
    assert np.var(means, ddof=1) == pytest.approx(truth, rel=0.2)        # the simulation agrees with the algebra
    assert np.mean(model) == pytest.approx(truth, rel=0.05)              # unbiased: 400 tables, sd of the mean ~2%
    assert np.mean(seeds_only) == pytest.approx(truth - image_sd ** 2 / images, rel=0.05)
    assert np.mean(seeds_only) < 0.5 * truth                            # here the images dominate


def test_no_image_effect_adds_nothing_and_the_verdict_keeps_the_seed_interval():
    d = np.repeat(np.array([[0.01], [0.02], [0.015], [0.012]]), 100, axis=1)  # every image moves with its pair
    assert testset.image_variance(d) == 0.0
    est, columns = testset.with_differences(paired_estimate(d.mean(axis=1)), d)
    assert columns["interval"] == testset.SEEDS_ONLY and (est.ci_low, est.ci_high) == (columns["ci_low_seeds"],
                                                                                         columns["ci_high_seeds"])
    assert testset.sentence({**columns, "n_pairs_with_test": 4}).startswith("The test images add no measurable")


def test_a_zero_image_term_is_labelled_seeds_only_even_when_the_widths_tie_at_the_last_bit():
    """LSA at 1,000 rows: the images' term was exactly 0, but sqrt(scale² / n) came out one ulp above the seeds'
    se, so the interval read "random seeds and test images". A zero (or negligible) term keeps the seeds' own."""
    d = np.repeat(np.array([[0.01], [0.02], [0.015], [0.012]]), 100, axis=1)  # image term exactly 0
    seeds = paired_estimate(d.mean(axis=1))
    se = np.nextafter(np.nextafter(seeds.scale / np.sqrt(seeds.n), 0.0), 0.0)  # two ulps below the recomputed se
    half = sp.t.ppf(0.975, seeds.df) * se
    tied = replace(seeds, se=se, ci_low=seeds.mean - half, ci_high=seeds.mean + half)
    wide = testset.with_floor(tied, 0.0)
    assert wide.ci_high - wide.ci_low > tied.ci_high - tied.ci_low  # the tie the old width comparison fell into
    est, columns = testset.with_differences(tied, d)
    assert columns["interval"] == testset.SEEDS_ONLY and est == tied and columns["test_se"] == 0.0
    rng = np.random.default_rng(5)  # a positive term too small to move any printed digit counts as none
    noise = rng.normal(0, 1e-7, (1, 100))
    est, columns = testset.with_differences(seeds, d + noise - noise.mean())
    assert 0 < columns["test_se"] < 1e-6 and columns["interval"] == testset.SEEDS_ONLY and est == seeds
    est, columns = testset.with_differences(seeds, d + 1000 * (noise - noise.mean()))  # 1e-4: it counts
    assert columns["interval"] == testset.WITH_TEST and est.se > seeds.se


def test_the_bootstrap_errs_wide_of_the_model():
    """The pigeonhole bootstrap counts the seed x image term more than once (Owen 2007): on a table like ours
    (-1/0/+1 per image, the seed x image term dominating) it is wider than the model."""
    rng = np.random.default_rng(1)
    d = np.sign(crossed_table(rng, 10, 2_000, 0.02, 0.5, 1.0, mean=0.1)).astype(np.int8)
    model = np.sqrt(paired_estimate(d.mean(axis=1)).se ** 2 + testset.image_variance(d))
    assert bootstrap.seed_and_test_estimate(d).se > model * 1.1


def make_runs(correct_by_run: dict[str, np.ndarray]) -> tuple[pd.DataFrame, pd.DataFrame, testset.TestSet]:
    labels = np.zeros(len(next(iter(correct_by_run.values()))), dtype=np.uint8)
    tests = testset.TestSet(lambda run_id: None if run_id not in correct_by_run else
                            np.where(correct_by_run[run_id], 0, 1).astype(np.uint8), labels)
    rows = {side: pd.DataFrame({"train_rows": 1000, "seed": range(4), "run_id": [f"{side}{k}" for k in range(4)],
                                "test_accuracy": [correct_by_run[f"{side}{k}"].mean() for k in range(4)]})
            for side in ("b", "v")}
    return rows["b"], rows["v"], tests


def test_a_delta_carried_by_a_few_images_is_resolved_over_seeds_but_not_over_test_images():
    """The variant fixes the same 8 of 1,000 images under every random seed: over random seeds alone that is
    "better" (margin 0.005), but another test set could hold more or fewer of such images (about ±sqrt(8))."""
    rng = np.random.default_rng(2)
    base_correct = rng.random(1_000) < 0.8
    fixed = np.flatnonzero(~base_correct)[:8]
    runs = {}
    for k in range(4):
        b = base_correct.copy()
        b[rng.choice(1_000, 3, replace=False)] ^= True  # a little per-seed noise on each side
        v = b.copy()
        v[fixed] = True
        v[rng.choice(1_000, 3, replace=False)] ^= True
        runs[f"b{k}"], runs[f"v{k}"] = b, v
    base, variant, tests = make_runs(runs)
    seeds_only = paired_delta(base, variant, "test_accuracy", margin=0.005)
    with_test = paired_delta(base, variant, "test_accuracy", margin=0.005, test_set=tests)
    assert seeds_only.verdict == BETTER and seeds_only.interval == testset.SEEDS_ONLY
    assert with_test.verdict == INCONCLUSIVE and with_test.interval == testset.WITH_TEST
    assert with_test.mean_delta == seeds_only.mean_delta and with_test.ci_low_seeds == seeds_only.ci_low
    assert with_test.ci_low < 0 < with_test.ci_high and with_test.test_se > 0
    # a run without predictions: the Δ stays over random seeds, never over a subset of the pairs
    del runs["v3"]
    runs["v3"] = None
    tests_missing = testset.TestSet(lambda run_id: None if runs.get(run_id) is None else
                                    np.where(runs[run_id], 0, 1).astype(np.uint8), tests.labels)
    partial = paired_delta(base, variant, "test_accuracy", margin=0.005, test_set=tests_missing)
    assert partial.interval == testset.SEEDS_ONLY and partial.n_pairs_with_test == 0
    # other metrics have no per-image outcomes
    assert paired_delta(base.assign(gap=0.1), variant.assign(gap=0.2), "gap", test_set=tests).interval == \
        testset.SEEDS_ONLY


def test_more_seeds_cannot_settle_a_delta_below_the_test_sets_floor():
    est = Estimate(0.002, -0.01, 0.014, 0.7, 10, 9, 0.005, 0.015, floor=0.004)
    assert seeds_needed(est, margin=0.001) == np.inf  # equivalence within ±0.001 needs se << 0.001
    assert np.isfinite(seeds_needed(Estimate(0.002, -0.01, 0.014, 0.7, 10, 9, 0.005, 0.015), margin=0.001))


def test_the_combination_of_a_main_effect_weights_each_run():
    correct = {"a": np.array([1, 1, 0, 0], bool), "b": np.array([1, 0, 1, 0], bool), "c": np.array([0, 0, 0, 1], bool)}
    tests = testset.TestSet(lambda run_id: None if run_id not in correct else
                            np.where(correct[run_id], 0, 1).astype(np.uint8), np.zeros(4, np.uint8))
    table = tests.combinations([[("a", 0.5), ("b", 0.5), ("c", -1.0)]])
    assert table.tolist() == [[1.0, 0.5, 0.5, -1.0]]
    assert tests.combinations([[("a", 1.0)], [("missing", 1.0)]]) is None
