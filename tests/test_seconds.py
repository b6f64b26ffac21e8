"""Seconds mean one thing: a run's recorded load makes a busy run its own timing group, groups timed under load
never enter a comparison, and no page, card or CSV shows a seconds mean pooled across timing groups."""

import re

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from fakes import confusion, history, metrics, run_row, runs_table
from streamlit.testing.v1 import AppTest

from vitcore.app import fmt, state
from vitcore.app.sidebar import PAINTED
from vitcore.cli import main
from vitcore.config.run import RunConfig
from vitcore.stats import seconds
from vitcore.stats.compare import compare
from vitcore.stats.estimates import BETTER, NOT_COMPARABLE
from vitcore.store.runs import RunStore

CLEAN = {"code": 2, "threads": 1, "workers": 2, "compile": "reused"}
REPLACED = {**CLEAN, "context": "replaced"}
QUIET = {"loadavg_start": 0.4, "loadavg_end": 1.9, "cpu_per_wall": 0.97, "cores": 2}
BUSY = {**QUIET, "loadavg_end": 3.6}


def save(store: RunStore, cfg: RunConfig, secs: float, timing: dict, accuracy: float = 0.75):
    summary = metrics(cfg, accuracy, seconds=secs) | {"timing": timing}
    store.save(cfg, history(cfg, summary), confusion(accuracy), summary)


@pytest.mark.parametrize("timing, group", [
    ({**CLEAN, "load": QUIET}, "v2/threads1/workers2/reused"),  # a quiet run: the group old runs have
    ({**CLEAN, "load": BUSY}, "v2/threads1/workers2/reused/busy"),  # load 3.6 on 2 cores: its own group
    ({**REPLACED, "load": BUSY}, "v2/threads1/workers2/reused/replaced/busy"),
])
def test_the_recorded_load_makes_a_busy_run_its_own_timing_group(tmp_path, timing, group):
    store = RunStore(tmp_path / "store")
    save(store, RunConfig(), 30.0, timing)
    assert store.table()["timing_group"].tolist() == [group]


def test_a_malformed_load_is_refused(tmp_path):
    store = RunStore(tmp_path / "store")
    with pytest.raises(ValueError, match="load loadavg_start"):
        save(store, RunConfig(), 30.0, {**CLEAN, "load": {**QUIET, "cores": 0}})


def test_groups_timed_under_load_rank_last_and_never_enter_a_comparison():
    groups = ["v2/a/replaced"] * 5 + ["v1/legacy"] * 2 + ["v2/b"] * 3 + ["v2/c/reference"]
    assert seconds.ranked_groups(pd.DataFrame({"timing_group": groups})) == [
        "v2/c/reference", "v2/b", "v1/legacy", "v2/a/replaced"]
    base, conv = RunConfig(train_rows=1000), RunConfig(model="convnet", train_rows=1000)
    rows = []
    for seed in range(6):
        group = "v2/b" if seed < 2 else "v2/a/replaced"  # 2 clean pairs, 4 pairs timed on a shared machine
        rows += [run_row(base.replace(seed=seed), seconds=10.0 + seed) | {"timing_group": group},
                 run_row(conv.replace(seed=seed), seconds=300.0 + seed) | {"timing_group": group}]
    runs = runs_table(rows).assign(timing_group=[r["timing_group"] for r in rows])
    row = compare(runs, conv, base, metrics=["seconds"]).metrics.iloc[0]
    assert (row["timing_group"], row["n_pairs"]) == ("v2/b", 2)
    only_loaded = runs[runs["timing_group"] != "v2/b"]
    row = compare(only_loaded, conv, base, metrics=["seconds"]).metrics.iloc[0]
    assert row["verdict"] == NOT_COMPARABLE and row["n_pairs"] == 0


CONFIGS = {RunConfig(train_rows=4000): 10.0, RunConfig(model="convnet", train_rows=4000): 6.0,
           RunConfig(train_rows=1000): 4.0, RunConfig(model="convnet", train_rows=1000): 3.0,
           RunConfig(patch_size=4, train_rows=4000): 20.0, RunConfig(patch_size=14, train_rows=4000): 5.5,
           RunConfig(patch_size=2, train_rows=4000): 61.0}
PAGES = ["ablations", "claims", "noise", "runs", "patching", "anatomy", "token_cost", "vit_vs_convnet"]


