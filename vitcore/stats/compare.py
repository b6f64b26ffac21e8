"""The comparison engine: one selection against its baseline, every number paired and traceable.

    python -m vitcore compare --norm batch --train-rows 1000 --out out/   # vs the article's ViT at 1,000 rows

Pairs are runs with the same random seed *and* the same train_rows. When the two sides share no
train_rows the comparison is unpaired (Welch) and says so (`paired` = False). For `seconds` only
the pairs of one timing group count (the best basis, named in `timing_group`; never pooled across groups),
and the Δ gets a verdict only when that group timed the two configs interleaved with 10 or more pairs, else
"not comparable" with why in `timing_note`; `work_note` says when the two count the same work
(vitcore.stats.seconds). Means beside a Δ are
over the paired random seeds only. Each row carries both tests and the verdict (vitcore.stats.
estimates.judge) in the comparison's family (vitcore.stats.families). Test accuracy's Δ includes the
test set's own sampling when every pair kept its predictions (vitcore.stats.testset: `interval` says
which). Every page and the CLI use this module, so a number on screen is the number in `metrics.csv`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from vitcore.config.numbers import whole_counts
from vitcore.config.run import RunConfig, default_baseline
from vitcore.data.fashion import CLASS_NAMES, NUM_CLASSES
from vitcore.stats import plan, readings, seconds, testset
from vitcore.stats.estimates import JUDGEMENT_COLUMNS, MARGIN, METRICS, Estimate, judge, paired_estimate, welch_estimate
from vitcore.stats.families import ALONE, Family, family_of, runs_of
from vitcore.stats.records import Contrast, Measurement, judge_paired, long_pairs, paired_spread

METRIC_COLUMNS = ["metric", "selection_mean", "baseline_mean", "n_pairs", "mean_delta", *JUDGEMENT_COLUMNS, "paired",
                  "timing_group", *seconds.NOTE_COLUMNS, *testset.TEST_COLUMNS, *readings.READING_COLUMNS,
                  *plan.LEAD_COLUMNS]  # the verdict's plan and the line that follows it (filled by vitcore.study.Study)
CLASS_COLUMNS = ["class", "mean_delta", "n_pairs", *JUDGEMENT_COLUMNS]
CONFUSION_COLUMNS = ["true", "predicted", "mean_delta", "ci_low", "ci_high", "n_pairs"]
PAIR_KEY = ["train_rows", "seed"]  # what makes two runs a pair: the same data sample and initialisation


def match(baseline: pd.DataFrame, variant: pd.DataFrame, suffixes=("_baseline", "_variant"),
          within: str | None = None) -> pd.DataFrame:
    """The one pairing rule: inner merge of two sides' runs on (train_rows, random seed), sorted by it;
    `within`: a column both pairs' runs must also share (seconds: the timing group)."""
    on = PAIR_KEY if within is None else [*PAIR_KEY, "_within"]
    if within is not None:
        baseline, variant = baseline.assign(_within=baseline[within]), variant.assign(_within=variant[within])
    pairs = pd.merge(baseline, variant, on=on, how="inner", suffixes=suffixes)
    return pairs.drop(columns="_within", errors="ignore").sort_values(PAIR_KEY, ignore_index=True)


def timing_group(pairs: pd.DataFrame) -> str:
    """The timing group the seconds Δ uses: the best basis (vitcore.stats.seconds.rank: the dedicated timing
    set, then clean groups) holding 2 or more pairs timed within it, then the most pairs (ties: the first by
    name). Groups timed under load nobody chose (replaced, overlapped, busy) never enter a timing comparison;
    "" when no other group holds a pair. Whether its Δ gets a verdict is seconds.timing_note's."""
    same = pairs[pairs["timing_group_baseline"] == pairs["timing_group_variant"]]
    return _best_group(same["timing_group_baseline"].value_counts().to_dict())


def _best_group(counts: dict[str, int]) -> str:
    """timing_group's choice from {timing group: pairs timed within it}."""
    clean = [g for g in counts if seconds.rank(g) < 2]
    return min(clean, key=lambda g: (counts[g] < 2, seconds.rank(g), -counts[g], g), default="")


