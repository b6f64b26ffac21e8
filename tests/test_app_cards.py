"""vitcore.app.ablations.cards, selection's coverage and tables' effect frames: the Ablations page's words, built
from one vitcore.stats.compare.Comparison on a synthetic store (no Streamlit script runs, no TensorFlow)."""

import numpy as np
import pandas as pd
import pytest
from fakes import run_row, runs_table, write_run

from vitcore.app import selection, tables
from vitcore.app.ablations import cards
from vitcore.app.selection import BASELINE
from vitcore.config.run import RunConfig
from vitcore.stats import compare, plan
from vitcore.stats import estimates as verdicts
from vitcore.stats import summaries as stats
from vitcore.store.runs import RunStore
from vitcore.study import Study

POST = RunConfig(norm_placement="post")
BASE_ACC = [0.80, 0.81, 0.79, 0.70]        # seeds 0-3: seed 3 has no selection partner
POST_ACC = [0.78, 0.785, 0.772]            # seeds 0-2: clearly worse
NONE = RunConfig(pos_embedding="none")
NONE_ACC = [0.804, 0.805, 0.795]           # seeds 0-2: +0.004, -0.005, +0.005, spread too wide to decide


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    store = RunStore(tmp_path_factory.mktemp("store"))
    for seed, accuracy in enumerate(BASE_ACC):
        write_run(store, BASELINE.replace(seed=seed), accuracy, seconds=40 + seed)
    for seed, (post, none) in enumerate(zip(POST_ACC, NONE_ACC)):
        write_run(store, POST.replace(seed=seed), post, seconds=50)
        write_run(store, NONE.replace(seed=seed), none, seconds=41 + seed)
    for seed in (0, 1):
        write_run(store, RunConfig(model="convnet", train_rows=1_000, seed=seed), 0.70 + seed / 100, seconds=10)
    return store.table()


def metric_cards(comparison, selected, base, *args, **kwargs) -> list[dict]:
    """cards.metric_cards as the app calls it: `timed`, the selection's runs of one timing group (the Study's rule,
    Study.timed; the app's one Study of its store, here one of these runs)."""
    return cards.metric_cards(comparison, selected, base, *args, timed=Study(selected).timed(), **kwargs)


def by_metric(cards_: list[dict]) -> dict[str, dict]:
    return {card["metric"]: card for card in cards_}


def test_cards_show_means_over_the_paired_seeds_and_the_verdict_in_their_own_text(table):
    comparison = compare.compare(table, POST, BASELINE)
    test = by_metric(metric_cards(comparison, stats.runs_of(table, POST), stats.runs_of(table, BASELINE)))[
        "test_accuracy"]
    assert test["value"] == f"{np.mean(POST_ACC):.4f}"
    assert test["delta"] == f"{np.mean(POST_ACC) - np.mean(BASE_ACC[:3]):+.4f}"
    text = "\n".join(test["lines"])  # planned (vitcore.stats.plan): 3 pairs wait for the first look at 10
    assert "95% CI (before the plan's first look) [-0.0" in text and "3 pairs" in text
    assert f":orange-badge[{verdicts.INCONCLUSIVE}] first look at 10 paired random seeds (7 more)" in text
    assert f"baseline {np.mean(BASE_ACC[:3]):.4f} (same random seeds)" in text  # not over seed 3's 0.70 too
    val = "\n".join(by_metric(metric_cards(comparison, stats.runs_of(table, POST),
                                                 stats.runs_of(table, BASELINE)))[
        "best_val_accuracy"]["lines"])  # fixed sample: judged now, in its family of one (norm placement: 2 levels)
    assert "95% CI [-0.0" in val and ":red-badge[worse]" in val and "p " in val and "p_tost " in val
    none = compare.compare(table, NONE, BASELINE)  # position embedding's family: none and sincos, m = 2
    none_val = "\n".join(by_metric(metric_cards(none, stats.runs_of(table, NONE),
                                                      stats.runs_of(table, BASELINE)))[
        "best_val_accuracy"]["lines"])
    assert "95% CI, Bonferroni ×2 [" in none_val and "p_adj" in none_val and "p_tost_adj" in none_val
    assert by_metric(metric_cards(comparison, stats.runs_of(table, POST), stats.runs_of(table, BASELINE)))[
        "best_val_accuracy"]["delta_color"] == "normal"


