"""vitcore.stats.centres: which config a store is read around (your own `--base` study is first-class)."""

import pandas as pd
import pytest
from fakes import write_centre_factorial, write_run

from vitcore.config.run import RunConfig
from vitcore.stats import centres

BASE = RunConfig(train_rows=300, epochs=2)  # `sweep --vary depth=1 --seeds 0-1 --rows 300 --base epochs=2`


@pytest.fixture
def base_study(store):
    for seed in range(2):
        write_run(store, BASE.replace(seed=seed), 0.42 + 0.01 * seed)
        write_run(store, BASE.replace(depth=1, seed=seed), 0.44 + 0.01 * seed)
    return store


def test_a_base_study_is_centred_on_its_base_at_its_rows(base_study):
    """Two configs, each the other's one-field neighbour: the one nearer the article's ViT (depth 2) is the centre."""
    table = base_study.table()
    assert centres.store_centre(table) == BASE
    assert not centres.holds_article(table)
    assert centres.default_baseline(table, BASE.replace(depth=1)) == BASE
    assert centres.default_baseline(table, BASE.replace(train_rows=1000)) == BASE.replace(train_rows=1000)


def test_a_factorial_of_your_own_is_centred_on_its_corner_nearest_the_article(store):
    centre = RunConfig(train_rows=300, epochs=5)
    table = write_centre_factorial(store, centre, seeds=2).table()
    assert centres.store_centre(table) == centre  # every corner has two neighbours: norm layer, learned positions


def test_a_store_with_the_article_vit_is_centred_on_it(base_study):
    write_run(base_study, RunConfig(seed=0))
    table = base_study.table()
    assert centres.holds_article(table) and centres.store_centre(table) == RunConfig()
    assert centres.default_baseline(table, BASE) == RunConfig(train_rows=300)  # config.run.default_baseline


def test_an_empty_store_has_no_centre(store):
    assert centres.store_centre(store.table()) is None
    assert centres.store_centre(pd.DataFrame()) is None


def test_the_changes_read_as_the_cli_takes_them():
    assert centres.changes_text(BASE) == "epochs=2"
    assert centres.changes_text(BASE.replace(depth=1, lr=3e-4)) == "depth=1,epochs=2,lr=0.0003"
    assert centres.changes_text(RunConfig(train_rows=300)) == ""


def test_the_fields_a_base_study_holds_at_one_value_fill_what_a_command_leaves_out(base_study):
    """`compare --depth 1 --train-rows 300` on a `--base epochs=2` store: epochs is the one field it holds at one value
    and the command does not name; a field the command names stays as named, even where it finds no run."""
    table = base_study.table()
    asked = RunConfig(depth=1, train_rows=300)
    assert centres.held(table, asked) == {"epochs": 2}
    assert centres.filled(table, asked) == (BASE.replace(depth=1), {"epochs": 2})
    assert centres.filled(table, RunConfig(depth=1)) == (BASE.replace(depth=1), {"train_rows": 300, "epochs": 2})
    assert centres.filled(table, asked.replace(epochs=15), given={"epochs"}) == (asked.replace(epochs=15), {})
    assert centres.held(table, BASE) == {}  # what the store holds needs nothing


def test_what_to_ask_instead_names_the_fields_and_never_the_built_in_grids(base_study):
    table = base_study.table()
    flag = lambda name, value: f"--{name.replace('_', '-')} {value}"  # noqa: E731 (the CLI's spelling)
    assert centres.missing_hint(table, RunConfig(depth=1, train_rows=300), flag) == \
        "every run here has epochs=2: give --epochs 2"
    assert centres.missing_hint(table, RunConfig(depth=3, train_rows=300)) == \
        "every run here has epochs=2 (set it in the RunConfig); it varies depth over 1, 2"
    assert "sweep --list" not in centres.missing_hint(table, RunConfig(model="convnet"))
