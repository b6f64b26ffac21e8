"""The Ablations page's sections, drawn with Streamlit from vitcore.app.ablations.cards / tables / charts.

Each function renders one section of pages/ablations.py, so the page reads as a description of the
UI: the landing forest plot, the metric cards, the collapse note, and the five views below them.
"""

from __future__ import annotations

import time

import altair as alt
import pandas as pd
import streamlit as st

from vitcore.app import charts, fmt, layout, state, tables
from vitcore.app.ablations import cards
from vitcore.app.charts import EFFECT_ROW, effect_rows, panel_order, panel_title, verdict_scale
from vitcore.app.fmt import axis_format
from vitcore.app.selection import DEFAULTS, INTERACTIONS_KEY, cell_name
from vitcore.app.sidebar import painted  # noqa: F401 (the page asks here: is this the first paint?)
from vitcore.config.run import RunConfig
from vitcore.study import intervals, words
from vitcore.study.words import ALPHA, INCONCLUSIVE, MARGIN, direction

PICK_KEY = "variant_pick"
GALLERY_LIMIT = 40  # images shown per direction (flips.csv has them all)
CELLS_KEY = "cells"  # the main effects' control: which cells of the other switches to average over


def forest_spec(cfg: RunConfig, metric: str, margin: float) -> dict:
    """The landing's forest plot (also built by ablations.warm.warm_caches at server start); its table and title only
    with the spec, so a page run that finds the spec cached (every first paint) builds neither (~16 ms)."""

    def build():
        frame = tables.flip_frame(state.flip_effects(cfg, margin), metric, margin)
        most = frame["n_pairs"].max() if len(frame) else float("nan")  # no stored flip (your own study's sizes)
        seeds = f" (paired over up to {int(most)} random seeds)" if pd.notna(most) else ""
        return charts.forest(frame, metric, f"What flipping one switch of {cell_name(cfg)} does to "
                                            f"{cards.title(metric).lower()}{seeds}")

    return layout.cached_spec(("forest", cfg, metric, margin), build)


def _select_variant(frame: pd.DataFrame) -> None:
    """The landing's "select this variant": move the sidebar switch (a callback, before the sidebar draws)."""
    picked = st.session_state.get(PICK_KEY)
    row = frame[frame["option"] == picked]
    if len(row):
        switch, level = row["switch"].iloc[0], row["to"].iloc[0]
        st.session_state[switch] = type(DEFAULTS[switch])(level)
    st.session_state[PICK_KEY] = None


def landing(cfg: RunConfig, variants: int, metric_control, margin: float) -> str:
    """The answer first: every single-switch effect of the baseline as a forest plot (one click per
    variant below it: variant_picker). `variants`: how many single-switch variants are stored
    (selection.variants). Returns the metric picked with `metric_control()`, drawn above the plot."""
    metric = metric_control()
    if variants:
        st.vega_lite_chart(spec=forest_spec(cfg, metric, margin), width="stretch")
    else:
        st.info("No stored config differs from this one by a single switch at these rows.")
    return metric


def variant_picker(cfg: RunConfig, metric: str, margin: float) -> None:
    """Under the landing's forest plot (from the first paint's second run on): how to read it, and one
    click per variant."""
    frame = tables.flip_frame(state.flip_effects(cfg, margin), metric, margin)
    seen = f"; {words.SEEN_MARK.strip()}: {words.SEEN}" if frame.apply(words.seen, axis=1).any() else ""
    st.caption("Dot: mean paired Δ, with its 95% (thin) and 90% (thick) intervals; band: ±margin. Colour: the "
               f"verdict; filled dot: beyond ±margin{seen}.",  # two sentences; the details behind the help icon
               help=f"Both intervals are simultaneous over the family (Bonferroni). {charts.COLOUR_RULE} Families "
                    f"(m: the comparisons its correction counts): {tables.families_text(frame)}." + plan_caption(frame))
    st.pills("Select a variant", list(frame["option"]), key=PICK_KEY, on_change=_select_variant, args=(frame,),
             help="Moves that switch in the sidebar: the cards then compare the variant with this baseline.")


