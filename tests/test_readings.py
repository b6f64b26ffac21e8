"""What every Δ reads beside its verdict (vitcore.stats.readings) and the class-stratified test-set term
(vitcore.stats.testset): size word, Δ / run sd, win rate, borderline, on synthetic rows and the committed store."""

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from scipy import stats as sp

from vitcore.app import charts, tables
from vitcore.app.ablations import cards
from vitcore.config.run import RunConfig
from vitcore.stats import estimates as v
from vitcore.stats import readings, testset
from vitcore.stats.compare import compare, paired_delta
from vitcore.stats.estimates import BETTER, SLIGHTLY_BETTER
from vitcore.stats.readings import SIZE_BEYOND, SIZE_OPEN
from vitcore.store.runs import RunStore


def judged(deltas, size: int = 1, margin: float = 0.01) -> dict:
    return v.judge("test_accuracy", v.paired_estimate(deltas), margin, "f", size)


def test_better_beyond_the_margin_and_better_of_undetermined_size_read_differently():
    beyond = judged([0.031, 0.029, 0.033, 0.030, 0.032])
    small = judged([0.015, 0.002, 0.012, 0.004, 0.016, 0.006, 0.013, 0.003])  # resolved, interval spans +0.01
    inside = judged([0.002, 0.0025, 0.0022, 0.0018, 0.0021, 0.0019])
    assert (beyond["verdict"], small["verdict"], inside["verdict"]) == (BETTER, BETTER, SLIGHTLY_BETTER)
    assert [readings.size_word(r) for r in (beyond, small, inside)] == [SIZE_BEYOND, SIZE_OPEN, "inside"]
    assert readings.size_word({**judged([0.01]), "verdict": v.TOO_FEW}) == SIZE_OPEN
    texts = [cards.verdict_text({**r, "metric": "test_accuracy", "size": readings.size_word(r)})
             for r in (beyond, small)]
    assert texts[0] == "better — beyond ±0.010" and texts[1].startswith("better — size undetermined")


