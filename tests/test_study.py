"""vitcore.study.Study: one analysis of the committed store, measured once, judged at any margin, and equal to
what the uncached library functions give (so the CLI's CSVs and the pages did not move)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from vitcore.article import claims
from vitcore.config.run import RunConfig
from vitcore.stats import compare as engine
from vitcore.stats import estimates as v
from vitcore.stats import plan, readings, summaries
from vitcore.stats.estimates import (
    BETTER,
    INCONCLUSIVE,
    JUDGEMENT_COLUMNS,
    NOT_COMPARABLE,
    TOO_FEW,
    WORSE,
    judge,
    paired_estimate,
)
from vitcore.stats.readings import SIZE_OPEN
from vitcore.stats.records import VERDICT_READINGS, Contrast, Judgement
from vitcore.study import Study, words

pytestmark = pytest.mark.xdist_group("committed_study")  # on the worker that computes the committed store's analyses


@pytest.fixture(scope="module")
def study(committed_study) -> Study:
    return committed_study  # tests/conftest.py: one Study of cached_runs/ per worker, read-only


@pytest.fixture
def fresh(study, monkeypatch) -> Study:
    """A Study of the same runs with empty caches, for the tests that count what it computes; it reads the test
    set the module's study has read (~1,000 predictions files, each validated: seconds, and not what they count)."""
    from vitcore.stats import testset

    shared = study.test_set
    monkeypatch.setattr(testset, "from_store", lambda store: shared)
    return Study(study.runs, study.store)


@pytest.fixture(scope="module")
def crossover(study):
    """The committed store's data-size crossover (scaling.crossover_estimate: a 2,000-replicate bootstrap, ~1 s),
    computed once for the tests below that count the Study's calls of it rather than check its numbers."""
    from vitcore.analysis import scaling

    return scaling.crossover_estimate(study.runs, test_set=study.test_set)


