"""The switch registry (vitcore.config.switches): RunConfig's fields, checks, labels and run ids come from it."""

import json

import pytest
from conftest import ROOT

from vitcore.config import switches
from vitcore.config.run import DEFAULTS, FIELD_NAMES, V1_FIELDS, RunConfig
from vitcore.store.index import RUN_ID


def test_every_committed_run_keeps_its_id():
    """Each folder of cached_runs is the run id of the config its config.json holds."""
    folders = sorted(p for p in (ROOT / "cached_runs").iterdir() if p.is_dir() and RUN_ID.fullmatch(p.name))
    assert len(folders) >= 590
    for folder in folders:
        config = json.loads((folder / "config.json").read_text())["config"]
        assert RunConfig.from_dict(config).run_id == folder.name, folder.name


def test_switch_fields_come_from_the_registry():
    for switch in switches.REGISTRY:
        assert switch.name in FIELD_NAMES and DEFAULTS[switch.name] == switch.default
        assert getattr(RunConfig(), switch.name) == switch.default
        for level in switch.levels:
            assert getattr(RunConfig(**{switch.name: level}), switch.name) == level
    # the historic column order of the runs table is kept
    assert FIELD_NAMES[:5] == ("model", "pos_embedding", "norm_placement", "norm", "patch_size")
    assert set(V1_FIELDS) <= set(FIELD_NAMES)


def test_runconfig_fields_are_written_in_the_class_and_match_the_registry():
    """The fields are in the class's own source (editors and type checkers see `cfg.pooling`), typed as the
    registry's default, in the registry's order after `model`; a switch missing its field fails at import."""
    import ast
    import inspect

    from vitcore.config import run

    tree = ast.parse(inspect.getsource(RunConfig))
    written = {node.target.id: ast.unparse(node.annotation) for node in tree.body[0].body
               if isinstance(node, ast.AnnAssign)}
    for switch in switches.REGISTRY:
        assert written.get(switch.name) == type(switch.default).__name__, switch.name
    levelled = [s.name for s in switches.REGISTRY if not s.free]  # the switches with levels, right after `model`
    assert list(written)[1:1 + len(levelled)] == levelled
    broken = type("Broken", (), {"__annotations__": {"model": "str", "pos_embedding": "str"}, "model": "vit",
                                 "pos_embedding": "learned"})
    with pytest.raises(ValueError, match="registry's order"):
        run._matches_registry(broken)


@pytest.mark.parametrize("switch", [s for s in switches.REGISTRY if not s.free], ids=lambda s: s.name)
def test_a_level_outside_the_registry_names_the_allowed_ones(switch):
    bad = "nonsense" if isinstance(switch.default, str) else 3
    with pytest.raises(ValueError, match=", ".join(map(str, switch.levels))):
        RunConfig(**{switch.name: bad})


def test_labels_are_the_historic_ones():
    assert RunConfig().label() == "ViT p7 pre-LN pos"
    assert RunConfig(pos_embedding="none", norm="batch", norm_placement="post", patch_size=4).label() \
        == "ViT p4 post-BN no-pos"
    assert RunConfig(model="convnet", warmup_epochs=2).label() == "convnet warm-up 2"
    assert RunConfig(norm_placement="post", warmup_epochs=2).label() == "ViT p7 post-LN pos warm-up 2"


def test_a_later_field_enters_the_id_only_off_its_default(monkeypatch):
    from vitcore.config import run

    monkeypatch.setitem(run.DEFAULTS, "dropout", 0.0)
    monkeypatch.setitem(run.DEFAULTS, "data_seed", None)
    cfg = RunConfig(norm="batch", seed=3)
    assert run._digest({**cfg.identity(), "dropout": 0.0, "data_seed": None}) == cfg.run_id
    assert run._digest({**cfg.identity(), "dropout": 0.1}) != cfg.run_id
    assert run._digest({**cfg.identity(), "data_seed": 0}) != cfg.run_id
    # an original field always enters: the article's ViT's id is not the hash without its defaults
    assert run._digest({"model": "vit", "seed": 0}) != RunConfig().run_id


def test_the_sidebar_offers_every_row_count_the_grids_train():
    from vitcore.app import selection
    from vitcore.run import sweep

    assert {cfg.train_rows for cfg in sweep.grid("all")} <= set(selection.CHOICES["train_rows"])
    assert 16_000 in selection.CHOICES["train_rows"]


def test_a_level_has_one_name_in_every_view():
    """The registry's words name a level on the forest plot (change), the Plans page (setting), the sidebar (word)."""
    pooling = switches.SWITCH["pooling"]
    assert [pooling.word(level) for level in pooling.levels] == ["token mean", "class token"]
    assert switches.change("pooling", "gap", "cls") == "pooling token mean → class token"
    assert switches.setting("pooling", "cls") == "pooling class token"
    assert switches.setting("patch_size", 4) == "patch size 4" and switches.setting("depth", 1) == "depth 1"
    assert switches.SWITCH["norm"].word("batch") == "batch"  # no word: the level itself
    from vitcore.app.runs_view import labeller  # the Runs page's filters

    assert labeller("pooling")("cls") == "class token" and labeller("train_rows")(4000) == "4,000"
