"""The metric registry: every metric described once, and the margin's one rule.

A metric is one frozen `Metric`: its name (the runs table's column), title, help text, which direction is
better, its equivalence margin, how it is printed, and where it comes from. Everything that lists or
describes metrics reads this registry: the runs table's columns (vitcore.store.index), summary.json's
check (vitcore.store.validate), the compared metrics and their order (effects, flips, `compare`, the
Ablations cards), the verdict words and margins (vitcore.stats.estimates), the number format
(vitcore.config.numbers), the app's titles and help (vitcore.app.fmt, vitcore.app.ablations.cards), the
reports and the tests. A name the registry does not know raises (`metric`): a new loss-like metric is never
judged higher-is-better by default.

How to add a metric (e.g. macro-F1 of predictions.npy):
  1. Write its function of the run file it reads, returning a float. What it receives is that file's parser's
     (vitcore.store.derived.PARSERS): `confusion.csv`, the (10, 10) counts, row = true class; `history.csv`,
     the history DataFrame; `predictions.npy`, a `Predictions` pair: `.predicted`, the (10,000,) uint8
     predicted class of each official test image in the test split's order, and `.labels`, the official test
     labels in the same order, handed in by the store (this layer imports nothing from vitcore.data; a run
     trained before predictions were kept has none: NaN). Macro-F1:
         def macro_f1(run) -> float:
             from sklearn.metrics import f1_score  # heavy: imported when a value is computed
             return float(f1_score(run.labels, run.predicted, average="macro"))
  2. Append one `Metric(..., source="predictions.npy", derive=macro_f1)` to REGISTRY, with
     `compared=True` if the default views (effects, `compare`, the Ablations cards) should show it, and
     `test_set=True` if it is an accuracy on the official test images (below).
  The store computes it once per run and caches the value in its index beside the run's file stamps
  (vitcore.store.derived), so a warm `RunStore.table()` reads no extra file; a changed function is
  recomputed (the cache is keyed by its code). tests/test_new_metric.py registers this macro-F1 for one test.
  A new kind of run file is one name in RUN_FILES and its parser in vitcore.store.derived.PARSERS (the store
  and the test fakes both read through that table).

The test-set term: a metric with `test_set=True` is the share of the official test images a run classifies
right, image by image what predictions.npy says, so its Δ's interval can add the sampling of those images
to the random seeds' (vitcore.stats.testset): every view asks `has_test_set`, never the metric's name.

SUMMARY: the metrics every run's summary.json holds, in the runs table's (runs.csv's) column order.
DERIVED: the metrics computed from a run's files; TABLE = SUMMARY + DERIVED, the runs table's metrics.
COMPARED: the metrics the statistics compare by default (effects, flips, `compare`), in display order.
JUDGED: every metric a Δ may be taken over.
TEST_SET: the metrics whose Δ's interval includes the test images' sampling (`test_set`).
`checked` and `checked_margin` are what the public API (vitcore.study.Study) and the CLI refuse, in one message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real

HIGHER, LOWER, NONE = "higher", "lower", "none"  # which direction is better; NONE: no good direction
SUMMARY_FILE = "summary.json"
# what a derived metric may be a function of: each read by its parser in vitcore.store.derived.PARSERS
RUN_FILES = ("confusion.csv", "history.csv", "predictions.npy")
ACCURACY_MARGIN = None  # a Metric.margin: the accuracy margin (the sidebar's, --margin; default ±0.01)


@dataclass(frozen=True)
class Metric:
    name: str                     # the runs table's column and summary.json's key: "test_accuracy"
    title: str                    # how views name it: "Test accuracy"
    help: str                     # the Ablations card's help (Markdown)
    direction: str                # HIGHER / LOWER is better; NONE: no good direction (words "higher"/"lower")
    margin: float | None = ACCURACY_MARGIN  # the equivalence margin in its own unit; None: the accuracy margin
    digits: int = 4               # decimals shown (its Δs too)
    signed: bool = False          # always printed with its sign (a difference)
    optimistic: bool = False      # selected on the split it is reported on
    compared: bool = False        # in the default views (effects, flips, `compare`, the Ablations cards)
    judged: bool = True           # a Δ may be taken over it (best_epoch: no)
    source: str = SUMMARY_FILE    # summary.json, a run file `derive` reads (RUN_FILES), or what counts it
    derive: Callable | None = None  # a derived metric's function of its source file's contents -> float
    short: str = ""               # a card's title when five cards share a row ("" : the title)
    bound: float | None = None    # the largest |Δ| it can take (an accuracy's: 1); None: no bound
    test_set: bool = False        # an accuracy on the official test images: its interval adds their sampling

    def __post_init__(self) -> None:
        if self.direction not in (HIGHER, LOWER, NONE):
            raise ValueError(f"metric {self.name}: direction must be one of {HIGHER}, {LOWER}, {NONE}")
        if (self.source in RUN_FILES) != (self.derive is not None):
            raise ValueError(f"metric {self.name}: a function (derive) exactly when its source is one of {RUN_FILES}")
        if self.compared and not self.in_table:
            raise ValueError(f"metric {self.name}: only a metric of the runs table can be compared")
        if self.test_set and not (self.in_table and self.judged):
            raise ValueError(f"metric {self.name}: only a judged metric of the runs table has a test-set term")

    @property
    def in_table(self) -> bool:
        """A column of the runs table (summary.json's or derived); the others are counted elsewhere (claims)."""
        return self.source == SUMMARY_FILE or self.derive is not None

    @property
    def higher_is_better(self) -> bool:
        """Whether a rise reads 'better' (a rise of a metric with no good direction counts as its side: 'higher')."""
        return self.direction != LOWER

    def margin_at(self, margin: float) -> float:
        """Its equivalence margin when accuracies are judged at ±margin."""
        return margin if self.margin is None else self.margin


REGISTRY: tuple[Metric, ...] = (
    Metric("test_loss", "Test loss", "Mean cross-entropy on the official 10,000-image test split.", LOWER,
           margin=0.02),
    Metric("test_accuracy", "Test accuracy",
           "Accuracy on the official 10,000-image test split, with the weights after the last epoch. The headline "
           "metric.", HIGHER, compared=True, bound=1.0, test_set=True),
    Metric("best_val_accuracy", "Best val accuracy",
           "Highest accuracy on the fixed 5,000-row validation split over all epochs: the epoch is selected on the "
           "same split it is reported on, so it is optimistic. Test accuracy is the honest figure.", HIGHER,
           optimistic=True, compared=True, short="Best val (optimistic)", bound=1.0),
    Metric("best_epoch", "Best epoch", "The epoch of the best validation accuracy.", NONE, digits=0, judged=False),
    Metric("final_train_accuracy", "Final train accuracy",
           "Mean training accuracy over the last epoch (training mode, as seen while fitting).", NONE,
           compared=True, bound=1.0),  # no good direction: fitting the training rows closer can mean memorising them
    Metric("final_val_accuracy", "Final val accuracy", "Accuracy on the validation split after the last epoch.",
           HIGHER, bound=1.0),
    Metric("gap", "Gap (train − val)",
           "Final train accuracy − final validation accuracy, both at the last epoch: how hard it overfits.", LOWER,
           signed=True, compared=True, bound=2.0),
    Metric("params", "Parameters", "The model's parameter count, as Keras counts it.", LOWER, margin=0.0,
           digits=0),
    Metric("seconds", "Seconds",
           "Wall-clock training time of one run, data loading to test evaluation. Compared only between runs timed "
           "the same way (same training code, thread count and concurrent workers: `timing_group`).", LOWER,
           margin=1.0, digits=1, compared=True),
    # Counted outside the runs table, for the claims ledger (vitcore.article.claims): no Δ over runs.
    Metric("macs_per_image", "Multiply-adds per image", "Multiply-adds of one forward pass, counted from the config.",
           NONE, margin=0.0, digits=0, judged=False, source="vitcore.analysis.work"),
    Metric("test_accuracy_sd", "Test accuracy sd (a difference of sds)",
           "The seed-to-seed standard deviation of test accuracy.", NONE, judged=False,
           source="vitcore.analysis.noise"),
)

METRIC = {m.name: m for m in REGISTRY}
if len(METRIC) != len(REGISTRY):
    raise ValueError("two metrics share a name in vitcore.config.metrics.REGISTRY")
SUMMARY = tuple(m.name for m in REGISTRY if m.source == SUMMARY_FILE)
DERIVED = tuple(m.name for m in REGISTRY if m.derive is not None)
TABLE = SUMMARY + DERIVED
COMPARED = tuple(m.name for m in REGISTRY if m.compared)
JUDGED = COMPARED + tuple(m.name for m in REGISTRY if m.judged and m.in_table and not m.compared)
TEST_SET = tuple(m.name for m in REGISTRY if m.test_set)


def metric(name: str) -> Metric:
    """The registry's entry for `name`; ValueError naming the known metrics for any other name."""
    try:
        return METRIC[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown metric {name!r}: vitcore.config.metrics knows {', '.join(METRIC)}") from None


def has_test_set(name: str) -> bool:
    """Whether `name`'s Δ is judged over random seeds and test images (its entry's `test_set`): read from the
    registry at each call, never from the name. False for a column the registry does not know."""
    entry = METRIC.get(name) if isinstance(name, str) else None
    return entry is not None and entry.test_set


def known(*names: str) -> tuple[str, ...]:
    """`names`, each checked against the registry (a list of metrics written elsewhere, e.g. the reports')."""
    for name in names:
        metric(name)
    return names


def checked(metrics) -> tuple[str, ...]:
    """`metrics` (one name or several) as a tuple; ValueError listing JUDGED for a name no Δ is taken over (a
    misspelt name used to surface as a KeyError deep in a DataFrame, without the names that work)."""
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    for name in names or ("",):
        if name not in JUDGED:
            raise ValueError(f"metric {name!r} is not one of {', '.join(JUDGED)}")
    return names


def checked_margin(margin) -> float:
    """The equivalence margin for accuracies and the gap, strictly between 0 and 1 (the CLI's --margin rule);
    ValueError otherwise: a margin of 0 or below makes every equivalence test fail, 1 or more makes it vacuous."""
    if isinstance(margin, bool) or not isinstance(margin, Real) or not 0 < margin < 1:
        raise ValueError(f"margin must be between 0 and 1 (exclusive), got {margin!r}")
    return float(margin)
