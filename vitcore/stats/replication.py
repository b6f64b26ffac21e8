"""Did a confirmation on fresh random seeds replicate its discovery? The outcome, the z between them and the two
combined, as every view says them.

    outcome   the rule a plan registered (vitcore.stats.plans.REPLICATION, recorded in every new plan file):
              the values of Δ / margin each verdict allows (its region: 'better' beyond the margin (1, inf),
              'better' of undetermined size (0, inf), 'slightly better' (0, 1), 'equivalent' (-1, 1)) are compared
              first, then the claims (up / down / inside the margin) they share
              contradicted      the regions exclude each other: the other direction, inside ±margin against a
                                discovery shown beyond it ('better' beyond against 'slightly better'), or beyond
                                against inside
              replicated        the confirmation decided and shows every claim the discovery showed (its region
                                lies inside the discovery's: 'slightly better' replicates 'better' of undetermined
                                size and 'equivalent')
              replicated (direction)   it shows the discovery's direction but not its size: 'better' beyond the
                                margin confirmed 'better' of undetermined size, or 'slightly better' confirmed 'better'
              replicated (inside the margin)   it shows the Δ inside ±margin but not the discovery's direction:
                                'slightly better' confirmed 'equivalent'
              not confirmed     the confirmation neither shows a claim of the discovery nor excludes it: undecided at
                                its cap, or decided something both allow ('equivalent' against 'better, size
                                undetermined')
              pending           the confirmation has not reached its cap undecided, nor decided
              no decided discovery   the discovery decided nothing: there is no finding to replicate
              A plan file recording the earlier rule (vitcore-1), or none (the committed plans: they predate the
              field), is read by vitcore-1: claims first, any shared claim 'replicated' (so 'better' beyond against
              'slightly better' replicates there); under it 'replicated' for patch 2 and 14 at 1,000 rows means the
              direction only. A registered rule is never re-read by a later one.
    z         (confirmation Δ − discovery Δ) / sqrt(v_d + v_c), with each side's random-seed variance (scale² / n):
              both are measured on the same 10,000 test images, so the test set's term is common to both and
              cancels from their difference; its p (heterogeneity_p) is Welch's, t with Welch–Satterthwaite df
    pooled    context beside the confirmation's verdict, never a verdict (POOLED_NOTE): the two halves' pairs
              weighted alike (weights n_d, n_c: the inverse-variance weights when a pair varies alike in both
              halves, as the same two configs on random seeds do, without the noise of estimated variances, which
              left a normal interval at 10 + 10 pairs covering 90%), the shared test-image variance added once to
              its standard error, an unadjusted 95% interval on t with Welch–Satterthwaite df (simulated coverage
              95% at 10 + 10 pairs: tests/test_plans.py). The discovery's half was chosen after looking.

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
    LOWER,
    RESOLVED,
    SLIGHTLY_BETTER,
    SLIGHTLY_HIGHER,
    SLIGHTLY_LOWER,
    SLIGHTLY_WORSE,
    WORSE,
)
from vitcore.stats.plans import REPLICATION, REPLICATION_RULES, REPLICATION_V1
from vitcore.stats.readings import SIZE_BEYOND

REPLICATED, CONTRADICTED, NOT_CONFIRMED = "replicated", "contradicted", "not confirmed"
REPLICATED_DIRECTION, REPLICATED_INSIDE = "replicated (direction)", "replicated (inside the margin)"
PENDING, NOTHING = "pending", "no decided discovery"
OUTCOMES = (REPLICATED, REPLICATED_DIRECTION, REPLICATED_INSIDE, CONTRADICTED, NOT_CONFIRMED, PENDING, NOTHING)
PARTLY = (REPLICATED_DIRECTION, REPLICATED_INSIDE)  # a part of the discovery's claims replicated
UP = (BETTER, SLIGHTLY_BETTER, HIGHER, SLIGHTLY_HIGHER)
MIRROR = {BETTER: WORSE, SLIGHTLY_BETTER: SLIGHTLY_WORSE, HIGHER: LOWER, SLIGHTLY_HIGHER: SLIGHTLY_LOWER}
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
            confirmation_size: str = "", rule: str = REPLICATION) -> str:
    """One of OUTCOMES (see the module docstring) for a discovery's verdict and its confirmation's, by `rule` (one of
    vitcore.stats.plans.REPLICATION_RULES: the one the plan registered)."""
    if rule not in REPLICATION_RULES:
        raise ValueError(f"replication rule {rule!r:.80} is not one this code implements (allowed: "
                         f"{' or '.join(map(repr, REPLICATION_RULES))})")
    if not claims(discovery):
        return NOTHING
    if not decided:
        return NOT_CONFIRMED if at_cap else PENDING
    (a, b), (c, d) = region(discovery, discovery_size), region(confirmation, confirmation_size)
    apart = max(a, c) >= min(b, d)
    shared = claims(discovery) & claims(confirmation)
    if rule == REPLICATION_V1:  # claims first: the committed plans' rule
        return REPLICATED if shared else CONTRADICTED if apart else NOT_CONFIRMED
    if apart:
        return CONTRADICTED
    if a <= c and d <= b:  # the confirmation's region inside the discovery's: every claim shown again
        return REPLICATED
    if shared & {"up", "down"}:
        return REPLICATED_DIRECTION
    return REPLICATED_INSIDE if shared else NOT_CONFIRMED


@dataclass(frozen=True)
class Side:
    """One estimate of a Δ: its mean, its random-seed variance (scale² / n), its test-image term (floor, an sd) and
    its pairs n."""
    mean: float
    seed_var: float
    floor: float = 0.0
    n: int = 0

    @classmethod
    def of(cls, estimate) -> Side:
        """From a vitcore.stats.estimates.Estimate (NaN variance below 2 pairs)."""
        var = estimate.scale ** 2 / estimate.n if estimate.n >= 2 else np.nan
        return cls(float(estimate.mean), float(var), float(estimate.floor or 0.0), int(estimate.n))


POOLED_NOTE = ("context, not a verdict: unadjusted 95% interval of both halves' pairs weighted alike (t, Welch-"
               "Satterthwaite df; the test-image term once); the discovery's half was chosen after looking")


@dataclass(frozen=True)
class Pooled:
    """The discovery and the confirmation combined (module docstring): context, never a verdict."""
    z: float            # (confirmation − discovery) / sd of the difference: Welch's t
    delta: float
    low: float
    high: float
    heterogeneity_p: float  # two-sided p of z on t with Welch–Satterthwaite df
    df: float = np.nan      # the interval's Welch–Satterthwaite degrees of freedom
    note: str = POOLED_NOTE
    method: str = ("the two halves' pairs weighted alike (n_d, n_c), the shared test-image term once, t with "
                   "Welch-Satterthwaite df; Welch's test between the halves")


NO_POOL = Pooled(np.nan, np.nan, np.nan, np.nan, np.nan)


def pooled(discovery: Side, confirmation: Side, confidence: float = 0.95) -> Pooled:
    """The Pooled of two sides; NO_POOL when either has no variance (fewer than 2 pairs) or both have none."""
    v = np.array([discovery.seed_var, confirmation.seed_var])
    d = np.array([discovery.mean, confirmation.mean])
    n = np.array([discovery.n, confirmation.n], dtype=float)
    if not np.all(np.isfinite(v)) or not np.all(np.isfinite(d)) or np.any(v <= 0) or np.any(n < 2):
        return NO_POOL
    z, delta, low, high, p, df = combine(d, v, n, max(discovery.floor, confirmation.floor), confidence)
    return Pooled(float(z), float(delta), float(low), float(high), float(p), float(df))


def combine(d, v, n, floor=0.0, confidence: float = 0.95) -> tuple:
    """(z, Δ, low, high, heterogeneity p, df) of discovery and confirmation: arrays whose last axis is (discovery,
    confirmation): means d, random-seed variances v (s² / n), pairs n; `floor` the shared test-image sd (any shape
    that broadcasts against d[..., 0]). Vectorised, so a simulation checks the arithmetic every view uses.

    Δ = Σ c_i Δ_i with c_i = n_i / (n_d + n_c); se² = Σ c_i² v_i + floor² (the test images, common to both halves,
    once); df = se⁴ / Σ (c_i² v_i)² / (n_i − 1), the floor known (10,000 images). The heterogeneity test: Welch's t
    of their difference, (Δ_c − Δ_d) / sqrt(v_d + v_c), on its own Welch–Satterthwaite df."""
    d, v, n = (np.asarray(x, dtype=float) for x in (d, v, n))
    c = n / n.sum(axis=-1, keepdims=True)
    part = c ** 2 * v
    se2 = part.sum(axis=-1) + np.asarray(floor, dtype=float) ** 2
    df = se2 ** 2 / np.sum(part ** 2 / (n - 1), axis=-1)
    delta = np.sum(c * d, axis=-1)
    half = stats.t.ppf(0.5 + confidence / 2, df) * np.sqrt(se2)
    z = (d[..., 1] - d[..., 0]) / np.sqrt(v.sum(axis=-1))
    df_z = v.sum(axis=-1) ** 2 / np.sum(v ** 2 / (n - 1), axis=-1)
    return z, delta, delta - half, delta + half, 2 * stats.t.sf(np.abs(z), df_z), df
