"""The words every view says a judged Δ in: the verdict with its size and reason, the borderline marker, the
interval that goes with it, both tests' p-values and the readings (Δ in run sds, wins). One module, so the
Ablations cards, the shared tables, the Claims page and notebooks print one comparison the same way. Rows
are compare.METRIC_COLUMNS dicts (records.Verdict.row()). Plain strings: no Streamlit, no pandas.

The vocabulary below (verdict words, the margin and its reason, metric lists, column names) is the statistics'
own, imported here once: the app's modules and pages take it from the study layer, never from vitcore.stats or
vitcore.analysis, so what a page says is what the Study's rows say. The helpers at the end word a row, a frame or
a config the Study handed out (a timing group's context, a flip report's paragraph, a config as `--base` takes it).
"""

from __future__ import annotations

import numpy as np

from vitcore.analysis import attention, bn, flips
from vitcore.analysis.noise import INTERACTIONS as NOISE_INTERACTIONS  # noqa: F401 (the vocabulary)
from vitcore.analysis.scaling import CURVE_METRICS, VARIANT  # noqa: F401 (the vocabulary)
from vitcore.config.metrics import metric
from vitcore.config.numbers import ci, missing, number, p_value
from vitcore.config.run import RunConfig
from vitcore.stats import centres, percell, plan, readings, seconds, summaries
from vitcore.stats import estimates as v
from vitcore.stats.estimates import (  # noqa: F401 (the vocabulary: every verdict word, the margin and why)
    ALPHA,
    BETTER,
    DEFINITIONS,
    EQUIVALENT,
    HIGHER,
    INCONCLUSIVE,
    LOWER,
    MARGIN,
    MARGIN_REASON,
    METRICS,
    MIN_PAIRS,
    NOT_COMPARABLE,
    RESOLVED,
    SLIGHTLY_BETTER,
    SLIGHTLY_HIGHER,
    SLIGHTLY_LOWER,
    SLIGHTLY_WORSE,
    TOO_FEW,
    VERDICTS,
    WORSE,
)
from vitcore.stats.percell import ALL as ALL_CELLS  # noqa: F401 (the vocabulary)
from vitcore.stats.percell import EFFECT_KEY, LAYER_NORM, NO_COLLAPSE  # noqa: F401 (the vocabulary)
from vitcore.stats.percell import SUBSETS as CELL_SUBSETS  # noqa: F401 (the vocabulary)
from vitcore.stats.plan import DECIDED  # noqa: F401 (the vocabulary)
from vitcore.stats.plan_report import NOT_PROVEN, OUTCOMES, REWRITE  # noqa: F401 (the vocabulary)
from vitcore.stats.readings import DEFINITIONS as READING_DEFINITIONS  # noqa: F401 (the vocabulary)
from vitcore.stats.readings import SIZE_BEYOND, SIZE_INSIDE, SIZE_OPEN  # noqa: F401 (the vocabulary)
from vitcore.stats.replication import POOLED_NOTE  # noqa: F401 (the vocabulary)
from vitcore.stats.seconds import REFERENCE as TIMING_REFERENCE  # noqa: F401 (the vocabulary)
from vitcore.stats.testset import WITH_TEST  # noqa: F401 (the vocabulary)

BROKEN, FLIP_DIRECTIONS, FLIP_MIN_PAIRS = flips.BROKEN, flips.DIRECTIONS, flips.MIN_PAIRS  # the flipped images' words
SEEN = plan.SEEN  # a planned verdict decided on random seeds seen before its plan


def seed_list(seeds) -> str:
    """Random seeds as a header names them (the Ablations page's, `compare`'s): a run of four or more consecutive
    ones as 'first–last' ('0–19, 1000–1039', not 60 numbers: listed one by one they took five lines above the cards
    at the planned rows and pushed the cards' verdicts below the fold)."""
    runs: list[list[int]] = []
    for seed in sorted(map(int, seeds)):
        if runs and seed == runs[-1][-1] + 1:
            runs[-1].append(seed)
        else:
            runs.append([seed])
    return ", ".join(f"{run[0]}–{run[-1]}" if len(run) >= 4 else ", ".join(map(str, run)) for run in runs)


def needs(row) -> str:
    """'needs 41 paired random seeds for 80% assurance (31 more), as a new look, …' for an inconclusive row, or a
    planned comparison's next look ('look 2 of 4 at 20 paired random seeds (10 more)'), as the CLI says it; a count
    from fewer than MIN_PAIRS pairs says it is a guess. The Study hands it out with the verdict (its `needs`, in the
    plan's words: vitcore.stats.plan.said); '' for a row that needs nothing more."""
    said = row.get("needs")
    return said if isinstance(said, str) else ""