def pair_runs(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The runs of two configs matched on (train_rows, random seed): train_rows, seed, baseline,
    variant, delta (+ run ids). For `seconds` two runs pair only when timed in one timing group, and only the
    pairs of one group count (timing_group(): never pooled across groups), so a config may hold a random seed
    once per group (the dedicated timing set repeats the store's). Each frame must hold one config, else
    ValueError."""
    extra = [c for c in ("run_id", "timing_group", "trained_at") if c in baseline.columns and c in variant.columns]
    if metric != "seconds" or "timing_group" not in extra:
        return _pair_unique(baseline, variant, metric, extra)
    if all(baseline[k].dtype == variant[k].dtype and baseline[k].dtype.kind in "iu" for k in PAIR_KEY):
        return _pair_seconds(baseline, variant, metric, extra)
    pairs = pair_runs_merged(baseline, variant, metric, extra, within="timing_group")
    group = timing_group(pairs)
    return pairs[(pairs["timing_group_baseline"] == group) & (pairs["timing_group_variant"] == group)].reset_index(
        drop=True)


def _pair_unique(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str, extra: list[str]) -> pd.DataFrame:
    """pair_runs where each side holds a (train_rows, random seed) once: the frame `match` gives, column for column
    and dtype for dtype, found by a dictionary of the variant's keys instead of a merge (pair_runs is called for
    every Δ of every view: the merge was most of its time). Keys that are missing or of other dtypes on the two
    sides take the merge."""
    keys = [(baseline[k], variant[k]) for k in PAIR_KEY]
    if any(b.dtype != v.dtype or b.dtype.kind not in "iu" for b, v in keys):
        return pair_runs_merged(baseline, variant, metric, extra)
    left = list(zip(*(b.to_numpy() for b, _ in keys)))
    right = list(zip(*(v.to_numpy() for _, v in keys)))
    for name, rows in (("baseline", left), ("variant", right)):
        if len(set(rows)) != len(rows):
            raise ValueError(f"{name} has several runs for one (train_rows, seed): pass one config's runs")
    where = {key: i for i, key in enumerate(right)}
    found = sorted((key, i, where[key]) for i, key in enumerate(left) if key in where)
    li = np.array([i for _, i, _ in found], dtype=np.intp)
    ri = np.array([j for _, _, j in found], dtype=np.intp)

    def take(column: pd.Series, at: np.ndarray):  # the column's values at `at`, its dtype kept (no Series: faster)
        return column.to_numpy()[at] if isinstance(column.dtype, np.dtype) else column.array.take(at)

    columns = {k: take(b, li) for k, (b, _) in zip(PAIR_KEY, keys)}
    columns |= {f"{c}_baseline": take(baseline[c], li) for c in extra}
    columns["baseline"] = take(baseline[metric], li)
    columns |= {f"{c}_variant": take(variant[c], ri) for c in extra}
    columns["variant"] = take(variant[metric], ri)
    numeric = all(isinstance(columns[side], np.ndarray) and columns[side].dtype.kind == "f"
                  for side in ("baseline", "variant"))
    if numeric:  # the subtraction the Series would do, on its arrays
        columns["delta"] = columns["variant"] - columns["baseline"]
    pairs = pd.DataFrame(columns)
    if not numeric:
        pairs["delta"] = pairs["variant"] - pairs["baseline"]
    return pairs


_NO_GROUP = object()  # a missing timing group: pairs within it never count (timing_group compares with ==)


def _pair_seconds(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str, extra: list[str]) -> pd.DataFrame:
    """pair_runs for seconds, frame for frame what the merge within timing groups then the cut to timing_group()'s
    group gives: that group chosen from sets of (train_rows, random seed, group) keys, then _pair_unique on the two
    sides' runs of that group (no merge of every group: seconds are paired for every Δ of every view)."""
    shared = None
    for name, frame in (("baseline", baseline), ("variant", variant)):
        groups = [g if isinstance(g, str) else _NO_GROUP for g in frame["timing_group"].to_numpy(object)]
        keys = list(zip(*(frame[k].to_numpy() for k in PAIR_KEY), groups))
        if len(set(keys)) != len(keys):
            raise ValueError(f"{name} has several runs for one (train_rows, seed): pass one config's runs")
        shared = set(keys) if shared is None else shared & set(keys)
    group = _best_group(Counter(g for *_, g in shared if g is not _NO_GROUP))
    return _pair_unique(baseline[(baseline["timing_group"] == group).to_numpy(bool)],
                        variant[(variant["timing_group"] == group).to_numpy(bool)], metric, extra)


def pair_runs_merged(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str, extra: list[str],
                     within: str | None = None) -> pd.DataFrame:
    """pair_runs by `match`'s merge, keys unique on each side (with `within`, per value of that column too): the
    rule _pair_unique reproduces, and the seconds' pairing within a timing group."""
    for name, frame in (("baseline", baseline), ("variant", variant)):
        if frame.duplicated(PAIR_KEY + ([within] if within else [])).any():
            raise ValueError(f"{name} has several runs for one (train_rows, seed): pass one config's runs")
    pairs = match(baseline[PAIR_KEY + extra + [metric]].rename(columns={metric: "baseline"}),
                  variant[PAIR_KEY + extra + [metric]].rename(columns={metric: "variant"}), within=within)
    pairs["delta"] = pairs["variant"] - pairs["baseline"]
    return pairs


@dataclass(frozen=True)
class Delta:
    """variant - baseline paired by (train_rows, random seed), judged in `family`: `row` holds mean_delta, n_pairs and
    JUDGEMENT_COLUMNS; `pairs` the runs behind it; `estimate` the one the verdict used."""
    metric: str
    row: dict
    pairs: pd.DataFrame = field(repr=False, compare=False)
    estimate: Estimate | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name):  # delta.verdict, delta.ci_low, … read the row
        try:
            return self.__dict__["row"][name]
        except KeyError:
            raise AttributeError(name) from None


