"""vitcore.model.anatomy counts parameters without building a model; the slow test checks every count
against the Keras builder (vitcore.model.build.param_breakdown) for every switch combination."""

import itertools

import pytest
from conftest import switch_grid

from vitcore.config.run import NORMS, PATCH_SIZES, RunConfig
from vitcore.model import anatomy

GRID = switch_grid()
# The papers' switches with every patch size and both norms: SPT's projection scales with the patch area,
# BatchNorm changes no new row, and the class token and LSA stack.
PAPERS = [RunConfig(pooling=pooling, tokenizer=tokenizer, self_attention=attention, patch_size=patch, norm=norm)
          for pooling, tokenizer, attention, patch, norm in itertools.product(
              ("gap", "cls"), ("patch", "shifted"), ("standard", "lsa"), PATCH_SIZES, NORMS)]


def test_the_article_numbers():
    rows = dict(anatomy.breakdown(RunConfig()))
    assert [rows[name] for name in ("patch projection", "position embedding", "one attention block", "one MLP block",
                                    "Conv2D(64, 3) on 1 channel, for scale", "total")] == \
        [3_200, 1_024, 16_640, 16_576, 640, 71_946]
    assert anatomy.totals(anatomy.breakdown(RunConfig()))["without position"] == 70_922
    assert anatomy.total(RunConfig(model="convnet")) == 60_554 == anatomy.convnet_table()["parameters"].sum()


def test_switch_effects_on_the_count():
    effects = anatomy.toggle_effects(RunConfig()).set_index(["switch", "to"])
    assert effects.loc[("pos_embedding", "none"), "Δ parameters"] == -1_024
    assert effects.loc[("norm_placement", "post"), "Δ parameters"] == 0
    assert effects.loc[("norm", "batch"), "Δ parameters"] == 5 * 2 * 64  # 5 norms gain moving mean + variance
    assert effects.loc[("patch_size", "14"), "Δ parameters"] == (196 - 49) * 64 + (4 - 16) * 64


def test_the_papers_switches_on_the_count():
    effects = anatomy.toggle_effects(RunConfig()).set_index(["switch", "to"])
    assert effects.loc[("pos_embedding", "sincos"), "Δ parameters"] == -1_024  # a fixed table replaces the learned one
    assert effects.loc[("pooling", "cls"), "Δ parameters"] == 64                 # one token of width 64
    assert effects.loc[("self_attention", "lsa"), "Δ parameters"] == 2 * 4       # a temperature per head and block
    # LayerNorm(245), 5x projection
    assert effects.loc[("tokenizer", "shifted"), "Δ parameters"] == 2 * 245 + 4 * 49 * 64
    rows = dict(anatomy.breakdown(RunConfig(tokenizer="shifted", self_attention="lsa")))
    assert (rows["patch projection"], rows["one attention block"], rows["total"]) == (16_234, 16_644, 84_988)


def test_the_table_shows_a_formula_for_every_row():
    table = anatomy.anatomy_table(RunConfig(norm="batch"))
    assert (table["formula"] != "").all() and table["component"].tolist() == list(anatomy.VIT_ROWS)
    assert "2 × 4 × 64" in table.set_index("component").loc["one block's norms", "formula"]


@pytest.mark.slow
def test_counts_equal_the_keras_builder_for_every_switch_combination():
    from vitcore.model.build import param_breakdown

    for cfg in [*GRID, *PAPERS, RunConfig(model="convnet")]:
        assert anatomy.breakdown(cfg) == param_breakdown(cfg), cfg.label()
