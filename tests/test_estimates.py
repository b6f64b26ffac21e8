"""vitcore.stats.estimates against independent recomputations: scipy's tests and the plan's own criterion."""

import numpy as np
import pytest
from scipy import stats as sp

from vitcore.stats import estimates as e


def test_both_tests_match_scipy():
    deltas = np.array([0.012, 0.004, 0.009, -0.002, 0.011, 0.007, 0.003])
    est = e.paired_estimate(deltas)
    assert est.p_value == pytest.approx(sp.ttest_1samp(deltas, 0).pvalue, rel=1e-12)
    margin = 0.01  # TOST: the larger of the two one-sided t-tests against -margin and +margin
    lower = sp.ttest_1samp(deltas, -margin, alternative="greater").pvalue
    upper = sp.ttest_1samp(deltas, margin, alternative="less").pvalue
    assert est.p_tost(margin) == pytest.approx(max(lower, upper), rel=1e-12)
    low90, high90 = sp.t.interval(0.90, len(deltas) - 1, loc=deltas.mean(), scale=sp.sem(deltas))
    judged = e.judge("test_accuracy", est, margin, "f", 4)
    assert (judged["ci90_low"], judged["ci90_high"]) == pytest.approx((low90, high90), rel=1e-12)
    adj = sp.t.interval(1 - 0.05 / 4, len(deltas) - 1, loc=deltas.mean(), scale=sp.sem(deltas))
    assert (judged["ci_adj_low"], judged["ci_adj_high"]) == pytest.approx(adj, rel=1e-12)


@pytest.mark.parametrize("deltas, size", [
    ([0.0138, -0.0391, -0.0049, -0.0162, -0.0149, -0.0122, -0.0329, -0.0124, -0.0197, 0.0285], 7),  # resolve the Δ
    ([0.0148, 0.0003, 0.0021, -0.0076, -0.0173, -0.0007, 0.0212, 0.0032], 1),                    # near 0: either test
])
def test_seeds_needed_is_the_smallest_n_with_80_percent_assurance(deltas, size):
    """The plan's own criterion (tests/test_assurance.py simulates the promise): assurance at N, not at N - 1."""
    from vitcore.stats import estimates

    est = e.paired_estimate(deltas)
    judged = e.judge("test_accuracy", est, 0.01, "f", size)
    assert judged["verdict"] == e.INCONCLUSIVE
    n = int(judged["seeds_needed"])
    assert n > len(deltas) and judged["seeds_more"] == n - len(deltas)
    chance = [estimates.assurance(est.mean, est.scale, est.n - 1, k, 0.01, 0.05 / size) for k in (n - 1, n)]
    assert chance[0] < 0.80 <= chance[1]
    # never below the plan with the sd taken as known (the difference test's power at the observed sd)
    if abs(est.mean) >= 0.01:
        assert e.power_difference(est.mean, est.scale, n, 0.05 / size) >= 0.80


def test_needs_text_says_a_total_and_how_many_more():
    assert e.needs_text(41.0, 10) == ("needs 41 paired random seeds for 80% assurance (31 more), as a new look, not a "
                                      "continuation: `python -m vitcore plan register NAME --vary FIELD=LEVEL --rows "
                                      "N --seeds A-B`, then `python -m vitcore sweep plan NAME`")
    assert e.needs_text(12.0, 10, paired=False).endswith(e.NEW_LOOK)  # unpaired: a new look too
    assert e.needs_text(np.nan, 10) == "spread unknown" and "new look" not in e.needs_text(np.inf, 10)
    # one sentence, so a card or the CLI's line carries it; the why (the second look's false positives) is in the
    # definition of "inconclusive", printed by the README, the legends and --help
    assert e.needs_text(41.0, 10).count(". ") == 0 and e.PLAN_COMMANDS in e.DEFINITIONS["inconclusive"]


def test_a_second_look_at_the_same_level_inflates_the_false_positive_rate():
    """The figure the definition of "inconclusive" quotes: a fixed-sample t-test at 0.05 on 10 pairs, then, if it
    did not resolve, again at 0.05 on 29 (its "needs 29 (19 more)"), rejects a true null far above 5%."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40_000, 29))
    first = sp.ttest_1samp(x[:, :10], 0, axis=1).pvalue < 0.05
    second = sp.ttest_1samp(x, 0, axis=1).pvalue < 0.05
    rate = (first | second).mean()
    assert first.mean() == pytest.approx(0.05, abs=0.005) and rate == pytest.approx(0.089, abs=0.006)
    assert "8.9% simulated" in e.DEFINITIONS["inconclusive"]


def test_every_verdict_word_has_one_definition():
    defined = " ".join(e.DEFINITIONS)
    for word in e.VERDICTS:
        assert word.split()[-1] in defined
    assert set(e.RESOLVED) | {e.EQUIVALENT, e.INCONCLUSIVE, e.TOO_FEW, e.NOT_COMPARABLE} == set(e.VERDICTS)


def test_readme_legend_and_help_print_the_library_words():
    from pathlib import Path

    from vitcore.app.ablations import cards
    from vitcore.cli.common import VERDICTS_EPILOG

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()  # the verdict words and the margin: "What the verdict words mean"
    methods = (root / "docs" / "methods-and-verdicts.md").read_text()  # the readings beside every verdict
    legend = cards.definitions()
    from vitcore.stats import readings

    for page, definitions in ((readme, e.DEFINITIONS), (methods, readings.DEFINITIONS)):
        for word, text in definitions.items():
            assert f"**{word}** — {text}" in page and f"**{word}**: {text}" in legend
            assert f"{word}: {text}" in VERDICTS_EPILOG
    assert e.MARGIN_REASON in readme and e.MARGIN_REASON in legend
