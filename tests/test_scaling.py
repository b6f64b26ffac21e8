"""The papers' small-data variant on the data-size curve (vitcore.analysis.scaling): its own crossover with
the convnet (scaling.crossover_estimate, as the ViT's) and its shift from the ViT's, resampled by random
seed across the three models; on run tables whose crossovers are known by construction."""

import numpy as np
import pandas as pd
import pytest

from vitcore.analysis import scaling
from vitcore.stats.estimates import WORSE

SIZES = (1_000, 2_000, 4_000, 8_000, 16_000)


def table(cross: dict, seeds: int = 10, noise: float = 0.002) -> pd.DataFrame:
    """Store-table rows whose model − convnet test accuracy is 0.01 × (cross[model] − log2 rows) plus noise."""
    rng, rows = np.random.default_rng(1), []
    for name, base in scaling.CURVE_MODELS.items():
        for size in SIZES:
            for seed in range(seeds):
                lead = 0.01 * (cross[name] - np.log2(size)) if name in cross else 0.0
                cfg = base.replace(train_rows=size, seed=seed)
                rows.append({"config_id": cfg.config_id, "run_id": cfg.run_id, "train_rows": size, "seed": seed,
                             "model": cfg.model, "test_accuracy": 0.8 + lead + 0.001 * seed + rng.normal(0, noise)})
    return pd.DataFrame(rows)


def test_the_shift_is_the_ratio_it_was_built_with_and_resolved():
    runs = table({"ViT": 12.0, scaling.VARIANT: 13.0})
    shift = scaling.crossover_shift(runs, reps=300)
    assert abs(shift.ratio - 2.0) < 0.2 and 1 < shift.low < 2.0 < shift.high  # one doubling later
    own = scaling.crossover_estimate(runs, scaling.CURVE_MODELS[scaling.VARIANT], scaling.MODELS["convnet"], reps=300)
    assert abs(np.log2(own.rows) - 13.0) < 0.1
    sentence = scaling.variant_sentence(runs)
    assert f"{shift.ratio:.2f}×" in sentence and "it moves the crossover" in sentence


def test_no_shift_has_an_interval_around_one():
    shift = scaling.crossover_shift(table({"ViT": 12.0, scaling.VARIANT: 12.0}), reps=300)
    assert shift.low < 1 < shift.high


def test_without_the_variant_at_three_row_counts_there_is_no_shift():
    runs = table({"ViT": 12.0, scaling.VARIANT: 13.0})
    variant = {scaling.CURVE_MODELS[scaling.VARIANT].replace(train_rows=s).config_id for s in SIZES[1:4:2]}
    sparse = runs[~runs["config_id"].isin(variant)]  # the variant at 1,000, 4,000 and 16,000 rows only
    assert len(scaling.crossover_shift(sparse, reps=50).row_counts) == 3
    only_two = runs[~runs["config_id"].isin({scaling.CURVE_MODELS[scaling.VARIANT].replace(train_rows=s).config_id
                                              for s in SIZES[1:4]})]
    shift = scaling.crossover_shift(only_two, reps=50)
    assert np.isnan(shift.ratio) and shift.row_counts == (1_000, 16_000)
    assert "sweep papers-scaling" in scaling.variant_sentence(only_two)


def test_the_crossing_is_the_monotone_fits_and_says_where_it_stays_on_one_side():
    from vitcore.analysis.crossover import crossing

    x = np.log([1000.0, 2000.0, 4000.0, 8000.0])
    assert np.exp(crossing(x, np.array([0.03, 0.02, 0.01, -0.01]))) == pytest.approx(4000 * 2 ** 0.5)
    assert np.exp(crossing(x, np.array([0.02, 0.03, 0.01, -0.01]))) == pytest.approx(4000 * 2 ** 0.5)  # pooled
    assert crossing(x, np.array([0.04, 0.03, 0.02, 0.01])) == np.inf  # still ahead at the largest: beyond it
    assert crossing(x, np.array([-0.01, -0.02, -0.03, -0.04])) == -np.inf and np.isnan(crossing(x, np.zeros(4)))


def test_a_curve_a_line_does_not_fit_gets_an_interval_around_its_own_crossing():
    """The lead holds at +0.03 to 4,000 rows, then falls fast: the plain interpolation between the sizes that
    bracket the sign change (4,000 and 8,000) is inside the interval; the line's misfit is reported."""
    rng, rows = np.random.default_rng(3), []
    lead = {1000: 0.03, 2000: 0.03, 4000: 0.02, 8000: -0.02, 16000: -0.03}
    for size, value in lead.items():
        for seed in range(8):
            for name, cfg in scaling.MODELS.items():
                acc = 0.8 + (value if name == "ViT" else 0.0) + 0.002 * seed + rng.normal(0, 0.003)
                cfg = cfg.replace(train_rows=size, seed=seed)
                rows.append({"config_id": cfg.config_id, "run_id": cfg.run_id, "train_rows": size, "seed": seed,
                             "model": cfg.model, "test_accuracy": acc})
    runs = pd.DataFrame(rows)
    est = scaling.crossover_estimate(runs, reps=400)
    plain = scaling.plain_interpolation(runs, scaling.MODELS["ViT"], scaling.MODELS["convnet"])
    assert est.low <= plain <= est.high and est.rows == pytest.approx(plain)
    assert est.line_p < 0.05 and "does not fit" in scaling.crossover_sentence(est)
    low, high = est.spread  # leaving 4,000 or 8,000 rows out moves the bracket
    assert low < est.rows < high and len(est.left_out) == 5


def test_the_committed_crossover_interval_covers_its_own_data():
    """On the committed runs (intervals over random seeds and test images): the interval contains the plain
    interpolation between the row counts that bracket the sign change (the earlier straight line's
    4,293 [3,813, 4,881] did not contain it: 5,014)."""
    from conftest import ROOT

    from vitcore.stats import testset
    from vitcore.store.runs import RunStore

    store = RunStore(ROOT / "cached_runs")
    runs = store.table()
    est = scaling.crossover_estimate(runs, reps=500, test_set=testset.from_store(store))
    plain = scaling.plain_interpolation(runs, scaling.MODELS["ViT"], scaling.MODELS["convnet"])
    assert 4000 < plain < 8000 and est.low <= plain <= est.high and est.with_images
    low, high = est.spread
    assert np.isfinite(low) and low <= est.rows <= high


def test_the_crossover_sentence_rounds_a_delta_as_every_view_does():
    """ViT − convnet at 16,000 rows, -0.02874999… in binary: -0.0288 by the one rule (config.numbers.rounded), as on
    the Claims page, not the f-string's -0.0287."""
    from vitcore.config import numbers

    mean = -0.028749999999999987
    frame = pd.DataFrame([{"metric": "test_accuracy", "train_rows": 16_000, "mean_delta": mean, "ci_low": -0.03375,
                           "ci_high": -0.02375, "verdict": WORSE, "n_pairs": 10}])
    assert numbers.delta(mean) == "-0.0288"
    assert "16,000 rows: Δ -0.0288 [-0.0338, -0.0238], worse (10 pairs)" in scaling.crossover(frame)
