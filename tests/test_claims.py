"""The claims ledger: agrees follows the verdict and the expected direction; every row of the
committed store gets a verdict. Synthetic runs only (tests/fakes.py), no training."""

import numpy as np
import pandas as pd
import pytest
from fakes import run_row, runs_table, write_run

from vitcore.article import claims
from vitcore.article.claims import AGREES, DISAGREES
from vitcore.config.run import RunConfig
from vitcore.stats.estimates import (
    BETTER,
    EQUIVALENT,
    INCONCLUSIVE,
    NOT_COMPARABLE,
    RESOLVED,
    SLIGHTLY_BETTER,
    SLIGHTLY_WORSE,
    TOO_FEW,
    VERDICTS,
    WORSE,
)
from vitcore.store.runs import RunStore

VIT, CONVNET = RunConfig(train_rows=1000), RunConfig(model="convnet", train_rows=1000)


ROW = {"margin": 0.01, "ci_adj_low": 0.02, "ci_adj_high": 0.04, "p_value": 1e-4}  # resolved, clears ±0.01
INSIDE = {"margin": 0.01, "ci_adj_low": 0.002, "ci_adj_high": 0.006, "p_value": 1e-3}
SHOWN_SMALL = {"margin": 0.02, "ci_adj_low": -0.0023, "ci_adj_high": 0.0141, "p_value": 0.025}  # patch 4 − 7
NO_SIDE = {"margin": 0.02, "ci_adj_low": -0.009, "ci_adj_high": 0.007, "p_value": 0.66}  # post-norm warm-up
STRADDLES = {"margin": 0.01, "ci_adj_low": 0.002, "ci_adj_high": 0.015, "p_value": 1e-3}


@pytest.mark.parametrize("expected, verdict, delta, row, answer", [
    ("> 0", BETTER, 0.03, ROW, (AGREES, claims.BEYOND_MARGIN)),
    ("> 0", WORSE, 0.03, ROW, (AGREES, claims.BEYOND_MARGIN)),          # gap: a positive Δ reads "worse"
    ("> 0", SLIGHTLY_BETTER, 0.004, INSIDE, (claims.SMALLER, claims.INSIDE_MARGIN)),  # real, smaller than the margin
    ("> 0", BETTER, -0.03, ROW, (DISAGREES, claims.BEYOND_MARGIN)),
    ("< 0", "higher", 0.02, ROW, (DISAGREES, claims.BEYOND_MARGIN)),
    ("> 0", SLIGHTLY_WORSE, -0.004, INSIDE, (DISAGREES, claims.INSIDE_MARGIN)),  # resolved against, if small
    # patch 4 − 7 at ±0.02: raw p 0.025 (one-sided 0.0125) once made it "agrees in direction"; the adjusted
    # difference test does not resolve its sign, so it is shown negligible, never "disagrees"
    ("> 0", EQUIVALENT, 0.0059, SHOWN_SMALL, (claims.NEGLIGIBLE, claims.INSIDE_MARGIN)),
    ("> 0", EQUIVALENT, -0.0011, NO_SIDE, (claims.NEGLIGIBLE, claims.INSIDE_MARGIN)),  # small, no direction
    ("> 0", EQUIVALENT, 0.0011, NO_SIDE, (claims.NEGLIGIBLE, claims.INSIDE_MARGIN)),   # on the side, not shown there
    ("≈ 0", EQUIVALENT, 0.001, INSIDE, (AGREES, claims.INSIDE_MARGIN)),
    ("≈ 0", SLIGHTLY_WORSE, -0.004, INSIDE, (AGREES, claims.INSIDE_MARGIN)),
    ("≈ 0", BETTER, 0.03, ROW, (DISAGREES, claims.BEYOND_MARGIN)),
    ("≈ 0", BETTER, 0.008, STRADDLES, (claims.REAL_OPEN, claims.SIZE_OPEN)),  # real, neither inside nor beyond
    ("> 0", INCONCLUSIVE, 0.03, ROW, (claims.INCONCLUSIVE, claims.SIZE_OPEN)),
    ("≈ 0", INCONCLUSIVE, 0.001, NO_SIDE, (claims.INCONCLUSIVE, claims.SIZE_OPEN)),
    ("≈ 0", TOO_FEW, 0.0, ROW, (claims.INCONCLUSIVE, claims.SIZE_OPEN)),
    ("> 0", NOT_COMPARABLE, np.nan, ROW, (claims.INCONCLUSIVE, claims.SIZE_OPEN)),
])
def test_direction_and_size_are_judged_apart(expected, verdict, delta, row, answer):
    assert claims.judge_claim(expected, verdict, delta, row) == answer


