"""Seconds that mean one thing: the timing group a view's seconds mean is taken over, never pooled.

Wall seconds compare only within one timing group (vitcore.store.index.timing_group: the same code,
threads, concurrent workers and compile mode). A group with a context — "replaced" (retrained by a backfill
on a shared machine), "overlapped" (another session trained in the store meanwhile), "busy" (the recorded
load average exceeded the cores) — was timed under load nobody chose. The *reference* group of a set of
runs is the dedicated timing set's ("reference", vitcore.analysis.timing) if there is one, else the clean
group (no context) with the most runs, and a context group only when nothing else exists. Every view that
shows a seconds mean, and every paired seconds Δ, takes its group from here.

A seconds Δ gets a verdict only where its timing was a design (`timing_note`): TIMED_PAIRS or more pairs of the two
configs timed interleaved in one group (the timing set's A B, B A order, each run on a quiet machine). Runs timed one
after another by a sweep measure the machine's load as much as the model: 2 such pairs once read "better by 11 s"
between configs of the same counted work. Where the counted work is the same (`work_note`), every view says so.
"""

from __future__ import annotations

import pandas as pd

from vitcore.config.run import RunConfig
from vitcore.model.work import macs
from vitcore.stats.estimates import TIMED_PAIRS

CONTEXTS = ("replaced", "overlapped", "busy")  # the suffixes of groups timed under load nobody chose
REFERENCE = "reference"  # the dedicated timing set's context
# The contexts of groups whose configs were timed interleaved, pair by pair (A B, B A, …): a drift of the machine's
# speed falls on both sides alike. The timing set only today; a sweep that interleaves would record its own.
INTERLEAVED = (REFERENCE,)
NOTE_COLUMNS = ["timing_note", "work_note"]  # a seconds row's words: why no verdict; the counted work is the same
TIMING_SET = "`python -m vitcore bench-timing`"  # the command that times the dedicated timing set


def context(group: str) -> str:
    """The context suffix of a timing group ('' for a clean group)."""
    last = str(group).rsplit("/", 1)[-1]
    return last if last in CONTEXTS + (REFERENCE,) else ""


def rank(group: str) -> int:
    """0 for the dedicated timing set, 1 for a clean group, 2 for a group timed under load nobody chose."""
    return {REFERENCE: 0, "": 1}.get(context(group), 2)


def ranked_groups(runs: pd.DataFrame) -> list[str]:
    """The runs' timing groups, best basis first: the dedicated timing set, then clean groups, then groups
    timed under load; within each, the one with most runs first (ties by name)."""
    if runs is None or runs.empty or "timing_group" not in runs.columns:
        return []
    counts = runs["timing_group"].value_counts()
    return sorted(counts.index, key=lambda g: (rank(g), -counts[g], g))


def reference_group(runs: pd.DataFrame) -> str:
    """The timing group a view's seconds come from ('' when the runs have none)."""
    ranked = ranked_groups(runs)
    return ranked[0] if ranked else ""


def one_group(runs: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """(the runs of the reference group, that group): what a seconds mean is taken over."""
    group = reference_group(runs)
    if not group:
        return runs, ""
    return runs[runs["timing_group"] == group], group


def with_timing_set(runs: pd.DataFrame, timing: pd.DataFrame | None) -> pd.DataFrame:
    """`runs` and the dedicated timing set's runs of the same configs (vitcore.study.Study.timing): what a seconds
    mean is taken over, the timing set's group first (`reference_group`). Never for an accuracy: the timing
    set repeats the store's configs and random seeds."""
    if timing is None or timing.empty or runs is None or runs.empty or "config_id" not in runs.columns:
        return runs
    return pd.concat([runs, timing[timing["config_id"].isin(runs["config_id"].unique())]], ignore_index=True)


def seconds_summary(runs: pd.DataFrame) -> dict:
    """mean, std and n of seconds over the reference group's runs, and the group."""
    part, group = one_group(runs)
    seconds = part["seconds"] if "seconds" in part.columns else pd.Series(dtype=float)
    return {"mean": seconds.mean() if len(seconds) else float("nan"),
            "std": seconds.std() if len(seconds) > 1 else float("nan"), "n": len(seconds), "group": group}


def group_text(group: str) -> str:
    """What a group's context means, in words ('' for a clean group)."""
    return {"replaced": "retrained by a backfill on a machine shared with other work",
            "overlapped": "another session trained in the same store meanwhile",
            "busy": "the machine's recorded load exceeded its cores",
            REFERENCE: "the dedicated timing set: interleaved pairs, each started on a quiet machine",
            "": "timed without a known disturbance (load not recorded before this field existed)"}[context(group)]


def interleaved(group: str) -> bool:
    """Whether a timing group's runs were timed as a design: the configs alternated pair by pair (INTERLEAVED)."""
    return context(group) in INTERLEAVED


def timing_note(group: str, n_pairs: int, paired: bool = True) -> str:
    """Why a seconds Δ over `n_pairs` pairs timed in `group` gets no verdict, in words ('' when it may: TIMED_PAIRS
    or more pairs of a group timed interleaved). `paired` False: the two sides share no random seed."""
    need = (f"a seconds verdict needs {TIMED_PAIRS} pairs timed interleaved on a quiet machine, as the timing set "
            f"({TIMING_SET}) times its configs")
    pairs = f"{n_pairs} pair{'s' if n_pairs != 1 else ''}"
    if not paired:
        return f"the two sides were trained at different rows, so no pair of runs was timed together; {need}"
    if not group or n_pairs == 0:
        return f"no pair of their runs was timed alike without load; {need}"
    if not interleaved(group):
        return f"its {pairs} {'were' if n_pairs != 1 else 'was'} timed one run after another, not interleaved; {need}"
    if n_pairs < TIMED_PAIRS:
        return f"only {pairs} timed interleaved; {need}"
    return ""


def work_note(selection: RunConfig, baseline: RunConfig) -> str:
    """'the counted work is the same (…)' when both configs count the same multiply-adds per image (vitcore.model.work)
    at the same rows and epochs, else '': their seconds Δ then measures work nobody counted (norms, softmax,
    element-wise steps) or the machine, never a bigger model."""
    if (macs(selection), selection.train_rows, selection.epochs) != (macs(baseline), baseline.train_rows,
                                                                      baseline.epochs):
        return ""
    return (f"the counted work is the same ({macs(selection):,} multiply-adds per image, the same rows and epochs): "
            "a seconds Δ between them is uncounted element-wise work or the machine")


def notes(metric: str, group: str, n_pairs: int, configs: tuple[RunConfig, RunConfig] | None = None,
          paired: bool = True) -> dict:
    """NOTE_COLUMNS of one Δ over `n_pairs` pairs timed in `group`: for seconds, timing_note, and work_note when
    the two `configs` are known; '' for every other metric."""
    if metric != "seconds":
        return dict.fromkeys(NOTE_COLUMNS, "")
    return {"timing_note": timing_note(group, n_pairs, paired), "work_note": work_note(*configs) if configs else ""}
