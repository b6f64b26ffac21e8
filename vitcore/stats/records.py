"""Typed results: what is compared (a Contrast), what the runs measure (a Measurement, margin-free) and what
the two tests say at one margin (a Judgement). A Verdict holds all three and gives the row every CSV prints.

The margin is applied last: a Measurement (pairs, means, the estimate with the test set's sampling) is
computed once per contrast and metric, and judged at any number of margins (vitcore.study.Study caches
it). `Judgement.of` is the one place that turns `estimates.judge`'s dict into a record, so a column added
to judge() is one field here (tests/test_study.py checks the two agree). No pandas needed to read them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Callable

from vitcore.config.numbers import delta, digits, p_value
from vitcore.config.run import RunConfig
from vitcore.stats import plan, plan_store, readings, seconds
from vitcore.stats.estimates import JUDGEMENT_COLUMNS, RESOLVED, Estimate, judge, margin_for
from vitcore.stats.families import ALONE, Family
from vitcore.stats.testset import TEST_COLUMNS

VERDICT_READINGS = ("size", "borderline", "flips")  # readings.verdict_columns: they depend on the margin


@dataclass(frozen=True)
class Contrast:
    """selection − baseline on one metric, tested in `family` (vitcore.stats.families). Paired by random
    seed when both sides are at one train_rows, else unpaired (Welch) and judged alone."""
    selection: RunConfig
    baseline: RunConfig
    metric: str
    family: Family = ALONE

    @property
    def paired(self) -> bool:
        return self.selection.train_rows == self.baseline.train_rows

    def sides(self) -> str:
        """'ViT p7 pre-LN no-pos − ViT p7 pre-LN pos at 4,000 rows' (each side's rows when they differ)."""
        sel, base = self.selection, self.baseline
        if self.paired:
            return f"{sel.label()} − {base.label()} at {sel.train_rows:,} rows"
        return f"{sel.label()} at {sel.train_rows:,} rows − {base.label()} at {base.train_rows:,} rows"

    def __repr__(self) -> str:  # one line: the dataclass's was two RunConfigs in full
        return f"Contrast({self.sides()}, {self.metric}, family ×{self.family.size})"


@dataclass(frozen=True)
class Measurement:
    """What the runs say about a Contrast before any margin: the estimate the verdict uses (with the test
    set's sampling where every pair kept predictions), the means over the paired random seeds, and the
    columns that say which interval it is (testset.TEST_COLUMNS, in `test`). `pairs`: the runs behind it."""
    contrast: Contrast
    estimate: Estimate
    selection_mean: float
    baseline_mean: float
    timing_group: str = ""
    comparable: bool = True  # False: seconds not timed interleaved in enough pairs (seconds.timing_note)
    test: dict = field(default_factory=dict, compare=False)
    spread: dict = field(default_factory=dict, compare=False)  # readings.SPREAD_COLUMNS: run sd, Δ/run sd, wins
    pairs: object = field(default=None, repr=False, compare=False)    # compare's long rows (a DataFrame)
    matched: object = field(default=None, repr=False, compare=False)  # pair_runs' frame (paired only)
    estimator: Callable | None = field(default=None, repr=False, compare=False)  # part -> (Estimate, test)
    looks: dict = field(default_factory=dict, repr=False, compare=False)  # a planned look's estimates, by seeds
    timing_note: str = ""  # seconds: why the Δ gets no verdict (seconds.timing_note)
    work_note: str = ""    # seconds: that the two configs count the same work (seconds.work_note)

    @property
    def n_pairs(self) -> int:
        return self.estimate.n if self.contrast.paired else 0

    def __repr__(self) -> str:  # one line, not two configs and an estimate in full
        c, est = self.contrast, self.estimate
        return f"Measurement({c.sides()}, {c.metric}, Δ {delta(est.mean, digits(c.metric))}, n={est.n})"

    @property
    def planned(self) -> bool:
        """Judged at the plan's looks (vitcore.stats.plan): its verdict's pairs depend on the margin."""
        c = self.contrast
        return c.paired and bool(c.family.looks) and c.metric == plan.METRIC and self.matched is not None

    def judged(self, margin: float) -> Verdict:
        """Both tests at `margin`, adjusted in the contrast's family: the cheap last step. A planned comparison
        is judged at its looks (the first look that decides ends it), each look's estimate computed once."""
        c = self.contrast
        if not self.planned:
            family = c.family if c.paired else ALONE
            row = judge(c.metric, self.estimate, margin, family.name, family.size, self.comparable)
            row.update(readings.verdict_columns(c.metric, self.estimate, row, self.test))
            return Verdict(c, self, Judgement.of(row))
        est, row, test, used = judge_paired(self.matched, c.metric, margin, c.family, self._look)
        look = replace(self, estimate=est, selection_mean=used["variant"].mean(), baseline_mean=used["baseline"].mean(),
                       test=test, spread=paired_spread(c.metric, used), pairs=long_pairs(used, c.metric), matched=used)
        return Verdict(c, look, Judgement.of(row))

    def _look(self, part) -> tuple[Estimate, dict]:
        key = tuple(part["seed"])
        if key not in self.looks:
            self.looks[key] = self.estimator(part)
        return self.looks[key]


def long_pairs(matched, metric: str):
    """pair_runs' frame as compare's `pairs` rows: selection, baseline, delta and both run ids, with the metric."""
    return matched.assign(metric=metric).rename(columns={
        "variant": "selection", "run_id_variant": "selection_run_id", "run_id_baseline": "baseline_run_id"})


def judge_paired(pairs, metric: str, margin: float, family: Family, estimate) -> tuple[Estimate, dict, dict, object]:
    """(the estimate, the judgement's dict with its VERDICT_READINGS, TEST_COLUMNS, the pairs used) of paired
    runs (pair_runs' frame) at `margin` in `family`: at the plan's looks for a planned comparison (plan.sequential:
    the look that decides, its pairs only; the borderline check re-judges at its levels), else once on every pair.
    `estimate(part)` -> (Estimate, TEST_COLUMNS)."""
    levels = None
    owner = (family.plan or plan_store.builtin()) if family.looks else None
    if owner is not None and metric == plan.METRIC and margin_for(metric, margin) == owner.margin:
        est, row, used = plan.sequential(pairs, metric, margin, family, estimate)
        test = {name: row.pop(name) for name in TEST_COLUMNS}
        levels = plan.family_levels(family)[int(row["look"]) - 1] if row["look"] >= 1 else None
    else:
        other_margin = owner is not None and metric == plan.METRIC  # at another margin than its plan's: no replay
        if other_margin:  # a fixed-sample test on the plan's random seeds only (the pairs it holds)
            pairs = plan.held(owner, pairs, family.looks[-1])
        (est, test), used = estimate(pairs), pairs
        group = pairs["timing_group_variant"].iloc[0] if len(pairs) and "timing_group_variant" in pairs.columns else ""
        row = judge(metric, est, margin, family.name, family.size,
                    comparable=metric != "seconds" or not seconds.timing_note(group, est.n))
        if other_margin:
            row["plan"] = plan.exploratory(owner, margin_for(metric, margin), not plan.seen_pairs(owner, pairs),
                                           len(pairs), family.looks[-1])
    row.update(readings.verdict_columns(metric, est, row, test, levels))
    return est, row, test, used


def paired_spread(metric: str, matched) -> dict:
    """readings.SPREAD_COLUMNS of paired runs (pair_runs' frame): one run's sd, Δ in it, the wins."""
    return readings.spread_of(metric, matched["delta"], matched["baseline"], matched["variant"])


@dataclass(frozen=True)
class Judgement:
    """estimates.judge's result as a record (its JUDGEMENT_COLUMNS, in order)."""
    p_value: float
    ci_low: float
    ci_high: float
    p_tost: float
    ci90_low: float
    ci90_high: float
    family: str
    family_size: int
    p_adj: float
    p_tost_adj: float
    ci_adj_low: float
    ci_adj_high: float
    ci90_adj_low: float
    ci90_adj_high: float
    margin: float
    verdict: str
    seeds_needed: float
    seeds_more: float
    look: float         # the plan's look that judged it (0: before the first; NaN: not planned)
    looks_planned: int  # how many looks the plan has for it (0: a fixed-sample comparison)
    plan: str           # what the plan says of it (estimates.FIXED_SAMPLE when not planned)
    seen_before_plan: bool  # a planned verdict that used runs trained before its plan was registered
    size: str           # readings: beyond / inside / undetermined against the margin
    borderline: bool    # readings: an adjusted p near 0.05, or a verdict another test-set model flips
    flips: str          # readings: what would flip a borderline verdict

    @classmethod
    def of(cls, row: dict) -> Judgement:
        """The one place judge()'s dict (with readings.verdict_columns) becomes a record: every field by name."""
        return cls(**{f.name: row[f.name] for f in fields(cls)})

    def row(self) -> dict:
        return {name: getattr(self, name) for name in JUDGEMENT_COLUMNS + list(VERDICT_READINGS)}

    @property
    def resolved(self) -> bool:
        """The difference test resolves the direction (better/worse, higher/lower, or their 'slightly')."""
        return self.verdict in RESOLVED

    def __repr__(self) -> str:  # one line: its 25 fields are in row()
        return f"Judgement({self.verdict} at ±{self.margin:g}, family ×{self.family_size}, p_adj {p_value(self.p_adj)})"


@dataclass(frozen=True)
class Verdict:
    """A Contrast, its Measurement and its Judgement at one margin. `row()` is the metrics.csv row."""
    contrast: Contrast
    measurement: Measurement
    judgement: Judgement

    @property
    def metric(self) -> str:
        return self.contrast.metric

    @property
    def verdict(self) -> str:
        return self.judgement.verdict

    @property
    def mean_delta(self) -> float:
        return self.measurement.estimate.mean

    def __repr__(self) -> str:  # one line (it was ~1,500 characters of nested configs): row() has every column
        c, n = self.contrast, self.measurement.estimate.n
        plan_text = self.judgement.plan  # "exploratory at ±0.02, blind random seeds 1000–1039 (...)": its first words
        said = plan_text.split(" random seeds")[0] + " random seeds" if plan_text.startswith("exploratory") else ""
        return (f"Verdict({c.sides()}, {c.metric}, Δ {delta(self.mean_delta, digits(c.metric))}, n={n}, {self.verdict}"
                + (f"; {said})" if said else ")"))

    def row(self) -> dict:
        """metric, means, mean_delta, n_pairs, the judgement's columns, paired, timing_group, the seconds' notes
        and the test columns: compare.METRIC_COLUMNS' values; then what an inconclusive verdict still needs, in the
        plan's words (plan.NEEDS_COLUMNS: the views say it beside the verdict; no CSV has them)."""
        m = self.measurement
        row = {"metric": self.metric, "selection_mean": m.selection_mean, "baseline_mean": m.baseline_mean,
               "n_pairs": m.n_pairs, "mean_delta": m.estimate.mean, **self.judgement.row(),
               "paired": self.contrast.paired, "timing_group": m.timing_group, "timing_note": m.timing_note,
               "work_note": m.work_note, **m.test, **m.spread}
        return {**row, **plan.said(row)}

    def record(self) -> dict:
        """A flat row for a long DataFrame (MLflow's search_runs shape): both configs' fields as
        `selection.<field>` / `baseline.<field>`, then row()."""
        sides = {f"{side}.{name}": value for side, cfg in (("selection", self.contrast.selection),
                                                           ("baseline", self.contrast.baseline))
                 for name, value in asdict(cfg).items() if name != "seed"}
        return {"selection": self.contrast.selection.label(), "baseline": self.contrast.baseline.label(),
                "train_rows": self.contrast.selection.train_rows, **sides, **self.row()}