def test_inconclusive_says_how_many_more_random_seeds_and_the_margin_can_make_it_equivalent(table):
    comparison = compare.compare(table, NONE, BASELINE)
    row = comparison.metrics.set_index("metric").loc["best_val_accuracy"]  # fixed sample (test accuracy is planned)
    assert row["verdict"] == verdicts.INCONCLUSIVE
    total = int(row["seeds_needed"])
    assert total > 3 and row["seeds_more"] == total - 3
    test = by_metric(metric_cards(comparison, stats.runs_of(table, NONE), stats.runs_of(table, BASELINE)))
    assert (f":orange-badge[{verdicts.INCONCLUSIVE}] needs {total} paired random seeds for 80% assurance "
            f"({total - 3} more), as a new look, not a continuation: {verdicts.PLAN_COMMANDS}"
            in "\n".join(test["best_val_accuracy"]["lines"]))
    assert test["best_val_accuracy"]["delta_color"] == "off"  # undecided: no colour, no arrow
    wide = compare.compare(table, NONE, BASELINE, margin=0.05).metrics.set_index("metric", drop=False).loc[
        "best_val_accuracy"]
    assert wide["verdict"] == verdicts.EQUIVALENT
    assert cards.verdict_text(wide, 0.05) == "equivalent — within ±0.050"


def test_seconds_are_not_comparable_across_timing_groups():
    rows = [run_row(BASELINE.replace(seed=s), seconds=40.0 + s, timing_group="v1") for s in range(3)]
    rows += [run_row(POST.replace(seed=s), seconds=50.0, timing_group="v2" if s else "v1") for s in range(3)]
    runs = runs_table(rows).assign(timing_group=[r["timing_group"] for r in rows])
    comparison = compare.compare(runs, POST, BASELINE)
    seconds = by_metric(metric_cards(comparison, stats.runs_of(runs, POST), stats.runs_of(runs, BASELINE)))[
        "seconds"]
    lines = "\n".join(seconds["lines"])
    assert ":gray-badge[not comparable]" in lines and seconds["value"] == "50.0" and seconds["delta"] is None
    assert "the counted work is the same (1,164,928 multiply-adds per image" in lines  # pre- and post-norm alike
    assert "Seconds get no Δ: its 1 pair was timed one run after another, not interleaved" in cards.header(
        comparison, POST, BASELINE)


def test_header_names_the_paired_random_seeds_and_says_unpaired(table):
    comparison = compare.compare(table, POST, BASELINE)
    assert "over random seeds 0, 1, 2 (3 pairs)" in cards.header(comparison, POST, BASELINE)
    convnet = RunConfig(model="convnet", train_rows=1_000)
    unpaired = compare.compare(table, convnet, BASELINE)
    assert "**unpaired**" in cards.header(unpaired, convnet, BASELINE)
    test = by_metric(metric_cards(unpaired, stats.runs_of(table, convnet), stats.runs_of(table, BASELINE)))[
        "test_accuracy"]
    assert "unpaired" in test["lines"][1] and "(its own runs)" in test["lines"][3]


def test_the_header_says_another_margin_is_exploratory_on_the_plans_random_seeds(tmp_path):
    """At a margin its plan did not register, test accuracy's verdict is a fixed-sample test on the plan's random
    seeds only (0-39 for the built-in plan): the header says so once, and that the other means use every pair."""
    store = RunStore(tmp_path / "store")
    for seed in (0, 1, 2, 40, 41):  # 40, 41: stored, but not the plan's
        write_run(store, BASELINE.replace(seed=seed), 0.80 + seed / 1000)
        write_run(store, POST.replace(seed=seed), 0.78 + seed / 1000)
    comparison = compare.compare(store.table(), POST, BASELINE, margin=0.02)
    text = cards.header(comparison, POST, BASELINE)
    said = ("exploratory at ±0.02, blind random seeds 0–39 (plan builtin, planned at ±0.01): fixed-sample test on "
            "3 pairs")
    assert f"Test accuracy is {said}." in text and text.count(said) == 1
    assert "test accuracy's verdict uses the 3 pairs of its plan's random seeds, every other mean and Δ" in text


