"""What the pages show, as plain rows, frames and sentences built from library results.

The statistics come from the Study (vitcore.study) and its words (vitcore.study.words); this module only
picks, labels and formats them (through vitcore.app.fmt). No Streamlit and no TensorFlow, so the pages
stay a description of the UI and this is unit-tested directly.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from vitcore.app import fmt, state
from vitcore.app.selection import BASELINE, cell_name
from vitcore.article import sources as article
from vitcore.config.run import RunConfig
from vitcore.config.switches import REGISTRY, change
from vitcore.study.words import (
    BROKEN,
    MARGIN,
    SEEN_MARK,
    TIMING_REFERENCE,
    borderline,
    group_text,
    interval_kind,
    marked,
    seen,
    source_text,
    timing_context,
    verdict_interval,
    verdict_text,
    work_mark,
)


def curve_roles(selected: pd.DataFrame, base: pd.DataFrame, cfg: RunConfig,
                baseline: RunConfig) -> tuple[dict[str, str], list[str]]:
    """(run_id -> legend name, the legend order: selection first) for the learning curves."""
    roles = {run_id: "baseline: " + cell_name(baseline) for run_id in base["run_id"]}
    roles.update({run_id: "selection: " + cell_name(cfg) for run_id in selected["run_id"]})
    order = list(dict.fromkeys(roles[r] for r in [*selected["run_id"], *base["run_id"]]))
    return roles, order


# What every Δ reads beside its verdict (vitcore.stats.readings), carried into the charts' data and tooltips; the
# size word is the dot's fill there (SIZE_FILL), so "better" of open size never looks like "better" beyond ±margin.
READING_FIELDS = ["size", "delta_in_run_sd", "win_rate", "win_low", "win_high", "wins_text", "borderline", "flips"]
SIZE_FILL = "filled dot: the interval lies beyond ±margin; hollow: inside it or size undetermined"


def with_readings(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with READING_FIELDS (blank where a caller's frame has none), `borderline` a plain bool and
    `flips` only where borderline."""
    out = frame.assign(**{c: frame[c] if c in frame.columns else None for c in READING_FIELDS})
    flagged = pd.Series([borderline(row) for row in out[["borderline"]].to_dict("records")], index=out.index,
                        dtype=bool)
    wins = [None if fmt.missing(r["win_rate"]) else f"{r['wins']:g} of {int(r['n_pairs'])} random seeds (95% "
            f"{r['win_low']:.2f}–{r['win_high']:.2f})" for r in out.assign(wins=out.get("wins")).to_dict("records")]
    return out.assign(flips=out["flips"].where(flagged, None), borderline=flagged, wins_text=wins)


SWITCH_NAMES = {switch.name: switch.noun for switch in REGISTRY}  # 'position embedding'; effect labels


def flip_frame(flips: pd.DataFrame, metric: str, margin: float = MARGIN) -> pd.DataFrame:
    """stats.flip_effects rows of one metric, with `label` ('patch size 7 → 4'), the verdict in words
    (`verdict_text`) and `option` (what the landing page's "select this variant" offers)."""
    part = flips[flips["metric"] == metric].reset_index(drop=True)
    labels = [change(s, a, b) for s, a, b in zip(part["switch"], part["from"], part["to"])]
    rows = [{**row, "paired": True} for row in part.to_dict("records")]
    words, short = [verdict_text(row, margin) for row in rows], [verdict_text(row, margin, short=True) for row in rows]
    return part.assign(label=labels, verdict_text=words, verdict_short=short, option=labels)


