"""The claims ledger: agrees follows the verdict and the expected direction; every row of the
committed store gets a verdict. Synthetic runs only (tests/fakes.py), no training."""

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from fakes import run_row, runs_table

from vitcore.article import claims
from vitcore.config.run import RunConfig
from vitcore.stats.estimates import VERDICTS
from vitcore.store.runs import RunStore

VIT, CONVNET = RunConfig(train_rows=1000), RunConfig(model="convnet", train_rows=1000)


@pytest.mark.parametrize("expected, verdict, delta, answer", [
    ("> 0", "better", 0.03, "yes"), ("> 0", "worse", 0.03, "yes"),    # gap: a positive Δ reads "worse"
    ("> 0", "better", -0.03, "no"), ("< 0", "worse", -0.03, "yes"), ("< 0", "higher", 0.02, "no"),
    ("> 0", "equivalent", 0.001, "no"), ("≈ 0", "equivalent", 0.001, "yes"), ("≈ 0", "better", 0.03, "no"),
    ("> 0", "inconclusive", 0.03, "unresolved"), ("≈ 0", "too few seeds", 0.0, "unresolved"),
    ("> 0", "not comparable", np.nan, "unresolved"),
])
def test_agrees(expected, verdict, delta, answer):
    assert claims.agrees(expected, verdict, delta) == answer


def test_expected_is_checked():
    with pytest.raises(ValueError, match="expected must be one of"):
        claims.agrees(">0", "better", 1.0)
    with pytest.raises(ValueError, match="one train_rows"):
        claims.Claim("x", "y", "z", VIT, CONVNET.replace(train_rows=4000), "test_accuracy", "> 0")


def _world() -> pd.DataFrame:
    """1,000 rows: the ViT 0.03 ahead of the convnet and overfitting 0.1 more (yes); 4,000 rows: the
    convnet 0.03 ahead (no); pre-norm warm-up 2 within 0.001 of no warm-up (equivalent: yes);
    no position embedding at one random seed only (too few seeds: unresolved)."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(5):
        for rows_, vit_lead in ((1000, 0.03), (4000, -0.03)):
            base = 0.7 + 0.01 * seed
            vit = RunConfig(train_rows=rows_, seed=seed)
            rows.append(run_row(vit, test_accuracy=base + vit_lead + rng.normal(0, 0.003),
                                gap=0.15 + rng.normal(0, 0.005)))
            rows.append(run_row(RunConfig(model="convnet", train_rows=rows_, seed=seed),
                                test_accuracy=base + rng.normal(0, 0.003), gap=0.05 + rng.normal(0, 0.005)))
        warm = RunConfig(train_rows=4000, warmup_epochs=2, seed=seed)
        rows.append(run_row(warm, test_accuracy=0.67 + 0.01 * seed + rng.normal(0, 0.001)))
    rows.append(run_row(RunConfig(train_rows=4000, pos_embedding="none"), test_accuracy=0.6))
    return runs_table(rows)


def _row(table: pd.DataFrame, claim: str, train_rows: int) -> pd.Series:
    match = table[(table["claim"] == claim) & (table["train_rows"] == train_rows)]
    assert len(match) == 1
    return match.iloc[0]


def test_claims_on_synthetic_runs():
    runs = _world()
    table = claims.claims_table(runs)
    assert list(table.columns) == claims.COLUMNS and len(table) == len(claims.CLAIMS) + 1  # + the data-size row
    assert table["claim"].iloc[-1] == claims.DATA_SIZE and table["verdict"].iloc[-1] == "too few seeds"  # 2 row counts

    row = _row(table, "ViT beats the convnet", 1000)
    assert (row.verdict, row.agrees, row.n_pairs) == ("better", "yes", 5)
    vit, convnet = (runs[(runs.model == m) & (runs.train_rows == 1000)].sort_values("seed") for m in ("vit", "convnet"))
    assert row.mean_delta == pytest.approx(np.mean(vit.test_accuracy.to_numpy() - convnet.test_accuracy.to_numpy()))
    assert _row(table, "CNNs beat ViTs on small data", 1000).agrees == "no"  # the same Δ, sign flipped
    assert _row(table, "ViT beats the convnet", 4000)[["verdict", "agrees"]].tolist() == ["worse", "no"]
    overfits = _row(table, "the ViT overfits more than the convnet", 1000)
    assert (overfits.verdict, overfits.agrees) == ("worse", "yes")  # a larger gap is "worse", as expected
    assert _row(table, "pre-norm does not need warm-up", 4000)[["verdict", "agrees"]].tolist() == ["equivalent", "yes"]
    assert _row(table, "forgetting the position embedding hurts", 4000)[["verdict", "agrees"]].tolist() == [
        "too few seeds", "unresolved"]
    assert _row(table, "smaller patches cost more compute", 4000).agrees == "unresolved"  # no patch-4 runs at all


def test_margin_reaches_the_verdict():
    """A wide margin makes the resolved 0.03 lead 'slightly better' (real, inside ±0.1): it still agrees."""
    row = _row(claims.claims_table(_world(), margin=0.1), "ViT beats the convnet", 1000)
    assert (row.verdict, row.agrees) == ("slightly better", "yes")


def test_every_claim_has_a_verdict_on_the_committed_store():
    table = claims.claims_table(RunStore(ROOT / "cached_runs").table())
    assert len(table) == len(claims.CLAIMS) + 1
    assert table["verdict"].isin(VERDICTS).all() and table["agrees"].isin(claims.AGREES).all()
    assert table["expected"].isin(claims.EXPECTED).all() and table["setting"].str.len().gt(10).all()
    assert (table["n_pairs"] >= 2).all()  # every claim's configs are in the committed grids


def test_the_data_size_row_is_the_crossover_estimate():
    """The ViT paper's "ViTs gain more from more data" against a curve whose ViT lead falls 0.015 per doubling of
    the rows and crosses zero at 4,000 rows: resolved lower, so it disagrees; the crossover columns say where."""
    rows = []
    for train_rows in (1000, 2000, 4000, 8000, 16000):
        for seed in range(5):
            noise = 0.002 * ((seed * 3 + train_rows // 1000) % 5 - 2)
            lead = 0.03 - 0.015 * np.log2(train_rows / 1000)
            rows.append(run_row(RunConfig(train_rows=train_rows, seed=seed), test_accuracy=0.8 + lead + noise))
            rows.append(run_row(RunConfig(model="convnet", train_rows=train_rows, seed=seed), test_accuracy=0.8))
    row = claims.data_size_row(runs_table(rows))
    assert (row["verdict"], row["agrees"], row["n_pairs"]) == ("lower", "no", 25)
    assert row["mean_delta"] == pytest.approx(-0.015, abs=0.002) and row["ci_low"] < -0.015 < row["ci_high"] < 0
    assert row["crossover_low"] < 4000 < row["crossover_high"] and row["crossover_rows"] == pytest.approx(4000, rel=0.05)
    assert "crosses zero at about 4," in row["setting"] and np.isnan(row["train_rows"])