def test_judgement_is_judge_as_a_record():
    """Judgement.of is the one place judge()'s dict becomes a record: a column judge() gains must be a field."""
    assert [f.name for f in dataclasses.fields(Judgement)] == [*JUDGEMENT_COLUMNS, *VERDICT_READINGS]
    est = paired_estimate([0.01, 0.02, 0.015, 0.03])
    row = judge("test_accuracy", est, 0.01, "a family", 3)
    row.update(readings.verdict_columns("test_accuracy", est, row))
    assert Judgement.of(row).row() == row
    with pytest.raises(dataclasses.FrozenInstanceError):
        Judgement.of(row).verdict = BETTER


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
@pytest.mark.parametrize("selection, baseline", [
    (RunConfig(pos_embedding="none"), None),                                             # a flip-table change
    (RunConfig(model="convnet", train_rows=4000), RunConfig(train_rows=4000)),         # the article's models
    (RunConfig(train_rows=4000), RunConfig(train_rows=1000)),                          # unpaired (Welch)
])
def test_study_compare_is_the_engine(study, selection, baseline):
    confusions = study.confusions((selection, baseline or RunConfig(train_rows=selection.train_rows)))
    for margin in (0.005, 0.02):
        cached = study.compare(selection, baseline, margin, confusions=confusions)
        direct = engine.compare(study.runs, selection, baseline, margin, confusions, test_set=study.test_set,
                                timing=study.timing, plans=study.plans_checked().lead())
        # the Study adds the words of where each verdict comes from (the engine knows no store)
        pd.testing.assert_frame_equal(cached.metrics.drop(columns=plan.LEAD_COLUMNS),
                                      direct.metrics.drop(columns=plan.LEAD_COLUMNS))
        assert (direct.metrics[plan.LEAD_COLUMNS] == "").all().all()
        pd.testing.assert_frame_equal(cached.pairs, direct.pairs)
        pd.testing.assert_frame_equal(cached.classes, direct.classes)
        assert cached.family == direct.family


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_seconds_pair_in_the_timing_set_where_it_holds_both_configs(study):
    """The headline's ViT − convnet at 4,000 rows: the store's runs of the two share no timing group outside load,
    the dedicated timing set holds 10 interleaved pairs of exactly them; the seconds Δ is theirs, every other
    metric the store's alone."""
    vit, convnet = RunConfig(train_rows=4000), RunConfig(model="convnet", train_rows=4000)
    alone = engine.compare(study.runs, convnet, vit, metrics=("seconds",)).metrics.iloc[0]
    assert alone["verdict"] == NOT_COMPARABLE and alone["n_pairs"] == 0
    row = study.compare(convnet, vit).metrics.set_index("metric")
    timed = study.timing
    assert row.loc["seconds", "timing_group"].endswith("/reference") and row.loc["seconds", "n_pairs"] == 10
    sides = [timed[timed["config_id"] == cfg.config_id].set_index("seed")["seconds"] for cfg in (convnet, vit)]
    assert row.loc["seconds", "mean_delta"] == pytest.approx((sides[0] - sides[1]).mean())
    assert row.loc["seconds", "verdict"] == WORSE  # the convnet is slower: 10.1 s against 7.9 s
    direct = engine.compare(study.runs, convnet, vit, metrics=("test_accuracy",), test_set=study.test_set)
    assert row.loc["test_accuracy", "mean_delta"] == direct.metrics.iloc[0]["mean_delta"]  # no timing-set run in it


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_flip_effects_are_the_summaries(study):
    cfg = RunConfig()
    pd.testing.assert_frame_equal(study.flip_effects(cfg, 0.02).drop(columns=plan.LEAD_COLUMNS),
                                  summaries.flip_effects(study.runs, cfg, margin=0.02, test_set=study.test_set,
                                                         timing=study.timing, plans=study.plans_checked().lead()
                                                         ).drop(columns=plan.LEAD_COLUMNS))


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
def test_claims_at_three_margins_measure_once(fresh, crossover, monkeypatch):
    """The margin is applied last: the tally at three margins after one claims table measures nothing new."""
    from vitcore.analysis import scaling

    calls = []
    measure = engine.measure
    monkeypatch.setattr(scaling, "crossover_estimate", lambda *a, **kw: crossover)  # the data-size row: no margin
    monkeypatch.setattr(engine, "measure", lambda *args, **kw: calls.append(args[1:4]) or measure(*args, **kw))
    table = fresh.claims(0.01, data_size=False)  # the data-size and seed-noise rows take no margin
    once = len(calls)
    assert once == len(set(calls)) > 0  # each (selection, baseline, metric) once
    tally = fresh.tally((0.005, 0.01, 0.02))
    assert len(calls) == once
    assert tally["margin"].tolist() == [0.005, 0.01, 0.02] and (tally["counted"] > 0).all()
    assert claims.tally_of(fresh.claims(0.01)) == {k: v for k, v in tally.iloc[1].items() if k != "margin"}
    assert len(table) and len(calls) == once


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
def test_effects_at_three_margins_measure_once(study, fresh, monkeypatch):
    """Main effects and interactions are measured once (summaries.MeasuredEffects) and judged at each margin: no
    contrast or one-cell comparison is measured again, and each margin's table is the uncached library's."""
    from vitcore.stats import summaries

    calls = []
    for module, name in ((summaries, "_contrast"), (summaries, "measure")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _f=original, **kw: calls.append(a[1:4]) or _f(*a, **kw))
    metrics = ("test_accuracy", "seconds")  # one judged at the margin, one at its fixed ±1 s; the rest alike
    first = fresh.main_effects(metrics, margin=0.01), fresh.interactions(metrics, margin=0.01)
    once = len(calls)
    assert once > 0
    for margin in (0.02, 0.005):
        main, pairs = fresh.main_effects(metrics, margin=margin), fresh.interactions(metrics, margin=margin)
        assert len(calls) == once
        for table in (main, pairs):  # seconds keep their fixed ±1 s
            assert (table.loc[table["metric"] == "test_accuracy", "margin"] == margin).all()
            assert (table.loc[table["metric"] == "seconds", "margin"] == 1.0).all()
    lead = {"plans": study.plans_checked().lead()}  # the store's lead order, as the Study forms every family
    for table, library, extra in ((main, summaries.main_effects, lead), (pairs, summaries.interactions, {})):
        uncached = library(study.runs, metrics=metrics, margin=0.005, test_set=study.test_set, **extra)
        pd.testing.assert_frame_equal(table.drop(columns=plan.LEAD_COLUMNS), uncached)
    assert not first[0]["verdict"].equals(main["verdict"])  # the margin was applied: some verdict moved


