"""Counted work (vitcore.analysis.work): multiply-adds per image from the config, counted by hand for the
article's ViT and its convnet, and the direction each switch moves it."""

import pytest

from vitcore.analysis import work
from vitcore.config.run import RunConfig


def test_the_article_vit_and_convnet_counted_by_hand():
    # ViT p7: 16 tokens × 49 values × 64, then per block 4·16·64² + 2·16²·64 + 2·16·64·128, and the head 64×10
    per_block = 4 * 16 * 64 * 64 + 2 * 16 * 16 * 64 + 2 * 16 * 64 * 128
    assert work.macs(RunConfig()) == 16 * 49 * 64 + 2 * per_block + 640 == 1_164_928
    assert work.macs(RunConfig(model="convnet")) == 26 * 26 * 9 * 32 + 11 * 11 * 9 * 32 * 64 + 3 * 3 * 9 * 64 * 64 \
        + 64 * 64 + 640
    table = work.work_table(RunConfig())
    assert list(table.columns) == work.COLUMNS and table.set_index("part").loc["total", "macs"] == 1_164_928


@pytest.mark.parametrize("changes, more", [({"patch_size": 4}, True), ({"patch_size": 14}, False),
                                           ({"pooling": "cls"}, True), ({"tokenizer": "shifted"}, True),
                                           ({"pos_embedding": "none"}, None), ({"norm": "batch"}, None)])
def test_each_switch_moves_the_count_the_way_its_shapes_say(changes, more):
    base, other = work.macs(RunConfig()), work.macs(RunConfig(**changes))
    assert (other > base) if more else (other < base) if more is False else other == base


def test_smaller_patches_cost_more_and_the_table_is_relative_to_patch_7():
    table = work.patch_work()
    assert table["macs"].is_monotonic_decreasing and table.set_index("patch_size").loc[7, "relative"] == 1