def plan_caption(frame: pd.DataFrame) -> str:
    """What the forest plot's rows leave to the caption (each row's third line says its source and a confirmed
    question's outcome): the † of a verdict decided on random seeds seen before its plan, and how many verdicts come
    from a blind plan — those whose order git does not prove (a shallow clone) counted apart, never as blind."""
    text = ""
    if frame.apply(words.seen, axis=1).any():
        text += f" †: {words.SEEN} (the built-in plan was registered after random seeds 0–9 were trained)."
    sources = pd.Series([words.source(row) for row in frame.to_dict("records")], dtype=object)
    blind, unproven = int((sources == words.BLIND).sum()), int((sources == words.BLIND_UNPROVEN).sum())
    if blind:
        text += f" {blind} of these verdicts come from a blind plan on fresh random seeds."
    if unproven:
        text += f" {unproven} from a blind plan whose order git does not prove (order not proven: the Plans page)."
    return text


def metric_cards(cards_: list[dict], comparison, selected: pd.DataFrame, is_baseline: bool,
                 runs_button: bool = True) -> None:
    """The five cards: value and Δ, then verdict, CI and baseline in the card's own text; each opens to
    its runs (the "Per random seed" popover, from the first paint's second run on)."""
    for column, card in zip(st.columns(len(cards_)), cards_):
        with column.container(border=True):
            st.metric(card["title"], card["value"], card["delta"], delta_color=card["delta_color"],
                      delta_arrow=card["delta_arrow"], help=card["help"])
            st.markdown("  \n".join(card["lines"]))
            if not runs_button:
                continue
            with st.popover("Per random seed", icon=":material/list:", width="stretch"):
                if is_baseline or comparison is None or not len(comparison.pairs):
                    st.caption("This config's runs: one per random seed.")
                    st.table(cards.runs_table(selected, card["metric"]))
                else:
                    st.caption("Each pair: the same random seed and training rows on both sides; Δ = selection − "
                               "baseline." if comparison.paired else "Unpaired: every run of each side.")
                    st.table(cards.seed_table(comparison, card["metric"]))


def collapse(cfg: RunConfig, selected: pd.DataFrame, base: pd.DataFrame) -> None:
    """Collapsed runs (test < 0.2 while train > 0.5) and, for BatchNorm, the measured diagnosis."""
    notes = [f"{side}: {note}" for side, frame in (("selection", selected), ("baseline", base))
             if (note := cards.collapsed_note(frame))]
    if not notes and not cfg.batch_norm:
        return
    diagnosis = state.bn_diagnosis()
    text = words.bn_text(diagnosis) if diagnosis is not None else (
        "Not measured yet: `python -m vitcore diagnose-bn --out analysis` re-estimates each stored BatchNorm run's "
        "statistics on its own training rows and writes `bn.csv` (the committed one: `vitcore/analysis/bn.csv`).")
    if notes:
        st.error("**Collapsed runs** (test accuracy < 0.2 while final train accuracy > 0.5) — "
                 + "; ".join(notes) + ". Every mean and Δ above includes them.", icon=":material/warning:")
    with st.expander("Why BatchNorm ViTs collapse: the measured diagnosis", icon=":material/troubleshoot:",
                     expanded=bool(notes) and cfg.batch_norm):
        st.markdown(text)


def curves(cfg: RunConfig, baseline: RunConfig, selected: pd.DataFrame, base: pd.DataFrame) -> None:
    def build():
        histories, _ = state.run_frames([*selected["run_id"], *base["run_id"]])
        roles, order = tables.curve_roles(selected, base, cfg, baseline)
        return charts.learning_curves(charts.curve_frame(histories, roles), order)

    layout.cached_chart(("curves", cfg, baseline), build)
    st.caption("Solid: validation accuracy, dashed: training accuracy; line = mean over random seeds, "
               "band = min–max.")


