"""Seeds needed keep their promise (vitcore.stats.estimates, estimates.seeds_needed): simulated experiments at
the stated N, with the sd drawn from its own uncertainty too, reach the promised verdict at least 80% of the time."""

import numpy as np
import pytest
from scipy import stats as sp

from vitcore.stats import estimates, testset
from vitcore.stats import estimates as e

# Undecided test-accuracy questions on the committed store at bf3033a (per-seed Δs, family size, the test images' se).
CASES = {
    "post-norm, 4,000 rows": ([0.0079, 0.0117, 0.0108, 0.0367, 0.0028, 0.0123, 0.0052, 0.0016, 0.0133, 0.018], 11,
                              0.00065),
    "patch 2, 4,000 rows": ([0.0222, 0.0261, 0.0238, 0.0333, 0.0037], 11, 0.00127),
    "sincos, 4,000 rows (inside ±0.01)": ([0.0094, 0.0077, 0.011, 0.011, -0.0187, 0.0133, 0.0109, 0.0069, 0.0019,
                                           0.0013], 11, 0.00084),
    "post-norm, 1,000 rows (inside ±0.01)": ([0.0188, 0.0024, -0.0148, 0.0099, -0.0047, -0.0283, -0.0072, -0.0095,
                                              0.0039, 0.0217], 10, 0.00079),
}
MARGIN = 0.01


def undecided(deltas, floor: float) -> e.Estimate:
    return testset.with_floor(e.paired_estimate(deltas), floor ** 2)


def verdicts(est: e.Estimate, n: int, level: float, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(p_adj-style p, p_tost) of `reps` simulated experiments of n pairs: σ drawn as σ² = s² df0 / χ²(df0), the
    pairs ~ N(Δ, σ²), the test images' part ~ N(0, floor²) on the mean and in the se (as the verdict counts it)."""
    rng = np.random.default_rng(seed)
    sigma = est.scale * np.sqrt((est.n - 1) / rng.chisquare(est.n - 1, reps))[:, None]
    draws = est.mean + rng.standard_normal((reps, n)) * sigma
    mean = draws.mean(axis=1) + rng.normal(0, est.floor, reps)
    se = np.sqrt(draws.var(axis=1, ddof=1) / n + est.floor ** 2)
    p = 2 * sp.t.sf(np.abs(mean / se), n - 1)
    p_tost = np.maximum(sp.t.sf((mean + MARGIN) / se, n - 1), sp.t.cdf((mean - MARGIN) / se, n - 1))
    return mean, p, p_tost


def promised_rate(est: e.Estimate, n: int, size: int, reps: int = 20_000, seed: int = 0) -> float:
    """Share of simulated experiments reaching what the text promises: the Δ resolved in its direction, or,
    for a Δ inside ±margin, settled by either test."""
    mean, p, p_tost = verdicts(est, n, e.ALPHA / size, reps, seed)
    if abs(est.mean) >= MARGIN:
        return float(np.mean((p < e.ALPHA / size) & (np.sign(mean) == np.sign(est.mean))))
    return float(np.mean((p < e.ALPHA / size) | (p_tost < e.ALPHA / size)))


@pytest.mark.parametrize("name", CASES)
def test_at_the_stated_n_at_least_80_percent_reach_the_promised_verdict(name):
    deltas, size, floor = CASES[name]
    est = undecided(deltas, floor)
    judged = e.judge("test_accuracy", est, MARGIN, "f", size)
    assert judged["verdict"] == e.INCONCLUSIVE
    n = int(judged["seeds_needed"])
    assert promised_rate(est, n, size) >= 0.80  # 20,000 draws: the simulation's se is 0.003
    # the quadrature the plan uses agrees with the simulation
    assert estimates.assurance(est.mean, est.scale, est.n - 1, n, MARGIN, e.ALPHA / size, floor=est.floor) == \
        pytest.approx(promised_rate(est, n, size, seed=1), abs=0.01)


def known_sd_plan(est: e.Estimate, size: int) -> int:
    """The old plan: the smallest n whose power at the observed sd, taken as the truth, reaches 80%."""
    level, n = e.ALPHA / size, 2
    while max(e.power_difference(est.mean, est.scale, n, level, floor=est.floor),
              e.power_equivalence(est.mean, est.scale, n, MARGIN, level, floor=est.floor)
              if abs(est.mean) < MARGIN else 0) < e.POWER:
        n += 1
    return n


def test_planning_with_the_sd_as_known_breaks_the_promise():
    """Why the plan averages over the sd: with the sd taken as known, the stated N delivers 62-75% here."""
    rates = [promised_rate(undecided(d, f), known_sd_plan(undecided(d, f), m), m) for d, m, f in
             list(CASES.values())[:2]]
    assert max(rates) < 0.78


def test_a_delta_inside_the_margin_counts_a_settled_equivalence():
    """ViT − convnet at 4,000 rows: Δ +0.0043 inside ±0.01 (test images' se 0.0021). Planned on the difference test
    or on equivalence alone it said 113 random seeds; either test resolving settles it with far fewer (14)."""
    est = undecided([0.0, -0.0026, 0.0217, 0.001, -0.0032, 0.0094, 0.0022, 0.0063, 0.0031, 0.0053], 0.00207)
    needed = e.seeds_needed(est, MARGIN)
    assert needed <= 20 and promised_rate(est, int(needed), 1) >= 0.80


def test_no_spread_and_a_floor_beyond_reach():
    assert np.isnan(e.seeds_needed(e.paired_estimate([0.01]), MARGIN))
    est = testset.with_floor(e.paired_estimate([0.002, 0.001, 0.003, 0.0]), 0.004 ** 2)
    assert e.seeds_needed(est, 0.001) == np.inf  # equivalence within ±0.001 needs se << 0.001: more seeds can't
