"""Did a confirmation on fresh random seeds replicate its discovery? The outcome, the z between them and the two
combined, as every view says them.

    outcome   replicated        the confirmation decided and shows a claim the discovery showed (its direction,
                                or a Δ inside ±margin: 'slightly better' replicates 'better' and 'equivalent')
              contradicted      the confirmation decided a claim the discovery excludes (the other direction, or
                                inside ±margin against a discovery shown beyond it, or beyond against inside)
              not confirmed     the confirmation neither shows the discovery's claim nor excludes it: undecided at
                                its cap, or decided something both allow ('equivalent' against 'better, size
                                undetermined')
              pending           the confirmation has not reached its cap undecided, nor decided
              no decided discovery   the discovery decided nothing: there is no finding to replicate
    z         (confirmation Δ − discovery Δ) / sqrt(v_d + v_c), with each side's random-seed variance (scale² / n):
              both are measured on the same 10,000 test images, so the test set's term is common to both and
              cancels from their difference
    pooled    the fixed-effect inverse-variance combination of the two (weights 1 / v, the seeds' variances), with
              the shared test-image variance added once to its standard error, a normal 95% interval, and Cochran's
              Q (1 df, p = the two-sided p of z) as the heterogeneity test. Context beside the confirmation's
              verdict, never a verdict: the discovery's half was chosen after looking.

The rule's name is written into every new plan file (vitcore.stats.plans.REPLICATION), so a later change to it
is a new rule, never a new reading of an old plan. No pandas, no TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from vitcore.stats.estimates import (
    BETTER,
    EQUIVALENT,
    HIGHER,
    INSIDE,
    RESOLVED,
    SLIGHTLY_BETTER,
    SLIGHTLY_HIGHER,
    SLIGHTLY_LOWER,
    SLIGHTLY_WORSE,
    WORSE,
)
from vitcore.stats.readings import SIZE_BEYOND

REPLICATED, CONTRADICTED, NOT_CONFIRMED = "replicated", "contradicted", "not confirmed"
PENDING, NOTHING = "pending", "no decided discovery"
OUTCOMES = (REPLICATED, CONTRADICTED, NOT_CONFIRMED, PENDING, NOTHING)
UP = (BETTER, SLIGHTLY_BETTER, HIGHER, SLIGHTLY_HIGHER)
MIRROR = {BETTER: WORSE, SLIGHTLY_BETTER: SLIGHTLY_WORSE, HIGHER: "lower", SLIGHTLY_HIGHER: SLIGHTLY_LOWER}
MIRROR.update({b: a for a, b in MIRROR.items()})


def mirrored(verdict: str) -> str:
    """The verdict of the same comparison taken the other way round (baseline − selection): 'better' <-> 'worse'."""
    return MIRROR.get(verdict, verdict)


def claims(verdict: str) -> set[str]:
    """What a verdict shows: up / down (the difference test) and negligible (inside the margin)."""
    shown = {"negligible"} if verdict == EQUIVALENT or verdict in INSIDE else set()
    if verdict in RESOLVED:
        shown.add("up" if verdict in UP else "down")
    return shown


def region(verdict: str, size: str = "") -> tuple[float, float]:
    """The values of Δ / margin a verdict allows, as an open interval: 'better' (0, inf), 'better' beyond the
    margin (1, inf), 'slightly better' (0, 1), 'equivalent' (-1, 1), anything undecided (-inf, inf)."""
    low, high = -np.inf, np.inf
    shown = claims(verdict)
    if "up" in shown:
        low = 1.0 if size == SIZE_BEYOND else 0.0
    if "down" in shown:
        high = -1.0 if size == SIZE_BEYOND else 0.0
    if "negligible" in shown:
        low, high = max(low, -1.0), min(high, 1.0)
    return low, high


def outcome(discovery: str, confirmation: str, decided: bool, at_cap: bool, discovery_size: str = "",
            confirmation_size: str = "") -> str:
    """One of OUTCOMES (see the module docstring) for a discovery's verdict and its confirmation's."""
    if not claims(discovery):
        return NOTHING
    if not decided:
        return NOT_CONFIRMED if at_cap else PENDING
    if claims(discovery) & claims(confirmation):
        return REPLICATED
    (a, b), (c, d) = region(discovery, discovery_size), region(confirmation, confirmation_size)
    return CONTRADICTED if max(a, c) >= min(b, d) else NOT_CONFIRMED


@dataclass(frozen=True)
class Side:
    """One estimate of a Δ: its mean, its random-seed variance (scale² / n) and its test-image term (floor, an sd)."""
    mean: float
    seed_var: float
    floor: float = 0.0

    @classmethod
    def of(cls, estimate) -> Side:
        """From a vitcore.stats.estimates.Estimate (NaN variance below 2 pairs)."""
        var = estimate.scale ** 2 / estimate.n if estimate.n >= 2 else np.nan
        return cls(float(estimate.mean), float(var), float(estimate.floor or 0.0))


@dataclass(frozen=True)
class Pooled:
    """The discovery and the confirmation combined (module docstring): context, never a verdict."""
    z: float            # (confirmation − discovery) / sd of the difference
    delta: float
    low: float
    high: float
    heterogeneity_p: float
    method: str = "fixed-effect inverse-variance (random-seed variances; the shared test-image term once), Cochran's Q"


NO_POOL = Pooled(np.nan, np.nan, np.nan, np.nan, np.nan)


def pooled(discovery: Side, confirmation: Side, confidence: float = 0.95) -> Pooled:
    """The Pooled of two sides; NO_POOL when either has no variance (fewer than 2 pairs) or both have none."""
    v = np.array([discovery.seed_var, confirmation.seed_var])
    d = np.array([discovery.mean, confirmation.mean])
    if not np.all(np.isfinite(v)) or not np.all(np.isfinite(d)) or np.any(v <= 0):
        return NO_POOL
    w = 1.0 / v
    delta = float(np.sum(w * d) / np.sum(w))
    se = float(np.sqrt(1.0 / np.sum(w) + max(discovery.floor, confirmation.floor) ** 2))
    half = float(stats.norm.ppf(0.5 + confidence / 2)) * se
    z = float((d[1] - d[0]) / np.sqrt(v.sum()))
    q = float(np.sum(w * (d - delta) ** 2))  # Cochran's Q = z² for two estimates
    return Pooled(z, delta, delta - half, delta + half, float(stats.chi2.sf(q, 1)))
