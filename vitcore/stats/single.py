"""One-cell effects: a switch changed alone around the article's ViT, read as the single-switch comparison it
is (its paired Δ, family and verdict, as on the forest plot and the cards), for vitcore.stats.summaries'
main effects. No TensorFlow, no Streamlit."""

from __future__ import annotations

import pandas as pd

from vitcore.config.run import SWITCHES, RunConfig
from vitcore.stats.compare import paired_delta
from vitcore.stats.families import family_of, neighbours, runs_of
from vitcore.stats.testset import TestSet

KEY = ["factor", "level", "reference", "train_rows", "metric"]  # the first columns of an effects.csv row


def single_cell(runs: pd.DataFrame, factor: str, level, train_rows: int, metric: str, margin: float,
                test_set: TestSet | None) -> dict:
    """A main effect measured in one cell only is the single-switch change of the article's ViT: its
    row (numbers, family, verdict) is that comparison's, as on the forest plot and the cards."""
    ref = RunConfig(train_rows=train_rows)
    variant = ref.replace(**{factor: level})
    delta = paired_delta(runs_of(runs, ref), runs_of(runs, variant), metric, margin, family_of(runs, variant, ref),
                         test_set, (ref, variant))
    return delta.row


def one_field_effects(runs: pd.DataFrame, metrics, margin: float, test_set: TestSet | None) -> list[dict]:
    """Every switch outside the factorial (the papers'; width, depth, ..., warm-up) changed alone around the
    article's ViT at each train_rows stored: one-cell effects judged as the single-switch change they are
    (single_cell), as on the forest plot. Your own `sweep --vary depth=1,2,4` lands here."""
    records = []
    for train_rows in sorted(int(rows) for rows in runs["train_rows"].unique()) if len(runs) else []:
        ref = RunConfig(train_rows=train_rows)
        for factor, level, _ in neighbours(runs, ref) if len(runs_of(runs, ref)) else []:
            if factor in SWITCHES:
                continue
            for metric in metrics:
                key = dict(zip(KEY, [factor, level, getattr(ref, factor), train_rows, metric]))
                records.append({**key, **single_cell(runs, factor, level, train_rows, metric, margin, test_set),
                                "cells": 1})
    return records