def test_each_card_opens_to_its_pairs_with_run_ids(table):
    comparison = compare.compare(table, POST, BASELINE)
    seeds = cards.seed_table(comparison, "test_accuracy")
    assert list(seeds["Random seed"]) == [0, 1, 2]
    assert set(seeds["Selection run"]) == set(stats.runs_of(table, POST)["run_id"])
    assert set(seeds["Baseline run"]) <= set(stats.runs_of(table, BASELINE)["run_id"])
    assert seeds["Δ"].iloc[0] == f"{POST_ACC[0] - BASE_ACC[0]:+.4f}"


def test_the_baseline_against_itself_shows_its_own_seeds_and_no_delta(table):
    comparison = compare.compare(table, BASELINE, BASELINE)
    itself = metric_cards(comparison, stats.runs_of(table, BASELINE), stats.runs_of(table, BASELINE),
                                is_baseline=True)
    assert all(card["delta"] is None and "this is the baseline" in card["lines"][1] for card in itself)
    assert itself[0]["value"] == f"{np.mean(BASE_ACC):.4f}" and "over 4 random seeds" in itself[0]["lines"][0]


def test_collapsed_runs_are_counted_on_the_test_card():
    frame = pd.DataFrame({"collapsed": [True, False, True]})
    assert cards.collapsed_note(frame) == "2 of 3 random seeds collapsed"
    assert cards.collapsed_note(frame.assign(collapsed=False)) is None


def test_definitions_use_the_new_verdicts_and_name_the_correction():
    text = cards.definitions(0.02)
    for verdict in verdicts.VERDICTS:
        assert verdict in text
    for word, definition in verdicts.DEFINITIONS.items():  # the library's words, not a copy
        assert f"**{word}**: {definition}" in text
    assert "Bonferroni-adjusted" in text and "±0.02" in text and verdicts.MARGIN_REASON in text
    assert "within seed noise" not in text and "no paired runs" not in text


def test_best_val_accuracy_is_labelled_optimistic():
    assert "optimistic" in cards.title("best_val_accuracy") and "optimistic" in cards.HELP["best_val_accuracy"]


def test_coverage_captions_follow_the_other_switches(table):
    counts = selection.seed_counts(table)
    values = selection.current_choices({}, {"norm_placement": "post"})
    assert values["norm_placement"] == "post"
    patch = selection.option_seeds("patch_size", values, counts)
    assert [selection.coverage_caption(patch[p]) for p in (2, 7)] == ["not trained", "3 seeds"]
    rows = selection.option_seeds("train_rows", selection.current_choices({}, {}), counts)
    assert rows[4_000] == 4 and rows[1_000] == 0
    convnet = selection.current_choices({"model": "convnet"}, {})
    assert selection.option_seeds("norm", convnet, counts) == {"layer": None, "batch": None}  # does not apply
    assert selection.coverage_caption(1) == "1 seed"


def test_effect_frame_marks_single_cell_effects():
    effects = pd.DataFrame({"factor": ["patch_size", "norm"], "level": [2, "batch"], "reference": [7, "layer"],
                            "train_rows": [1000, 1000], "cells": [1, 12]})
    frame = tables.effect_frame(effects)
    assert list(frame["effect"]) == ["patch size 2 (vs 7) · one cell", "norm batch (vs layer)"]
    assert list(frame["basis"]) == ["one cell only", "averaged over the grid's cells"]
    assert list(frame["level"]) == ["2", "batch"]  # one type: a chart's data goes to the browser as Arrow
    assert "patch size 2" in tables.single_cell_note(effects)