def write_two_groups(root) -> tuple[RunStore, list[float]]:
    """Every config with random seeds 0-2 timed clean and 3-5 timed again on a busy machine (7× slower): the
    seconds means pooled across the two groups, which no view may show."""
    store, pooled = RunStore(root), []
    for cfg, base in CONFIGS.items():
        times = [base + 0.3 * seed if seed < 3 else 7 * base + 0.7 * seed for seed in range(6)]
        for seed, secs in enumerate(times):
            save(store, cfg.replace(seed=seed), secs, CLEAN if seed < 3 else REPLACED, 0.7 + 0.01 * seed)
        pooled.append(float(np.mean(times)))
    return store, pooled


@pytest.fixture(scope="module")
def shared_two_groups(tmp_path_factory) -> tuple[RunStore, list[float]]:
    """write_two_groups once for the tests that only read the store (page runs and CLI commands with their
    outputs elsewhere): they share its Study as a server's visitors do, instead of each computing it cold."""
    return write_two_groups(tmp_path_factory.mktemp("two_groups") / "store")


@pytest.fixture
def two_groups(shared_two_groups, monkeypatch) -> tuple[RunStore, list[float]]:
    """shared_two_groups, the store the app reads for this test."""
    store, pooled = shared_two_groups
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    return store, pooled


@pytest.fixture
def own_two_groups(tmp_path, monkeypatch) -> tuple[RunStore, list[float]]:
    """write_two_groups for one test that adds to it (a timing set beside the store), the store the app reads."""
    monkeypatch.setattr(state, "STORE_PATH", str(tmp_path / "store"))
    return write_two_groups(tmp_path / "store")


def _shown(at: AppTest) -> tuple[str, list[float]]:
    """Every text and every number a page shows."""
    text = [e.value for kind in ("markdown", "caption", "info", "warning", "success", "text")
            for e in getattr(at, kind)]
    text += [f"{m.label} {m.value} {m.delta}" for m in at.metric]
    numbers = []
    for frame in [d.value for d in at.dataframe] + [t.value for t in at.table]:
        text.append(frame.to_string())
        numbers += pd.to_numeric(frame.select_dtypes("number").to_numpy().ravel(), errors="coerce").tolist()
    return " ".join(str(t) for t in text), numbers


def _pooled_in(text: str, numbers: list[float], pooled: list[float]) -> list[float]:
    """The pooled means a page shows: as a number of its own in the text (not a digit run of a longer number, nor a
    ratio such as the Token cost's 'measured time × 13.6'), or in a table."""
    plain = re.sub(r"×\s*\**[\d.,]+|[\d.,]+\**\s*×", "", text)  # ratios ('× **13.6**', '150.1×') are not seconds
    def said(p: float) -> bool:
        return re.search(rf"(?<![\d.,]){re.escape(fmt.number(p, 1))}(?![\d])", plain) is not None
    return [p for p in pooled if said(p) or any(abs(n - p) < 0.05 for n in numbers if np.isfinite(n))]


def page(name: str, **session) -> AppTest:
    at = AppTest.from_file(str(ROOT / "views" / f"{name}.py"), default_timeout=120)
    at.session_state[PAINTED] = True  # the whole page, as after the first paint (AppTest fires no timers)
    for key, value in session.items():
        at.session_state[key] = value
    return at.run()


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
@pytest.mark.parametrize("name", PAGES)
def test_no_page_shows_a_seconds_mean_pooled_across_timing_groups(two_groups, name):
    _, pooled = two_groups
    at = page(name)
    assert not at.exception, at.exception
    assert _pooled_in(*_shown(at), pooled) == []


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_no_card_and_no_csv_shows_a_seconds_mean_pooled_across_timing_groups(two_groups, tmp_path):
    store, pooled = two_groups
    at = page("ablations", model="convnet")  # a variant's cards: Δ and the baseline's seconds
    assert not at.exception and "against the baseline **ViT" in _shown(at)[0]
    assert _pooled_in(*_shown(at), pooled) == []
    out = tmp_path / "out"
    for name, command in (("report", ["report"]),
                          ("effects", ["effects", "--out", str(out / "effects" / "effects.csv")]),
                          ("claims", ["claims", "--out", str(out / "claims" / "claims.csv")]),
                          ("compare", ["compare", "--model", "convnet"]), ("export", ["export"])):
        args = command + ([] if "--out" in command else ["--out", str(out / name)]) + ["--store", str(store.root)]
        assert main(args) == 0, command
    files = list(out.rglob("*.csv"))
    assert len(files) >= 6
    for path in files:
        frame = pd.read_csv(path)
        numbers = frame.select_dtypes("number").to_numpy().ravel().tolist()
        assert _pooled_in("", numbers, pooled) == [], path.name