def flip_table(flips: pd.DataFrame, metric: str, margin: float = MARGIN) -> pd.DataFrame:
    """stats.flip_effects rows of one metric, readable, what a row is read by first (FLIP_WIDTHS: inside a 400-px
    screen): Change, Verdict (the word and its marks), Interval (the one the verdict is read from), Δ; then which
    interval it is, the 90% one, Pairs, where the verdict comes from (Source: blind / seen / fixed sample and a
    confirmed question's outcome), both adjusted p-values, the verdict in full, its readings, Family."""
    part = with_readings(flip_frame(flips, metric, margin))
    rows, places = part.to_dict("records"), fmt.digits(metric)
    return pd.DataFrame({
        "Change": [change(s, a, b) for s, a, b in zip(part["switch"], part["from"], part["to"])],
        "Verdict": [marked(row) + work_mark(row, short=True) + (SEEN_MARK if seen(row) else "") for row in rows],
        "Interval": [verdict_interval(row, places, one_seed="n/a (one seed)") for row in rows],
        "Δ": part["mean_delta"].astype(float),
        "Interval is": [interval_kind(row) for row in rows],
        "90% interval": [verdict_interval(row, places, ninety=True) for row in rows],
        "Pairs": part["n_pairs"].astype(int),
        "Source": [source_text(row) for row in rows],
        "p_adj": part["p_adj"].map(fmt.p_value),  # '< 0.0001', never '0'
        "p_tost_adj": part["p_tost_adj"].map(fmt.p_value),
        "Verdict in full": part["verdict_text"],
        **reading_columns(part),
        "Family (Bonferroni)": [f"{name} (m = {int(m)})" for name, m in zip(part["family"], part["family_size"])],
    })


# px per column of flip_table (the Ablations page's Flip one switch); a row 66 px tall wraps three lines
# (tables.ROW), so Change, Verdict and Interval fit a 400-px screen's 366-px frame and nothing of theirs is cut.
FLIP_WIDTHS = {"Change": 108, "Verdict": 116, "Interval": 82, "Δ": 64, "Interval is": 220, "90% interval": 82,
               "Pairs": 50, "Source": 180, "p_adj": 72, "p_tost_adj": 80, "Verdict in full": 560, "Size": 100,
               "Δ / run sd": 80, "Wins": 220, "Borderline": 220, "Family (Bonferroni)": 420}
ROW = 66  # px: Streamlit wraps a cell's text only in rows taller than 4rem; three lines fit


def families_text(frame: pd.DataFrame) -> str:
    """The Bonferroni families of a chart's rows, each with its m — the number of comparisons its correction counts
    (a switch's other levels, trained or not) — and how many of them the chart draws when that is fewer: 'position
    embedding (m = 2, 1 drawn); norm (m = 1)'. A suffix every family shares ('changes of ViT p7 … at 4,000 rows')
    is said once, in front."""
    sizes = frame.groupby("family", sort=False).agg(m=("family_size", "max"), drawn=("family", "size"))
    names = list(sizes.index)
    tails = {name.split(" changes of ", 1)[1] for name in names if " changes of " in name}
    common = len(tails) == 1 and all(" changes of " in name for name in names)
    parts = [f"{name.split(' changes of ')[0] if common else name} (m = {int(row.m)}"
             + (f", {int(row.drawn)} drawn" if row.drawn < row.m else "") + ")" for name, row in sizes.iterrows()]
    return (f"one per switch, its changes of {tails.pop()}: " if common else "") + "; ".join(parts)


def reading_columns(part: pd.DataFrame) -> dict:
    """A table's columns for what every Δ reads beside its verdict (part: with_readings' frame): Size (against
    ±margin), Δ / run sd, Wins (paired random seeds, exact 95%), Borderline (what would flip it)."""
    return {"Size": part["size"],
            "Δ / run sd": part["delta_in_run_sd"].map(lambda x: "" if fmt.missing(x) else f"{x:+.2f}"),
            **{name: part[column].map(lambda x: x if isinstance(x, str) else "")
               for name, column in (("Wins", "wins_text"), ("Borderline", "flips"))}}