def test_variants_count_the_flip_table_rows_without_statistics(table):
    counts = selection.seed_counts(table)
    for cfg in (BASELINE, POST, NONE, RunConfig(model="convnet", train_rows=1_000)):
        flips = stats.flip_effects(table, cfg)
        assert selection.variants(cfg, counts) == len(flips.drop_duplicates(["switch", "to"])), cfg.label()


def test_one_more_random_seed_is_singular():
    """Before: the forest plot's short verdict read '1 more random seeds'."""
    row = {"metric": "test_accuracy", "verdict": verdicts.INCONCLUSIVE, "seeds_more": 1.0, "seeds_needed": 4.0,
           "n_pairs": 3, "plan": verdicts.FIXED_SAMPLE, "looks_planned": 0, "look": float("nan")}
    row = {**row, **plan.said(row)}  # as the Study hands it out: with what it still needs
    assert cards.verdict_text(row, short=True) == f"{verdicts.INCONCLUSIVE} — 1 more random seed as a new look"
    plural = cards.verdict_text({**row, **plan.said({**row, "seeds_more": 2.0})}, short=True)
    assert plural == f"{verdicts.INCONCLUSIVE} — 2 more random seeds as a new look"


def test_a_seconds_card_says_its_timing_group_in_words():
    """Before: a seconds card read 'timed as v3/threads2/workers1/fresh/reference'; it says where, in words."""
    group = "v3/threads2/workers1/fresh/reference"
    rows = [run_row(cfg.replace(seed=s), seconds=secs + 0.1 * (-1) ** s) | {"timing_group": group}
            for s in range(10) for cfg, secs in ((BASELINE, 8.0), (RunConfig(patch_size=4), 21.0))]
    runs = runs_table(rows).assign(timing_group=[r["timing_group"] for r in rows])
    comparison = compare.compare(runs, RunConfig(patch_size=4), BASELINE, metrics=["seconds"])
    sides = stats.runs_of(runs, RunConfig(patch_size=4)), stats.runs_of(runs, BASELINE)
    card = metric_cards(comparison, *sides)[0]
    lines = "\n".join(card["lines"])
    assert "10 pairs timed in the dedicated timing set: interleaved pairs, each started on a quiet machine" in lines
    assert ":red-badge[worse]" in lines and "threads2" not in lines and card["delta"] == "+13.0"
    assert tables.timed_as("v2/threads1/workers2/reused/busy") == \
        "timed one run after another; the machine's recorded load exceeded its cores"  # plain words on the card
    assert "Timed as: training code v" in card["help"]  # the training code's details behind the help icon


def test_each_card_says_where_its_verdict_comes_from_in_its_line_and_tooltip(table):
    """Test accuracy of post-norm is the built-in plan's question (these synthetic runs are not among those it saw);
    every other metric a fixed sample: each card's verdict line says which, and its tooltip (help) in full."""
    study = Study(table)
    comparison = study.compare(POST, BASELINE)
    made = by_metric(metric_cards(comparison, stats.runs_of(table, POST), stats.runs_of(table, BASELINE)))
    test, val = made["test_accuracy"], made["best_val_accuracy"]
    assert "· from: blind" in test["lines"][0] and "This verdict: plan builtin, blind, before its first look" in \
        test["help"]
    assert "· from: fixed sample" in val["lines"][0] and "This verdict: fixed sample" in val["help"]
    assert cards.source_words({"verdict_from": "plan confirm, blind, look 1 of 4", "replication": "replicated"}) == \
        "blind · replicated"
    assert cards.source_words({"verdict_from": "plan confirm, blind, look 1 of 4", "replication": "replicated"},
                              "worse · discovery: worse (…) · replicated (z -1.02)") == "blind"  # said once


def test_the_header_names_runs_of_random_seeds_by_their_ends():
    """At the planned rows the header listed 60 random seeds one by one (five lines above the cards, pushing their
    verdicts below the fold): a run of four or more consecutive ones reads 'first–last'."""
    assert cards.seed_list([*range(1000, 1040), *range(20)]) == "0–19, 1000–1039"
    assert cards.seed_list([0, 1, 2, 5, 7, 8, 9, 10]) == "0, 1, 2, 5, 7–10"
    assert cards.seed_list([]) == ""