def _paired(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str, test_set: testset.TestSet | None):
    """(pairs, timing group, estimate(part) -> (Estimate, TEST_COLUMNS) for any subset): a Δ before any margin."""
    pairs = pair_runs(baseline, variant, metric)
    group = pairs["timing_group_variant"].iloc[0] if metric == "seconds" and len(pairs) and \
        "timing_group_variant" in pairs.columns else ""

    def estimate(part: pd.DataFrame) -> tuple[Estimate, dict]:
        return testset.judged_estimate(paired_estimate(part["delta"]), metric, part, test_set)

    return pairs, group, estimate


def paired_delta(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str, margin: float = MARGIN,
                 family: Family = ALONE, test_set: testset.TestSet | None = None,
                 configs: tuple[RunConfig, RunConfig] | None = None) -> Delta:
    """Pair runs by (train_rows, seed), take variant - baseline and judge it (both tests, adjusted in
    `family`). Seconds not timed interleaved in 10 or more pairs are "not comparable" (seconds.timing_note);
    `configs` (baseline, variant) lets a seconds row say when the two count the same work. With the
    store's `test_set`, test accuracy's interval and tests include the test set's sampling when every
    pair kept its predictions (testset.judged_estimate; the row's TEST_COLUMNS say which): every view
    of a comparison passes it, so the comparison has one verdict. A planned comparison's test accuracy is
    judged at the plan's looks on the last look's pairs only (plan.sequential; `pairs` holds those)."""
    pairs, group, estimate = _paired(baseline, variant, metric, test_set)
    est, verdict, test_columns, pairs = judge_paired(pairs, metric, margin, family, estimate)  # + size, borderline
    said = seconds.notes(metric, group, est.n, configs)
    row = {"metric": metric, "mean_delta": est.mean, "n_pairs": est.n, **verdict, "timing_group": group, **said,
           **test_columns, **paired_spread(metric, pairs)}
    return Delta(metric, row, pairs, est)


