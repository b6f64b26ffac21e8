"""Seeds needed that keep their promise: plan on the chance of settling a Δ averaged over the sd's own
uncertainty (assurance), not on the power at the observed sd taken as the truth.

The observed sd s of n0 pairs is itself a draw: s² ~ σ² χ²(df0) / df0. Planning with σ = s says "80%"
and delivers about 64-70% once σ is drawn too (half the time σ > s, and the power falls faster above s
than it rises below). So the plan averages the probability of settling over σ² = s² df0 / χ²(df0) (the
sd's fiducial distribution; Bayesian with the usual 1/σ prior) and asks that average to reach 80%.

"Settled" is what the verdict text promises:
    |Δ| >= margin   the difference test resolves, in the direction of Δ (better / worse)
    |Δ| <  margin   either test resolves (better, worse, slightly …, or equivalent): a settled
                    equivalence counts, so a Δ inside the margin is not planned as if it had to be resolved
Both probabilities are exact for normal differences given σ (the new sample's sd is integrated over its
own scaled chi-square), and the test set's `floor` (vitcore.stats.testset) stays whatever n is. The two
integrals are quadratures on NODES quantiles of each chi-square. No pandas, no TensorFlow.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats
from scipy.special import ndtr  # the normal cdf, without scipy.stats' per-call overhead

NODES = 64  # quantile nodes per chi-square: the assurance within ±0.01 of simulation (tests/test_assurance.py)
_U = (np.arange(NODES) + 0.5) / NODES


@lru_cache(maxsize=1024)
def _chi2_over_df(df: float) -> np.ndarray:
    """NODES quantiles of χ²(df) / df (read-only): the quadrature's nodes."""
    nodes = stats.chi2.ppf(_U, df) / df
    nodes.setflags(write=False)
    return nodes


def settle_probability(delta: float, sigma, n: int, margin: float, level: float, paired: bool = True,
                       floor: float = 0.0) -> np.ndarray:
    """P(settled) with n pairs (runs per side unpaired) at family level `level` when the true Δ is `delta`
    and the true sd (of the differences, or sqrt(s1² + s2²)) is each of `sigma` (any shape): the module doc."""
    sigma = np.asarray(sigma, dtype=float)[..., None]                        # (..., 1)
    df = n - 1 if paired else 2 * n - 2
    s = sigma * np.sqrt(_chi2_over_df(df))                                   # (..., NODES): the new sample's sd
    se_hat = np.sqrt(s ** 2 / n + floor ** 2)                                # what the tests will use
    spread = np.sqrt(sigma ** 2 / n + floor ** 2)                            # how the new mean scatters
    resolve = stats.t.ppf(1 - level / 2, df) * se_hat                        # |mean| beyond it: resolved
    if abs(delta) >= margin:
        p = ndtr((abs(delta) - resolve) / spread)                   # resolved in Δ's direction
    else:
        inside = np.maximum(margin - stats.t.ppf(1 - level, df) * se_hat, 0)  # |mean| within it: equivalent
        low, high = np.minimum(inside, resolve), resolve                      # unsettled: low <= |mean| <= high
        unsettled = (ndtr((high - delta) / spread) - ndtr((low - delta) / spread)
                     + ndtr((-low - delta) / spread) - ndtr((-high - delta) / spread))
        p = 1 - unsettled
    return p.mean(axis=-1)


def sigma_draws(sd: float, df0: float) -> np.ndarray:
    """NODES quantiles of σ given an observed sd on df0 degrees of freedom: σ² = sd² df0 / χ²(df0)."""
    return sd / np.sqrt(_chi2_over_df(float(df0)))


def assurance(delta: float, sd: float, df0: float, n: int, margin: float, level: float, paired: bool = True,
              floor: float = 0.0) -> float:
    """The chance that n pairs settle the Δ, averaged over the sd's uncertainty (df0: the observed sd's df)."""
    return float(settle_probability(delta, sigma_draws(sd, df0), n, margin, level, paired, floor).mean())


def smallest_n(chance, target: float, most: int) -> float:
    """The smallest n >= 2 with chance(n) >= target (chance grows with n), inf when not even at `most`."""
    if chance(most) < target:
        return np.inf
    low, high = 1, 2
    while chance(high) < target:
        low, high = high, min(high * 2, most)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if chance(middle) < target else (low, middle)
    return float(high)
