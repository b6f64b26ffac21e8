"""The Ablations page's sections, drawn with Streamlit from vitcore.app.ablations.cards / tables / charts.

Each function renders one section of pages/ablations.py, so the page reads as a description of the
UI: the landing forest plot, the metric cards, the collapse note, and the five views below them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from vitcore.analysis import bn
from vitcore.analysis import flips as flip_words
from vitcore.app import charts, fmt, layout, state, tables
from vitcore.app.ablations import cards, evidence, strips
from vitcore.app.selection import DEFAULTS, INTERACTIONS_KEY, cell_name
from vitcore.app.sidebar import painted  # noqa: F401 (the page asks here: is this the first paint?)
from vitcore.config.run import RunConfig
from vitcore.stats import percell, plan, testset
from vitcore.stats.compare import mean_rates
from vitcore.study import words

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
    st.caption(f"Dot: mean paired Δ; thin bar: its 95% interval, thick bar: its 90% interval, both simultaneous over "
               f"the family (Bonferroni); band: ±margin. {charts.COLOUR_RULE} Families (m: the comparisons its "
               f"correction counts): {tables.families_text(frame)}." + plan_caption(frame))
    st.pills("Select a variant", list(frame["option"]), key=PICK_KEY, on_change=_select_variant, args=(frame,),
             help="Moves that switch in the sidebar: the cards then compare the variant with this baseline.")


def plan_caption(frame: pd.DataFrame) -> str:
    """What the forest plot's short verdicts leave to the caption: the † of a verdict decided on random seeds seen
    before its plan, and what a confirmation plan on fresh random seeds says of the planned ones."""
    text = ""
    if frame.apply(words.seen, axis=1).any():
        text += f" †: {plan.SEEN} (the built-in plan was registered after random seeds 0–9 were trained)."
    blind = frame.get("verdict_from", pd.Series(dtype=str)).astype(str).str.contains(", blind")
    if blind.any():
        text += f" {int(blind.sum())} of these verdicts come from a blind plan on fresh random seeds."
    said = [c for c in frame.get("replication", pd.Series(dtype=str)) if isinstance(c, str) and c]
    if said:
        counts = pd.Series(said).value_counts()
        text += " Their discoveries: " + ", ".join(f"{n} {word}" for word, n in counts.items()) + \
            " (each on its card and in the flip table)."
    return text


def metric_cards(cards_: list[dict], comparison, selected: pd.DataFrame, is_baseline: bool,
                 runs_button: bool = True) -> None:
    """The five cards: value and Δ, then CI, verdict and baseline in the card's own text; each opens to
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
    text = bn.explain(diagnosis) if diagnosis is not None else (
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
        _, long = state.run_frames(selected["run_id"])
        return charts.heatmap(mean_rates(long, selected["run_id"]), "Selection: test rates (row-normalised)")

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
    report = evidence.flipped_images(cfg, baseline)
    if report is None:
        st.info("The flipped images need the official test labels, which are not on this machine.")
        return
    used = report.n_pairs
    missing = (len(comparison.seeds) if comparison is not None else 0) - used
    if not used:
        st.info("No pair of runs kept its per-image predictions (`predictions.npy`), so there is nothing to compare "
                "image by image.")
        return
    st.markdown(flip_words.summary(report)
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
                   f"config against itself flips as many images. It needs at least {flip_words.MIN_PAIRS} pairs "
                   "with predictions.", icon=":material/casino:")
        return
    gallery = state.load_gallery()
    for direction in flip_words.DIRECTIONS:
        part = report.listed[report.listed["direction"] == direction]
        st.markdown(f"**{direction.capitalize()}**, beating random-seed noise: {fmt.rows(len(part))} images"
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
    for note in strips.control_notes(main, {name: state.main_effects(metric, margin, name, base)
                                            for name in (percell.LAYER_NORM, percell.NO_COLLAPSE)}):
        st.warning(note, icon=":material/filter_alt:")
    cells = st.segmented_control("Cells to average over", percell.SUBSETS, default=percell.ALL, required=True,
                                 key=CELLS_KEY, help="A control: the BatchNorm ViT collapses at 1,000 rows, and an "
                                 "average over its cells can say more about the collapse than about the switch.")
    shown = main if cells == percell.ALL else state.main_effects(metric, margin, cells, base)
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
    both = int((shown.get("interval", pd.Series(dtype=str)) == testset.WITH_TEST).sum())
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
    per_cell = evidence.cell_effects(metric, interaction, cells, base)
    if per_cell.empty:
        return
    if note := strips.disagreement_note(per_cell, interaction):
        st.markdown(note)
    kind = "interaction" if interaction else "main effect"
    layout.cached_chart(("strip", metric, cells, interaction, base and base.config_id), lambda: strips.strip(
        strips.strip_frame(per_cell, effects, interaction), metric,
        f"Each {kind} in every cell of the other switches ({cells})"))
    spread = percell.spread(per_cell)
    st.caption(f"Dot: the {kind} within one cell, paired over its random seeds; tick: the average above. Per-cell "
               f"sd of the Δs: {fmt.number(spread['cell_sd'].median(), 4)} (median over effects). Colour: the cell's "
               "own verdict (Holm within the effect's cells; pale grey: not resolved), by the rule of the chart above.")
    st.download_button("cells.csv" if not interaction else "interaction_cells.csv",
                       per_cell.to_csv(index=False).encode(), mime="text/csv", icon=":material/download:",
                       on_click="ignore", key=f"download_cells_{interaction}",
                       help="Every effect in every cell: Δ, 95% CI, pairs, p, Holm p within the effect's cells, "
                            "whether the cell holds a collapsed run, whether it is a LayerNorm cell.")