def confusions(cfg: RunConfig, comparison, selected: pd.DataFrame, is_baseline: bool) -> None:
    def rates():
        return charts.heatmap(state.study().class_rates(selected["run_id"]), "Selection: test rates (row-normalised)")

    left, right = st.columns(2)
    with left:
        layout.cached_chart(("rates", cfg), rates)
    if is_baseline or comparison.confusion is None or (comparison.paired and not comparison.metrics["n_pairs"].any()):
        right.caption("The Δ heatmap and per-class bars appear when the selection differs from a stored baseline.")
        return
    paired = "paired by random seed" if comparison.paired else "unpaired (Welch)"
    key = (comparison.selection, comparison.baseline, state.margin())
    with right:
        layout.cached_chart(("delta", *key), lambda: charts.heatmap(
            charts.delta_matrix(comparison.confusion), "Δ vs baseline: blue = more, red = less (rates, not verdicts)",
            delta=True))
    layout.cached_chart(("classes", *key), lambda: charts.class_delta_bars(comparison.classes))
    st.caption(f"Left: the selection's row-normalised test rates, mean over its random seeds. Right and below: Δ "
               f"{paired}, per cell and per class (95% CIs, verdicts at margin ±{state.margin():g}); the Δ heatmap's "
               f"colour scale is fixed at ±{fmt.DELTA_LIMITS['confusion rate']:.2f} in every view (cells beyond are "
               "clipped to its ends; a cell's tooltip gives its value).")


def flipped_images(cfg: RunConfig, baseline: RunConfig, comparison, is_baseline: bool) -> None:
    """The test images whose flips beat random-seed noise (flips.flip_report), with the null beside every count."""
    if is_baseline:
        st.caption("Flipped images appear when the selection differs from its baseline.")
        return
    report = flip_evidence(cfg, baseline)
    if report is None:
        st.info("The flipped images need the official test labels, which are not on this machine.")
        return
    used = report.n_pairs
    missing = (len(comparison.seeds) if comparison is not None else 0) - used
    if not used:
        st.info("No pair of runs kept its per-image predictions (`predictions.npy`), so there is nothing to compare "
                "image by image.")
        return
    st.markdown(words.flip_summary(report)
                + (f" ({missing} paired random seeds without predictions are not counted.)" if missing > 0 else ""))
    st.download_button("flips.csv", report.images.to_csv(index=False).encode(), file_name="flips.csv",
                       mime="text/csv", icon=":material/download:", on_click="ignore", key="download_flips",
                       help="Every image that flipped in at least one pair: counts each way, flip rate, null rate "
                            "(sign-swap and baseline against itself), p and Benjamini-Hochberg q.")
    st.dataframe(tables.mcnemar_table(report.pairs), hide_index=True)
    st.caption("Per pair (McNemar): images newly wrong and newly right over the whole test split, and the exact test "
               "of the split (p < 5%: this pair's switch moved more images one way than chance).")
    if not report.enough:
        st.warning(f"With {used} pairs the gallery cannot separate the switch from random-seed noise: the same "
                   f"config against itself flips as many images. It needs at least {words.FLIP_MIN_PAIRS} pairs "
                   "with predictions.", icon=":material/casino:")
        return
    gallery = state.load_gallery()
    for way in words.FLIP_DIRECTIONS:
        part = report.listed[report.listed["direction"] == way]
        st.markdown(f"**{way.capitalize()}**, beating random-seed noise: {fmt.rows(len(part))} images"
                    + (f" (the {GALLERY_LIMIT} smallest q shown)" if len(part) > GALLERY_LIMIT else ""))
        part = part.head(GALLERY_LIMIT)
        held = part[gallery.holds(part["image"])]
        if len(held) < len(part):
            st.caption(f"{fmt.rows(len(part) - len(held))} of these images are not drawn: the {gallery.source} "
                       "holds only a few test images (flips.csv lists every one).")
        if len(held):
            st.image(list(gallery.images_of(held["image"])), width=84, clamp=True, caption=tables.flip_captions(held))


def flip_table(cfg: RunConfig, metric: str, margin: float) -> None:
    flips = state.flip_effects(cfg, margin)
    if flips.empty:
        st.caption("No stored config differs from this one by a single switch"
                   + (" (the ViT switches do not apply to the convnet)." if cfg.model == "convnet" else "."))
        return
    st.caption(f"Each row: this config with one switch changed, minus this config, paired by random seed at "
               f"{fmt.rows(cfg.train_rows)} rows. Each row is judged in the family of its single-switch change "
               "(named in the last column), Bonferroni-adjusted, as on the cards and the forest plot.")
    table = tables.flip_table(flips, metric, margin)  # widths: the verdict and its interval inside a 400-px screen
    config = {name: st.column_config.TextColumn(width=width) for name, width in tables.FLIP_WIDTHS.items()}
    st.dataframe(table, hide_index=True, width="stretch", row_height=tables.ROW, column_config={
        **config,
        "Δ": st.column_config.NumberColumn(format=fmt.printf(metric, signed=True), width=tables.FLIP_WIDTHS["Δ"]),
        "Interval": st.column_config.TextColumn(width=tables.FLIP_WIDTHS["Interval"], help=words.INTERVAL_HELP),
        "Pairs": st.column_config.NumberColumn(width=tables.FLIP_WIDTHS["Pairs"])})


