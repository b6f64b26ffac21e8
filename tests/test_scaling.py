"""The papers' small-data variant on the data-size curve (vitcore.analysis.scaling): its own crossover with
the convnet (scaling.crossover_estimate, as the ViT's) and its shift from the ViT's, resampled by random
seed across the three models; on run tables whose crossovers are known by construction."""

import numpy as np
import pandas as pd

from vitcore.analysis import scaling

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