@pytest.mark.slow  # the effects with their per-cell spread on the committed store: seconds
def test_every_main_effect_over_several_cells_lies_within_its_cells(study):
    """effects.csv: a main effect over several cells is their mean on the random seeds paired in every cell, so it
    lies within its cells' range; patch 4 against 7 at 1,000 rows (the article's ViT's cell holds 80 random seeds,
    the seven others 10) is the mean over its 8 cells on their 10 common seeds (it was the one cell's +0.005)."""
    effects = study.effects()
    several = effects[effects["cells"] > 1]
    assert len(several) >= 40 and (several["cells_measured"] == several["cells"]).all()
    none = several["n_pairs"] == 0  # seconds timed in one group on no random seed every cell holds: no mean
    assert set(several.loc[none, "verdict"]) <= {TOO_FEW, NOT_COMPARABLE} and none.sum() < 5
    several = several[~none]
    shown = ["factor", "level", "train_rows", "metric", "mean_delta", "n_pairs", "cell_min", "cell_max"]
    outside = several[(several["mean_delta"] < several["cell_min"] - 1e-12)
                      | (several["mean_delta"] > several["cell_max"] + 1e-12)]
    assert outside.empty, outside[shown].to_string()
    vit = summaries.factorial_runs(study.runs)
    part = vit[vit["train_rows"] == 1000]
    wide = part.pivot_table(index=["pos_embedding", "norm_placement", "norm", "seed"], columns="patch_size",
                            values="test_accuracy")
    cells = (wide[4] - wide[7]).dropna().unstack("seed")
    common = cells.dropna(axis=1)  # the random seeds every cell holds
    assert cells.shape[0] == 8 and common.shape[1] == 10 < cells.shape[1]
    row = effects[(effects["factor"] == "patch_size") & (effects["level"] == 4) & (effects["train_rows"] == 1000)
                  & (effects["metric"] == "test_accuracy")].iloc[0]
    assert row["n_pairs"] == 10 and row["mean_delta"] == pytest.approx(common.to_numpy().mean(), abs=1e-12)
    assert row["mean_delta"] == pytest.approx(-0.194, abs=0.001)
    main = study.main_effects(["test_accuracy"]).set_index(["factor", "level", "train_rows"])
    assert main.loc[("patch_size", 4, 1000), "mean_delta"] == row["mean_delta"]


def test_a_verdict_is_judged_once_per_margin(study, fresh, monkeypatch):
    """A page run asks for the same verdicts again (the forest plot, the flip table): judged once per margin."""
    from vitcore.stats.records import Measurement

    calls = []
    judged = Measurement.judged
    monkeypatch.setattr(Measurement, "judged", lambda self, margin: calls.append(margin) or judged(self, margin))
    cfg = RunConfig(norm="batch")
    first = [fresh.verdict(cfg, margin=margin) for margin in (0.01, 0.02)]
    assert [fresh.verdict(cfg, margin=margin) for margin in (0.01, 0.02)] == first and calls == [0.01, 0.02]
    assert first[0] == study.measurement(cfg, RunConfig(), "test_accuracy").judged(0.01)  # the same judgement


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_what_a_study_keeps_per_comparison_is_bounded(fresh, monkeypatch):
    """Families, measurements and verdicts are kept for at most KEPT comparisons each, least recently used
    dropped: selections a visitor forges (free switches) cannot grow a served Study without end."""
    from vitcore.study import study as module

    monkeypatch.setattr(module, "KEPT", 2)
    for width in (48, 96):  # configs without runs: the app's selections not trained yet
        fresh.compare(RunConfig(width=width, train_rows=1000), metrics=("gap",), missing_ok=True)
    for patch in (2, 4, 14):  # configs with runs, asked one verdict each
        fresh.verdict(RunConfig(patch_size=patch, train_rows=1000))
    assert {kind: len(kept) for kind, kept in fresh._bounded.items()} == {"verdict": 2, "measure": 2, "family": 2}


