"""Your own runs are first-class: every RunConfig field is a switch of the registry, so runs
trained with `--width 32` get their own label, a Width control in the sidebar, single-switch effects
and `compare --width 32`, while the committed store's sidebar stays as it was."""

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli
from fakes import write_run
from streamlit.testing.v1 import AppTest

from vitcore.app import state
from vitcore.app.selection import FREE_KEYS, cell_name, store_choices
from vitcore.app.sidebar import PAINTED
from vitcore.config import switches
from vitcore.config.run import RunConfig
from vitcore.stats import families, summaries
from vitcore.store.runs import RunStore
from vitcore.study import Study

APP = str(Path(__file__).resolve().parents[1] / "app.py")
ROWS = 1_000
ARTICLE = RunConfig(train_rows=ROWS)
NARROW = ARTICLE.replace(width=32)


@pytest.fixture
def own_store(store) -> RunStore:
    """A copy of the committed store's article's ViT at 1,000 rows (its random seeds 0-2, real runs) and two
    runs of your own at width 32."""
    committed = RunStore(Path(__file__).resolve().parents[1] / "cached_runs")
    store.root.mkdir(parents=True)
    for seed in range(3):
        run = committed.get(ARTICLE.replace(seed=seed))
        shutil.copytree(run.path, store.root / run.run_id)
    for seed in range(2):
        write_run(store, NARROW.replace(seed=seed), 0.78 + 0.003 * seed)
    return store


def test_every_run_config_field_is_a_switch():
    fields = {"width", "depth", "heads", "mlp_dim", "epochs", "lr", "batch_size", "warmup_epochs"}
    assert fields <= set(FREE_KEYS)
    for name in fields:
        entry = switches.SWITCH[name]
        assert entry.free and entry.label and entry.help and len(entry.levels) >= 2
        assert entry.default == getattr(RunConfig(), name)


@pytest.mark.parametrize("name", [s.name for s in switches.REGISTRY if s.free])
def test_a_label_names_every_field_off_its_default(name):
    entry = switches.SWITCH[name]
    other = next(level for level in entry.levels if level != entry.default)
    cfg = RunConfig(train_rows=ROWS, **{name: other})
    assert cfg.label() != ARTICLE.label() and cfg.label().startswith(ARTICLE.label())
    assert cell_name(cfg) != cell_name(ARTICLE)


def test_width_32_has_its_own_label_and_a_sidebar_control(own_store):
    table = own_store.table()
    assert set(table["label"]) == {"ViT p7 pre-LN pos", "ViT p7 pre-LN pos width 32"}
    choices = store_choices(Study(table))
    assert 32 in choices["width"] and 64 in choices["width"]
    assert "depth" not in choices and "warmup_epochs" not in choices  # one value stored: no control


def test_the_committed_store_sidebar_shows_a_free_field_only_where_it_varies():
    """Warm-up (0 and 2 are stored) has its control; width and depth gain theirs once the depth/width study
    is committed, and a field of one stored value (epochs, batch size, learning rate) never shows."""
    table = RunStore(Path(__file__).resolve().parents[1] / "cached_runs").table()
    shown = [key for key in store_choices(Study(table)) if key in FREE_KEYS]
    assert shown == [key for key in FREE_KEYS if table[key].dropna().nunique() > 1]
    assert "warmup_epochs" in shown and not {"epochs", "batch_size", "lr"} & set(shown)


def test_a_width_change_is_a_single_switch_change_in_its_family(own_store):
    table = own_store.table()
    effects = summaries.main_effects(table, metrics=("test_accuracy",))  # effects.csv and the Main effects view
    flip = summaries.flip_effects(table, ARTICLE, metrics=("test_accuracy",)).iloc[0]  # the forest plot's row
    assert effects[["factor", "level", "cells"]].values.tolist() == [["width", 32, 1]]
    assert effects["verdict"].iloc[0] == flip["verdict"] and effects["mean_delta"].iloc[0] == flip["mean_delta"]
    assert families.changed_field(NARROW, ARTICLE) == "width"
    assert [(field, level) for field, level, _ in families.neighbours(table, ARTICLE)] == [("width", 32)]
    family = families.family_of(table, NARROW, ARTICLE)  # the registry's levels decide m: width 32 and 128
    assert family.size == len(switches.SWITCH["width"].levels) - 1 == 2 and family.name.startswith("width changes")


@pytest.mark.slow
def test_the_sidebar_offers_width_and_the_page_shows_the_width_32_runs(own_store, monkeypatch):
    monkeypatch.setattr(state, "STORE_PATH", str(own_store.root))
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state[PAINTED] = True
    at.query_params["train_rows"] = str(ROWS)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    width = next(radio for radio in at.radio if radio.key == "width")
    assert list(width.options) == ["32", "64"]  # your own study (no article's ViT at 4,000 rows): what it holds
    assert not any(radio.key == "depth" for radio in at.radio)
    width.set_value(32).run()
    assert not at.exception, [e.message for e in at.exception]
    text = " ".join(str(element.value) for element in (*at.markdown, *at.caption, *at.subheader))
    assert "width 32" in text


