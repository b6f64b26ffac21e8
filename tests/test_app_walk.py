"""vitcore.app.walkthrough.walk, runs_view and claims_view: the frames and sentences of the ViT vs convnet, Runs,
Token cost and Claims pages, checked without Streamlit."""

from urllib.parse import parse_qsl, urlparse

import numpy as np
import pandas as pd
from fakes import run_row

from vitcore.app import claims_view, runs_view
from vitcore.app.selection import (
    BASELINE_KEY,
    baseline_cells,
    current_choices,
    resolve_baseline,
    selection_or_default,
)
from vitcore.app.walkthrough import walk
from vitcore.article.claims import CLAIMS
from vitcore.config.run import RunConfig
from vitcore.stats.estimates import BETTER, EQUIVALENT, WORSE
from vitcore.study import Study


def deltas(seed_delta: float, pi=(0.008, 0.047)) -> pd.DataFrame:
    return pd.DataFrame([{"train_rows": 1_000, "metric": "best_val_accuracy", "vit_mean": 0.75, "convnet_mean": 0.72,
                          "mean_delta": 0.027, "ci_low": 0.022, "ci_high": 0.033, "n_pairs": 10, "verdict": BETTER,
                          "pi_low": pi[0], "pi_high": pi[1], "seed_delta": seed_delta}])


def test_the_single_seed_is_placed_against_the_prediction_interval():
    inside, above = walk.single_seed_sentences(deltas(0.037)), walk.single_seed_sentences(deltas(0.05))
    assert "+0.0370 lies inside" in inside[0] and "between +0.0080 and +0.0470" in inside[0]
    assert "lies above" in above[0] and "unusually large draw" in above[0]
    table = walk.single_seed_table(deltas(0.037))
    assert table.iloc[0]["The article's Δ lies"] == "inside: an ordinary draw"
    assert walk.single_seed_table(deltas(np.nan)).empty  # a metric the article gives no number for
    assert "too few" in walk.single_seed_sentences(deltas(0.037, (np.nan, np.nan)))[0]


def test_best_val_accuracy_always_carries_its_caveat():
    assert walk.metric_label("best_val_accuracy").endswith("selected on the validation split (optimistic)")
    assert walk.metric_label("test_accuracy") == "Test accuracy"


def test_timing_groups_in_words():
    assert walk.timing_basis("v2/threads1/workers2/reused") == ("training code v2 (one XLA launch per epoch), 1 "
                                                                "intra-op thread, 2 concurrent training workers, "
                                                                "compiled once, reused across random seeds")
    assert "v1" in walk.timing_basis("v1/legacy")
    assert walk.timing_basis("v2/threads1/workers1/cached").endswith("compiled program loaded from the persistent "
                                                                     "compile cache")
    runs = pd.DataFrame({"timing_group": ["a", "b", "b"]})
    assert walk.timing_groups(runs) == ["b", "a"] and walk.timing_groups(pd.DataFrame({"x": [1]})) == []


def table() -> pd.DataFrame:
    rows = [run_row(RunConfig(patch_size=p, seed=s)) for p in (4, 7) for s in (0, 1)]
    rows.append(run_row(RunConfig(model="convnet")))
    return pd.DataFrame(rows)


def test_filters_offer_integers_and_not_applicable():
    runs = table()
    assert runs_view.options(runs, "patch_size") == [4, 7, runs_view.NOT_APPLICABLE]
    assert runs_view.option_label(4_000) == "4,000" and runs_view.option_label(4) == "4"
    assert len(runs_view.apply_filters(runs, {"patch_size": [4]})) == 2
    assert runs_view.apply_filters(runs, {"patch_size": [runs_view.NOT_APPLICABLE]})["model"].tolist() == ["convnet"]
    assert len(runs_view.apply_filters(runs, {"patch_size": [7], "seed": [1]})) == 1
    assert len(runs_view.apply_filters(runs, {"patch_size": []})) == len(runs)
    assert runs_view.display(runs)["patch_size"].tolist()[:4] == [4, 4, 7, 7]  # not 4.0


def test_coverage_counts_random_seeds_per_cell_and_size():
    grid = runs_view.coverage(table()).set_index("cell")
    assert grid.loc["ViT p4 pre-LN pos", "4,000 rows"] == 2 and grid.loc["convnet", "4,000 rows"] == 1


def test_claim_links_select_both_configs_on_the_ablations_page():
    runs = pd.DataFrame([run_row(claim.baseline) for claim in CLAIMS])
    cells = baseline_cells(Study(runs))
    for claim in CLAIMS:
        query = dict(parse_qsl(urlparse(claims_view.ablations_link(claim.selection, claim.baseline)).query))
        state = {**current_choices({}, query), BASELINE_KEY: query.get(BASELINE_KEY)}  # the sidebar's URL reading
        cfg, note = selection_or_default(state)
        assert note is None and cfg.config_id == claim.selection.config_id, claim.claim
        assert resolve_baseline(state.get(BASELINE_KEY), cells, cfg).config_id == claim.baseline.config_id, claim.claim


def test_claims_csv_is_plain_to_csv():
    frame = pd.DataFrame({"claim": ["≈ 0 − x"], "mean_delta": [0.1]})
    assert claims_view.csv_bytes(frame) == "claim,mean_delta\n≈ 0 − x,0.1\n".encode()


def test_the_headline_tables_show_the_interval_each_verdict_reads():
    """Before: "95% CI" beside "equivalent" (the 95% interval, which may reach past the margin while the equivalence
    test reads the 90% one). Now each row shows the interval its verdict reads and says which."""
    rows = pd.DataFrame([
        {"train_rows": 4_000, "metric": "test_accuracy", "vit_mean": 0.79, "convnet_mean": 0.788, "mean_delta": 0.002,
         "ci_low": -0.004, "ci_high": 0.0105, "ci90_low": -0.003, "ci90_high": 0.007, "n_pairs": 10,
         "verdict": EQUIVALENT},
        {"train_rows": 4_000, "metric": "gap", "vit_mean": 0.1, "convnet_mean": 0.01, "mean_delta": 0.09,
         "ci_low": 0.08, "ci_high": 0.1, "ci90_low": 0.082, "ci90_high": 0.098, "n_pairs": 10, "verdict": WORSE}])
    for table in (walk.headline_table(rows), walk.scaling_table(rows)):
        equivalent, worse = table.set_index("Verdict").loc[[EQUIVALENT, WORSE], ["Interval", "Interval is"]].values
        assert list(equivalent) == ["[-0.0030, +0.0070]", "90% CI"] and list(worse) == ["[+0.0800, +0.1000]", "95% CI"]
        assert "95% CI" not in table.columns