def effect_frame(effects: pd.DataFrame, interaction: bool = False) -> pd.DataFrame:
    """Main effects or interactions with the chart's row label `effect`, `rows` ('4,000 rows') and
    `basis`: how many cells of the other switches entered ('one cell only' for patch 2: the `tokens`
    grid ran it at the article's other switches only, so it is not a factorial average)."""
    if interaction:
        label = (effects["factor"].map(SWITCH_NAMES) + " " + effects["level"].astype(str) + " × "
                 + effects["factor_b"].map(SWITCH_NAMES) + " " + effects["level_b"].astype(str))
    else:
        label = (effects["factor"].map(SWITCH_NAMES) + " " + effects["level"].astype(str) + " (vs "
                 + effects["reference"].astype(str) + ")")
    cells = effects["cells"] if "cells" in effects.columns else pd.Series(0, index=effects.index)
    single = cells == 1
    label = label.where(~single, label + " · one cell")
    basis = cells.map(lambda n: "one cell only" if n == 1 else "averaged over the grid's cells")
    names = ("level", "reference", "level_b", "reference_b")
    levels = {c: effects[c].astype(str) for c in names if c in effects.columns}
    # levels as text: patch sizes (int) beside norm names (str) are one column a chart's Arrow data cannot hold
    return effects.assign(effect=label, basis=basis, rows=effects["train_rows"].map(lambda r: f"{fmt.rows(r)} rows"),
                          **levels)


def single_cell_note(effects: pd.DataFrame, centre: str = "the article's") -> str | None:
    """Why a single-cell effect can disagree with the flip table, or None when there is none (`centre`: whose other
    switches that cell holds, e.g. "ViT p7 pre-LN pos epochs 2's" around your own study's centre)."""
    if "cells" not in effects.columns or not (effects["cells"] == 1).any():
        return None
    names = sorted({f"{SWITCH_NAMES[f]} {lvl}" for f, lvl in
                    effects.loc[effects["cells"] == 1, ["factor", "level"]].itertuples(index=False)})
    return (f"{', '.join(names)}: measured in one cell only ({centre} other switches), marked ◆ — a "
            "comparison of two configs, not an average over the grid. A main effect averages a level over every "
            "cell of the other switches, so it can differ in size and even in sign from the flip table, which "
            "changes one switch of one config.")
def flip_captions(flips: pd.DataFrame) -> list[str]:
    """Gallery captions for vitcore.analysis.flips.flip_report images: '#1234 Shirt → T-shirt/top · 9/10 pairs ·
    q 0.003' (true class → the class the wrong side chose; pairs flipped that way of the pairs)."""
    return [f"#{image} {true} → {predicted} · {wrong if way == BROKEN else right}/{n} pairs · q {q:.3f}"
            for image, true, predicted, way, wrong, right, n, q in
            flips[["image", "true_name", "predicted_name", "direction", "newly_wrong", "newly_right", "n_pairs",
                   "q_value"]].itertuples(index=False)]


def mcnemar_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """flips.flip_report's per-pair McNemar counts, readable: Rows, Random seed, Newly wrong, Newly right, p."""
    return pd.DataFrame({"Rows": pairs["train_rows"].map(fmt.rows), "Random seed": pairs["seed"].astype(int),
                         "Newly wrong": pairs["newly_wrong"].map(fmt.rows),
                         "Newly right": pairs["newly_right"].map(fmt.rows),
                         "p (McNemar)": pairs["p_value"].map(fmt.p_value)})


def headline_claim() -> str:
    """The source article's headline, written from vitcore.article.sources (never typed twice)."""
    def quoted(model: str, metric: str, rows: tuple[int, ...], signed: bool = False) -> str:
        return " / ".join(fmt.number(article.seed_value(model, r, metric), signed=signed) for r in rows)

    sizes = article.TRAIN_ROWS
    with_gap = tuple(r for r in sizes if not fmt.missing(article.seed_value("vit", r, "gap")))
    return (f"The source article (one random seed): ViT {quoted('vit', 'best_val_accuracy', sizes)} against convnet "
            f"{quoted('convnet', 'best_val_accuracy', sizes)} best val accuracy at "
            f"{' / '.join(map(fmt.rows, sizes))} rows — with a train-val gap of "
            f"{quoted('vit', 'gap', with_gap, True)} against {quoted('convnet', 'gap', with_gap, True)} at "
            f"{' / '.join(map(fmt.rows, with_gap))} rows.")


