"""Flipped images from per-image predictions, and the data-size curve's sign-change sentence."""

import numpy as np
import pandas as pd
import pytest
from fakes import run_row, runs_table, write_predicted_run

from vitcore.analysis import crossover, flips, scaling
from vitcore.config.run import RunConfig
from vitcore.data.fashion import shipped_test_labels
from vitcore.store.runs import RunStore

LABELS = shipped_test_labels().astype(np.int64)  # the official test split: every reader checks predictions against it
HARD = np.arange(0, 10_000, 5)             # every fifth image: wrong half the time under any random seed


def noisy_predictions(rng: np.random.Generator, broken: np.ndarray | None = None) -> np.ndarray:
    """One run's predictions: hard images wrong with probability 1/2, the rest with 3%; `broken`
    images always wrong (what a switch that breaks them does)."""
    wrong = rng.random(len(LABELS)) < 0.03
    wrong[HARD] = rng.random(len(HARD)) < 0.5
    if broken is not None:
        wrong[broken] = True
    return np.where(wrong, (LABELS + 1) % 10, LABELS)


def synthetic_store(tmp_path, broken: np.ndarray | None, seeds: int = 10) -> tuple[RunStore, RunConfig, RunConfig]:
    """A real store: the article's ViT and its post-norm variant at 1,000 rows, `seeds` random seeds each,
    every run with predictions; post-norm changes nothing except always getting `broken` wrong."""
    store, rng = RunStore(tmp_path / "store"), np.random.default_rng(0)
    base, post = RunConfig(train_rows=1000), RunConfig(train_rows=1000, norm_placement="post")
    for seed in range(seeds):
        write_predicted_run(store, base.replace(seed=seed), LABELS, noisy_predictions(rng))
        write_predicted_run(store, post.replace(seed=seed), LABELS, noisy_predictions(rng, broken))
    return store, post, base


def report_of(store: RunStore, selection: RunConfig, baseline: RunConfig) -> flips.FlipReport:
    table = store.table()
    paired = flips.paired_predictions(lambda run_id: store.load(run_id).predictions(),
                                      table[table["config_id"] == selection.config_id],
                                      table[table["config_id"] == baseline.config_id])
    return flips.flip_report(paired, LABELS)


def test_a_switch_that_changes_nothing_lists_no_image_and_reports_its_null(tmp_path):
    report = report_of(*synthetic_store(tmp_path, broken=None))
    assert report.n_pairs == 10 and report.enough
    # the old "more than half of the pairs" rule lists images from seed noise alone, as its null predicts
    for direction in flips.DIRECTIONS:
        assert report.observed[direction] > 20
        assert report.expected_null[direction] == pytest.approx(report.observed[direction], rel=0.5)
        assert report.seed_null[direction] > 20 and report.seed_null_pairs == 5
        assert report.seed_null_expected == pytest.approx(report.observed[direction], rel=0.5)  # same n, same noise
    assert report.listed.empty and (report.images["q_value"].dropna() >= flips.FDR).all()
    text = flips.summary(report)
    assert "expected if the switch picked no direction" in text and "0 newly wrong, 0 newly right" in text
    assert set(report.images.columns) >= {"flip_rate", "null_rate", "q_value"}


def test_the_seed_null_counts_at_no_more_pairs_than_the_comparison(tmp_path):
    """A baseline with four times the comparison's random seeds: its against-itself count is taken over the
    comparison's n pairs (runs 0-1 … 2n-2, 2n-1), not 2n pairs, where the majority rule counts far fewer."""
    store, post, base = synthetic_store(tmp_path, broken=None, seeds=5)
    rng = np.random.default_rng(1)
    for seed in range(5, 20):
        write_predicted_run(store, base.replace(seed=seed), LABELS, noisy_predictions(rng))
    report = report_of(store, post, base)
    assert report.n_pairs == 5 and report.seed_null_pairs == 5
    table = store.table()
    alone = np.stack([store.load(r).predictions() for r in table[table["config_id"] == base.config_id]
                      .sort_values("seed")["run_id"]])
    assert (report.seed_null_pairs, report.seed_null) == flips.seed_null(alone[:10], LABELS)
    assert flips.seed_null(alone, LABELS)[1] != report.seed_null  # all 10 pairs would count otherwise


