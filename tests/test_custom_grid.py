"""Your own grid from the command line (vitcore.run.custom, `sweep --vary`): one field at a time by
default, crossed with --cross, the article's ViT always in, bad values one line and exit 2."""

import pytest
from conftest import run_cli

from vitcore.config.run import RunConfig
from vitcore.run.custom import custom_grid, parse_base, parse_vary

DEPTH, WIDTH = ("depth", (1, 2, 4)), ("width", (32, 64, 128))


def test_one_at_a_time_is_the_default_and_keeps_the_article_vit_first():
    configs = custom_grid([DEPTH, WIDTH], seeds=(0, 1), rows=(1_000, 4_000))
    cells = list(dict.fromkeys(cfg.replace(seed=0, train_rows=4_000) for cfg in configs))
    assert cells == [RunConfig(), RunConfig(depth=1), RunConfig(depth=4), RunConfig(width=32), RunConfig(width=128)]
    assert len(configs) == 5 * 2 * 2
    assert {(cfg.train_rows, cfg.seed) for cfg in configs} == {(r, s) for r in (1_000, 4_000) for s in (0, 1)}


def test_cross_trains_every_combination():
    configs = custom_grid([DEPTH, WIDTH], seeds=(0,), rows=(1_000,), cross=True)
    assert {(cfg.depth, cfg.width) for cfg in configs} == {(d, w) for d in DEPTH[1] for w in WIDTH[1]}
    assert configs[0] == RunConfig(train_rows=1_000)


def test_a_base_moves_the_centre():
    configs = custom_grid([DEPTH], seeds=(0,), rows=(300,), base=parse_base("epochs=2"))
    assert [cfg.label() for cfg in configs] == ["ViT p7 pre-LN pos epochs 2", "ViT p7 pre-LN pos depth 1 epochs 2",
                                                "ViT p7 pre-LN pos depth 4 epochs 2"]


def test_values_take_the_field_type():
    assert parse_vary("lr=0.0003,0.003") == ("lr", (0.0003, 0.003))
    assert parse_vary("norm=layer,batch") == ("norm", ("layer", "batch"))
    assert parse_vary("mlp-dim=64,256") == ("mlp_dim", (64, 256))


@pytest.mark.parametrize("vary, message", [
    ("depth=x", "--vary depth takes int values"),
    ("dpth=1", "FIELD one of"),
    ("seed=1,2", "FIELD one of"),
    ("depth=1,1", "lists a value twice"),
])
def test_a_bad_field_or_value_names_what_is_allowed(vary, message):
    with pytest.raises(ValueError, match=message):
        parse_vary(vary)


@pytest.mark.parametrize("vary, message", [
    ([("width", (30,))], "width=30: width \\(30\\) must be divisible by heads \\(4\\)"),
    ([("depth", (0,))], "depth must be a whole number from 1"),
    ([DEPTH, ("depth", (8,))], "more than once"),
])
def test_a_config_runconfig_refuses_is_one_message(vary, message):
    with pytest.raises(ValueError, match=message):
        custom_grid(vary, seeds=(0,), rows=(1_000,))


def test_a_vit_field_on_the_convnet_is_refused():
    with pytest.raises(ValueError, match="width does not apply to the convnet"):
        custom_grid([WIDTH], seeds=(0,), rows=(1_000,), model="convnet")


@pytest.mark.parametrize("args, message", [
    (["--vary", "width=30"], "width=30: width (30) must be divisible by heads (4)"),
    (["--vary", "depth=x"], "--vary depth takes int values"),
    (["default", "--vary", "depth=1"], "or --vary, not both"),
    (["--cross"], "--cross and --base go with --vary"),
])
def test_sweep_vary_exits_2_with_one_line(tmp_path, capsys, args, message):
    """In the test's process (cli.main); tests/test_cli.py runs bad inputs in a fresh `python -m vitcore` too."""
    from vitcore import cli

    assert cli.main(["sweep", *args, "--store", str(tmp_path / "store"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "store").exists()  # a dry run refused writes nothing


@pytest.mark.slow
def test_sweep_vary_dry_run_lists_the_grid(tmp_path):
    done = run_cli("sweep", "--vary", "depth=1,2,4", "--vary", "width=32,64,128", "--seeds", "0-9",
                   "--rows", "1000,4000", "--store", str(tmp_path / "store"), "--dry-run")
    assert done.returncode == 0, done.stderr
    grid = "your grid (one at a time, around the article's ViT): 5 configs x 2 row counts x 10 random seeds"
    assert grid in done.stdout
    assert "grid custom: 100 runs, 0 in" in done.stdout
