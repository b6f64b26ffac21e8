"""vitcore.config.metrics: one frozen entry per metric, read by every list and dict that describes metrics; a
name it does not know raises everywhere (a new loss-like metric is never judged higher-is-better by default).
Adding one: tests/test_new_metric.py."""

import pytest

from vitcore.app import fmt
from vitcore.app.ablations import cards
from vitcore.config import metrics, numbers
from vitcore.config.metrics import HIGHER, LOWER, NONE, REGISTRY, Metric
from vitcore.stats import estimates as v
from vitcore.store import index, validate

JUDGED = [m for m in REGISTRY if m.judged]
UNKNOWN = "macro_f2"  # a metric no registry entry names


@pytest.mark.parametrize("entry", REGISTRY, ids=lambda m: m.name)
def test_every_view_of_a_metric_is_its_registry_entry(entry):
    assert fmt.title(entry.name) == entry.title and numbers.digits(entry.name) == entry.digits
    assert (entry.name in numbers.SIGNED) == entry.signed and (entry.name in v.OPTIMISTIC) == entry.optimistic
    assert v.margin_for(entry.name, 0.03) == (0.03 if entry.margin is None else entry.margin)
    assert (entry.name in v.NEUTRAL) == (entry.direction == NONE)
    assert (entry.name in metrics.COMPARED) == entry.compared == (entry.name in cards.HELP)
    assert (entry.name in index.COLUMNS) == entry.in_table
    assert (entry.name in validate.METRICS) == (entry.source == metrics.SUMMARY_FILE)
    assert metrics.has_test_set(entry.name) == entry.test_set == (entry.name in metrics.TEST_SET)


@pytest.mark.parametrize("entry", JUDGED, ids=lambda m: m.name)
@pytest.mark.parametrize("positive", [True, False])
def test_the_verdict_word_follows_the_registry_direction(entry, positive):
    word = v.direction(entry.name, positive, inside=False)
    expected = {HIGHER: v.BETTER if positive else v.WORSE, LOWER: v.WORSE if positive else v.BETTER,
                NONE: v.HIGHER if positive else v.LOWER}[entry.direction]
    assert word == expected


@pytest.mark.parametrize("ask", [
    lambda name: v.direction(name, True, False),
    lambda name: v.judge(name, v.paired_estimate([0.01, 0.02, 0.03])),
    lambda name: v.margin_for(name),
    fmt.title, numbers.digits, cards.title, metrics.known,
])
def test_a_metric_the_registry_does_not_know_raises(ask):
    with pytest.raises(ValueError, match=f"unknown metric '{UNKNOWN}'"):
        ask(UNKNOWN)


@pytest.mark.parametrize("fields, problem", [
    ({"direction": "up"}, "direction must be one of"),
    ({"source": "confusion.csv"}, "a function (derive) exactly when"),
    ({"derive": len}, "a function (derive) exactly when"),
    ({"source": "vitcore.analysis.work", "compared": True}, "only a metric of the runs table"),
])
def test_an_entry_that_cannot_work_is_refused_at_import(fields, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        Metric(**{"name": "x", "title": "X", "help": "", "direction": HIGHER, **fields})


def test_the_tables_metrics_keep_runs_csv_column_order():
    assert metrics.TABLE[:len(metrics.SUMMARY)] == metrics.SUMMARY == tuple(validate.METRICS)
    start = index.COLUMNS.index(metrics.TABLE[0])
    assert tuple(index.COLUMNS[start:start + len(metrics.TABLE)]) == metrics.TABLE
    assert set(metrics.COMPARED) <= set(metrics.JUDGED) <= set(metrics.TABLE)