def test_win_rate_counts_ties_as_half_with_an_exact_interval():
    out = readings.spread_columns("test_accuracy", [0.01, 0.02, 0.0, -0.01, 0.03], sd=0.01)
    assert (out["wins"], out["win_rate"]) == (3.5, 0.7)
    assert out["win_low"] == pytest.approx(sp.binomtest(3, 5).proportion_ci(0.95, "exact").low)
    assert out["win_high"] == pytest.approx(sp.binomtest(4, 5).proportion_ci(0.95, "exact").high)
    assert out["delta_in_run_sd"] == pytest.approx(0.01 / 0.01)
    # lower is better for seconds: a negative Δ wins
    assert readings.spread_columns("seconds", [-1.0, -2.0, 1.0], sd=1.0)["wins"] == 2
    assert readings.run_sd([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(np.sqrt((1.0 + 4.0) / 2))
    unpaired = readings.spread_of("test_accuracy", None, [0.80, 0.82, 0.81], [0.83, 0.85], mean=0.03)
    assert np.isnan(unpaired["win_rate"]) and unpaired["delta_in_run_sd"] == pytest.approx(
        0.03 / np.sqrt((np.var([0.80, 0.82, 0.81], ddof=1) + np.var([0.83, 0.85], ddof=1)) / 2))


NEAR = [0.012, -0.003, 0.02, -0.006, 0.016, 0.003, 0.01, 0.001]


def test_borderline_names_what_would_flip_it():
    near = judged(NEAR)  # p 0.083: within a factor of 2 of 0.05
    assert 0.05 < near["p_adj"] < 0.10 and near["verdict"] == v.INCONCLUSIVE
    deltas = [0.012, 0.0, 0.02, -0.004, 0.016, 0.003, 0.01, 0.001]
    out = readings.verdict_columns("test_accuracy", v.paired_estimate(deltas), near)
    assert out["borderline"] and "(below it: better)" in out["flips"]
    far = judged([0.031, 0.029, 0.033, 0.030, 0.032])
    assert not readings.verdict_columns("test_accuracy", v.paired_estimate([0.031, 0.029, 0.033, 0.030, 0.032]),
                                        far)["borderline"]
    for deltas in ([0.031, 0.029, 0.033], [0.002, 0.0025, 0.0022, 0.0018], [0.0, 0.001, -0.001, 0.0005, 0.0],
                   [0.05, -0.04]):
        row = judged(deltas)  # readings' rule (to say what a crossed threshold gives) is judge's own
        assert readings.word("test_accuracy", np.mean(deltas) > 0, row["p_adj"], row["p_tost_adj"]) == row["verdict"]


def test_a_verdict_the_test_image_term_decides_is_borderline_under_the_seeds_only_model():
    """The seeds alone resolve this Δ; with the test images' term (sd 0.008) it is inconclusive: borderline, and
    `flips` names the seeds-only model (the old check tried only the two other test-set models)."""
    seeds = v.paired_estimate([0.012, 0.010, 0.014, 0.011, 0.013])
    wide = testset.with_floor(seeds, 0.008 ** 2)
    row = v.judge("test_accuracy", wide, 0.01, "f", 1)
    assert row["verdict"] == v.INCONCLUSIVE and row["p_adj"] > 0.05 * readings.NEAR  # not near 0.05 either
    assert v.judge("test_accuracy", testset.seeds_only(wide), 0.01, "f", 1)["verdict"] == v.BETTER
    assert testset.seeds_only(wide).se == pytest.approx(seeds.se) and testset.seeds_only(seeds) is seeds
    out = readings.verdict_columns("test_accuracy", wide, row, {})
    assert out["borderline"] and out["flips"].startswith(f"with {readings.SEEDS}: better (p_adj ")
    assert readings.SEEDS not in readings.alternatives(seeds, {})  # a seeds-only verdict has no such check


def test_patch_4_at_1000_rows_is_borderline_because_only_the_test_images_keep_it_undecided(committed):
    """At the plan's cap (look 4, 40 random seeds) the Δ +0.0067 is inconclusive with the test images' term (p_adj
    0.14) and better over random seeds alone (p_adj 0.024): that sensitivity is now on the row."""
    runs, tests = committed
    base = RunConfig(train_rows=1000)
    row = compare(runs, base.replace(patch_size=4), base, metrics=("test_accuracy",),
                  test_set=tests).metrics.iloc[0].to_dict()
    assert (row["verdict"], row["look"], row["interval"]) == (v.INCONCLUSIVE, 4, testset.WITH_TEST)
    assert row["borderline"] and f"with {readings.SEEDS}: better" in row["flips"]


def stratified_table(rng, n: int, per_class: int, class_sd: float, image_sd: float, rest_sd: float):
    """d = class effect (fixed, the same under every redraw) + b_image + e; 10 classes of `per_class` images."""
    labels = np.repeat(np.arange(10), per_class)
    fixed = np.linspace(-class_sd, class_sd, 10)[labels]
    return lambda: fixed + rng.normal(0, image_sd, (1, labels.size)) + rng.normal(0, rest_sd, (n, labels.size)), labels


def test_the_stratified_term_is_unbiased_where_the_simple_random_sample_errs_wide():
    """Redrawing the images within fixed classes: the within-class term matches the true variance of the mean,
    the crossed (simple random sample) term counts the classes' fixed spread and comes out wider."""
    rng = np.random.default_rng(3)
    n, per_class, class_sd, image_sd, rest_sd = 6, 60, 0.3, 0.1, 0.4
    draw, labels = stratified_table(rng, n, per_class, class_sd, image_sd, rest_sd)
    means, strat, crossed = [], [], []
    for _ in range(300):
        d = draw()
        means.append(d.mean())
        strat.append(testset.image_variance(d, labels) + d.mean(axis=1).var(ddof=1) / n)
        crossed.append(testset.image_variance(d) + d.mean(axis=1).var(ddof=1) / n)
    truth = image_sd ** 2 / labels.size + rest_sd ** 2 / (n * labels.size)
    assert np.var(means, ddof=1) == pytest.approx(truth, rel=0.2)
    assert np.mean(strat) == pytest.approx(truth, rel=0.08)
    assert np.mean(crossed) > 1.5 * truth


def test_one_stratum_is_the_crossed_model_and_satterthwaite_adds_the_images_df():
    rng = np.random.default_rng(4)
    d = rng.normal(0, 1, (5, 200)) + rng.normal(0, 0.5, (1, 200))
    assert testset.image_variance(d, np.zeros(200)) == pytest.approx(testset.image_variance(d))
    squares = testset.mean_squares(d)
    assert squares.df_images == 199 and squares.df_residual == 4 * 199
    assert squares.satterthwaite_df() > 4  # the images' part has hundreds of df


@pytest.fixture(scope="module")
def committed(committed_table):
    return committed_table.copy(), testset.from_store(RunStore(ROOT / "cached_runs"))  # the session's table


def test_vit_vs_convnet_at_4000_rows_is_a_borderline_equivalence(committed):
    """Measured on main: p_tost 0.0526 with the images as a simple random sample (inconclusive), 0.0496 with the
    class-stratified term (equivalent), 0.038 with Satterthwaite df: equivalent, marked borderline."""
    runs, tests = committed
    vit, convnet = RunConfig(train_rows=4000), RunConfig(train_rows=4000, model="convnet")
    row = compare(runs, vit, convnet, metrics=("test_accuracy",), test_set=tests).metrics.iloc[0].to_dict()
    assert row["verdict"] == v.EQUIVALENT and row["size"] == readings.SIZE_INSIDE and row["borderline"]
    assert row["p_tost"] == pytest.approx(0.0496, abs=5e-4) and row["df_satterthwaite"] > 20
    est = v.paired_estimate(compare(runs, vit, convnet, metrics=("test_accuracy",)).pairs["delta"])
    alternatives = readings.alternatives(testset.with_floor(est, row["test_se"] ** 2), row)
    assert alternatives[readings.SRS].p_tost(0.01) == pytest.approx(0.0526, abs=5e-4)
    assert alternatives[readings.SATTERTHWAITE].p_tost(0.01) == pytest.approx(0.038, abs=1e-3)  # still equivalent
    assert f"simple random sample: {v.INCONCLUSIVE}" in row["flips"]
    assert cards.verdict_text(row).endswith(cards.BORDERLINE)


def test_every_view_carries_the_readings(committed):
    """The columns are added once, at the source: compare's metrics, a flip row, the forest plot's data."""
    runs, tests = committed
    base, first = RunConfig(train_rows=4000), runs[runs.seed < 10]  # the discovery's seeds 0-9 (not the confirmation's)
    delta = paired_delta(first[first.config_id == base.config_id], first[first.config_id == base.replace(
        norm_placement="post").config_id], "test_accuracy", test_set=tests)
    assert set(readings.READING_COLUMNS) <= set(delta.row) and delta.row["wins"] == 10  # 10 of 10 random seeds
    from vitcore.stats import summaries

    flips = summaries.flip_effects(runs, base, metrics=("test_accuracy",), test_set=tests)
    spec = charts.forest(tables.flip_frame(flips, "test_accuracy"), "test_accuracy", "t").to_dict()
    (drawn,) = [rows for rows in spec["datasets"].values() if "verdict_text" in rows[0]]
    assert {row["size"] for row in drawn} <= set(readings.SIZES) and all("wins_text" in row for row in drawn)
    table = tables.flip_table(flips, "test_accuracy")
    assert {"Size", "Δ / run sd", "Wins", "Borderline"} <= set(table.columns)
    assert isinstance(pd.DataFrame(drawn)["borderline"].iloc[0], (bool, np.bool_))


def test_lsa_at_1000_rows_says_its_interval_is_over_random_seeds_alone(committed):
    """Its test-image term is exactly 0 (the image mean square below the residual): the interval is the seeds',
    and its label and sentence say so (it read "random seeds and test images", from a one-ulp tie of widths)."""
    runs, tests = committed
    base = RunConfig(train_rows=1000)
    row = compare(runs, base.replace(self_attention="lsa"), base, metrics=("test_accuracy",),
                  test_set=tests).metrics.iloc[0].to_dict()
    assert row["test_se"] == 0.0 and row["n_pairs_with_test"] >= 10
    assert row["interval"] == testset.SEEDS_ONLY
    assert (row["ci_low"], row["ci_high"]) == (row["ci_low_seeds"], row["ci_high_seeds"])
    assert testset.sentence(row).startswith("The test images add no measurable variance")