def cost_table(table: pd.DataFrame) -> pd.DataFrame:
    """Study.token_cost() as the source article prints it: 2,401 and 9.4×, 2,401.0×."""
    return pd.DataFrame({
        "Image": table["image"], "Patch": table["patch"], "Tokens": table["tokens"].map(fmt.rows),
        "Attention entries": table["attention_entries"].map(fmt.rows),
        "Relative to 16 tokens": table["relative"].map(fmt.times)})


def bench_sentences(bench: pd.DataFrame, fit: dict) -> list[str]:
    """What vitcore/analysis/attention_cost.csv says: the setup, the 16 -> 196 token ratio, the N² fit and slope
    (`fit`: vitcore.study.committed.attention_bench's a, b, r2 and slope)."""
    a, b, r2, slope = fit["a"], fit["b"], fit["r2"], fit["slope"]
    by_tokens = bench.set_index("tokens")["median_ms"]
    first = bench.iloc[0]
    sentences = [f"One MultiHeadAttention layer (width {int(first['width'])}, {int(first['heads'])} heads, batch "
                 f"{int(first['batch'])}), median of {int(first['repeats'])} timed calls on {first['machine']}."]
    if 16 in by_tokens and 196 in by_tokens:
        sentences.append(f"16 → 196 tokens: entries × {196 ** 2 / 16 ** 2:.1f}, measured time "
                         f"× **{by_tokens[196] / by_tokens[16]:.1f}**.")
    sentences.append(f"The fit time ≈ {a:.2f} ms + {b:.2e} ms × N² explains R² = {r2:.3f} of the variance; the "
                     f"log-log slope over N ≥ 100 is **{slope:.2f}** (2 = pure N², 1 = linear). At small N the "
                     "fixed cost of the projections and the call dominates, so 4 and 16 tokens cost about the "
                     "same — the source article's “negligible at 16 tokens”.")
    return sentences


COMPILE_WORDS = {"fresh": "compiled fresh for each run", "reused": "compiled once, reused across random seeds",
                 "cached": "compiled program loaded from the persistent compile cache"}


def timing_basis(group: str) -> str:
    """A timing_group ('v2/threads1/workers2/reused') in words."""
    parts = group.split("/")
    if parts[0] == "v1":
        return "training code v1 (one XLA launch per step; threads and concurrent workers not recorded)"
    words = [f"training code {parts[0]} (one XLA launch per epoch"
             + ("; the epoch loop lowered once)" if parts[0] not in ("v2",) else ")")]
    for part in parts[1:]:
        if part.startswith("threads"):
            words.append(f"{part[7:]} intra-op thread{'s' if part[7:] != '1' else ''}")
        elif part.startswith("workers"):
            words.append(f"{part[7:]} concurrent training worker{'s' if part[7:] != '1' else ''}")
        elif part in COMPILE_WORDS:
            words.append(COMPILE_WORDS[part])
    return ", ".join(words)


def timed_as(group: str) -> str:
    """Where a seconds figure was timed, in plain words a card can carry ('' for no group): the dedicated timing set
    by its name, any other group as timed one run after another and the load it ran under — never the raw
    'v3/threads2/…' id nor the training code's details (those are `timing_basis`, the card's help)."""
    if not group:
        return ""
    if timing_context(group) == TIMING_REFERENCE:
        return f"timed in {group_text(group)}"
    load = f"; {group_text(group)}" if timing_context(group) else ""  # a clean group's words say nothing new here
    return f"timed one run after another{load}"