def borderline(row) -> bool:
    """Whether the row's verdict is borderline (vitcore.stats.readings); False where the row has no such column."""
    flag = row.get("borderline")
    return isinstance(flag, (bool, np.bool_)) and bool(flag)


def marked(row) -> str:
    """The verdict word with the borderline marker: 'equivalent · borderline'."""
    return f"{row['verdict']}{BORDERLINE if borderline(row) else ''}"


BORDERLINE = " · borderline"


def verdict_text(row, margin: float = v.MARGIN, short: bool = False) -> str:
    """The verdict in words a card can carry, with its size against the margin and the borderline marker:
    'worse — beyond ±0.01', 'better — size undetermined (may be inside ±0.01)', 'equivalent — within ±0.01 ·
    borderline', 'inconclusive — needs 41 …'. `short`: the forest plot's line, which must fit a 400-px
    screen ('better — size undetermined', 'inconclusive — 10 more random seeds as a new look'); the card says the rest
    (a seconds row's: why it is not comparable, and that the counted work is the same)."""
    verdict, limit = row["verdict"], f"±{number(v.margin_for(row['metric'], margin), 3)}"
    size = row.get("size")
    if verdict == v.INCONCLUSIVE:  # with what it still needs, handed out with it (plan.said)
        said = row.get("needs_short" if short else "needs")
        text = f"{verdict} — {said}" if isinstance(said, str) and said else verdict
    elif verdict == v.EQUIVALENT or verdict in v.INSIDE:
        text = f"{verdict} — within {limit}"
    elif verdict in v.BEYOND and size == readings.SIZE_BEYOND:
        text = f"{verdict} — beyond {limit}"
    elif verdict in v.BEYOND and size == readings.SIZE_OPEN:
        text = f"{verdict} — size undetermined" + ("" if short else f" (may be inside {limit})")
    elif verdict == v.NOT_COMPARABLE and not short and _said(row, "timing_note"):
        text = f"{verdict} — {row['timing_note']}"  # why: vitcore.stats.seconds.timing_note
    else:
        text = verdict
    return text + (BORDERLINE if borderline(row) else "") + work_mark(row, short) + plan_marks(row, short)


def _said(row, column: str) -> bool:
    return isinstance(row.get(column), str) and bool(row[column])


def work_mark(row, short: bool = False) -> str:
    """What a seconds verdict between configs of the same counted work adds, on every view ('' otherwise): a Δ in
    seconds between them is not a bigger model's (vitcore.stats.seconds.work_note)."""
    if not _said(row, "work_note"):
        return ""
    return " · same counted work" if short else f" · {row['work_note']}"


def plan_marks(row, short: bool = False) -> str:
    """What every view adds to a planned verdict: that it was decided on random seeds seen before its plan, and
    what a confirmation on fresh random seeds says ('' for neither)."""
    text = ""
    if seen(row):
        text += SEEN_MARK if short else f" · {SEEN}"
    said = row.get("discovery")
    if isinstance(said, str) and said and not short:  # `short` (the forest plot): its caption counts them
        text += f" · {said}"
    return text


# the forest plot's mark (it must fit 400 px) of a verdict decided on random seeds seen before its plan
SEEN_MARK = " †"

# Where a verdict comes from, in one word a row can carry at 400 px (its `verdict_from` says it in full):
BLIND, BLIND_UNPROVEN, SEEN_SOURCE, FIXED = "blind", "blind (order not proven)", "seen", "fixed sample"


def source(row) -> str:
    """Where a judged row's verdict comes from: BLIND (a plan registered before its runs, its order proven or the
    built-in plan's own), BLIND_UNPROVEN (git does not prove the order: a shallow clone, an uncommitted plan),
    SEEN_SOURCE (a plan's verdict on random seeds seen before it), FIXED (not in a plan), or an exploratory margin's
    own words ('exploratory at ±0.02 …'): read from the row's `verdict_from` (vitcore.study.lead's words), else from
    its plan columns."""
    said = str(row.get("verdict_from") or "")
    plan_text = str(row.get("plan") or "")
    if said.startswith("exploratory") or (not said and plan_text.startswith("exploratory")):
        return said or plan_text
    if said.startswith("plan "):
        state = said.split(", ")[1] if ", " in said else ""
        return SEEN_SOURCE if state == SEEN_SOURCE else BLIND_UNPROVEN if NOT_PROVEN in said else BLIND
    if said or not plan.planned(row):
        return FIXED
    return SEEN_SOURCE if seen(row) else BLIND


def source_text(row) -> str:
    """The source and, for a confirmed question, its replication outcome: 'blind · replicated', 'seen',
    'fixed sample' (the forest plot's third line, the cards' verdict line)."""
    said = row.get("replication")
    return source(row) + (f" · {said}" if isinstance(said, str) and said else "")


