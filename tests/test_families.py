"""Families are decided by the registry and the plan, not by the store: removing whole switches'
runs from the committed store moves no other comparison's adjusted p or verdict."""

import pandas as pd
import pytest

from vitcore.config.run import RunConfig
from vitcore.stats import summaries
from vitcore.stats.centres import config_of_row
from vitcore.stats.families import family_of

METRICS = ("test_accuracy", "gap")
JUDGED = ["family", "family_size", "p_adj", "p_tost_adj", "ci_adj_low", "ci_adj_high", "verdict", "look"]


@pytest.fixture(scope="module")
def both(committed_table) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The committed runs, and the same table without the class-token, SPT, LSA and sincos runs (the copy of
    the store, built in memory: a run's numbers do not depend on which others are stored)."""
    runs = committed_table.copy()  # the session's read of the store (tests/conftest.py)
    papers = (runs["pooling"] == "cls") | (runs["tokenizer"] == "shifted") | (runs["self_attention"] == "lsa") | \
        (runs["pos_embedding"] == "sincos")
    assert papers.sum() >= 80 and (~papers).sum() >= 500
    return runs, runs[~papers].reset_index(drop=True)


def flip_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """Every stored ViT config's flip table (every single-switch change stored), keyed by both configs."""
    frames = []
    for config_id, part in runs[runs["model"] == "vit"].groupby("config_id"):
        table = summaries.flip_effects(runs, config_of_row(part.iloc[0]), metrics=METRICS)
        frames.append(table.assign(base_config_id=config_id))
    return pd.concat(frames, ignore_index=True).set_index(["base_config_id", "variant_config_id", "metric"])


def assert_same_where_both(full: pd.DataFrame, reduced: pd.DataFrame, least: int) -> None:
    shared = reduced.index.intersection(full.index)
    assert len(shared) == len(reduced) and len(shared) >= least
    pd.testing.assert_frame_equal(reduced.loc[shared, JUDGED], full.loc[shared, JUDGED], check_dtype=False)


@pytest.mark.slow  # every verdict of the committed store computed twice (tens of seconds): the slow tier, still in CI
def test_removing_four_switches_runs_moves_no_other_verdict(both):
    full, reduced = both
    assert_same_where_both(flip_rows(full), flip_rows(reduced), least=300)
    for kind in (summaries.main_effects, summaries.interactions):
        keys = ["factor", "level", "train_rows", "metric"] + (["factor_b", "level_b"] if kind is summaries.interactions
                                                               else [])
        a, b = (kind(frame, metrics=METRICS).astype({"level": str}).set_index(keys) for frame in (full, reduced))
        assert_same_where_both(a, b, least=20)


def test_patch_2_keeps_its_family_whatever_else_is_stored(both):
    """The issue's example: patch 2 at 4,000 rows read p_adj 0.139 on the full store and 0.088 without the papers'
    runs (m = 11 vs 7); now its family is the patch size's other levels, m = 3, on either."""
    full, reduced = both
    base, patch2 = RunConfig(train_rows=4000), RunConfig(train_rows=4000, patch_size=2)
    assert family_of(full, patch2, base) == family_of(reduced, patch2, base) == family_of(None, patch2, base)
    assert family_of(None, patch2, base).size == 3