@pytest.mark.slow  # the uncached ledger: seconds on the committed store
def test_claims_are_the_uncached_ledger(study):
    from vitcore.stats.compare import uncached

    engine_ = uncached(study.runs, study.test_set, study.plans_checked().lead())  # the store's lead order
    for margin in (0.005, 0.02):
        ledger = claims.claims_table(study.runs, margin, test_set=study.test_set, compare=engine_)
        pd.testing.assert_frame_equal(study.claims(margin).drop(columns=plan.LEAD_COLUMNS),
                                      ledger.drop(columns=plan.LEAD_COLUMNS))
    pd.testing.assert_frame_equal(study.tally(), claims.tally(study.runs, test_set=study.test_set, compare=engine_))


def test_verdicts_to_frame_is_long_with_both_configs(study):
    pairs = [(RunConfig(norm="batch"), RunConfig()), (RunConfig(patch_size=4), RunConfig())]
    found = study.verdicts(pairs, metrics=("test_accuracy", "gap"))
    frame = found.to_frame()
    assert len(frame) == 4 and {"selection.norm", "baseline.norm", "verdict", "ci_adj_low", "mean_delta"} <= set(frame)
    assert frame["selection.norm"].tolist()[:2] == ["batch", "batch"]
    first = found[0]
    assert first.verdict == frame.loc[0, "verdict"] and np.isclose(first.mean_delta, frame.loc[0, "mean_delta"])
    assert found[2].contrast.family.size == 3  # patch 4: one of the switch's three other levels (the registry's)
    assert first.judgement.looks_planned == 4 and found[1].judgement.looks_planned == 0  # test accuracy is planned


def handed(row: dict) -> dict:
    """A hand-made judged row as the Study hands it out: with what an inconclusive verdict still needs (plan.said)."""
    return {**row, **plan.said(row)}


def test_every_view_says_a_verdict_with_the_same_words():
    """The wording lives beside the study; the cards re-export it (one function, not a copy)."""
    from vitcore.app.ablations import cards

    assert cards.verdict_text is words.verdict_text and cards.interval_text is words.interval_text
    row = {"verdict": INCONCLUSIVE, "seeds_needed": 41.0, "n_pairs": 10, "metric": "test_accuracy"}
    assert words.verdict_text(handed(row)) == (f"{INCONCLUSIVE} — needs 41 paired random seeds for 80% assurance "
                                               f"(31 more), as a new look, not a continuation: {v.PLAN_COMMANDS}")
    # the forest plot's line fits a 400-px screen: the count only, the card says the rest; a fixed sample's more
    # random seeds are a new look, a planned comparison's are its plan's next look
    assert words.verdict_text(handed({**row, "seeds_more": 31.0}), short=True) == \
        f"{INCONCLUSIVE} — 31 more random seeds as a new look"
    planned = handed({**row, "seeds_needed": 20.0, "seeds_more": 10.0, "look": 1, "looks_planned": 4})
    assert words.verdict_text(planned, short=True) == f"{INCONCLUSIVE} — 10 more random seeds"
    assert words.verdict_text(planned) == f"{INCONCLUSIVE} — look 2 of 4 at 20 paired random seeds (10 more)"
    beyond = {"verdict": BETTER, "size": SIZE_OPEN, "metric": "test_accuracy", "borderline": True}
    assert words.verdict_text(beyond, short=True) == "better — size undetermined · borderline"
    assert words.verdict_text(beyond) == "better — size undetermined (may be inside ±0.010) · borderline"