def main_effects(metric: str, margin: float, base: RunConfig | None = None) -> None:
    """The main effects over the chosen cells, what each averages over (the per-cell strips), and the
    verdicts that change over the LayerNorm cells or the cells without collapsed runs; around `base`
    (state.effects_centre: the sidebar's baseline when it is your own study's centre) when given."""
    main, centre = state.main_effects(metric, margin, base=base), "the article's" if base is None else base.label()
    if main.empty:  # the centre without its rows: summaries.centre keeps none (a title names the rows it shows)
        st.caption("The factorial grid has no complete cells yet." if base is None else f"No switch is flipped from "
                   f"{centre} at the same training rows and random seeds: no main effects around it yet.")
        return
    for note in control_notes(main, {name: state.main_effects(metric, margin, name, base)
                                            for name in (words.LAYER_NORM, words.NO_COLLAPSE)}):
        st.warning(note, icon=":material/filter_alt:")
    cells = st.segmented_control("Cells to average over", words.CELL_SUBSETS, default=words.ALL_CELLS, required=True,
                                 key=CELLS_KEY, help="A control: the BatchNorm ViT collapses at 1,000 rows, and an "
                                 "average over its cells can say more about the collapse than about the switch.")
    shown = main if cells == words.ALL_CELLS else state.main_effects(metric, margin, cells, base)
    if shown.empty:
        st.caption(f"No main effect can be computed over the {cells}.")
        return
    most = shown.groupby("train_rows")["n_pairs"].max()
    seeds = ", ".join(f"{int(n)} at {fmt.rows(r)} rows" for r, n in most.items())
    rows = " and ".join(map(fmt.rows, most.index))  # the rows shown, e.g. '300' for your own study
    key = (metric, margin, cells, base and base.config_id)
    layout.cached_chart(("main", *key), lambda: charts.effect_intervals(
        tables.effect_frame(shown), metric, f"Main effects on {cards.title(metric).lower()} at {rows} rows: a "
        f"level minus {centre}, averaged over the other switches ({cells})"))
    both = int((shown.get("interval", pd.Series(dtype=str)) == words.WITH_TEST).sum())
    images = (f" — and over the test images too for {both} of the {len(shown)} effects (every run behind them kept its "
              "predictions; `interval` in effects.csv)") if both else ""
    st.caption(f"Within each cell of the other switches, same training rows and random seed, then averaged per random "
               f"seed; the interval is over random seeds (up to {seeds}){images}, 95% simultaneous over the family "
               f"(Bonferroni): {tables.families_text(shown)}. Each panel has its own x-scale. {charts.COLOUR_RULE}")
    if note := tables.single_cell_note(shown, "the article's" if base is None else f"{base.label()}'s"):
        st.caption(note)
    _cell_strip(metric, shown, cells, False, base)
    if st.toggle("Show the two-way interactions (difference of differences)", key=INTERACTIONS_KEY,
                 bind="query-params"):
        pairs = state.interactions(metric, margin, cells, base)
        layout.cached_chart(("interactions", *key), lambda: charts.effect_intervals(
            tables.effect_frame(pairs, True), metric, f"Two-way interactions on {cards.title(metric).lower()}"))
        _cell_strip(metric, pairs, cells, True, base)