def seen(row) -> bool:
    """Whether a planned verdict was decided on random seeds seen before its plan (the row's seen_before_plan)."""
    flag = row.get("seen_before_plan")
    return isinstance(flag, (bool, np.bool_)) and bool(flag)


def readings_text(row, places: int) -> str | None:
    """'Δ = 1.68 run sds · wins 10 of 10 random seeds (95% 0.69–1.00)': the standardised effect and the
    paired win rate (vitcore.stats.readings), or None when neither is measured."""
    parts = []
    if not missing(row.get("delta_in_run_sd")):
        parts.append(f"Δ = {row['delta_in_run_sd']:+.2f} run sds (run sd {number(row['run_sd'], places)})")
    if not missing(row.get("win_rate")):
        wins = f"{row['wins']:g}"
        parts.append(f"wins {wins} of {int(row['n_pairs'])} random seeds "
                     f"(95% {row['win_low']:.2f}–{row['win_high']:.2f})")
    return " · ".join(parts) or None


def flips_text(row) -> str | None:
    """What would flip a borderline verdict, or None."""
    return f"borderline: {row['flips']}" if borderline(row) and isinstance(row.get("flips"), str) else None


TOO_FEW_TO_BOUND = "too few random seeds to bound this"


def _few(row) -> bool:
    n = row.get("n_pairs")
    return bool(row.get("paired", True)) and not missing(n) and int(n) < MIN_PAIRS


def unbounded(row) -> str | None:
    """Why the verdict's interval bounds nothing, or None: fewer than MIN_PAIRS paired random seeds, or an interval
    reaching past every Δ the metric can take (Metric.bound: an accuracy's Δ lies within ±1). Every view then says
    TOO_FEW_TO_BOUND instead of its numbers; the CSVs keep the numbers. A verdict decided on fewer pairs (an
    equivalence at 2 pairs) read an interval all the same: that interval is shown, never TOO_FEW_TO_BOUND beside it."""
    if _few(row) and not _bounded_verdict(row):
        n = int(row["n_pairs"])
        return f"{n} pair{'' if n == 1 else 's'}; an interval needs at least {MIN_PAIRS}"
    _, (low, high), _ = _interval(row)
    bound = metric(row["metric"]).bound
    if bound is not None and not missing(low) and not missing(high) and max(abs(low), abs(high)) > bound:
        return f"it reaches past ±{bound:g}, more than any Δ of {row['metric']} can be"
    return None


def _bounded_verdict(row) -> bool:
    """Whether a row's verdict was decided (equivalent or resolved) on an interval with both ends."""
    if row.get("verdict") != v.EQUIVALENT and row.get("verdict") not in v.RESOLVED:
        return False
    _, (low, high), (low90, high90) = _interval(row)
    return not any(missing(x) or not np.isfinite(x) for x in (low, high, low90, high90))


def reads_ninety(row) -> bool:
    """Whether the verdict is read from the 90% interval alone: "equivalent" (its equivalence test: the 90% interval
    inside ±margin; the 95% one may pass the margin). Every view then shows the 90% one beside it and says so."""
    return row.get("verdict") == v.EQUIVALENT


def _ninety_kind(kind: str) -> str:
    """'95% CI, Bonferroni ×2' -> '90% CI, Bonferroni ×2'; 'repeated CI at look 2 of 4, ×14' -> '90% repeated CI …'."""
    return "90%" + kind[3:] if kind.startswith("95%") else f"90% {kind}"


Chosen = plan.Chosen  # the type `chosen` hands out


def chosen(row) -> Chosen:
    """The interval and tests that go with a row's verdict (vitcore.stats.plan.chosen, the one choice: simultaneous
    over a family of several, a planned row's repeated CI at its look, unadjusted before a plan's first look; over
    random seeds and test images where the verdict counts both): what every view, chart and CSV text shows beside it."""
    return plan.chosen(row)


def _interval(row) -> tuple[str, tuple, tuple]:
    """(which interval goes with the verdict, its 95% (low, high), its 90% (low, high)): `chosen`'s."""
    said = chosen(row)
    return said.kind, said.interval, said.ninety


def interval_text(row, places: int) -> str:
    """The interval that goes with the verdict (see _interval) in words, and the 90% one the equivalence test reads."""
    which, (low, high), (low90, high90) = _interval(row)
    if (why := unbounded(row)) is not None:
        return f"{which}: {TOO_FEW_TO_BOUND} ({why})"
    if reads_ninety(row):  # the equivalence test's interval first, named: the verdict reads it
        return (f"{_ninety_kind(which)} {ci(low90, high90, places, none='n/a')} · 95% "
                f"{ci(low, high, places, none='no interval')}")
    return (f"{which} {ci(low, high, places, none='no interval')} · 90% "
            f"{ci(low90, high90, places, none='n/a')}")


