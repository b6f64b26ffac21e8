"""The sidebar's config against its baseline: every Δ paired by random seed, with its CI and verdict in words.

Landing (the selection is the baseline): what flipping each switch does, as a forest plot, then the
baseline's own numbers. A flipped switch: the cards lead. Below, five views; only the open one runs.
A session's first visit paints the cards first and the rest a moment later (sidebar._then_the_rest).
"""

import streamlit as st

from vitcore.app import fmt, selection, state
from vitcore.app.ablations import cards, panels
from vitcore.app.selection import METRIC_KEY, METRIC_LABELS, PAGE_DEFAULTS, VIEW_KEY, VIEWS, cell_name
from vitcore.app.training.train_panel import render_train_offer
from vitcore.study.words import METRICS

cfg, note = state.selection()
baseline, margin = state.baseline(), state.margin()
runs = state.load_runs()
selected, base = state.study().runs_of(cfg), state.study().runs_of(baseline)
is_baseline = cfg.config_id == baseline.config_id


def metric_control() -> str:
    label = st.segmented_control("Metric for the effects", list(METRIC_LABELS), default=PAGE_DEFAULTS[METRIC_KEY],
                                 required=True, key=METRIC_KEY, bind="query-params")
    return METRIC_LABELS.get(label, METRICS[0])


st.title("What is each part of a ViT worth?")
if note:
    st.warning(note)
comparison = None if is_baseline else state.comparison(cfg, baseline, margin)
if is_baseline:
    st.markdown(f"**{cell_name(cfg)}** is the baseline. First, what flipping each of its switches does, paired by "
                f"random seed at {fmt.rows(cfg.train_rows)} rows; then its own numbers. Pick a variant (below the "
                "plot, or in the sidebar) to compare it card by card.")
else:
    st.markdown(cards.header(comparison, cfg, baseline))
with st.expander("Definitions: which split, which epoch, what each verdict means", icon=":material/help:"):
    st.markdown(cards.definitions(margin))

if selected.empty:
    render_train_offer(cfg, runs)
    metric = metric_control()
    st.subheader("Main effects of the factorial grid")
    panels.main_effects(metric, margin, state.effects_centre(baseline))
    st.stop()

painted = panels.painted()  # False on a session's first visit: the answer paints alone, the rest follows
if is_baseline:
    variants = selection.variants(cfg, selection.seed_counts(runs))
    metric = panels.landing(cfg, variants, metric_control, margin)
    if not painted:  # the plot is the first paint; the rest follows below it (sidebar._then_the_rest)
        st.stop()
    if variants:
        panels.variant_picker(cfg, metric, margin)
    st.subheader(f"The baseline's own numbers ({len(selected)} random seeds)")
panels.metric_cards(cards.metric_cards(comparison, selected, base, margin, is_baseline, timed=state.study().timed(cfg)),
                    comparison, selected,
                    is_baseline, runs_button=painted)
panels.collapse(cfg, selected, base)
if not painted:  # the sidebar's fragment reruns the app once the browser has the cards
    st.stop()
if not is_baseline:  # a variant: the metric control sits in the two views it changes (only one is open)
    metric = None

# Lazy views: only the open tab's code runs, so the cards paint before any chart below them.
curves, confusions, flipped, flip_one, effects = st.tabs(VIEWS, key=VIEW_KEY, bind="query-params")
if curves.open:
    with curves:
        panels.curves(cfg, baseline, selected, base)
if confusions.open:
    with confusions:
        panels.confusions(cfg, comparison, selected, is_baseline)
if flipped.open:
    with flipped:
        panels.flipped_images(cfg, baseline, comparison, is_baseline)
if flip_one.open:
    with flip_one:
        panels.flip_table(cfg, metric or metric_control(), margin)
if effects.open:
    with effects:
        panels.main_effects(metric or metric_control(), margin, state.effects_centre(baseline))
