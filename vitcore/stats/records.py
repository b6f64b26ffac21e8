"""Typed results: what is compared (a Contrast), what the runs measure (a Measurement, margin-free) and what
the two tests say at one margin (a Judgement). A Verdict holds all three and gives the row every CSV prints.

The margin is applied last: a Measurement (pairs, means, the estimate with the test set's sampling) is
computed once per contrast and metric, and judged at any number of margins (vitcore.study.Study caches
it). `Judgement.of` is the one place that turns `estimates.judge`'s dict into a record, so a column added
to judge() is one field here (tests/test_study.py checks the two agree). No pandas needed to read them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from vitcore.config.run import RunConfig
from vitcore.stats.estimates import JUDGEMENT_COLUMNS, RESOLVED, Estimate, judge
from vitcore.stats.families import ALONE, Family


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
    comparable: bool = True  # False: seconds with fewer than 2 pairs in one timing group
    test: dict = field(default_factory=dict, compare=False)
    pairs: object = field(default=None, repr=False, compare=False)  # pandas.DataFrame

    @property
    def n_pairs(self) -> int:
        return self.estimate.n if self.contrast.paired else 0

    def judged(self, margin: float) -> Verdict:
        """Both tests at `margin`, adjusted in the contrast's family: the cheap last step."""
        family = self.contrast.family if self.contrast.paired else ALONE
        row = judge(self.contrast.metric, self.estimate, margin, family.name, family.size, self.comparable)
        return Verdict(self.contrast, self, Judgement.of(row))


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

    @classmethod
    def of(cls, row: dict) -> Judgement:
        """The one place judge()'s dict becomes a record: every field by name, nothing else."""
        return cls(**{f.name: row[f.name] for f in fields(cls)})

    def row(self) -> dict:
        return {name: getattr(self, name) for name in JUDGEMENT_COLUMNS}

    @property
    def resolved(self) -> bool:
        """The difference test resolves the direction (better/worse, higher/lower, or their 'slightly')."""
        return self.verdict in RESOLVED


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

    def row(self) -> dict:
        """metric, means, mean_delta, n_pairs, the judgement's columns, paired, timing_group and the test
        columns: compare.METRIC_COLUMNS' values."""
        m = self.measurement
        return {"metric": self.metric, "selection_mean": m.selection_mean, "baseline_mean": m.baseline_mean,
                "n_pairs": m.n_pairs, "mean_delta": m.estimate.mean, **self.judgement.row(),
                "paired": self.contrast.paired, "timing_group": m.timing_group, **m.test}

    def record(self) -> dict:
        """A flat row for a long DataFrame (MLflow's search_runs shape): both configs' fields as
        `selection.<field>` / `baseline.<field>`, then row()."""
        sides = {f"{side}.{name}": value for side, cfg in (("selection", self.contrast.selection),
                                                           ("baseline", self.contrast.baseline))
                 for name, value in asdict(cfg).items() if name != "seed"}
        return {"selection": self.contrast.selection.label(), "baseline": self.contrast.baseline.label(),
                "train_rows": self.contrast.selection.train_rows, **sides, **self.row()}
