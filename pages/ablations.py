"""The sidebar's config against its baseline: seed-paired Δ with 95% CIs, curves, confusions, effects."""

import streamlit as st

from vitcore import stats
from vitcore.app import charts, fmt, state, tables
from vitcore.app.selection import cell_name
from vitcore.app.train_panel import render_train_offer

HELP = {
    "test_accuracy": "Accuracy on the official 10,000-image test split, with the weights after the last epoch.",
    "best_val_accuracy": "Highest accuracy on the fixed 5,000-row validation split over all epochs.",
    "final_train_accuracy": "Mean training accuracy over the last epoch (training mode, as seen while fitting).",
    "gap": "Final train accuracy − final validation accuracy, both at the last epoch: how hard it overfits.",
    "seconds": "Wall-clock training time of one run, data loading to test evaluation.",
}

cfg, note = state.selection()
baseline = state.baseline()
runs = state.load_runs()
selected, base = stats.runs_of(runs, cfg), stats.runs_of(runs, baseline)
is_baseline = cfg.config_id == baseline.config_id

st.title("What is each part of a ViT worth?")
if note:
    st.warning(note)
seeds = sorted(set(selected["seed"]) | set(base["seed"]))
st.markdown(f"**{cell_name(cfg)}** against the baseline **{cell_name(baseline)}**, "
            f"over random seeds {', '.join(map(str, seeds)) or '(none stored)'}, every Δ paired seed by seed.")
with st.expander("Definitions: which split, which epoch, what the verdict means", icon=":material/help:"):
    st.markdown("\n".join(f"- **{fmt.title(m)}**: {HELP[m]}" for m in stats.METRICS) + """
- **Mean ± std**: over the random seeds of one config (each seed draws its own training sample and
  initialisation).
- **Δ**: selection − baseline, computed per seed, then averaged; the **95% CI** is a t-interval over those
  paired differences. **Verdict**: *better*/*worse* only when the CI excludes 0 (for gap and seconds, lower
  is better; final train accuracy gets the neutral *higher*/*lower*: fitting more is not better);
  *within seed noise* otherwise; one pair gives no interval (*too few seeds*).
- Splits: 5,000 stratified validation rows held out of the 60k training split (fixed for every run); training
  rows drawn from the other 55,000; the test split is the official 10,000.""")

if base.empty:
    st.info(f"The baseline **{cell_name(baseline)}** has no stored runs yet, so there is no Δ to show.")
else:
    test = base["test_accuracy"]
    st.caption(f"Baseline test accuracy: **{fmt.mean_sd(test.mean(), test.std())}** ({len(base)} random seeds).")

if selected.empty:
    render_train_offer(cfg, runs)
else:
    if is_baseline:
        st.info("The selection is the baseline: flip a switch in the sidebar, or pick another baseline.")
    for column, card in zip(st.columns(len(stats.METRICS)), tables.metric_cards(runs, cfg, baseline)):
        column.metric(card["title"], card["value"], card["delta"], delta_color=card["delta_color"],
                      delta_arrow=card["delta_arrow"], help=HELP[card["metric"]], border=True)
        column.caption(card["caption"])

    histories, confusions = state.run_frames([*selected["run_id"], *base["run_id"]])
    st.subheader("Learning curves")
    roles, order = tables.curve_roles(selected, base, cfg, baseline)
    st.altair_chart(charts.learning_curves(charts.curve_frame(histories, roles), order), width="stretch")
    st.caption("Solid: validation accuracy, dashed: training accuracy; line = seed mean, band = seed min–max.")

    st.subheader("Confusion matrices")
    matrix_base, matrix_sel, matrix_delta = stats.confusion_delta(
        confusions, (base if len(base) else selected)["run_id"], selected["run_id"])
    left, right = st.columns(2)
    left.altair_chart(charts.heatmap(matrix_sel, "Selection: row-normalised test rates, seed mean"), width="stretch")
    if base.empty or is_baseline:
        right.caption("The Δ heatmap and per-class bars appear when the selection differs from a stored baseline.")
    else:
        right.altair_chart(charts.heatmap(matrix_delta, "Δ vs baseline (blue: more of that cell)", delta=True),
                           width="stretch")
        per_class = stats.class_accuracy_delta(confusions, base["run_id"], selected["run_id"])
        st.altair_chart(charts.class_delta_bars(per_class), width="stretch")

metric = st.segmented_control("Metric for the tables below", stats.METRICS, default="test_accuracy",
                              format_func=fmt.title, key="effects_metric") or "test_accuracy"
if not selected.empty:
    st.subheader("Flip one switch")
    flips = state.flip_effects(cfg)
    if flips.empty:
        st.caption("No stored config differs from this one by a single switch"
                   + (" (the ViT switches do not apply to the convnet)." if cfg.model == "convnet" else "."))
    else:
        st.caption(f"Each row: this config with one switch changed, minus this config, paired by random seed at "
                   f"{fmt.rows(cfg.train_rows)} rows.")
        st.dataframe(tables.flip_table(flips, metric), hide_index=True, width="stretch",
                     column_config={"Δ": st.column_config.NumberColumn(format=fmt.printf(metric, signed=True))})

st.subheader("Main effects and interactions of the factorial grid")
main = state.main_effects(metric)
if main.empty:
    st.caption("The factorial grid has no complete cells yet.")
else:
    st.caption("Main effect: a switch's level minus the article's level, within each cell of the other switches, "
               "averaged per random seed; the interval is over seeds, so *Pairs* counts seeds.")
    title = f"Δ {fmt.title(metric)}"
    st.altair_chart(charts.effect_intervals(main.assign(effect=tables.effect_labels(main)), "effect", title))
    if st.toggle("Show the two-way interactions (difference of differences)", key="show_interactions"):
        pairs = state.interactions(metric)
        st.altair_chart(charts.effect_intervals(pairs.assign(effect=tables.effect_labels(pairs, True)), "effect",
                                                title))