def test_the_timing_set_alternates_its_configs_and_waits_for_a_quiet_machine(capsys):
    from vitcore.analysis import timing

    a, b = RunConfig(), RunConfig(model="convnet")
    order = timing.interleaved([a, b], pairs=4)
    assert [(c.model, c.seed) for c in order] == [("vit", 0), ("convnet", 0), ("convnet", 1), ("vit", 1),
                                                  ("vit", 2), ("convnet", 2), ("convnet", 3), ("vit", 3)]
    with pytest.raises(ValueError, match="at least 2"):
        timing.interleaved([a], pairs=10)
    shares, slept = iter([0.9, 0.3, 0.05]), []
    assert timing.wait_quiet(0.1, busy=lambda: next(shares), sleep=slept.append, poll=10) and slept == [10, 10]
    assert not timing.wait_quiet(0.1, most=20, busy=lambda: 0.5, sleep=slept.append, poll=10)
    assert 0 <= timing.cpu_share(0.2) <= 1
    assert main(["bench-timing", "--pairs", "1"]) == 2 and "--pairs must be at least 2" in capsys.readouterr().err


def test_token_costs_default_basis_is_not_a_group_timed_under_load(two_groups):
    from vitcore.analysis import cost

    store, _ = two_groups
    runs = store.table()
    runs = runs[~((runs["timing_group"] == "v2/threads1/workers2/reused") & (runs["seed"] == 2))]  # fewer clean runs
    groups = cost.tokens_timing_groups(runs)
    assert groups == ["v2/threads1/workers2/reused", "v2/threads1/workers2/reused/replaced"]
    at = page("token_cost")
    shown = _shown(at)[0]
    assert "timing group `v2/threads1/workers2/reused`" in shown and "not trained yet" in shown


def test_the_timing_set_beside_the_store_is_the_seconds_basis_and_never_an_accuracy(own_two_groups):
    """`bench-timing` trains into timing_runs/ beside the store: the landing card, Token cost and the headline take
    their seconds from it (context "reference"), and no comparison of accuracy counts its runs."""
    from vitcore.study import Study

    store, _ = own_two_groups
    timing = RunStore(store.root.parent / "timing_runs")
    reference = {**CLEAN, "compile": "cached", "context": "reference", "load": QUIET}
    for seed in range(3):
        save(timing, RunConfig().replace(seed=seed), 42.0 + 0.1 * seed, reference)
        save(timing, RunConfig(patch_size=4).replace(seed=seed), 80.0 + 0.1 * seed, reference)
    group = "v2/threads1/workers2/cached/reference"
    study = Study.open(store.root)
    assert set(study.timing["timing_group"]) == {group} and len(study.timing) == 6
    table = study.headline()[0].set_index(["model", "train_rows"])
    assert table.loc[("vit", 4000), "seconds_timing_group"] == group
    assert table.loc[("vit", 4000), "seconds_mean"] == pytest.approx(42.1)
    assert table.loc[("convnet", 4000), "seconds_timing_group"] == "v2/threads1/workers2/reused"
    row = study.compare(RunConfig(patch_size=4)).metrics.set_index("metric").loc["test_accuracy"]
    assert row["n_pairs"] == 6  # the store's 6 random seeds, not 9: the timing set repeats seeds 0-2

    at = page("ablations")  # the article's ViT: its own numbers
    card = next(m for m in at.metric if "econds" in m.label)
    assert card.value == fmt.number(42.1, 1), card.value
    shown = _shown(page("token_cost"))[0]
    assert f"timing group `{group}`" in shown and "not trained yet" not in shown


def timed_pairs(selection: RunConfig, baseline: RunConfig, group: str, pairs: int, faster: float) -> pd.DataFrame:
    """`pairs` random seeds of two configs timed in `group`, the selection `faster` s quicker at every seed (±0.3 s)."""
    rows = []
    for seed in range(pairs):
        wobble = 0.3 * (-1) ** seed
        rows += [run_row(baseline.replace(seed=seed), seconds=30.0 + seed) | {"timing_group": group},
                 run_row(selection.replace(seed=seed), seconds=30.0 + seed - faster + wobble) | {"timing_group": group}]
    return runs_table(rows).assign(timing_group=[r["timing_group"] for r in rows])


SET = "v3/threads2/workers1/fresh/reference"  # the dedicated timing set's group: timed interleaved


