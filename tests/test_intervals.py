"""vitcore.study.intervals (and vitcore.stats.plan.chosen behind it): one place chooses the interval that goes with a
verdict; the views, the reports and the CLI take it from there and never name the statistics' interval columns."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vitcore.stats import estimates as v
from vitcore.stats import plan
from vitcore.study import intervals, words

ROOT = Path(__file__).resolve().parents[1]
# Where the interval must come from the study layer: every module of these folders, and the Streamlit entrypoint.
CHOOSERS = ("vitcore/app", "vitcore/article", "vitcore/cli", "views")
NAMES = re.compile(r"ci_low|ci_high|ci_adj|ci90")  # the statistics' interval columns (estimates.JUDGEMENT_COLUMNS)


def naming(files) -> list[str]:
    """'path:line: text' of every line of `files` that names an interval column (code, strings, comments alike)."""
    return [f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{number}: {line.strip()}"
            for path in files for number, line in enumerate(path.read_text().splitlines(), 1) if NAMES.search(line)]


def sources() -> list[Path]:
    found = [path for folder in CHOOSERS for path in sorted((ROOT / folder).rglob("*.py"))]
    return [*found, ROOT / "streamlit_app.py"]


def test_no_view_report_or_cli_module_names_the_interval_columns():
    files = sources()
    assert len(files) > 40 and ROOT / "vitcore/app/charts.py" in files and ROOT / "views/claims.py" in files
    assert naming(files) == []


def test_the_source_scan_sees_a_column_in_code_a_string_and_a_comment(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('low = row["ci_low"]\ncolumns = ["ci90_adj_high"]\n# draws ci_adj_low\nchosen = 1\n')
    assert [hit.split(":")[1] for hit in naming([page])] == ["1", "2", "3"]


def judged(**changes) -> dict:
    """A judged row (JUDGEMENT_COLUMNS' intervals): own 95% ±0.01, adjusted ±0.02; own 90% ±0.005, adjusted ±0.015."""
    row = {"metric": "test_accuracy", "verdict": v.INCONCLUSIVE, "n_pairs": 10, "family_size": 1, "look": np.nan,
           "looks_planned": 0, "ci_low": -0.01, "ci_high": 0.01, "ci_adj_low": -0.02, "ci_adj_high": 0.02,
           "ci90_low": -0.005, "ci90_high": 0.005, "ci90_adj_low": -0.015, "ci90_adj_high": 0.015,
           "p_value": 0.5, "p_tost": 0.4, "p_adj": 1.0, "p_tost_adj": 0.8, "interval": "random seeds"}
    return {**row, **changes}


@pytest.mark.parametrize("changes, ends, kind", [
    ({}, (-0.01, 0.01, -0.005, 0.005), "95% CI"),  # alone: its own interval
    ({"family_size": 3}, (-0.02, 0.02, -0.015, 0.015), "95% CI, Bonferroni ×3"),  # simultaneous over the family
    ({"family_size": 2, "looks_planned": 4, "look": 2}, (-0.02, 0.02, -0.015, 0.015),
     "repeated CI at look 2 of 4, ×2"),  # a plan's look: the repeated CI
    ({"family_size": 2, "looks_planned": 4, "look": 0}, (-0.01, 0.01, -0.005, 0.005),
     "95% CI (before the plan's first look)"),
    ({"interval": "random seeds and test images"}, (-0.01, 0.01, -0.005, 0.005),
     "95% CI over random seeds and test images"),
])
def test_a_frame_gets_the_interval_its_verdict_goes_with(changes, ends, kind):
    frame = intervals.with_chosen(pd.DataFrame([judged(**changes)], index=[7]))
    assert tuple(frame.loc[7, intervals.COLUMNS[:4]]) == pytest.approx(ends) and frame.loc[7, intervals.KIND] == kind
    assert words.chosen(judged(**changes)) == plan.chosen(judged(**changes))  # the study layer hands out the one choice


def test_a_curve_row_without_ninety_columns_and_an_empty_frame():
    curve = pd.DataFrame({"metric": ["test_accuracy"], "mean_delta": [0.02], "ci_low": [0.01], "ci_high": [0.03],
                          "verdict": [v.BETTER]})
    out = intervals.with_chosen(curve)
    assert (out.loc[0, intervals.LOW], out.loc[0, intervals.HIGH]) == (0.01, 0.03)
    assert np.isnan(out.loc[0, intervals.LOW90]) and list(out.columns[:5]) == list(curve.columns)
    assert intervals.with_chosen(curve.iloc[:0]).columns.tolist() == [*curve.columns, *intervals.COLUMNS]


def test_a_comparison_alone_reads_its_one_interval_either_way():
    row = {**plan.alone(0.1, 0.3), "family_size": 1}
    assert plan.chosen(row).interval == (0.1, 0.3) == plan.chosen({**row, "family_size": 2}).interval
    assert plan.own_interval(next(pd.DataFrame([row]).itertuples())) == (0.1, 0.3) == plan.own_interval(row)


def test_the_test_set_line_compares_like_for_like():
    row = judged(ci_low_seeds=-0.008, ci_high_seeds=0.008)
    assert intervals.beside_test_set(row) == ((-0.01, 0.01), (-0.008, 0.008))  # both unadjusted, whatever the family
    in_family = judged(family_size=3, ci_low_seeds=-0.008, ci_high_seeds=0.008)
    assert intervals.beside_test_set(in_family)[0] == (-0.01, 0.01)
    assert intervals.beside_test_set(judged()) is None
    assert intervals.beside_test_set(judged(ci_low_seeds=np.nan)) is None