def _cell_strip(metric: str, effects: pd.DataFrame, cells: str, interaction: bool, base: RunConfig | None) -> None:
    """What the effects average over: one dot per cell of the other switches, a flag where cells disagree
    in sign beyond noise, and the per-cell CSV (around `base` when given)."""
    per_cell = cell_effects(metric, interaction, cells, base)
    if per_cell.empty:
        return
    spread = state.study().cell_spread((metric,), interaction, cells, base)
    if note := disagreement_note(spread, interaction):
        st.markdown(note)
    kind = "interaction" if interaction else "main effect"
    layout.cached_chart(("strip", metric, cells, interaction, base and base.config_id), lambda: strip(
        strip_frame(per_cell, effects, interaction), metric,
        f"Each {kind} in every cell of the other switches ({cells})"))
    st.caption(f"Dot: the {kind} within one cell, paired over its random seeds; tick: the average above. Per-cell "
               f"sd of the Δs: {fmt.number(spread['cell_sd'].median(), 4)} (median over effects). Colour: the cell's "
               "own verdict (Holm within the effect's cells; pale grey: not resolved), by the rule of the chart above.")
    st.download_button("cells.csv" if not interaction else "interaction_cells.csv",
                       per_cell.to_csv(index=False).encode(), mime="text/csv", icon=":material/download:",
                       on_click="ignore", key=f"download_cells_{interaction}",
                       help="Every effect in every cell: Δ, 95% CI, pairs, p, Holm p within the effect's cells, "
                            "whether the cell holds a collapsed run, whether it is a LayerNorm cell.")


# The Ablations page's evidence behind an effect, cached until the store changes: the per-cell effects
# (vitcore.stats.percell) and the flipped images against random-seed noise (vitcore.analysis.flips).

def cell_effects(metric: str, interactions: bool = False, cells: str = "", base: RunConfig | None = None
                 ) -> pd.DataFrame:
    """vitcore.stats.percell.cell_effects of one metric: each effect in each cell of the other switches (around
    `base`, state.effects_centre, when given)."""
    return state.study().cell_effects((metric,), interactions, cells, base)


def flip_evidence(cfg: RunConfig, base: RunConfig):
    """vitcore.analysis.flips.flip_report of the pairs that kept predictions (a FlipReport), or None when
    the package's copy of the test labels is damaged."""
    with st.spinner("Comparing the runs' per-image predictions…"):
        return state.study().flip_report(cfg, base)


# The per-cell strips beside the main effects: each effect in every cell of the other switches.
#
# Charts and sentences from vitcore.stats.percell: one dot per cell (coloured by whether that cell's
# effect is resolved after Holm within the effect's cells), a black tick at the averaged effect, and the
# notes a reader needs — where cells disagree in sign beyond noise, and which verdicts change when the
# effect is computed over the LayerNorm cells or the cells without collapsed runs. Cells are coloured by
# the one rule of the verdict charts (vitcore.app.charts.COLOUR_RULE). No Streamlit here.

def strip_frame(cells: pd.DataFrame, effects: pd.DataFrame, interaction: bool = False) -> pd.DataFrame:
    """Cells with the chart's `effect` and `rows` labels (as tables.effect_frame names the effects),
    `resolved` and `average` (the averaged effect, for the tick)."""
    labelled = tables.effect_frame(cells, interaction)
    key = [c for c in words.EFFECT_KEY if c in effects.columns]
    averages = {tuple(map(str, k)): m for *k, m in effects[[*key, "mean_delta"]].itertuples(index=False)}
    labelled["average"] = [averages.get(tuple(map(str, k))) for k in cells[key].itertuples(index=False)]
    resolved = labelled["p_holm"] < ALPHA  # the cell's own verdict word, coloured by the one rule (charts)
    labelled["resolved"] = [direction(metric, m > 0, False) if r else INCONCLUSIVE
                            for r, m, metric in zip(resolved, labelled["mean_delta"], labelled["metric"])]
    labelled["collapse"] = labelled["collapsed"].map({True: "holds a collapsed run", False: ""})
    return intervals.with_chosen(labelled)  # each cell's own 95% interval, as the study layer chooses it