def verdict_interval(row, places: int, none: str = "no interval", ninety: bool = False,
                     one_seed: str | None = None) -> str:
    """Just the interval the verdict is read from, '[-0.0560, -0.0324]' (interval_kind says which it is: the 90% one
    beside "equivalent", reads_ninety), or the 90% one the equivalence test reads (`ninety`): what a narrow table (and
    the CLI's line) shows beside the verdict; TOO_FEW_TO_BOUND where it bounds nothing (unbounded), `one_seed` (when
    given) for a single pair."""
    if one_seed is not None and row["n_pairs"] < 2:
        return one_seed
    if unbounded(row) is not None:
        return TOO_FEW_TO_BOUND
    _, (low, high), (low90, high90) = _interval(row)
    if ninety or reads_ninety(row):
        return ci(low90, high90, places, none="n/a")
    return ci(low, high, places, none=none)


def interval_kind(row) -> str:
    """Which interval verdict_interval gives ('95% CI, Bonferroni ×2 over random seeds and test images'; '90% CI, …'
    beside "equivalent")."""
    kind = _interval(row)[0]
    return _ninety_kind(kind) if reads_ninety(row) else kind


INTERVAL_HELP = ("The interval the verdict reads: the 95% one (simultaneous over its family, a plan's repeated one at "
                 "its look), or beside \"equivalent\" the 90% one its equivalence test reads; the next columns say "
                 "which.")


def interval_short(row) -> str:
    """verdict_interval's name as the CLI's line says it: 'RCI look 2/4', '95% ×3', '90% ×3' beside "equivalent"."""
    short = chosen(row).short
    return _ninety_kind(short) if reads_ninety(row) else short


def tests_text(row, sep: str = " · ") -> str:
    """Both tests' p-values (`chosen`'s: adjusted when the verdict's interval is), 'p_adj 0.0312 · p_tost_adj 0.41';
    '' for a row without a test."""
    if missing(row.get("p_value")):
        return ""
    return tests_line(row, sep)


def tests_line(row, sep: str = " · ") -> str:
    """`chosen`'s two p-values with their names, '—' for a missing one: the CLI's line says them whatever they are."""
    return sep.join(f"{name} {p_value(p)}" for name, p in chosen(row).tests)


# -- words of what the Study handed out: a row's direction, a timing group, a report, a config ----------------------
def planned(row) -> bool:
    """Whether a judged row is judged by its plan (its intervals are the plan's repeated confidence intervals)."""
    return plan.planned(row)


def direction(metric_name: str, positive: bool, inside: bool) -> str:
    """The resolved word for a Δ of this sign on this metric (estimates.direction): better / worse, higher / lower
    for a metric without a direction, 'slightly …' when the equivalence test also puts it inside the margin."""
    return v.direction(metric_name, positive, inside)


def timing_context(group: str) -> str:
    """The context suffix of a timing group ('reference', 'busy', …; '' for a clean group)."""
    return seconds.context(group)


def group_text(group: str) -> str:
    """What a timing group's context means, in words ('' context: timed without a known disturbance)."""
    return seconds.group_text(group)


def flip_summary(report) -> str:
    """A flip report's counts against their nulls, in one paragraph (the gallery's caption, as `compare` prints)."""
    return flips.summary(report)


def bn_text(diagnosis) -> str:
    """The measured explanation of the BatchNorm ViTs' collapse, in markdown, from the diagnosis frame alone."""
    return bn.explain(diagnosis)


def changed_sentence(everything, subset, name: str, names: dict | None = None) -> str | None:
    """Which verdicts of the all-cells effects `everything` change over the cells `name` (`subset`: the effects
    over those cells), in one sentence, or None when none changes (percell.changed_verdicts / changed_sentence)."""
    return percell.changed_sentence(percell.changed_verdicts(everything, subset), name, names)


def config_of_row(row) -> RunConfig:
    """The seed-0 RunConfig a row of the Study's runs table names."""
    return centres.config_of_row(row)


def changes_text(cfg: RunConfig) -> str:
    """cfg as `--baseline` / `--base` take it: 'epochs=2' ('' for the article's ViT at any rows)."""
    return centres.changes_text(cfg)


def effects_centre(base: RunConfig | None) -> RunConfig | None:
    """`base` as a centre of effects (its rows and random seed not used), or None for the article's ViT."""
    return summaries.centre(base)


def train_command(cfg: RunConfig) -> str:
    """The shell command that trains (and keeps the weights of) cfg's seed-0 run."""
    return attention.train_command(cfg)