@dataclass(frozen=True)
class Comparison:
    """selection - baseline. `metrics`: METRIC_COLUMNS (metrics.csv) and what an inconclusive verdict still needs in
    words (plan.NEEDS_COLUMNS, for the views). `pairs`: one row per metric and pair (or per run when unpaired) with
    both run ids, so every Δ leads back to its runs. `family`: the correction family (families.py)."""
    selection: RunConfig
    baseline: RunConfig
    paired: bool
    metrics: pd.DataFrame
    pairs: pd.DataFrame
    classes: pd.DataFrame | None = None
    confusion: pd.DataFrame | None = None
    family: Family = ALONE

    @property
    def seeds(self) -> list[int]:
        """The random seeds actually paired (for any metric: a planned test accuracy's look may use fewer), sorted."""
        return sorted(int(s) for s in self.pairs["seed"].dropna().unique()) if self.paired and len(self.pairs) else []


def _unpaired_side(frame: pd.DataFrame, group: str | None) -> pd.DataFrame:
    return frame if group is None else frame[frame["timing_group"] == group]


def _common_timing_group(sel: pd.DataFrame, base: pd.DataFrame) -> str | None:
    """Unpaired seconds: the best-ranked timing group both sides have runs in, then the most (None: no column)."""
    if "timing_group" not in sel.columns:
        return None
    shared = {g for g in set(sel["timing_group"]) & set(base["timing_group"]) if seconds.rank(g) < 2}  # not under load
    if not shared:
        return ""
    return min(sorted(shared), key=lambda g: (seconds.rank(g), -min((sel["timing_group"] == g).sum(),
                                                                    (base["timing_group"] == g).sum())))


def metric_runs(runs: pd.DataFrame, metric: str, timing: pd.DataFrame | None = None) -> pd.DataFrame:
    """The runs a Δ on `metric` is taken over: seconds see the dedicated timing set beside `runs` (its
    interleaved pairs on a quiet machine are their best basis, stats.seconds); no other metric does."""
    return seconds.with_timing_set(runs, timing) if metric == "seconds" else runs


def measure(runs: pd.DataFrame, selection: RunConfig, baseline: RunConfig, metric: str, family: Family = ALONE,
            test_set: testset.TestSet | None = None, timing: pd.DataFrame | None = None) -> Measurement:
    """selection − baseline on one metric before any margin (records.Measurement): paired by random seed at
    one train_rows, else unpaired (Welch; for seconds, within the timing group both sides have most runs in).
    `timing`: the dedicated timing set's runs (vitcore.study.Study.timing): see metric_runs."""
    runs = metric_runs(runs, metric, timing)
    sel, base = runs_of(runs, selection), runs_of(runs, baseline)
    contrast = Contrast(selection, baseline, metric, family)
    if contrast.paired:
        matched, group, estimate = _paired(base, sel, metric, test_set)
        est, test_columns = estimate(matched)
        said = seconds.notes(metric, group, est.n, (selection, baseline))
        return Measurement(contrast, est, matched["variant"].mean(), matched["baseline"].mean(), group,
                           not said["timing_note"], test_columns, paired_spread(metric, matched),
                           long_pairs(matched, metric), matched, estimate,
                           {tuple(matched["seed"]): (est, test_columns)}, **said)  # a look on every pair: this one
    group = _common_timing_group(sel, base) if metric == "seconds" else None
    a, b = _unpaired_side(sel, group), _unpaired_side(base, group)
    est = welch_estimate(a[metric], b[metric])
    both = pd.concat([a.assign(side="selection"), b.assign(side="baseline")])
    pairs = both[["side", "train_rows", "seed", "run_id", metric]].rename(columns={metric: "value"}).assign(
        metric=metric)
    said = seconds.notes(metric, group or "", 0, (selection, baseline), paired=False)  # seconds: never a verdict
    return Measurement(contrast, est, a[metric].mean(), b[metric].mean(), group or "",
                       not said["timing_note"], testset.seed_columns(est),
                       readings.spread_of(metric, None, b[metric], a[metric], est.mean), pairs, **said)


