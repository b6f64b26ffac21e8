"""vitcore/cli/plans.py's console table (`python -m vitcore plans` without --out): the registry's words for a
question's level and whole counts, as the Plans page and the CSVs say them (the CSVs themselves stay as written)."""

import re

import numpy as np
import pandas as pd

from vitcore.cli import main
from vitcore.cli.plans import _question_words, _whole


def test_the_console_copy_prints_counts_as_whole_numbers_and_leaves_fractions():
    frame = pd.DataFrame({"plan": ["builtin", "confirm"], "replicated": [np.nan, 19.0], "margin": [0.01, 0.01],
                          "blind": [False, True], "seeds_needed": [np.inf, 3.0]})
    shown = _whole(frame)
    assert list(shown["replicated"]) == ["", "19"] and list(shown["margin"]) == [0.01, 0.01]
    assert list(shown["blind"]) == [False, True] and np.isinf(shown["seeds_needed"].iloc[0])  # "never" stays inf
    assert frame["replicated"].iloc[1] == 19.0  # a copy: the CSV's frame is untouched


def test_a_question_reads_in_the_registry_words():
    assert _question_words("pooling=cls", "pooling", "cls") == "pooling class token"
    assert _question_words("depth=1 | base epochs 2", "depth", 1) == "depth 1 | base epochs 2"
    assert _question_words("odd", None, None) == "odd"


def test_the_plans_table_prints_whole_counts_and_the_registry_words(page_store, capsys):
    assert main(["plans", "--store", str(page_store.root)]) == 0
    out = capsys.readouterr().out
    assert "pooling class token" in out and "pooling=cls" not in out
    assert not re.findall(r"\b\d+\.0\b|NaN|<NA>", out)