@pytest.mark.slow
def test_compare_width_32(own_store, tmp_path):
    done = run_cli("compare", "--width", "32", "--train-rows", str(ROWS), "--store", str(own_store.root),
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ViT p7 pre-LN pos width 32 (1,000 rows) − ViT p7 pre-LN pos (1,000 rows)" in done.stdout


# docs/own-ablation.md ("Your own ablation", linked from the README), made tiny: each change must apply (the page and
# the test stay one). Its runs train 2 epochs (`--base epochs=2`, the page's own way to move the centre): at the
# article's 15 epochs its six trainings made this one of the suite's slowest tests.
TINY_README = {"depth=1,2,4": "depth=2,4", "width=32,64,128": "width=32,64",
               "--seeds 0-9": "--seeds 0-1 --base epochs=2", "--rows 1000,4000": "--rows 300",
               "--workers 2": "--workers 1", "--train-rows 1000": "--train-rows 300"}


def readme_commands() -> list[str]:
    """The vitcore commands of docs/own-ablation.md's block, made tiny."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "own-ablation.md").read_text()
    block = text.split("# Your own ablation", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    for old, new in TINY_README.items():
        assert old in block, old
        block = block.replace(old, new)
    assert "export VITCORE_STORE=" in block
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("python -m vitcore ")]


@pytest.mark.slow
def test_the_readme_own_ablation_runs(tmp_path):
    import shlex

    env = {"VITCORE_STORE": str(tmp_path / "my_runs")}
    commands = readme_commands()
    assert [shlex.split(c)[3] for c in commands] == ["sweep", "compare", "effects"]
    for command in commands:
        args = [os.path.expandvars(arg) if "$" in arg else arg
                for arg in shlex.split(command.replace("$VITCORE_STORE", env["VITCORE_STORE"]))]
        done = run_cli(*args[3:], env=env)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        if args[3] == "sweep":
            assert "trained 6 runs" in done.stdout, done.stdout
        elif args[3] == "compare":
            said = "ViT p7 pre-LN pos depth 4 epochs 2 (300 rows) − ViT p7 pre-LN pos epochs 2 (300 rows)"
            assert said in done.stdout, done.stdout
            assert "--epochs 2" in done.stdout.splitlines()[0]  # taken from the store, and said
        else:  # effects.csv: each one-field change, judged as on the forest plot
            effects = pd.read_csv(args[args.index("--out") + 1])
            levels = {(f, str(v)) for f, v in zip(effects["factor"], effects["level"])}
            assert levels == {("depth", "4"), ("width", "32")}
    table = RunStore(env["VITCORE_STORE"]).table()
    assert set(table["label"]) == {"ViT p7 pre-LN pos epochs 2", "ViT p7 pre-LN pos depth 4 epochs 2",
                                   "ViT p7 pre-LN pos width 32 epochs 2"}
    choices = store_choices(Study(table))
    assert choices["depth"] == (2, 4) and choices["width"] == (32, 64)  # your own study: only what it holds
    again = run_cli(*shlex.split(commands[0].replace("$VITCORE_STORE", env["VITCORE_STORE"]))[3:], env=env)
    assert again.returncode == 0 and "0 to train" in again.stdout  # resumable: nothing left


@pytest.fixture
def base_store(store) -> RunStore:
    """`sweep --vary depth=1 --seeds 0-1 --rows 300 --base epochs=2`, without training."""
    for seed in range(2):
        write_run(store, RunConfig(train_rows=300, epochs=2, seed=seed), 0.42 + 0.01 * seed)
        write_run(store, RunConfig(train_rows=300, epochs=2, depth=1, seed=seed), 0.44 + 0.01 * seed)
    return store


def test_compare_on_a_base_store_takes_the_fields_it_holds_at_one_value(base_store, tmp_path, monkeypatch, capsys):
    """The natural command works on your own `--base epochs=2` store and says what it took from it; a field named
    off what the store holds exits 2 in one line naming the flag to give, never the built-in grids."""
    from vitcore import cli

    monkeypatch.setenv("VITCORE_STORE", str(base_store.root))
    assert cli.main(["compare", "--depth", "1", "--train-rows", "300", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "from this store (every run here has it; name a flag to ask for another value): --epochs 2"
    assert out[1].startswith("ViT p7 pre-LN pos depth 1 epochs 2 (300 rows) − ViT p7 pre-LN pos epochs 2 (300 rows)")
    assert cli.main(["compare", "--depth", "1", "--out", str(tmp_path / "out")]) == 0  # the rows too
    assert "--train-rows 300, --epochs 2" in capsys.readouterr().out
    for args, words in ((["--depth", "1", "--epochs", "15"], "every run here has epochs=2: give --epochs 2"),
                        (["--depth", "3"], "(it varies depth over 1, 2)")):
        assert cli.main(["compare", *args, "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert words in err and "sweep --list" not in err and len(err.strip().splitlines()) == 1, err


def test_a_mistyped_store_folder_says_it_is_missing(tmp_path, monkeypatch, capsys):
    from vitcore import cli

    monkeypatch.setenv("VITCORE_STORE", str(tmp_path / "my_rnus"))
    assert cli.main(["compare", "--depth", "1", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"no store at {tmp_path / 'my_rnus'}: that folder does not exist (it comes from $VITCORE_STORE" in err
    assert "sweep default" not in err


def test_effects_on_a_base_store_centre_on_its_centre_and_say_so(base_store, tmp_path, capsys):
    """`effects` without --base on a `--base epochs=2` store: around its centre (as `compare` and the app), not an
    exit 2 asking for the --base the user has to guess."""
    from vitcore import cli

    out = tmp_path / "effects.csv"
    assert cli.main(["effects", "--store", str(base_store.root), "--out", str(out)]) == 0
    assert "around this store's centre, ViT p7 pre-LN pos epochs 2" in capsys.readouterr().out
    effects = pd.read_csv(out)
    assert set(effects["factor"]) == {"depth"} and set(effects["train_rows"]) == {300}