def measure_all(runs: pd.DataFrame, selection: RunConfig, baseline: RunConfig | None = None, metrics=METRICS,
                test_set: testset.TestSet | None = None, family: Family | None = None,
                timing: pd.DataFrame | None = None, plans=()) -> list[Measurement]:
    """measure() of every metric, in the pair's family (families.family_of with `plans` unless given)."""
    baseline = baseline or default_baseline(selection)
    paired = selection.train_rows == baseline.train_rows
    family = family or (family_of(runs, selection, baseline, plans) if paired else ALONE)
    return [measure(runs, selection, baseline, metric, family, test_set, timing) for metric in metrics]


def judged(measured: list[Measurement], margin: float = MARGIN, runs: pd.DataFrame | None = None,
           confusions: pd.DataFrame | None = None) -> Comparison:
    """The Comparison of measurements of one (selection, baseline) judged at `margin`; `confusions` (with
    `runs`) adds the per-class and confusion-matrix Δs."""
    contrast = measured[0].contrast
    selection, baseline = contrast.selection, contrast.baseline
    verdicts = [m.judged(margin) for m in measured]
    frame = pd.DataFrame([v.row() for v in verdicts], columns=[*METRIC_COLUMNS, *plan.NEEDS_COLUMNS])
    frame[plan.LEAD_COLUMNS] = ""
    # the pairs behind each verdict: a planned test accuracy's are its look's (or, at another margin, the plan's
    # random seeds it holds), so pairs.csv's Δs average to metrics.csv's mean_delta over its n_pairs
    long = pd.concat([v.measurement.pairs for v in verdicts], ignore_index=True)
    classes = confusion = None
    if confusions is not None:
        classes, confusion = class_deltas(confusions, runs_of(runs, selection), runs_of(runs, baseline),
                                          contrast.paired, margin)
    family = contrast.family if contrast.paired else ALONE
    return Comparison(selection, baseline, contrast.paired, frame, long, classes, confusion, family)


def compare(runs: pd.DataFrame, selection: RunConfig, baseline: RunConfig | None = None, margin: float = MARGIN,
            confusions: pd.DataFrame | None = None, metrics=METRICS, test_set: testset.TestSet | None = None,
            timing: pd.DataFrame | None = None, plans=()) -> Comparison:
    """Compare the runs of `selection` (any random seed) with those of `baseline` (default: the
    article's ViT at the selection's train_rows), every metric judged in the pair's family
    (families.family_of). `confusions` (RunStore.confusions() format) adds the per-class and
    confusion-matrix Δs. `test_set` (testset.from_store) puts the test set's sampling into test
    accuracy's paired Δ (paired_delta), as on every other view of the comparison; `timing` (the dedicated
    timing set) the seconds' best basis (measure); `plans` the plans that may judge it, in lead order (families):
    vitcore.study.Study measures once and judges at any margin."""
    measured = measure_all(runs, selection, baseline, metrics, test_set, None, timing, plans)
    return judged(measured, margin, runs, confusions)


def run_rates(confusions: pd.DataFrame, run_ids) -> np.ndarray:
    """(runs, 10, 10) row-normalised rates (row = true class, column = predicted), in run_ids order."""
    ids = list(run_ids)
    part = confusions[confusions["run_id"].isin(ids)]
    index = part["run_id"].map({run_id: k for k, run_id in enumerate(ids)}).to_numpy(np.int64)
    cell = (index * NUM_CLASSES + part["true"].to_numpy(np.int64)) * NUM_CLASSES + part["predicted"].to_numpy(np.int64)
    counts = np.bincount(cell, weights=part["count"].to_numpy(float), minlength=len(ids) * NUM_CLASSES ** 2)
    counts = counts.reshape(len(ids), NUM_CLASSES, NUM_CLASSES)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / counts.sum(axis=2, keepdims=True)


CLASS_FAMILY = "the 10 classes of this comparison"