def test_the_direction_reads_the_adjusted_tests_never_a_raw_p():
    """The same verdict gives the same direction whatever the raw p says: only the adjusted tests (in the verdict)
    count, as for every other word."""
    for raw in (1e-6, 0.02, 0.5):
        assert claims.judge_claim("> 0", EQUIVALENT, 0.006, {**SHOWN_SMALL, "p_value": raw})[0] == claims.NEGLIGIBLE
        assert claims.judge_claim("> 0", SLIGHTLY_BETTER, 0.006, {**SHOWN_SMALL, "p_value": raw})[0] == claims.SMALLER


def test_every_direction_word_is_defined_once_and_said_the_same_everywhere():
    from conftest import ROOT

    from vitcore.app import claims_view

    assert len(set(claims.DIRECTIONS)) == len(claims.DIRECTIONS) == len(claims.DEFINITIONS) == 6
    assert "unresolved" not in claims.DIRECTIONS
    legend = claims_view.meaning(claims.claims_table(_world()), 0.01)
    methods = (ROOT / "docs" / "methods-and-verdicts.md").read_text()  # the claims ledger's words
    counts = {**{word: k for k, word in enumerate(claims.DIRECTIONS)}, "counted": 15, "not_counted": 1}
    line = claims.tally_line(counts, 0.01)
    assert "exploratory" not in line and "; 16 counted ones exploratory: their plans registered another margin)" in \
        claims.tally_line({**counts, "exploratory": 16}, 0.02)  # a tally mixing exploratory rows in says so
    for k, direction in enumerate(claims.REGISTRY):
        assert f"*{direction.word}*: {direction.meaning}" in legend
        assert f"- **{direction.word}** — {direction.meaning}" in methods
        assert direction.counted.format(n=k) in line


def test_expected_is_checked():
    with pytest.raises(ValueError, match="expected must be one of"):
        claims.judge_claim(">0", BETTER, 1.0, ROW)
    with pytest.raises(ValueError, match="one train_rows"):
        claims.Claim("x", (("y", "z"),), VIT, CONVNET.replace(train_rows=4000), "test_accuracy", "> 0")


def test_one_claim_per_distinct_comparison_listing_its_sources():
    keys = [(frozenset((c.selection.config_id, c.baseline.config_id)), c.metric) for c in claims.CLAIMS]
    assert len(keys) == len(set(keys))  # no comparison twice, not even with the sign flipped (a mirror instead)
    assert any(len(c.sources) > 1 for c in claims.CLAIMS) and any(c.mirror for c in claims.CLAIMS)
    with pytest.raises(ValueError, match="mirror"):
        claims.Claim("x", (("y", "z"),), VIT, CONVNET, "test_accuracy", "> 0", mirror="the other way")


def test_every_papers_setting_says_where_ours_differs():
    for claim in claims.CLAIMS:
        for source, how in claim.all_sources():
            if not source.startswith(claims.SEED):  # the source article's setting is ours
                assert "ours" in how and "not their setting" in how or "theirs" in how, (claim.claim, source)