def test_a_switch_that_breaks_known_images_is_found(tmp_path):
    broken = np.arange(1, 10_000, 50)   # 200 easy images the post-norm variant always gets wrong
    report = report_of(*synthetic_store(tmp_path, broken=broken))
    listed = report.listed
    found = listed[listed["image"].isin(broken)]
    assert len(found) >= 150 and (found["direction"] == flips.BROKEN).all()   # at least 3 in 4 found...
    false = set(listed["image"]) - set(broken)
    assert false <= set(HARD) and len(false) <= 2 * flips.FDR * len(listed)   # ...at about the FDR's cost
    assert (report.pairs["newly_wrong"] > report.pairs["newly_right"]).all() and (report.pairs["p_value"] < 0.001).all()
    assert report.observed[flips.BROKEN] > report.expected_null[flips.BROKEN] + 100


def test_fewer_than_five_pairs_rank_no_image(tmp_path):
    broken = np.arange(1, 10_000, 50)
    report = report_of(*synthetic_store(tmp_path, broken=broken, seeds=3))
    assert report.n_pairs == 3 and not report.enough and report.listed.empty
    assert "no image is ranked" in flips.summary(report)


def test_sign_test_and_benjamini_hochberg_match_scipy():
    from scipy import stats as scipy_stats

    for k, d in ((0, 5), (3, 10), (7, 7), (0, 0)):
        expected = scipy_stats.binomtest(k, d, 0.5).pvalue if d else 1.0
        assert flips.sign_test(k, d) == pytest.approx(expected)
    p = np.array([0.01, 0.04, 0.03, 0.5])
    assert flips.benjamini_hochberg(p) == pytest.approx(scipy_stats.false_discovery_control(p))


def test_paired_predictions_skip_runs_without_predictions():
    sel = pd.DataFrame({"train_rows": [1000, 1000, 4000], "seed": [0, 1, 0], "run_id": ["s0", "s1", "s4"]})
    base = pd.DataFrame({"train_rows": [1000, 1000, 1000], "seed": [0, 1, 2], "run_id": ["b0", "b1", "b2"]})
    stored = {"s0": np.zeros(3), "b0": np.ones(3), "s1": np.zeros(3), "b2": np.ones(3)}  # b1 has none
    paired = flips.paired_predictions(stored.get, sel, base)
    assert paired.n == 1 and paired.baseline[0, 0] == 1 and len(paired.baseline_alone) == 2


def test_crossover_is_stated_only_when_the_intervals_resolve_it():
    rows = []
    for rows_, lead in ((1000, 0.03), (4000, 0.0), (16000, -0.03)):
        for seed in range(6):
            noise = 0.002 * ((seed * 7) % 5 - 2)
            rows.append(run_row(RunConfig(train_rows=rows_, seed=seed), test_accuracy=0.8 + lead + noise,
                                final_val_accuracy=0.8 + lead + noise))
            rows.append(run_row(RunConfig(model="convnet", train_rows=rows_, seed=seed), test_accuracy=0.8,
                                final_val_accuracy=0.8))
    frame = scaling.deltas(runs_table(rows))
    text = scaling.crossover(frame)
    assert "changes sign between 4,000 and 16,000" not in text and "between 1,000 and 16,000" in text
    curve = scaling.curve(runs_table(rows))
    assert set(curve["train_rows"]) == {1000, 4000, 16000} and (curve["n"] == 6).all()
    flat = scaling.crossover(frame[frame["train_rows"] == 4000])
    assert "No resolved change of sign" in flat and "neither model leads" in flat