def class_deltas(confusions: pd.DataFrame, sel: pd.DataFrame, base: pd.DataFrame, paired: bool,
                 margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-class accuracy Δ and confusion-rate Δ (selection - baseline), paired seed by seed (or
    Welch when unpaired), each with its 95% interval; the ten classes are one family (CLASS_FAMILY)."""
    if paired:
        matched = match(base[PAIR_KEY + ["run_id"]], sel[PAIR_KEY + ["run_id"]], suffixes=("_baseline", "_selection"))
        diff = run_rates(confusions, matched["run_id_selection"]) - run_rates(confusions, matched["run_id_baseline"])

        def estimate(i, j) -> Estimate:
            return paired_estimate(diff[:, i, j])
    else:
        a, b = run_rates(confusions, sel["run_id"]), run_rates(confusions, base["run_id"])

        def estimate(i, j) -> Estimate:
            return welch_estimate(a[:, i, j], b[:, i, j])
    classes = []
    for k, name in enumerate(CLASS_NAMES):
        est = estimate(k, k)
        classes.append({"class": name, "mean_delta": est.mean, "n_pairs": est.n if est.paired else 0,
                        **judge("test_accuracy", est, margin, CLASS_FAMILY, NUM_CLASSES)})
    cells = []
    for i in range(NUM_CLASSES):
        for j in range(NUM_CLASSES):
            est = estimate(i, j)
            cells.append({"true": i, "predicted": j, "mean_delta": est.mean, "ci_low": est.ci_low,
                          "ci_high": est.ci_high, "n_pairs": est.n if est.paired else 0})
    return pd.DataFrame(classes, columns=CLASS_COLUMNS), pd.DataFrame(cells, columns=CONFUSION_COLUMNS)


def mean_rates(confusions: pd.DataFrame, run_ids) -> np.ndarray:
    """(10, 10) row-normalised rates averaged over runs (for showing one side's matrix)."""
    return run_rates(confusions, run_ids).mean(axis=0)


def write(comparison: Comparison, out) -> list:
    """metrics.csv, classes.csv, confusion_delta.csv (+ pairs.csv: the runs behind every Δ)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "metrics.csv", out / "pairs.csv"]
    whole_counts(comparison.metrics[METRIC_COLUMNS]).to_csv(written[0], index=False)  # the views' words stay out
    comparison.pairs.to_csv(written[1], index=False)
    if comparison.classes is not None:
        written += [out / "classes.csv", out / "confusion_delta.csv"]
        comparison.classes.to_csv(written[2], index=False)
        comparison.confusion.to_csv(written[3], index=False)
    return written


# The one shape the article's and the analyses' tables ask for a comparison through: a `Comparer`.
#
# `vitcore.study.Study.compare` is one (measured once per store state, judged at each margin); `uncached(runs,
# test_set)` is the engine over a table in hand, measuring again on every call (a test, a one-off script). The
# article's report and claims and the data-size curve take a Comparer, so every view's Δ comes from the same
# engine with the same test set, cached when a Study hands it in.

class Comparer(Protocol):
    """selection − baseline on `metrics`, judged at `margin`, as stats.compare.Comparison (its .metrics, .pairs)."""

    def __call__(self, selection: RunConfig, baseline: RunConfig, margin: float,
                 metrics: Sequence[str]) -> Comparison: ...


def uncached(runs: pd.DataFrame, test_set=None, plans=()) -> Comparer:
    """stats.compare.compare over `runs` (with the store's `test_set`: test accuracy's interval includes the test
    set's sampling; `plans`: the plans that may judge a comparison, in lead order), measured again on every call: a
    Study's `compare` is the cached one."""
    def comparer(selection: RunConfig, baseline: RunConfig, margin: float,
                 metrics: Sequence[str]) -> Comparison:
        return compare(runs, selection, baseline, margin, metrics=metrics, test_set=test_set, plans=plans)
    return comparer


def or_uncached(compare: Comparer | None, runs: pd.DataFrame, test_set=None) -> Comparer:
    """`compare` when one is handed in (a Study's), else `uncached(runs, test_set)`."""
    return compare if compare is not None else uncached(runs, test_set)
