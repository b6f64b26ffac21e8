"""Main effects and interactions before and after a margin: MeasuredEffects holds every row's estimate once
(vitcore.stats.summaries measures them), and judges them at any margin in their family — one per metric and
train_rows, sized by the default factorial's declared grid (declared_size), never by what is stored.
No TensorFlow."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pandas as pd

from vitcore.config import switches
from vitcore.config.run import SWITCHES
from vitcore.stats import readings, seconds
from vitcore.stats.estimates import JUDGEMENT_COLUMNS, MARGIN, Estimate, judge
from vitcore.stats.readings import READING_COLUMNS
from vitcore.stats.records import Measurement
from vitcore.stats.testset import TEST_COLUMNS

NOTES = seconds.NOTE_COLUMNS  # a seconds row's words: why it has no verdict, and that the counted work is the same


def declared_size(kind: str) -> int:
    """m of the default factorial's main effects (each grid switch's other grid levels: 5 today) or of its
    2-way interactions (products of those counts over switch pairs: 9), from the registry, not the store."""
    others = [len(switches.SWITCH[name].grid) - 1 for name in SWITCHES]
    return sum(others) if kind == "main effects" else sum(a * b for a, b in itertools.combinations(others, 2))


def in_grid(levels: dict) -> bool:
    """Whether every level of a contrast ({switch: level}) is one of its switch's grid levels."""
    return all(level in switches.SWITCH[name].grid for name, level in levels.items())


def judge_rows(frame: pd.DataFrame, estimates: list[tuple[Estimate, dict]], margin: float, kind: str,
            declared: list[bool], around: str = "") -> pd.DataFrame:
    """Judge every row (both tests, the verdict) within its family: `kind` of one metric at one
    train_rows ("main effects at 4,000 rows"; your own study's centre named: "main effects around ViT ...
    epochs 5 at 4,000 rows"), m = declared_size(kind) for the grid's contrasts (`declared`), a contrast at a
    level outside the grid alone."""
    families = [(f"{kind}{around} at {rows:,} rows", declared_size(kind)) if grid else
                (f"{kind}{around} at {rows:,} rows outside the default factorial (this contrast alone)", 1)
                for rows, grid in zip(frame["train_rows"], declared)]
    judged = []
    for metric, group, (est, columns), (name, size) in zip(frame["metric"], frame["timing_group"], estimates, families):
        said = seconds.notes(metric, group, est.n)  # an effect averages cells: no two configs' counted work to say
        verdict = judge(metric, est, margin, name, size, comparable=not said["timing_note"])
        judged.append({**verdict, **said, **columns, **readings.verdict_columns(metric, est, verdict, columns)})
    return pd.concat([frame.reset_index(drop=True),
                      pd.DataFrame(judged, columns=JUDGEMENT_COLUMNS + NOTES + TEST_COLUMNS + READING_COLUMNS)], axis=1)


@dataclass(frozen=True)
class MeasuredEffects:
    """Main effects or interactions before any margin (as records.Measurement is for one contrast): each row's
    key and numbers with what judges it — a grid contrast's (Estimate, its columns) and whether its level is in
    the declared grid, or a one-cell effect's Measurement. `judged(margin)` is the cheap last step, so the
    effects at three margins cost one set of estimates."""
    kind: str        # "main effects" or "interactions": the family's name
    columns: tuple   # EFFECT_COLUMNS or INTERACTION_COLUMNS
    entries: tuple   # (key: dict, Measurement | (Estimate, columns), in the declared grid: bool)
    around: str = ""  # the centre of your own study, in the family's name (summaries.around): "" for the article's

    def judged(self, margin: float = MARGIN) -> pd.DataFrame:
        """Every row judged at `margin`: a grid contrast in its family (judge_rows), a one-cell effect as the
        single-switch change it is."""
        if not self.entries:
            return pd.DataFrame(columns=list(self.columns))
        records = [dict(key) for key, _, _ in self.entries]
        pending = [k for k, (_, what, _) in enumerate(self.entries) if not isinstance(what, Measurement)]
        for record, (_, what, _) in zip(records, self.entries):
            if isinstance(what, Measurement):
                record.update(what.judged(margin).row())
        if pending:
            keys = pd.DataFrame([records[k] for k in pending])[["metric", "train_rows", "timing_group"]]
            judged = judge_rows(keys, [self.entries[k][1] for k in pending], margin, self.kind,
                             [self.entries[k][2] for k in pending], self.around)
            columns = JUDGEMENT_COLUMNS + NOTES + TEST_COLUMNS + READING_COLUMNS
            for k, verdict in zip(pending, judged[columns].to_dict("records")):
                records[k].update(verdict)
        return pd.DataFrame(records, columns=list(self.columns))
