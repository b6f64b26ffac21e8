"""A copy of cached_runs/ damaged in every way at once (tests/damage.py), the runs of the default
view among them: `check` names every damaged entry, and every page of the app renders without an
exception element and shows how many damaged runs it skipped."""

import ast
from pathlib import Path

import pytest
from damage import RUN_DAMAGE, damage_store, tamper_index_row
from stores import copied_table, copy_store, page_runs
from streamlit.testing.v1 import AppTest

from vitcore.app import state
from vitcore.app.selection import BASELINE
from vitcore.data.fashion import official_test_labels
from vitcore.stats import summaries as stats
from vitcore.store.runs import INDEX, RunStore

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
SKIPPED = len(RUN_DAMAGE) + 2  # every damaged run, the symlinked run folder and the duplicated folder

pytestmark = pytest.mark.slow  # every page rendered on damaged copies of the store: many seconds


def pages() -> list[str]:
    """The pages app.py's st.navigation lists, in its order."""
    calls = [node for node in ast.walk(ast.parse(APP.read_text())) if isinstance(node, ast.Call)
             and getattr(node.func, "attr", None) == "Page" and node.args and isinstance(node.args[0], ast.Constant)]
    return sorted((call.args[0].value for call in calls), key=lambda page: APP.read_text().index(page))


@pytest.fixture(scope="module")
def damaged(tmp_path_factory, committed_table) -> tuple[Path, dict[str, str]]:
    """(the damaged copy, {entry: words check must say}). The default view's runs are damaged
    first (the landing page must survive them) and one of them is duplicated."""
    root = tmp_path_factory.mktemp("damaged")
    keep = page_runs(committed_table)  # its 51 runs besides the default view's are enough to damage
    store = copy_store(root / "store", keep=keep)  # not 70 MB
    table = copied_table(committed_table, keep)  # the copy's table, not a third validation of every run
    default = list(stats.runs_of(table, BASELINE)["run_id"])
    convnet = list(stats.runs_of(table, BASELINE.replace(model="convnet"))["run_id"])
    others = [run_id for run_id in table["run_id"] if run_id not in default + convnet]
    first = default[:3] + convnet[:2]
    order = [*first, *others[:len(RUN_DAMAGE) - len(first) + 1], default[3]]  # + a run to symlink, the original
    expected = damage_store(store, root, order)
    return store, expected


def test_check_names_every_damaged_entry(damaged, screened_only):
    store, expected = damaged
    RunStore(store).scan()  # an index of the damaged store, then one of its valid rows edited
    expected[INDEX] = "checksum mismatch"
    tamper_index_row(store)
    problems = dict(RunStore(store).check(official_test_labels()))
    assert {name: words for name, words in expected.items() if words not in problems.get(name, "")} == {}
    assert set(problems) == set(expected)


def frame_opening(page: str, folder: Path) -> Path:
    """app.py with `page` as its default page, in `folder` beside a link to views/: AppTest shows the
    frame's own elements (the note) only on the first run of the default page (switch_page runs a
    page file alone), so each page is reached as the default through the real frame."""
    text = APP.read_text().replace(", default=True", "")
    assert text.count(f'st.Page("{page}"') == 1
    (folder / "views").symlink_to(ROOT / "views")
    (folder / "app.py").write_text(text.replace(f'st.Page("{page}"', f'st.Page("{page}", default=True'))
    return folder / "app.py"


@pytest.mark.parametrize("page", pages())
def test_every_page_renders_on_a_damaged_store_and_says_what_it_skipped(damaged, monkeypatch, tmp_path, page):
    store, _ = damaged
    monkeypatch.setattr(state, "STORE_PATH", str(store))
    at = AppTest.from_file(str(frame_opening(page, tmp_path)), default_timeout=180).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.title and at.title[0].value == page_title(page)  # the page itself rendered, not just the frame
    assert f"{SKIPPED} damaged runs skipped — run `python -m vitcore check`" in [c.value for c in at.caption]


def page_title(page: str) -> str:
    """The st.title a page renders (its first, read from the file)."""
    tree = ast.parse((ROOT / page).read_text())
    call = next(node for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "title")
    return call.args[0].value


def test_a_run_damaged_while_the_server_runs_is_dropped_at_the_next_page_run(tmp_path, monkeypatch):
    """Before: the cache key was the store folder's mtime, which an edit in place does not move, so the
    damaged run stayed in the cached table with no note. Now the key is every run folder's stamp.
    (The app's own cached reads, called as a page calls them: AppTest starts each session with
    fresh caches, so it cannot show a stale one.)"""
    store = copy_store(tmp_path / "store", runs=40)
    monkeypatch.setattr(state, "STORE_PATH", str(store))
    monkeypatch.setattr(state, "STORE_KEY_SECONDS", 0.0, raising=False)
    runs = state.load_runs()
    run_id = runs["run_id"].iloc[0]
    assert state._scan(str(store), state.store_mtime())[1] == {}
    folder_mtime = (store / run_id).stat().st_mtime_ns
    RUN_DAMAGE["metric moved"][0](store / run_id)  # summary.json rewritten in place
    assert (store / run_id).stat().st_mtime_ns == folder_mtime
    assert run_id not in set(state.load_runs()["run_id"])
    assert list(state._scan(str(store), state.store_mtime())[1]) == [run_id]  # the skipped note's count


def test_a_timing_set_trained_while_the_server_runs_is_seen_at_the_next_page_run(tmp_path, monkeypatch):
    """The dedicated timing set (`timing_runs/` beside the store) is part of the store's key: before, its
    runs reached a running server only after a restart or a change to the store itself."""
    import shutil

    from vitcore.analysis.timing import TIMING_STORE
    from vitcore.store import index

    store = copy_store(tmp_path / "store", runs=10)
    timing = tmp_path / "timing_runs"
    first, second = sorted(p for p in TIMING_STORE.iterdir() if (p / "summary.json").is_file())[:2]
    timing.mkdir()
    shutil.copytree(first, timing / first.name)
    monkeypatch.setattr(state, "STORE_PATH", str(store))
    monkeypatch.setattr(state, "STORE_KEY_SECONDS", 0.0, raising=False)
    monkeypatch.setattr(index, "RACY_NS", 0)  # the copies are new: stamp them now, not "look again"
    assert list(state.study().timing["run_id"]) == [first.name]
    assert state.store_mtime() == state.store_mtime()  # nothing changed, nothing new
    shutil.copytree(second, timing / second.name)  # the timing set grows; the store does not change
    assert sorted(state.study().timing["run_id"]) == sorted([first.name, second.name])