def is_reference(group: str) -> bool:
    """Whether a timing group is the dedicated timing set's (interleaved pairs on a quiet machine)."""
    return timing_context(group) == TIMING_REFERENCE


def timing_label(group: str) -> str:
    """A timing group in words, with what its context says about the load it ran under."""
    return f"{timing_basis(group)} — {group_text(group)}"


def relative_seconds(grid: pd.DataFrame, reference: int = BASELINE.patch_size) -> list[str]:
    """Per (train_rows, epochs) of cost.tokens_grid_seconds: each patch size's training time relative
    to the article's patch 7, as one sentence."""
    sentences = []
    keys = ["train_rows", "epochs", "timing_group"] if "timing_group" in grid.columns else ["train_rows", "epochs"]
    for (train_rows, epochs, *group), part in grid.groupby(keys):
        part = part.set_index("patch_size")
        if reference not in part.index or len(part) < 2:
            continue
        ratios = ", ".join(f"patch {p} ({int(part.loc[p, 'tokens'])} tokens) "
                           f"{fmt.times(part.loc[p, 'mean_seconds'] / part.loc[reference, 'mean_seconds'])}"
                           for p in part.index if p != reference)
        timed = f" (timed as {group[0]})" if group and group[0] else ""
        sentences.append(f"At {fmt.rows(train_rows)} rows, {int(epochs)} epochs{timed}, training time relative to "
                         f"patch {reference}: {ratios}. Whole-model training also pays for the MLP and projections, "
                         "which grow linearly in N, so it grows more slowly than the attention layer alone.")
    return sentences


def variant_cost_sentences(table: pd.DataFrame) -> list[str]:
    """What cost.variant_cost_table() says, from its numbers: the class token's extra token, SPT's wider tokens."""
    rows = table.set_index("variant")
    base = rows.loc["the article's ViT"]
    sentences = []
    for name, row in rows.drop(index="the article's ViT").iterrows():
        changes = []
        if row["tokens"] != base["tokens"]:
            changes.append(f"attention sees {fmt.rows(row['tokens'])} tokens instead of {fmt.rows(base['tokens'])}: "
                           f"{fmt.rows(row['attention_entries'])} entries per head and block, "
                           f"{fmt.times(row['relative'])} the article's")
        if row["values_per_token"] != base["values_per_token"]:
            changes.append(f"each token carries {fmt.rows(row['values_per_token'])} values instead of "
                           f"{fmt.rows(base['values_per_token'])}, so the patch projection is that much wider")
        delta = int(row["parameters"] - base["parameters"])
        changes.append(f"{fmt.number(delta, 0, signed=True)} parameters")
        sentences.append(f"**{name}**: " + "; ".join(changes) + ".")
    return sentences


# Library results for the ViT vs convnet and Claims pages: the headline and the data-size curve
# (vitcore.article.report, vitcore.analysis.scaling) and the claims ledger (vitcore.article.claims), from the
# store's one Study (vitcore.app.state.study), which computes each once per store state and margin, so a new
# run shows on the next rerun. No TensorFlow.

def headline(margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(report.headline, report.headline_deltas, report.headline_sentences) of the store at this margin."""
    return state.study().headline(margin)


def data_size(margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """The data-size curve: (scaling.curve, scaling.deltas, the crossover estimate's sentence and
    scaling.crossover's) of the store."""
    return state.study().data_size(margin)


def crossover_shift() -> str:
    """Does the papers' small-data variant move the crossover with the convnet? (scaling.variant_sentence)"""
    with st.spinner("Resampling random seeds…"):
        return state.study().crossover_shift()


def claims(margin: float = MARGIN) -> pd.DataFrame:
    """vitcore.article.claims.claims_table of the store at this margin (what `python -m vitcore claims` writes)."""
    return state.study().claims(margin)


def claims_tally() -> pd.DataFrame:
    """vitcore.article.claims.tally of the store at the margins 0.005, 0.01 and 0.02 (what `claims` prints)."""
    return state.study().tally()
