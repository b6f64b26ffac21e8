"""vitcore.app.fmt: every number the app prints, in one format."""

import pandas as pd
import pytest

from vitcore.app import fmt

NAN = float("nan")


def test_mean_sd_and_its_single_seed_form():
    assert fmt.mean_sd(0.79701, 0.00404) == "0.7970 ± 0.0040"
    assert fmt.mean_sd(41.25, NAN, 1) == "41.3"  # half away from zero, on the decimal digits (numbers.rounded)
    assert fmt.mean_sd(0.5, None) == "0.5000"


@pytest.mark.parametrize("mean, std, n, places, signed, shown", [
    (0.7970, 0.004, 3, 4, False, "0.7970 ± 0.0040"),
    (0.7160, NAN, 1, 4, False, "0.7160 (1 seed)"),
    (71_946, 0.0, 3, 0, False, "71,946"),          # a count no random seed changes
    (0.1545, 0.01, 3, 4, True, "+0.1545 ± 0.0100"),
    (NAN, NAN, 0, 4, False, "not run"),
])
def test_seeds_cell(mean, std, n, places, signed, shown):
    assert fmt.seeds_cell(mean, std, n, places, signed) == shown


def test_delta_ci_and_spread():
    assert fmt.delta(0.01234) == "+0.0123" and fmt.delta(-2.0, 1) == "-2.0"
    assert fmt.ci(-0.01, 0.02) == "[-0.0100, +0.0200]"
    assert fmt.ci(NAN, NAN) == "no CI" and fmt.ci(NAN, NAN, none="n/a (one seed)") == "n/a (one seed)"
    assert fmt.spread(0.004, 3) == "± 0.0040 sd over 3 seeds" and fmt.spread(NAN, 1) == "one seed"


def test_metric_digits_titles_and_column_formats():
    assert fmt.metric(0.12345, "gap") == "+0.1235" and fmt.metric(41.26, "seconds") == "41.3"
    assert fmt.metric(71_946, "params") == "71,946" and fmt.number(NAN) == fmt.MISSING
    assert fmt.printf("test_accuracy") == "%.4f" and fmt.printf("gap") == "%+.4f"
    assert fmt.printf("seconds", signed=True) == "%+.1f" and fmt.printf("params") == "localized"
    assert fmt.title("best_val_accuracy") == "Best val accuracy"


@pytest.mark.parametrize("ask", [fmt.title, fmt.digits, fmt.printf, lambda name: fmt.metric(0.5, name)])
def test_a_metric_the_registry_does_not_know_raises(ask):  # never a silent default format or title
    with pytest.raises(ValueError, match="unknown metric 'other'"):
        ask("other")


def test_counts_times_and_missing():
    assert fmt.rows(4000) == "4,000" and fmt.times(2401) == "2,401.0×" and fmt.minutes(90) == "1.5 min"
    assert fmt.missing(None) and fmt.missing(NAN) and not fmt.missing(0.0) and not fmt.missing("text")
    assert fmt.number(0) == "0.0000" and fmt.number(-0.5, signed=True) == "-0.5000"


def test_one_rule_for_app_cli_and_report():  # separators everywhere, seconds to 0.1 s
    from vitcore.article import report
    from vitcore.config import numbers

    assert fmt.number is numbers.number and fmt.digits is numbers.digits and report.digits is numbers.digits
    assert fmt.mean_sd(1234.56, 10.25, numbers.digits("seconds")) == "1,234.6 ± 10.3"  # 10.25: half up
    assert fmt.ci(-1234.5, 20.0, 1) == "[-1,234.5, +20.0]" and fmt.spread(1234.5, 3, 1) == "± 1,234.5 sd over 3 seeds"
    assert fmt.metric(3.96141, "seconds", signed=True) == "+4.0"


def test_report_markdown_sits_below_the_page_title():
    assert fmt.demote_headings("# A\ntext\n## B") == "## A\ntext\n### B"


def test_one_rounding_whatever_float_sum_made_the_number():
    """Before: the baseline mean 0.79185 read 0.7918 on one card and 0.7919 on another (two float paths)."""
    for value in (0.79185, 0.7918499999999, 0.79185000000001, sum([0.8, 0.7837]) / 2):
        assert fmt.number(value) == "0.7919"
    assert fmt.number(-0.00001, 4, signed=True) == "+0.0000" and fmt.number(2.5, 0) == "3"


def test_p_values_never_read_zero():
    assert fmt.p_value(0.0) == "< 0.0001" and fmt.p_value(3e-9) == "< 0.0001"
    assert fmt.p_value(0.000522) == "0.000522" and fmt.p_value(0.0312) == "0.0312" and fmt.p_value(None) == "—"


def test_durations_read_like_the_readme():
    assert fmt.duration(40.4) == "40 s" and fmt.duration(150) == "2.5 min"


def test_a_share_that_rounds_to_zero_reads_0_percent_never_minus_0():
    """Before: the Noise page's pairing table read '-0%' for a share of -0.1%; every share goes through one rule."""
    from vitcore.app import noise_view

    assert [fmt.percent(x) for x in (0.236, -0.001, 0.004, -0.16, 1.0, NAN)] == ["24%", "0%", "0%", "-16%", "100%", "—"]
    pairing = pd.DataFrame({"cell": ["none − learned"], "train_rows": [4000], "paired_by": ["data"], "variance": [1e-5],
                            "removed": [-0.001], "removed_low": [-0.004], "removed_high": [0.3],
                            "seeds_for_margin": [12]})
    shown = noise_view.pairing_display(pairing, 0.01).iloc[0]
    assert (shown["Removes"], shown["95% interval"]) == ("0%", "[0%, 30%]")


def test_counts_and_row_numbers_are_whole_in_a_csv():
    """claims.csv wrote train_rows as 1000.0 and plans.csv counts as 0.0: a NaN elsewhere made the column float."""
    from vitcore.config.numbers import whole_counts

    frame = pd.DataFrame({"train_rows": [1000.0, NAN], "seeds_needed": [29.0, float("inf")],
                          "mean_delta": [1.0, 2.0], "look": [1.5, NAN]})
    text = whole_counts(frame).to_csv(index=False)
    assert text.splitlines() == ["train_rows,seeds_needed,mean_delta,look", "1000,29,1.0,1.5", ",inf,2.0,"]
    assert frame["train_rows"].dtype == float  # the caller's frame is left as it was


def test_verdict_colours_are_one_map_the_charts_and_the_badges_read(monkeypatch):
    """One definition of the verdict colours (fmt.VERDICT_COLOURS): the charts' scale and the cards' badges both read
    it, so a colour changed there changes on every view."""
    from vitcore.app import charts
    from vitcore.app.ablations import cards
    from vitcore.study import words as w

    assert charts.VERDICT_COLOURS is fmt.VERDICT_COLOURS and not hasattr(cards, "BADGES")
    assert set(fmt.VERDICT_COLOURS) == set(w.VERDICTS)  # every verdict word has its colour
    assert cards.badge(w.BETTER, "x") == ":green-badge[x]" and cards.badge("no such verdict", "x") == ":gray-badge[x]"
    monkeypatch.setitem(fmt.VERDICT_COLOURS, w.BETTER, fmt.Colour("#000001", "violet"))
    assert cards.badge(w.BETTER, "better [x]") == ":violet-badge[better (x)]"
    scale = charts.verdict_scale("test_accuracy", [w.WORSE, w.BETTER])
    assert dict(zip(scale.domain, scale.range)) == {w.BETTER: "#000001", w.WORSE: fmt.BAD}
