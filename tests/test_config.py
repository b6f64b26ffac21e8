import dataclasses
import subprocess
import sys

import pytest
from conftest import ROOT

from vitcore.config.run import FIELD_NAMES, VIT_FIELDS, RunConfig
from vitcore.config.switches import REGISTRY


def test_defaults_are_the_articles_vit():
    cfg = RunConfig()
    assert (cfg.model, cfg.pos_embedding, cfg.norm_placement, cfg.norm, cfg.patch_size) == (
        "vit", "learned", "pre", "layer", 7)
    assert (cfg.width, cfg.depth, cfg.heads, cfg.mlp_dim, cfg.epochs, cfg.batch_size, cfg.lr) == (
        64, 2, 4, 128, 15, 64, 1e-3)
    assert cfg.tokens == 16


@pytest.mark.parametrize("field, value, allowed", [
    ("patch_size", 5, "2, 4, 7, 14"), ("norm", "group", "layer, batch"), ("model", "resnet", "vit, convnet"),
    ("pos_embedding", "relative", "learned, none, sincos"), ("pooling", "max", "gap, cls"),
    ("tokenizer", "conv", "patch, shifted"), ("self_attention", "linear", "standard, lsa"),
    ("norm_placement", "sandwich", "pre, post"),
    ("train_rows", 55_001, "55,000"), ("epochs", 0, "1"), ("seed", -1, "0"), ("lr", 0.0, "between"),
    ("warmup_epochs", 16, "exceed"), ("heads", 3, "divisible"), ("patch_size", True, "2, 4, 7, 14"),
])
def test_invalid_values_name_what_is_allowed(field, value, allowed):
    with pytest.raises(ValueError, match=allowed):
        RunConfig(**{field: value})


def test_the_sine_cosine_table_needs_a_width_in_quarters():
    with pytest.raises(ValueError, match="divisible by 4"):
        RunConfig(pos_embedding="sincos", width=6, heads=1)
    assert RunConfig(pos_embedding="sincos", width=8, heads=1).width == 8


def test_the_papers_switches_get_their_own_run_ids_and_labels_and_leave_the_stored_ones():
    assert RunConfig().run_id == "81be36c72149"  # the article's ViT, as committed
    variants = [RunConfig(pos_embedding="sincos"), RunConfig(pooling="cls"), RunConfig(tokenizer="shifted"),
                RunConfig(self_attention="lsa"), RunConfig(tokenizer="shifted", self_attention="lsa")]
    assert len({cfg.run_id for cfg in variants} | {RunConfig().run_id}) == 6
    assert [cfg.label() for cfg in variants] == ["ViT p7 pre-LN sincos", "ViT p7 pre-LN pos cls",
                                                 "ViT p7 pre-LN pos SPT",
                                                 "ViT p7 pre-LN pos LSA", "ViT p7 pre-LN pos SPT LSA"]
    assert RunConfig(pooling="cls").sequence == 17 and RunConfig().sequence == 16


@pytest.mark.slow
def test_run_id_is_stable_across_processes():
    code = "from vitcore.config.run import RunConfig; print(RunConfig(norm='batch', seed=2).run_id)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == RunConfig(norm="batch", seed=2).run_id
    assert len(RunConfig().run_id) == 12


# each registered switch at its first other level (pos none, post, batch, patch 2, warm-up 2)
CHANGES = {"model": "convnet", **{s.name: next(v for v in s.levels if v != s.default) for s in REGISTRY},
           "width": 32, "depth": 3, "heads": 2, "mlp_dim": 64, "train_rows": 1000, "epochs": 10, "batch_size": 32,
           "lr": 3e-4, "seed": 1, "data_seed": 1, "init_seed": 1, "order_seed": 1}


def test_every_field_changes_the_run_id():
    assert set(CHANGES) == set(FIELD_NAMES)  # a new field must be added here too
    base = RunConfig()
    ids = {base.run_id} | {base.replace(**{name: value}).run_id for name, value in CHANGES.items()}
    assert len(ids) == len(CHANGES) + 1


def test_vit_fields_do_not_split_convnet_runs():
    convnet = RunConfig(model="convnet")
    for name in VIT_FIELDS:
        assert convnet.replace(**{name: CHANGES[name]}).run_id == convnet.run_id
    assert convnet.replace(seed=1).run_id != convnet.run_id


def test_config_id_ignores_only_the_seed():
    assert RunConfig(seed=0).config_id == RunConfig(seed=2).config_id
    assert RunConfig(train_rows=1000).config_id != RunConfig().config_id


def test_from_dict_round_trip_and_unknown_keys():
    cfg = RunConfig(model="convnet", train_rows=1000)
    assert RunConfig.from_dict(cfg.identity()) == cfg
    with pytest.raises(ValueError, match="unknown config fields"):
        RunConfig.from_dict({"no_such_field": 0.1})
    assert "no_such_field" not in FIELD_NAMES


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        RunConfig().seed = 3


def test_data_init_and_order_seeds_default_to_the_random_seed():
    plain, crossed = RunConfig(seed=3), RunConfig(seed=3, data_seed=1, init_seed=0, order_seed=2)
    assert plain.seeds == (3, 3, 3) and (crossed.seeds.data, crossed.seeds.init, crossed.seeds.order) == (1, 0, 2)
    assert RunConfig(seed=3, order_seed=0).seeds == (3, 3, 0)
    assert "init 0 order 2" in crossed.label() and crossed.label().startswith(plain.label())
    # a set data/init/order seed is its own cell (never two runs of one random seed in a cell) but
    # the same compiled graph as the plain runs
    assert crossed.config_id != plain.config_id and crossed.graph_id == plain.graph_id == plain.config_id
    assert RunConfig.from_dict(crossed.identity()) == crossed


@pytest.mark.parametrize("value", [-1, 2**31, 1.0, True, "1"])
def test_bad_data_init_or_order_seed_names_what_is_allowed(value):
    with pytest.raises(ValueError, match="init_seed must be empty .* from 0 to 2,147,483,647"):
        RunConfig(init_seed=value)