def test_each_claim_is_checked_at_every_patch_step():
    steps = {(c.selection.patch_size, c.baseline.patch_size) for c in claims.CLAIMS if c.claim.startswith("smaller")}
    assert steps == {(2, 4), (4, 7), (7, 14)}  # accuracy and counted work, patch 2 included


def _world() -> pd.DataFrame:
    """1,000 rows: the ViT 0.03 ahead of the convnet and overfitting 0.1 more (yes); 4,000 rows: the
    convnet 0.03 ahead (no); pre-norm warm-up 2 within 0.001 of no warm-up (equivalent: yes);
    no position embedding at one random seed only (too few seeds: inconclusive)."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(5):
        for rows_, vit_lead in ((1000, 0.03), (4000, -0.03)):
            base = 0.7 + 0.01 * seed
            vit = RunConfig(train_rows=rows_, seed=seed)
            acc = base + vit_lead + rng.normal(0, 0.003)
            rows.append(run_row(vit, test_accuracy=acc, best_val_accuracy=acc, gap=0.15 + rng.normal(0, 0.005)))
            acc = base + rng.normal(0, 0.003)
            rows.append(run_row(RunConfig(model="convnet", train_rows=rows_, seed=seed), test_accuracy=acc,
                                best_val_accuracy=acc, gap=0.05 + rng.normal(0, 0.005)))
        warm = RunConfig(train_rows=4000, warmup_epochs=2, seed=seed)
        rows.append(run_row(warm, test_accuracy=0.67 + 0.01 * seed + rng.normal(0, 0.001)))
    rows.append(run_row(RunConfig(train_rows=4000, pos_embedding="none"), test_accuracy=0.6))
    return runs_table(rows)


def _row(table: pd.DataFrame, claim: str, train_rows: int, metric: str | None = None) -> pd.Series:
    match = table[(table["claim"] == claim) & (table["train_rows"] == train_rows)]
    match = match[match["metric"] == metric] if metric else match
    assert len(match) == 1
    return match.iloc[0]


def test_claims_on_synthetic_runs():
    runs = _world()
    table = claims.claims_table(runs)
    assert list(table.columns) == claims.COLUMNS
    assert table["claim"].iloc[-1] == claims.DATA_SIZE and table["verdict"].iloc[-1] == TOO_FEW  # 2 row counts

    row = _row(table, "the ViT beats the convnet", 1000, "test_accuracy")  # test accuracy decides
    vit, convnet = (runs[(runs.model == m) & (runs.train_rows == 1000)].sort_values("seed") for m in ("vit", "convnet"))
    assert row.mean_delta == pytest.approx(np.mean(vit.test_accuracy.to_numpy() - convnet.test_accuracy.to_numpy()))
    assert (row.verdict, row.direction, row.n_pairs, row.role, row.tally) == (
        BETTER, AGREES, 5, claims.DECIDES, claims.COUNTED)
    assert row.mirror.startswith("CNNs beat ViTs on small data") and row.mirror.endswith(": disagrees")
    best = _row(table, "the ViT beats the convnet", 1000, "best_val_accuracy")  # beside, never counted
    assert best.role == claims.BESIDE and best.tally.startswith("not counted") and best.mirror == ""
    later = _row(table, "the ViT beats the convnet", 4000, "test_accuracy")  # evaluated at every size
    assert (later.verdict, later.direction) == (WORSE, DISAGREES) and later.mirror.endswith(": agrees")
    assert not (table["claim"] == "CNNs beat ViTs on small data").any()  # the mirror is the same row
    overfits = _row(table, "the ViT overfits more than the convnet", 1000)
    assert (overfits.verdict, overfits.direction) == (WORSE, AGREES)  # a larger gap is "worse", as expected
    assert _row(table, "pre-norm does not need warm-up", 4000).direction == AGREES
    assert _row(table, "removing the position embedding hurts", 4000)[["verdict", "direction"]].tolist() == [
        TOO_FEW, claims.INCONCLUSIVE]  # one random seed
    assert not (table["claim"].str.startswith("smaller patches are more")).any()  # no patch-4 runs at all: no row
    work = table[table["metric"] == claims.WORK]  # counted, exact, whatever the runs
    assert len(work) == 3 and (work["direction"] == AGREES).all() and work["train_rows"].isna().all()


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_margin_reaches_the_verdict_and_the_tally_shows_three_margins():
    """A wide margin makes the resolved 0.03 lead 'slightly better' (real, inside ±0.1): it agrees in direction."""
    row = _row(claims.claims_table(_world(), margin=0.1), "the ViT beats the convnet", 1000, "test_accuracy")
    assert (row.verdict, row.direction, row["size"]) == (SLIGHTLY_BETTER, claims.SMALLER, claims.INSIDE_MARGIN)
    tally = claims.tally(_world())
    assert tally["margin"].tolist() == [0.005, 0.01, 0.02]
    assert (tally[list(claims.DIRECTIONS)].sum(axis=1) == tally["counted"]).all()
    for margin, line in zip((0.005, 0.01, 0.02), tally.to_dict("records")):  # one tally: the table's own
        table = claims.claims_table(_world(), margin=margin)
        assert claims.tally_of(table) == {k: line[k] for k in (*claims.DIRECTIONS, "counted", "not_counted",
                                                              "exploratory")}
        assert line["counted"] + line["not_counted"] == len(table)  # every row counted or named as not


@pytest.fixture(scope="module")
def committed(committed_table):
    return committed_table.copy()  # the session's read of the store (tests/conftest.py)


@pytest.fixture(scope="module")
def fixed(committed) -> list[dict]:
    """The committed ledger's rows that no margin changes (claims.fixed_rows: the data-size row's 2,000-replicate
    bootstrap and the seed-noise rows), computed once for the margin tests below, as the Study computes them once
    for the Claims page's three margins; test_every_claim_is_evaluated_on_the_committed_store computes its own."""
    return claims.fixed_rows(committed)


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_every_claim_is_evaluated_on_the_committed_store(committed):
    table = claims.claims_table(committed)
    assert set(table["claim"]) == {c.claim for c in claims.CLAIMS} | {claims.DATA_SIZE, claims.SEED_NOISE}
    assert (table["claim"] == claims.SEED_NOISE).sum() >= 2  # the noise grid: the ViT and the convnet, 1,000 rows
    assert table["verdict"].isin(VERDICTS).all() and table["direction"].isin(claims.DIRECTIONS).all()
    assert table["expected"].isin(claims.EXPECTED).all() and table["setting"].str.len().gt(10).all()
    # every claim's configs are in the committed grids; the `papers` grid's may have one random seed while it
    # is being trained (`python -m vitcore sweep papers --dry-run` lists the rest)
    from vitcore.run.sweep import grid

    training = {cfg.label() for cfg in grid("papers")}
    ran = table["metric"] != claims.WORK
    growing = table["comparison"].str.split(" − ").str[0].isin(training)
    assert (table.loc[ran & ~growing, "n_pairs"] >= 2).all() and (table.loc[ran & growing, "n_pairs"] >= 1).all()
    vit_convnet = table[(table["claim"] == "the ViT beats the convnet") & (table["role"] == claims.DECIDES)]
    assert len(vit_convnet) >= 3 and vit_convnet["mirror"].str.len().gt(0).all()  # along the data-size curve
    patch_two = table[table["claim"] == "smaller patches are more accurate (2 vs 4)"]
    assert len(patch_two) >= 1  # patch 2 is checked too
    unjudged = table["claim"].isin([claims.DATA_SIZE, claims.SEED_NOISE]) | (table["metric"] == claims.WORK)
    assert table.loc[unjudged, "verdict_from"].str.len().gt(0).all()  # no plan, no comparison: they say where from


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
@pytest.mark.parametrize("margin", [0.005, 0.01, 0.02])
def test_one_tally_each_comparison_once_no_disagrees_unless_resolved_against(committed, fixed, margin):
    table = claims.claims_table(committed, margin, fixed=fixed)
    assert claims.DATA_SIZE in set(table["claim"]) and claims.SEED_NOISE in set(table["claim"])
    counted = table[table["tally"] == claims.COUNTED]
    assert (table["tally"] != claims.COUNTED).sum() == (table["role"] == claims.BESIDE).sum() > 0  # named, not counted
    assert table.loc[table["tally"] != claims.COUNTED, "tally"].str.contains("not counted: ").all()
    sides = counted["comparison"].str.split(" − ").map(lambda parts: frozenset(parts))
    keys = list(zip(sides, counted["train_rows"].fillna(-1), counted["metric"]))
    assert len(keys) == len(set(keys))  # no comparison tallied twice (a mirror is the same row)
    against = counted[counted["direction"] == claims.DISAGREES]
    for row in against.to_dict("records"):  # resolved against the claim, and only then
        if row["expected"] == "≈ 0":
            assert row["ci_adj_low"] > row["margin"] or row["ci_adj_high"] < -row["margin"]
        else:
            assert (row["ci_adj_high"] < 0) if row["expected"] == "> 0" else (row["ci_adj_low"] > 0)
    resolved_as_claimed = counted["verdict"].isin(RESOLVED) & (
        (counted["expected"] == "> 0") & (counted["mean_delta"] > 0) |
        (counted["expected"] == "< 0") & (counted["mean_delta"] < 0))
    assert counted.loc[resolved_as_claimed, "direction"].isin([claims.AGREES, claims.SMALLER]).all()
    line = claims.tally(committed, [margin], fixed=fixed).iloc[0]  # the CLI's line and the page's cards: one tally
    assert all(line[word] == n for word, n in claims.tally_of(table).items())


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
    assert (row["verdict"], row["direction"], row["n_pairs"]) == ("lower", DISAGREES, 25)
    assert row["mean_delta"] == pytest.approx(-0.015, abs=0.002) and row["ci_low"] < -0.015 < row["ci_high"] < 0
    assert row["crossover_low"] < 4000 < row["crossover_high"]
    assert row["crossover_rows"] == pytest.approx(4000, rel=0.05)
    assert ("crosses zero between 2,000 and 4,000 rows" in row["setting"] or "crosses zero between 4,000 and 8,000 "
            "rows" in row["setting"] or "crosses zero at 4,000 rows" in row["setting"]) and np.isnan(row["train_rows"])


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_the_seed_noise_rows_judge_bouthillier_on_the_crossed_runs(tmp_path):
    """A crossed store where the data sample dominates (its own term 50x each other one) agrees; one
    where the batch order does disagrees; the ViT without position embedding gets no row."""
    from test_noise import simulate

    for name, true, expected in (("data", [50, 1, 1, 1, 1, 1, 1], ("higher", claims.AGREES)),
                                 ("order", [1, 1, 50, 1, 1, 1, 1], ("lower", claims.DISAGREES))):
        store = RunStore(tmp_path / name)
        table = simulate(np.array(true) * 1e-5, (6, 4, 4), 1, seed=21)[0]
        for model in ("vit", "convnet"):
            for d, i, o in np.ndindex(*table.shape):
                write_run(store, RunConfig(model=model, train_rows=1000, seed=d, init_seed=i, order_seed=o),
                          0.8 + table[d, i, o])
        write_run(store, RunConfig(pos_embedding="none", train_rows=1000, seed=0, init_seed=0, order_seed=0), 0.8)
        rows = pd.DataFrame(claims.seed_noise_rows(store.table()))
        assert len(rows) == 2 and set(rows["train_rows"]) == {1000} and (rows["n_pairs"] == 96).all()
        assert {tuple(pair) for pair in rows[["verdict", "direction"]].to_numpy()} == {expected}
        assert set(rows.columns) <= set(claims.COLUMNS)