def curve_runs(lead_at, seeds: int = 6, rows=(1000, 2000, 4000, 8000, 16000)) -> pd.DataFrame:
    """The article's ViT and convnet at each row count; the ViT's lead is lead_at(rows) plus a small
    per-seed noise."""
    out = []
    for rows_ in rows:
        for seed in range(seeds):
            noise = 0.002 * ((seed * 7 + rows_ // 1000) % 5 - 2)
            out.append(run_row(RunConfig(train_rows=rows_, seed=seed), test_accuracy=0.8 + lead_at(rows_) + noise))
            out.append(run_row(RunConfig(model="convnet", train_rows=rows_, seed=seed), test_accuracy=0.8))
    return runs_table(out)


def test_crossover_estimate_finds_a_planted_crossing_with_its_interval():
    runs = curve_runs(lambda rows: 0.03 - 0.015 * np.log2(rows / 1000))  # zero at 4,000 rows
    estimate = scaling.crossover_estimate(runs, reps=300)
    assert estimate.rows == pytest.approx(4000, rel=0.05) and estimate.low < 4000 < estimate.high
    assert estimate.high / estimate.low < 1.5 and estimate.inside
    assert estimate.per_doubling == pytest.approx(-0.015, abs=0.002)
    assert estimate.row_counts == (1000, 2000, 4000, 8000, 16000) and estimate.n_pairs == (6,) * 5
    text = scaling.crossover_sentence(estimate)
    below, above = crossover.bracket(estimate)  # the measured sizes either side, not a figure read off a line
    assert {below, above} <= set(estimate.row_counts) and below <= estimate.rows <= above
    assert "the ViT leads below it, the convnet above" in text and "about" not in text
    assert (f"between {below:,} and {above:,} rows (straight line ≈ {crossover.rounded(estimate.rows)};" in text
            if below < above else f"at {below:,} rows, a measured size" in text)
    # the same function answers for any pair of configs and any table: the convnet against the ViT flips the sign
    flipped = scaling.crossover_estimate(runs, RunConfig(model="convnet"), RunConfig(), reps=50)
    assert flipped.rows == pytest.approx(estimate.rows)
    assert flipped.per_doubling == pytest.approx(-estimate.per_doubling)


def test_the_crossing_is_said_between_the_measured_sizes_that_bracket_it():
    """The committed curve crosses between an equivalent Δ at 4,000 rows and an inconclusive one at 8,000: the
    sentence said "about 5,014 rows", a straight line's figure to the row; it names the bracket and rounds."""
    counts = (1000, 2000, 4000, 8000, 16000)
    est = scaling.Crossover(5014.263, 3778.3, 8116.4, -0.014, counts, (10,) * 5, 2000, with_images=True,
                            left_out=(4794.1, 5696.4))
    text = scaling.crossover_sentence(est)
    assert "crosses zero between 4,000 and 8,000 rows (straight line ≈ 5,000; 95% bootstrap interval over " \
           "random seeds and test images: **3,800–8,100**, 2,000 replicates; leaving one row count out moves it " \
           "between 4,800 and 5,700)" in text
    on = scaling.Crossover(float(np.exp(np.log(4000))), 3000.0, 5000.0, -0.014, counts, (10,) * 5, 2000)
    assert crossover.bracket(on) == (4000, 4000) and "crosses zero at 4,000 rows, a measured size" in \
        scaling.crossover_sentence(on)
    assert [crossover.rounded(x) for x in (5014.26, 7449.0, 12345.0, 987.0)] == ["5,000", "7,400", "12,000", "990"]


def test_crossover_estimate_needs_three_row_counts():
    runs = curve_runs(lambda rows: 0.01, rows=(1000, 4000))
    estimate = scaling.crossover_estimate(runs, reps=10)
    assert np.isnan(estimate.rows) and "needs paired runs" in scaling.crossover_sentence(estimate)