def strip(frame: pd.DataFrame, metric: str, title: str) -> list[alt.Chart]:
    """One dot per cell and effect (x: that cell's paired Δ), a black tick at the averaged effect, one
    panel (chart) per training size with its own x-scale, at its container's width."""
    places = axis_format(metric)
    colour = alt.Color("resolved:N", title="The cell's verdict (Holm)",  # short: a legend cuts a long title
                       scale=verdict_scale(metric, frame["resolved"]))
    y, names = effect_rows(alt.Chart())
    base = alt.Chart().encode(y=y)
    dots = base.mark_circle(size=45, opacity=0.8, yOffset=8).encode(
        x=alt.X("mean_delta:Q", title="Δ in each cell of the other switches",
                axis=alt.Axis(format=places, tickCount=5, labelOverlap="greedy")),
        color=colour,
        tooltip=["effect:N", "rows:N", "cell:N", alt.Tooltip("mean_delta:Q", format=places.replace("3", "4")),
                 alt.Tooltip(f"{intervals.LOW}:Q", format=places, title="95% low"),
                 alt.Tooltip(f"{intervals.HIGH}:Q", format=places, title="95% high"),
                 alt.Tooltip(f"{intervals.KIND}:N", title="interval"), "n_pairs:Q",
                 alt.Tooltip("p_holm:Q", format=".3f", title="p (Holm, cells)"), "collapse:N"])
    tick = base.mark_tick(color="black", thickness=2, size=14, yOffset=8).encode(x="average:Q")
    zero = alt.Chart().mark_rule(color="#adb5bd", strokeDash=[3, 3]).encode(x=alt.datum(0))
    return [alt.layer(zero, dots, tick, names, data=frame[frame["rows"] == rows]).properties(
        height=alt.Step(EFFECT_ROW), title=panel_title(title, rows)).configure_legend(orient="bottom")
        for rows in panel_order(frame)]


def disagreement_note(spread: pd.DataFrame, interaction: bool = False) -> str | None:
    """Which effects have cells resolved in opposite directions (`spread`: Study.cell_spread), or None."""
    flagged = spread[spread["signs_disagree"].astype(bool)]
    if flagged.empty:
        return None
    labels = tables.effect_frame(flagged, interaction)
    items = [f"{effect} at {fmt.rows(rows)} rows ({higher} cells resolved higher, {lower} lower; cells range "
             f"{fmt.delta(low)} to {fmt.delta(high)})" for effect, rows, higher, lower, low, high in
             labels[["effect", "train_rows", "cells_higher", "cells_lower", "cell_min",
                     "cell_max"]].itertuples(index=False)]
    return ("**Cells disagree in sign beyond noise** (each cell's paired Δ, Holm-adjusted within the effect's cells): "
            + "; ".join(items) + ". The average over cells hides effects of opposite sign: read the strip below.")


def control_notes(everything: pd.DataFrame, subsets: dict[str, pd.DataFrame]) -> list[str]:
    """One sentence per control (LayerNorm cells only, cells without collapsed runs) whose effects
    change a verdict of the all-cells effects."""
    notes = []
    for name, frame in subsets.items():
        sentence = words.changed_sentence(everything, frame, name, tables.SWITCH_NAMES)
        if sentence:
            notes.append(sentence)
    return notes


# Server start-up for the Ablations page: fill the store caches of its default view before any visitor.
#
# Above the page's modules (state, cards, panels) so that none of them imports back up: no import cycle.

def warm_caches() -> dict[str, float]:
    """Server start-up (streamlit_app.py's lifespan hook, in a background thread): import what the
    Ablations page imports and fill the store caches of its default view (the article's ViT, or your own
    study's centre, against itself), so the first visitor does not pay for them. Returns seconds per step. The
    hook catches what this raises: a failure only means the first visitor computes what is missing."""
    seconds: dict[str, float] = {}
    start = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal start
        now = time.perf_counter()
        seconds[step], start = now - start, now

    lap("imports")
    study = state.study()  # the runs table (scipy.stats came with the Study's summaries)
    cfg, base = state.default_selection(), state.baseline({})  # your own study's centre without the article's ViT
    cards.metric_cards(None, study.runs_of(cfg), study.runs_of(base), MARGIN, is_baseline=True, timed=study.timed(cfg))
    lap("runs table and metric cards")
    ids = [*study.runs_of(cfg)["run_id"], *study.runs_of(base)["run_id"]]
    histories, _ = state.run_frames(ids)
    charts.learning_curves(charts.curve_frame(histories, dict.fromkeys(ids, "runs")), ["runs"]).to_dict()
    lap("curves and confusions")  # to_dict: altair loads and checks its schema once per process
    forest_spec(cfg, "test_accuracy", MARGIN)  # the landing's forest plot: its flip effects and spec
    state.main_effects("test_accuracy", base=state.effects_centre(base))
    lap("flip and main effects")
    return seconds
