"""One-cell effects: a switch changed alone around the article's ViT, read as the single-switch comparison it
is (its paired Δ, family and verdict, as on the forest plot and the cards), for vitcore.stats.summaries'
main effects. No TensorFlow, no Streamlit."""

from __future__ import annotations

import pandas as pd

from vitcore.config.run import SWITCHES, RunConfig
from vitcore.stats.compare import measure
from vitcore.stats.families import family_of, neighbours, runs_of
from vitcore.stats.records import Measurement
from vitcore.stats.testset import TestSet

KEY = ["factor", "level", "reference", "train_rows", "metric"]  # the first columns of an effects.csv row


def single_measurement(runs: pd.DataFrame, factor: str, level, train_rows: int, metric: str,
                       test_set: TestSet | None, base: RunConfig | None = None, plans=()) -> Measurement:
    """A main effect measured in one cell only is the single-switch change of the article's ViT (or of `base`,
    your own study's centre): its Measurement (before any margin), in that comparison's family (judged by the first
    of `plans` that asks it: families.family_of), as on the forest plot and the cards."""
    ref = (base or RunConfig()).replace(train_rows=train_rows, seed=0)
    variant = ref.replace(**{factor: level})
    return measure(runs, variant, ref, metric, family_of(runs, variant, ref, plans), test_set)


def single_cell(runs: pd.DataFrame, factor: str, level, train_rows: int, metric: str, margin: float,
                test_set: TestSet | None) -> dict:
    """single_measurement judged at `margin`: its row (numbers, family, verdict), as on the forest plot."""
    return single_measurement(runs, factor, level, train_rows, metric, test_set).judged(margin).row()


def one_field_effects(runs: pd.DataFrame, metrics, test_set: TestSet | None,
                      base: RunConfig | None = None, plans=()) -> list[tuple[dict, Measurement]]:
    """Every switch outside the factorial (the papers'; width, depth, ..., warm-up) changed alone around the
    article's ViT (or `base`) at each train_rows stored: (its effects.csv key, its single_measurement), one-cell
    effects judged as the single-switch change they are, as on the forest plot. Your own `sweep --vary
    depth=1,2,4` lands here (`--base epochs=5` too, with the same base)."""
    records = []
    for train_rows in sorted(int(rows) for rows in runs["train_rows"].unique()) if len(runs) else []:
        ref = (base or RunConfig()).replace(train_rows=train_rows, seed=0)
        for factor, level, _ in neighbours(runs, ref) if len(runs_of(runs, ref)) else []:
            if factor in SWITCHES:
                continue
            for metric in metrics:
                key = dict(zip(KEY, [factor, level, getattr(ref, factor), train_rows, metric]))
                records.append(({**key, "cells": 1}, single_measurement(runs, factor, level, train_rows, metric,
                                                                         test_set, base, plans)))
    return records