@pytest.mark.parametrize("group, pairs, verdict, why", [
    ("v2/threads1/workers2/fresh", 12, NOT_COMPARABLE,
     "its 12 pairs were timed one run after another, not interleaved"),
    (SET, 9, NOT_COMPARABLE, "only 9 pairs timed interleaved"),
    (SET, 10, BETTER, ""),
])
def test_a_seconds_verdict_needs_ten_pairs_timed_interleaved(group, pairs, verdict, why):
    """A seconds Δ is judged only where its timing was a design: 10 pairs of the two configs timed interleaved in one
    group. Before: any group with 2 pairs gave a verdict (position embedding none "better" by 11 s from 2 pairs a
    sweep timed one after another), on the card, the flip table, the effects and the report alike."""
    base, small = RunConfig(), RunConfig(patch_size=14)  # patch 14 counts less work: no work note
    runs = timed_pairs(small, base, group, pairs, faster=3.0)
    row = compare(runs, small, base, metrics=["seconds"]).metrics.iloc[0]
    assert (row["verdict"], row["n_pairs"], row["timing_group"]) == (verdict, pairs, group)
    assert row["mean_delta"] == pytest.approx(-3.0, abs=0.2)  # the Δ is measured either way; only its verdict waits
    assert (why in row["timing_note"]) and bool(row["timing_note"]) == bool(why) and row["work_note"] == ""
    assert "a seconds verdict needs 10 pairs timed interleaved" in row["timing_note"] or not why
    # every other path to a seconds verdict gives the same one: the flip table, the one-cell effects
    from vitcore.stats import summaries

    flip = summaries.flip_effects(runs, base, metrics=["seconds"]).set_index("to").loc[14]
    assert (flip["verdict"], flip["timing_note"]) == (row["verdict"], row["timing_note"])
    effect = summaries.main_effects(runs, metrics=["seconds"]).set_index("level").loc[14]
    assert effect["verdict"] == (verdict if group == SET else NOT_COMPARABLE)


def test_equal_counted_work_never_reads_faster_without_saying_so():
    """Position embedding none against learned: the same multiply-adds per image (the embedding is one addition).
    A seconds verdict between them, even a designed one, says the counted work is the same, on every view's words."""
    from vitcore.study import words

    base, none = RunConfig(), RunConfig(pos_embedding="none")
    row = compare(timed_pairs(none, base, SET, 10, faster=3.0), none, base, metrics=["seconds"]).metrics.iloc[0]
    assert row["verdict"] == BETTER and row["timing_note"] == ""
    assert row["work_note"].startswith("the counted work is the same (1,164,928 multiply-adds per image")
    assert f"better — beyond ±1.000 · {row['work_note']}" == words.verdict_text(row)
    assert words.verdict_text(row, short=True) == "better — beyond ±1.000 · same counted work"
    unpaired = compare(timed_pairs(none, base, SET, 3, faster=3.0), none.replace(train_rows=1000), base,
                       metrics=["seconds"]).metrics.iloc[0]
    assert unpaired["verdict"] == NOT_COMPARABLE and "different rows" in unpaired["timing_note"]
    assert unpaired["work_note"] == ""  # 1,000 rows against 4,000: not the same work


def test_position_embedding_none_shows_its_seconds_not_comparable_saying_the_work_is_the_same(tmp_path, monkeypatch):
    """`/?pos_embedding=none`: its seconds were "better" by 11 s from 2 pairs timed one run after another
    in a sweep. Its card now shows its own time, "not comparable" and why, and that the counted work is the same."""
    store = RunStore(tmp_path / "store")
    for seed in range(3):
        save(store, RunConfig(seed=seed), 31.0 - 0.4 * seed, {**CLEAN, "compile": "fresh"})
        save(store, RunConfig(pos_embedding="none", seed=seed), 20.0 - 0.4 * seed, {**CLEAN, "compile": "fresh"})
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["pos_embedding"] = "none"
    at.session_state[PAINTED] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    card = next(m for m in at.metric if "econds" in m.label)
    assert card.value == "19.6" and not card.delta  # its own time; no Δ shown as if it were the model's
    text = _shown(at)[0]
    assert ":gray-badge[not comparable] its 3 pairs were timed one run after another, not interleaved" in text
    assert "the counted work is the same (1,164,928 multiply-adds per image" in text


@pytest.mark.slow  # the whole committed store behind the page (tens of seconds)
def test_position_embedding_none_on_the_committed_store_is_not_a_seconds_verdict(monkeypatch):
    """`/?pos_embedding=none` on the committed store shows its seconds "not
    comparable" (or a Δ within ±1 s), saying the counted work is the article's ViT's."""
    monkeypatch.setattr(state, "STORE_PATH", str(ROOT / "cached_runs"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["pos_embedding"] = "none"
    at.session_state[PAINTED] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    card = next(m for m in at.metric if "econds" in m.label)
    text = _shown(at)[0]
    if card.delta:  # a designed timing: its Δ must be within the margin
        assert abs(float(card.delta)) <= 1.0, card.delta
    else:
        assert ":gray-badge[not comparable]" in text
    assert "the counted work is the same (1,164,928 multiply-adds per image" in text
