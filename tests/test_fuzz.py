"""The fuzz test: every hostile variant of every run file (tests/hostile.py) applied to
its own run of one copy of cached_runs/, and every hostile `.index.json`. Each damaged run must be
named by `check` and skipped by every reader — the table, the exports, every page (AppTest, with
the "damaged runs skipped" note) — while the readers' memory stays under the app's 400 MB goal
(tracemalloc peak; before, one 2 GB sparse predictions.npy alone cost 4.3 GB). The seconds each
step takes are printed (`-s`), not asserted."""

import time
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest
from hostile import HOSTILE, HOSTILE_INDEX
from stores import copied_table, copy_store, page_runs
from streamlit.testing.v1 import AppTest
from test_app_damaged_store import frame_opening, page_title, pages

from vitcore import cli
from vitcore.app import state
from vitcore.data.samples import local_data_available
from vitcore.store.runs import INDEX, RunStore, StoreWarning

MEMORY_GOAL = 400 << 20

pytestmark = pytest.mark.slow  # every page rendered on damaged copies of the store: many seconds


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, committed_table) -> tuple[Path, dict[str, str], int]:
    """(the store, {run id: words check must say}, valid runs before): each variant on its own run, in a copy of
    the runs the pages draw from and one spare run per variant (not the whole store)."""
    keep = page_runs(committed_table, spare=len(HOSTILE), plain=0)  # the page runs hold plain runs enough
    store = copy_store(tmp_path_factory.mktemp("hostile") / "store", keep=keep)
    table = copied_table(committed_table, keep)  # the check below validates every run from its files
    weighted = list(table[table["has_weights"] & table["has_predictions"]]["run_id"])
    plain = list(table[~table["has_weights"] & table["has_predictions"]]["run_id"])
    expected = {}
    for weights, damage, words in HOSTILE.values():
        pool = weighted if weights else plain
        fits = weights if callable(weights) else (lambda folder: True)
        run_id = next(run_id for run_id in reversed(pool) if fits(store / run_id))
        pool.remove(run_id)
        damage(store / run_id)
        expected[run_id] = words
    return store, expected, len(table)


def test_a_copys_table_is_the_committed_tables_rows(tmp_path, committed_table):
    """The fixtures that damage a copy pick its runs from the committed table (stores.copied_table) instead of
    validating the copy again: the copy's own table, read from its files, is those rows."""
    weighted = committed_table[committed_table["has_weights"] & committed_table["has_predictions"]]
    keep = {*weighted["run_id"][:4], *committed_table[~committed_table["has_weights"]]["run_id"][:8]}
    store = copy_store(tmp_path / "store", keep=keep)
    def values(table):  # a column with no value in so few runs is None (object) in the copy, NaN in the whole store
        return table.astype(object).where(table.notna(), None)

    pd.testing.assert_frame_equal(values(RunStore(store).table()), values(copied_table(committed_table, keep)))


def peak(step) -> tuple[object, int, float]:
    """(step's result, its tracemalloc peak in bytes, its seconds)."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        result = step()
        return result, tracemalloc.get_traced_memory()[1], time.perf_counter() - start
    finally:
        tracemalloc.stop()


def test_check_names_every_hostile_file_within_the_memory_goal(hostile, screened_only):
    store, expected, _ = hostile
    labels = None
    if local_data_available():
        from vitcore.data.fashion import official_test_labels

        labels = official_test_labels()
    problems, memory, seconds = peak(lambda: dict(RunStore(store).check(labels)))
    print(f"check of {len(expected)} hostile runs among {len(list(store.iterdir()))}: {seconds:.2f} s, "
          f"peak {memory / 2**20:.0f} MB")
    wrong = {run_id: (words, problems.get(run_id)) for run_id, words in expected.items()
             if words not in (problems.get(run_id) or "")}
    assert wrong == {}
    assert set(problems) == set(expected)
    assert memory < MEMORY_GOAL


@pytest.mark.slow  # tens of seconds: every reader over every hostile file
def test_every_reader_skips_them_within_the_memory_goal(hostile, tmp_path):
    store, expected, valid = hostile
    (tmp_path / "out").mkdir()
    with pytest.warns(StoreWarning) as said:  # each skipped run is reported (a StoreWarning per reader)
        code, memory, seconds = peak(lambda: cli.main(["export", "--store", str(store), "--out",
                                                       str(tmp_path / "out")]))
    print(f"export: {seconds:.2f} s, peak {memory / 2**20:.0f} MB")
    assert code == 0 and memory < MEMORY_GOAL
    assert set(expected) <= {run_id for run_id in expected for w in said if run_id in str(w.message)}
    with pytest.warns(StoreWarning):
        table = RunStore(store).table()
    assert len(table) == valid - len(expected) and not set(table["run_id"]) & set(expected)


@pytest.mark.parametrize("page", pages())
def test_every_page_renders_and_says_it_skipped_them(hostile, monkeypatch, tmp_path, page):
    store, expected, _ = hostile
    monkeypatch.setattr(state, "STORE_PATH", str(store))
    start = time.perf_counter()
    at = AppTest.from_file(str(frame_opening(page, tmp_path)), default_timeout=180).run()
    print(f"{page}: {time.perf_counter() - start:.2f} s")
    assert not at.exception, [e.message for e in at.exception]
    assert at.title and at.title[0].value == page_title(page)
    assert f"{len(expected)} damaged runs skipped — run `python -m vitcore check`" in [c.value for c in at.caption]


@pytest.mark.parametrize("variant", HOSTILE_INDEX)
def test_a_hostile_index_is_named_and_rebuilt(tmp_path, variant, screened_only):
    store = copy_store(tmp_path / "store", runs=12)
    clean = RunStore(store).table()
    damage, words = HOSTILE_INDEX[variant]
    damage(store)
    table, memory, seconds = peak(lambda: RunStore(store).table())
    print(f"index {variant}: table {seconds:.2f} s, peak {memory / 2**20:.0f} MB")
    assert table.equals(clean) and memory < MEMORY_GOAL
    damage(store)  # again: table() rewrote the index
    problems = dict(RunStore(store).check())
    assert list(problems) == [INDEX] and words in problems[INDEX]
    assert RunStore(store).check() == []  # rebuilt
