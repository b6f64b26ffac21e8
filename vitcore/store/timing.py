"""A run's timing basis (summary.json's "timing"): what makes its wall seconds comparable with another run's.

`timing_problem` says what is wrong with a recorded basis (vitcore.store.validate); `timing_group` is the
string runs must share to compare in seconds (RunStore.table's `timing_group`); `busy` marks a run timed
while the machine had more runnable work than cores. Which group a view's seconds mean uses is
vitcore.stats.seconds'.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from functools import lru_cache

# Why a run's seconds may not compare with its group's: "replaced" (a backfill's retrain), "overlapped" (another
# session trained in its store: vitcore.run.overlap), "reference" (the timing set: vitcore.analysis.timing).
TIMING_CONTEXTS = ("", "replaced", "overlapped", "reference")
NODE_KIND = re.compile(r"[ -~]{1,100}")  # timing.node of a run trained on a Ray node (vitcore.run.cluster)
LOAD_FIELDS = ("loadavg_start", "loadavg_end", "cpu_per_wall", "cores")  # timing.load (new runs; optional)
COMPILE_MODES = ("fresh", "reused", "cached")  # cached: loaded from vitcore.run.compile_cache
# summary.json's "trained_at": when the run was trained, UTC to the second (runs from before it was recorded have none:
# trained at an unrecorded time, before every registered plan but the built-in one's history says so).
TRAINED_AT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def trained_at(value) -> datetime | None:
    """A summary's trained_at as an aware UTC datetime; None when absent. ValueError when malformed."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) != 20:
        raise ValueError(f"trained_at {value!r} (allowed: UTC as YYYY-MM-DDTHH:MM:SSZ)")
    return _parsed(value)


@lru_cache(maxsize=8192)
def _parsed(value: str) -> datetime:
    """trained_at's parse, once per string (a plan's registered_at is read for every run it judges)."""
    try:
        return datetime.strptime(value, TRAINED_AT_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        raise ValueError(f"trained_at {value!r} (allowed: UTC as YYYY-MM-DDTHH:MM:SSZ)") from None


def now_utc() -> str:
    """The current time as summary.json's trained_at (and a plan's registered_at) writes it."""
    return datetime.now(timezone.utc).strftime(TRAINED_AT_FORMAT)


def load_ok(load) -> bool:
    """timing.load holds exactly LOAD_FIELDS, finite numbers >= 0, cores a whole number >= 1."""
    return (isinstance(load, dict) and set(load) == set(LOAD_FIELDS)
            and all(type(load[k]) in (int, float) and math.isfinite(load[k]) and load[k] >= 0 for k in LOAD_FIELDS)
            and type(load["cores"]) is int and load["cores"] >= 1)


def timing_problem(timing) -> str | None:
    """What is wrong with a summary's "timing" (None: absent, from before it was recorded, or valid)."""
    if timing is None or (isinstance(timing, dict)
                          and set(timing) - {"context", "node", "load"} == {"code", "threads", "workers", "compile"}
                          and ("load" not in timing or load_ok(timing["load"]))
                          and all(type(timing[k]) is int and timing[k] >= 1 for k in ("code", "threads", "workers"))
                          and timing["compile"] in COMPILE_MODES
                          and timing.get("context", TIMING_CONTEXTS[0]) in TIMING_CONTEXTS
                          and NODE_KIND.fullmatch(str(timing.get("node", "-")))):
        return None
    return (f"timing {timing!r} (allowed: code, threads, workers >= 1, compile {'|'.join(COMPILE_MODES)}, "
            f"and an optional context {'|'.join(TIMING_CONTEXTS[1:])}, node kind (a Ray node: printable, "
            f"1-100 characters) and load {', '.join(LOAD_FIELDS)} >= 0)")


def busy(load: dict | None) -> bool:
    """A run timed on a busy machine: the 1-minute load average at its start or end exceeded the cores
    (more runnable work than the machine runs at once, so the run waited). Runs without a recorded load
    (all before it was recorded) are not judged."""
    return bool(load) and max(load["loadavg_start"], load["loadavg_end"]) > load["cores"]


def timing_group(summary: dict) -> str:
    """Runs whose wall seconds compare: equal strings were timed by the same code, threads, workers
    and compile mode (and node kind, for a run trained on a Ray node; and context: a replaced run, timed on another
    occasion, is its own group; so is a run timed on a busy machine, by its recorded load — `busy`). Summaries
    without "timing" but with "threads" came from the one-launch-per-epoch
    code in fresh processes of 2-worker sweeps; summaries with neither from the one-launch-per-step code."""
    timing = summary.get("timing")
    if timing is not None:
        group = f"v{timing['code']}/threads{timing['threads']}/workers{timing['workers']}/{timing['compile']}"
        group += f"/node {timing['node']}" if timing.get("node") else ""  # a Ray node's kind (vitcore.run.cluster)
        group += f"/{timing['context']}" if timing.get("context") else ""
        return group + ("/busy" if busy(timing.get("load")) else "")
    if "threads" in summary:
        return f"v2/threads{summary['threads']}/workers2/fresh"
    return "v1/legacy"