def test_what_grows_with_the_selections_is_bounded():
    """Per-run frames and flipped images are kept for the most recent selections only (a long-lived server)."""
    fresh = Study(pd.DataFrame())
    for k in range(40):
        fresh._cached(("flips", k), lambda k=k: k, keep=32)
    fresh._cached(("flips", 8), lambda: "again", keep=32)  # still held: not recomputed, now the most recent
    fresh._cached(("flips", 40), lambda: 40, keep=32)
    held = fresh._bounded["flips"]
    assert len(held) == 32 and ("flips", 8) in held and ("flips", 9) not in held and held[("flips", 8)] == 8
    assert fresh._cached(("claims", 0.01), lambda: 1) == 1 and fresh._cached(("claims", 0.01), lambda: 2) == 1


def test_callers_arriving_together_compute_a_result_once():
    """A crowd's sessions asking for the same analysis at once: one computes, the others wait and get its
    result (each computing held its own copy of the temporaries); a failed compute leaves no lock behind."""
    import threading
    import time

    fresh, calls, got = Study(pd.DataFrame()), [], []

    def slow():
        calls.append(1)
        time.sleep(0.3)
        return object()

    threads = [threading.Thread(target=lambda: got.append(fresh._cached(("claims", 0.02), slow))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(got) == 4 and all(value is got[0] for value in got)
    with pytest.raises(ZeroDivisionError):
        fresh._cached("broken", lambda: 1 / 0)
    assert fresh._cached("broken", lambda: "fixed") == "fixed" and fresh._computing == {}


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_the_claims_and_the_data_size_view_share_one_crossover(study, fresh, crossover, monkeypatch):
    """The claims' data-size row and the ViT vs convnet page's sentence read one crossover bootstrap (each ran
    its own, both at once when a crowd opened the two pages), and the row is what data_size_row gives it."""
    from vitcore.analysis import scaling

    made = []
    monkeypatch.setattr(scaling, "crossover_estimate", lambda *a, **kw: made.append(crossover) or made[-1])
    row = fresh._fixed_claims()[0]
    sentence = fresh.data_size()[2]
    assert len(made) == 1 and scaling.crossover_sentence(made[0]) in sentence
    assert row == claims.data_size_row(study.runs, study.test_set, made[0]) and row["claim"] == claims.DATA_SIZE
    assert row["crossover_rows"] == made[0].rows or (np.isnan(row["crossover_rows"]) and np.isnan(made[0].rows))


@pytest.mark.slow  # every stored config's seconds verdicts on the committed store: tens of seconds
def test_no_seconds_verdict_on_the_committed_store_rests_on_fewer_than_ten_interleaved_pairs(study):
    """A seconds verdict only where the timing was a design (vitcore.stats.seconds.timing_note). Every
    stored config against its default baseline and each of its single-switch changes (the cards, the forest plot,
    the flip table), the main effects, interactions and the headline: each resolved seconds verdict rests on 10 or
    more pairs timed interleaved, the rest are "not comparable" saying why; position embedding none says the
    counted work is the article's ViT's."""
    from vitcore.stats import seconds
    from vitcore.study.words import config_of_row

    stored = study.runs.drop_duplicates("config_id").to_dict("records")
    configs = {cfg.config_id: cfg for cfg in map(config_of_row, stored)}
    rows = [study.verdict(cfg, base, "seconds").row() for cfg in configs.values()
            if (base := engine.default_baseline(cfg)).config_id != cfg.config_id]
    rows += [row for cfg in configs.values()
             for row in study.flip_effects(cfg, metrics=("seconds",)).to_dict("records")]
    rows += study.main_effects(metrics=("seconds",)).to_dict("records")
    rows += study.interactions(metrics=("seconds",)).to_dict("records")
    rows += study.headline_deltas().query("metric == 'seconds'").to_dict("records")
    assert len(rows) > 100
    judged = [row for row in rows if row["verdict"] != v.NOT_COMPARABLE]
    assert judged, "the headline's ViT − convnet at 4,000 rows keeps its verdict from the timing set"
    for row in judged:
        assert seconds.interleaved(row["timing_group"]) and row["n_pairs"] >= seconds.TIMED_PAIRS, row
    assert all(row["timing_note"] for row in rows if row["verdict"] == v.NOT_COMPARABLE)
    none = study.compare(RunConfig(pos_embedding="none")).metrics.set_index("metric").loc["seconds"]
    assert none["verdict"] == v.NOT_COMPARABLE and none["work_note"].startswith("the counted work is the same")


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_effects_around_another_centre_are_kept_apart_from_the_articles():
    """Study.effects(base=...) measures around that centre and keeps its result under its own key: the article's
    effects of the same Study stay what they were; a convnet centre is refused in words."""
    from fakes import run_row, runs_table

    rows = [run_row(cfg.replace(seed=seed), test_accuracy=acc + 0.002 * seed)
            for seed in range(4)
            for cfg, acc in ((RunConfig(train_rows=1000), 0.80), (RunConfig(train_rows=1000, norm="batch"), 0.70),
                             (RunConfig(train_rows=1000, epochs=5), 0.75),
                             (RunConfig(train_rows=1000, epochs=5, norm="batch"), 0.72))]
    study = Study(runs_table(rows))
    article = study.effects().set_index(["factor", "metric"]).loc[("norm", "test_accuracy")]
    centre = RunConfig(epochs=5)
    own = study.effects(base=centre).set_index(["factor", "metric"]).loc[("norm", "test_accuracy")]
    assert article["mean_delta"] == pytest.approx(-0.10) and own["mean_delta"] == pytest.approx(-0.03)
    assert "epochs 5" not in article["family"] and "epochs 5" in own["family"]
    again = study.effects().set_index(["factor", "metric"]).loc[("norm", "test_accuracy")]
    assert again["mean_delta"] == article["mean_delta"] and again["family"] == article["family"]
    with pytest.raises(ValueError, match="base must be a ViT"):
        study.effects(base=RunConfig(model="convnet"))


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_results_around_your_own_centres_are_bounded(monkeypatch):
    """Every stored cell can be picked as the baseline, and each is a centre of its own: at most CENTRES results of
    each kind are held around them (the least recently used go), the article's are never dropped for them."""
    from fakes import run_row, runs_table

    from vitcore.study import study as module

    monkeypatch.setattr(module, "CENTRES", 3)
    rows = [run_row(RunConfig(train_rows=1000, seed=seed, norm=norm, epochs=epochs), test_accuracy=0.7 + 0.01 * seed)
            for seed in range(3) for norm in ("layer", "batch") for epochs in (15, 1, 2, 3, 4, 5)]
    study = Study(runs_table(rows))
    article = study.main_effects(("test_accuracy",))
    for epochs in (1, 2, 3, 4, 5):
        study.main_effects(("test_accuracy",), base=RunConfig(epochs=epochs))
    assert len(study._bounded["main around"]) == len(study._bounded["main measured around"]) == 3
    assert any(key[0] == "main" for key in study._memo)  # the article's: unbounded, not evicted by your centres
    assert study.main_effects(("test_accuracy",)).equals(article)


def two_seed_rows(seeds: int, spread: float) -> list[dict]:
    """compare's metrics rows of batch norm against the article's ViT at 1,000 rows over `seeds` random seeds, the
    Δ in test accuracy alternating by ±spread around -0.05."""
    from fakes import run_row, runs_table

    sel, base = RunConfig(norm="batch", train_rows=1000), RunConfig(train_rows=1000)
    rows = [run_row(cfg.replace(seed=seed), test_accuracy=0.5 + (cfg is sel) * (-0.05 + spread * (-1) ** seed))
            for cfg in (sel, base) for seed in range(seeds)]
    return Study(runs_table(rows)).compare(sel).metrics.to_dict("records")


def test_an_interval_from_too_few_random_seeds_is_said_to_bound_nothing_on_every_view():
    """With 2 random seeds the CLI printed "95% ×2 [−2.35, +2.40]" and "needs 2,015 paired random seeds" for test
    accuracy: an interval far past what accuracy can be. Below words.MIN_PAIRS pairs, or past the metric's bound,
    every view says so instead of the numbers; the CSV's numbers do not move."""
    from vitcore.cli.common import verdict_line

    accuracy = two_seed_rows(2, 0.3)[0]
    assert accuracy["metric"] == "test_accuracy" and accuracy["n_pairs"] == 2 and np.isfinite(accuracy["ci_low"])
    for text in (words.interval_text(accuracy, 4), words.verdict_interval(accuracy, 4), verdict_line(accuracy),
                 words.verdict_interval(accuracy, 4, ninety=True)):
        assert words.TOO_FEW_TO_BOUND in text and "[" not in text, text
    assert "2 pairs; an interval needs at least 3" in words.interval_text(accuracy, 4)
    fixed = handed({**accuracy, "metric": "gap", "verdict": v.INCONCLUSIVE, "seeds_needed": 2015.0,
                    "plan": v.FIXED_SAMPLE, "look": np.nan, "looks_planned": 0})  # a power count from 2 pairs: a guess
    assert "needs 2,015 paired random seeds for 80% assurance (2,013 more), as a new look" in verdict_line(fixed)
    assert "(a guess: the spread of 2 pairs)" in verdict_line(fixed) and "(a guess" in words.verdict_text(fixed)
    assert "(a guess" not in words.verdict_text(handed({**fixed, "n_pairs": 3}))
    wide = two_seed_rows(3, 0.45)[0]  # 3 pairs, but an interval past ±1: no Δ of an accuracy can be there
    assert wide["n_pairs"] == 3 and max(abs(wide["ci_low"]), abs(wide["ci_high"])) > 1
    assert "more than any Δ of test_accuracy can be" in words.interval_text(wide, 4)
    assert words.TOO_FEW_TO_BOUND in verdict_line(wide)
    narrow = two_seed_rows(3, 0.01)[0]
    assert words.verdict_interval(narrow, 4).startswith("[") and words.TOO_FEW_TO_BOUND not in verdict_line(narrow)
    assert words.unbounded(narrow) is None


def _judged(verdict: str, n_pairs: int, **ends) -> dict:
    """A fixed-sample row in a family of 2 with its intervals (95% and 90%, adjusted) as the Claims table reads it."""
    low, high, low90, high90 = ends.get("ends", (-0.0027, 0.0113, -0.0013, 0.0100))
    return {"metric": "test_accuracy", "verdict": verdict, "n_pairs": n_pairs, "paired": True, "family_size": 2,
            "mean_delta": (low + high) / 2,
            "look": np.nan, "looks_planned": 0, "plan": v.FIXED_SAMPLE, "ci_low": low, "ci_high": high,
            "ci90_low": low90, "ci90_high": high90, "ci_adj_low": low, "ci_adj_high": high, "ci90_adj_low": low90,
            "ci90_adj_high": high90, "p_value": 0.2, "p_tost": 0.01, "p_adj": 0.4, "p_tost_adj": 0.02}


def test_a_verdict_stands_beside_the_interval_it_reads():
    """The Claims table showed "equivalent · borderline" beside a 95% interval [-0.0027, +0.0113] that passes the
    margin, while the verdict reads the 90% one [-0.0013, +0.0100]; below 3 pairs "equivalent — within ±0.010" stood
    beside "too few random seeds to bound this" though its 90% interval was [+0.0005, +0.0017]."""
    from vitcore.cli.common import verdict_line

    equivalent = _judged(v.EQUIVALENT, 20)
    assert words.verdict_interval(equivalent, 4) == "[-0.0013, +0.0100]"
    assert words.interval_kind(equivalent) == "90% CI, Bonferroni ×2" and words.interval_short(equivalent) == "90% ×2"
    assert words.interval_text(equivalent, 4).startswith("90% CI, Bonferroni ×2 [-0.0013, +0.0100] · 95% [-0.0027,")
    assert "90% ×2 [-0.0013, +0.0100]" in verdict_line(equivalent)
    better = _judged(v.BETTER, 20, ends=(0.002, 0.02, 0.004, 0.018))  # a resolved Δ reads its 95% interval
    assert words.verdict_interval(better, 4) == "[+0.0020, +0.0200]" and words.interval_kind(better).startswith("95%")
    two = _judged(v.EQUIVALENT, 2, ends=(-0.0040, 0.0062, 0.0005, 0.0017))  # decided on 2 pairs: its interval shown
    assert words.unbounded(two) is None and words.verdict_interval(two, 4) == "[+0.0005, +0.0017]"
    assert words.TOO_FEW_TO_BOUND not in words.interval_text(two, 4)
    undecided = _judged(v.INCONCLUSIVE, 2, ends=(-0.3, 0.3, -0.2, 0.2))  # nothing decided: it bounds nothing
    assert words.verdict_interval(undecided, 4) == words.TOO_FEW_TO_BOUND


def test_records_print_as_one_short_line():
    """A Verdict's repr was ~1,500 characters of nested configs: each record is one line naming
    selection − baseline, the metric, Δ, n and the verdict; row() still has every column."""
    from fakes import run_row, runs_table

    sel, base = RunConfig(norm="batch", train_rows=1000), RunConfig(train_rows=1000)
    study = Study(runs_table([run_row(cfg.replace(seed=seed), test_accuracy=0.8 - (cfg is sel) * 0.1 + seed / 100)
                              for cfg in (sel, base) for seed in range(3)]))
    found = study.verdict(sel, metric="gap")
    sides = "ViT p7 pre-BN pos − ViT p7 pre-LN pos at 1,000 rows"
    assert repr(found) == f"Verdict({sides}, gap, Δ +0.0000, n=3, {found.verdict})"
    assert repr(found.measurement) == f"Measurement({sides}, gap, Δ +0.0000, n=3)"
    assert repr(found.contrast) == f"Contrast({sides}, gap, family ×{found.contrast.family.size})"
    assert repr(found.judgement).startswith(f"Judgement({found.verdict} at ±0.01, family ×")
    unpaired = Contrast(sel, base.replace(train_rows=4000), "gap")
    assert repr(unpaired) == ("Contrast(ViT p7 pre-BN pos at 1,000 rows − ViT p7 pre-LN pos at 4,000 rows, gap, "
                              "family ×1)")
    assert all("\n" not in repr(r) and len(repr(r)) < 160 for r in (found, found.measurement, found.judgement))


def test_a_base_study_names_the_fields_to_add_not_the_built_in_grids(store):
    """Study.verdict(RunConfig(depth=3)) on a `sweep --vary depth=1 --base epochs=2 --rows 300` store: the one line
    says what every run holds and what the store varies; the selection that adds them is judged against the centre."""
    from fakes import write_run

    base = RunConfig(train_rows=300, epochs=2)
    for seed in range(2):
        write_run(store, base.replace(seed=seed), 0.42 + 0.01 * seed)
        write_run(store, base.replace(depth=1, seed=seed), 0.44 + 0.01 * seed)
    study = Study.open(store.root)
    with pytest.raises(ValueError) as error:
        study.verdict(RunConfig(depth=3))
    assert "sweep --list" not in str(error.value)
    assert "every run here has train_rows=300, epochs=2 (set them in the RunConfig); it varies depth over 1, 2" in \
        str(error.value)
    assert study.verdict(base.replace(depth=1)).contrast.baseline == base  # the centre, not the article's ViT
    with pytest.raises(ValueError, match="no folder at .*nowhere: check the path"):
        Study.open(store.root.parent / "nowhere").verdict(RunConfig())
