"""The sidebar's config against its baseline: seed-paired Δ with 95% CIs, curves, confusions, effects."""

import streamlit as st

from vitcore import app_data, stats, views
from vitcore.dashboard import cell_name, effect_labels, flip_table, fmt_mean_std, metric_rows
from vitcore.train_panel import render_train_offer

DIGITS = {"seconds": 1}
HELP = {
    "test_accuracy": "Accuracy on the official 10,000-image test split, with the weights after the last epoch.",
    "best_val_accuracy": "Highest accuracy on the fixed 5,000-row validation split over all epochs.",
    "final_train_accuracy": "Mean training accuracy over the last epoch (training mode, as seen while fitting).",
    "gap": "Final train accuracy − final validation accuracy, both at the last epoch: how hard it overfits.",
    "seconds": "Wall-clock training time of one run, data loading to test evaluation.",
}

cfg = app_data.config_from_state(st.session_state)
baseline = app_data.baseline_from_state(st.session_state)
runs = app_data.load_runs()
selected, base = stats.runs_of(runs, cfg), stats.runs_of(runs, baseline)
is_baseline = cfg.config_id == baseline.config_id

st.title("What is each part of a ViT worth?")
seeds = sorted(set(selected["seed"]) | set(base["seed"]))
st.markdown(f"**{cell_name(cfg)}** against the baseline **{cell_name(baseline)}**, "
            f"over seeds {', '.join(map(str, seeds)) or '(none stored)'}, every Δ paired seed by seed.")
with st.expander("Definitions: which split, which epoch, what the verdict means", icon=":material/help:"):
    st.markdown("\n".join(f"- **{views.METRIC_TITLES[m]}**: {HELP[m]}" for m in stats.METRICS) + """
- **Mean ± std**: over the seeds of one config (each seed draws its own training sample and initialisation).
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
    st.caption(f"Baseline test accuracy: **{fmt_mean_std(test.mean(), test.std())}** ({len(base)} seeds).")

if selected.empty:
    render_train_offer(cfg, runs)
else:
    if is_baseline:
        st.info("The selection is the baseline: flip a switch in the sidebar, or pick another baseline.")
    for column, row in zip(st.columns(len(stats.METRICS)), metric_rows(runs, cfg, baseline)):
        digits, delta = DIGITS.get(row["metric"], 4), row["delta"]
        spread = "one seed" if row["n"] < 2 else f"± {row['std']:.{digits}f} sd over {row['n']} seeds"
        if is_baseline:  # a Δ of a config with itself is 0 by construction
            shown, colour, decided, note = None, "off", False, "this is the baseline"
        elif delta is None or delta.n_pairs == 0:
            shown, colour, decided, note = None, "off", False, "no paired baseline runs"
        else:
            decided = delta.verdict in (stats.BETTER, stats.WORSE)
            shown = f"{delta.mean_delta:+.{digits}f}"
            colour = ("normal" if row["higher_is_better"] else "inverse") if decided else "off"
            interval = "no CI" if delta.ci_low != delta.ci_low else \
                f"95% CI [{delta.ci_low:+.{digits}f}, {delta.ci_high:+.{digits}f}]"
            note = f"Δ vs baseline: {interval} · {delta.n_pairs} pairs · **{delta.verdict}**"
        column.metric(views.METRIC_TITLES[row["metric"]], f"{row['mean']:.{digits}f}", shown, delta_color=colour,
                      delta_arrow="auto" if decided else "off", help=HELP[row["metric"]], border=True)
        column.caption(f"{spread}  \n{note}")

    histories, confusions = app_data.run_frames([*selected["run_id"], *base["run_id"]])
    st.subheader("Learning curves")
    roles = {run_id: "baseline: " + cell_name(baseline) for run_id in base["run_id"]}
    roles.update({run_id: "selection: " + cell_name(cfg) for run_id in selected["run_id"]})
    order = list(dict.fromkeys(roles[r] for r in [*selected["run_id"], *base["run_id"]]))
    st.altair_chart(views.learning_curves(views.curve_frame(histories, roles), order), width="stretch")
    st.caption("Solid: validation accuracy, dashed: training accuracy; line = seed mean, band = seed min–max.")

    st.subheader("Confusion matrices")
    matrix_base, matrix_sel, matrix_delta = stats.confusion_delta(
        confusions, (base if len(base) else selected)["run_id"], selected["run_id"])
    left, right = st.columns(2)
    left.altair_chart(views.heatmap(matrix_sel, "Selection: row-normalised test rates, seed mean"), width="stretch")
    if base.empty or is_baseline:
        right.caption("The Δ heatmap and per-class bars appear when the selection differs from a stored baseline.")
    else:
        right.altair_chart(views.heatmap(matrix_delta, "Δ vs baseline (blue: more of that cell)", delta=True),
                           width="stretch")
        per_class = stats.class_accuracy_delta(confusions, base["run_id"], selected["run_id"])
        st.altair_chart(views.class_delta_bars(per_class), width="stretch")

metric = st.segmented_control("Metric for the tables below", stats.METRICS, default="test_accuracy",
                              format_func=views.METRIC_TITLES.get, key="effects_metric") or "test_accuracy"
if not selected.empty:
    st.subheader("Flip one switch")
    flips = app_data.flip_effects(cfg)
    if flips.empty:
        st.caption("No stored config differs from this one by a single switch"
                   + (" (the ViT switches do not apply to the convnet)." if cfg.model == "convnet" else "."))
    else:
        st.caption(f"Each row: this config with one switch changed, minus this config, paired by seed at "
                   f"{cfg.train_rows:,} rows.")
        st.dataframe(flip_table(flips, metric), hide_index=True, width="stretch",
                     column_config={"Δ": st.column_config.NumberColumn(format="%+.4f")})

st.subheader("Main effects and interactions of the factorial grid")
main = app_data.main_effects(metric)
if main.empty:
    st.caption("The factorial grid has no complete cells yet.")
else:
    st.caption("Main effect: a switch's level minus the seed's level, within each cell of the other switches, "
               "averaged per seed; the interval is over seeds, so *Pairs* counts seeds.")
    title = f"Δ {views.METRIC_TITLES[metric]}"
    st.altair_chart(views.effect_intervals(main.assign(effect=effect_labels(main)), "effect", title))
    if st.toggle("Show the two-way interactions (difference of differences)", key="show_interactions"):
        pairs = app_data.interactions(metric)
        st.altair_chart(views.effect_intervals(pairs.assign(effect=effect_labels(pairs, True)), "effect", title))
