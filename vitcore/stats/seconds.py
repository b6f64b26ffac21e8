"""Seconds that mean one thing: the timing group a view's seconds mean is taken over, never pooled.

Wall seconds compare only within one timing group (vitcore.store.index.timing_group: the same code,
threads, concurrent workers and compile mode). A group with a context — "replaced" (retrained by a backfill
on a shared machine), "overlapped" (another session trained in the store meanwhile), "busy" (the recorded
load average exceeded the cores) — was timed under load nobody chose. The *reference* group of a set of
runs is the dedicated timing set's ("reference", vitcore.analysis.timing) if there is one, else the clean
group (no context) with the most runs, and a context group only when nothing else exists. Every view that
shows a seconds mean, and every paired seconds Δ, takes its group from here.
"""

from __future__ import annotations

import pandas as pd

CONTEXTS = ("replaced", "overlapped", "busy")  # the suffixes of groups timed under load nobody chose
REFERENCE = "reference"  # the dedicated timing set's context


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
    return pd.concat([runs, timing[timing["config_id"].isin(runs["config_id"])]], ignore_index=True)


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


