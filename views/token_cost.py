"""Token count is the price: the source article's table computed, next to measured attention cost
and the sweep's training seconds per patch size, within one timing group. Reads committed files only
(no TensorFlow)."""

import streamlit as st

from vitcore.app import fmt, layout, state, tables
from vitcore.app.charts import cost_chart
from vitcore.config.run import RunConfig
from vitcore.study import committed

st.title("Token count is the price")
st.caption("The source article: self-attention compares every token with every other, so cost grows as N²; "
           "halving the patch size quadruples N and multiplies attention entries by 16.")

st.subheader("Attention entries, computed")
study = state.study()
st.dataframe(tables.cost_table(study.token_cost()), hide_index=True, width="content")
with st.expander("Try another image and patch size"):
    left, right = st.columns(2)
    side = left.number_input("Image side (pixels)", min_value=4, max_value=1024, value=224, step=4)
    patch = right.number_input("Patch side (pixels)", min_value=1, max_value=256, value=16)
    try:
        row = study.token_cost(int(side), int(patch))
    except ValueError as error:
        st.info(f"{error}: patches must tile the image exactly.")
    else:
        st.markdown(f"{row['image']} in {row['patch']}×{row['patch']} patches: **{fmt.rows(row['tokens'])} "
                    f"tokens**, **{fmt.rows(row['attention_entries'])}** attention entries per head, "
                    f"**{fmt.times(row['relative'])}** the article's 16-token ViT.")

st.subheader("Counted: multiply-adds per image, by patch size")
counted = study.patch_work()
st.dataframe(counted, hide_index=True, width="content", column_config={
    "patch_size": st.column_config.NumberColumn("patch"),
    "macs": st.column_config.NumberColumn("multiply-adds per image", format="localized"),
    "relative": st.column_config.NumberColumn("relative to patch 7", format="%.2f×"),
    "training_macs": st.column_config.NumberColumn(f"per training run ({fmt.rows(RunConfig().train_rows)} rows, "
                                                   f"{RunConfig().epochs} epochs, × 3 with backward)",
                                                   format="localized")})
st.caption("Exact from the config (vitcore.analysis.work; the layer by layer count is on Parameter anatomy): the "
           "deterministic measure of compute, the one the Claims page's compute claims use. Wall seconds below "
           "depend on the machine's load as well.")

st.subheader("Measured: one attention layer's forward time")
measured = committed.attention_bench()  # the package's measurements, whatever the store
if measured is None:
    st.info("No measurements yet: run `python -m vitcore bench-attention` "
            "(writes vitcore/analysis/attention_cost.csv).")
else:
    bench, curve, fit = measured
    layout.chart(cost_chart(curve))
    shown = bench[["tokens", "attention_entries", "median_ms", "min_ms", "max_ms", "repeats"]]
    st.dataframe(shown, hide_index=True, width="content", column_config={
        "attention_entries": st.column_config.NumberColumn(format="localized"),
        "median_ms": st.column_config.NumberColumn("median ms", format="%.3f"),
        "min_ms": st.column_config.NumberColumn("min ms", format="%.3f"),
        "max_ms": st.column_config.NumberColumn("max ms", format="%.3f")})
    st.markdown(" ".join(tables.bench_sentences(bench, fit)))

st.subheader("Measured: training time per patch size (the sweep's `tokens` grid)")
groups = study.token_timing_groups()  # seconds only: the dedicated timing set's group first
if not groups:
    st.info("No baseline ViT runs in the store yet: `python -m vitcore sweep tokens` trains the article's ViT at "
            "patch 2, 4, 7 and 14.")
else:
    group = st.selectbox("Timing basis", groups, key="token_cost_timing", format_func=tables.timing_label,
                         help="Seconds compare only between runs timed the same way: same training code, threads, "
                              "concurrent workers and compile mode (the store's timing_group). The first is the "
                              "reference: the dedicated timing set if trained, else the group not timed under load "
                              "with the most patch sizes (replaced, overlapped or busy groups come last).")
    grid = study.token_seconds(group)
    st.markdown(f"**Timing basis:** every second below comes from runs of timing group `{group}` — "
                f"{tables.timing_label(group)}. Seconds are compared only within one group: runs timed by other code "
                "or under other load are not mixed in. Wall time of one run, data loading to test evaluation. "
                + ("" if tables.is_reference(group) else "The dedicated timing set (`python -m "
                   "vitcore bench-timing`: interleaved pairs on a quiet machine) is not trained yet."))
    shown = grid.assign(std_seconds=[fmt.metric(std, "seconds") for std in grid["std_seconds"]])  # one seed: —
    st.dataframe(shown, hide_index=True, width="content", column_config={
        "train_rows": st.column_config.NumberColumn("train rows", format="localized"),
        "mean_seconds": st.column_config.NumberColumn("mean seconds", format=fmt.printf("seconds")),
        "std_seconds": st.column_config.TextColumn("std seconds"),
        "runs": st.column_config.NumberColumn("random seeds"),
        "mean_test_accuracy": st.column_config.NumberColumn("mean test accuracy", format=fmt.printf("test_accuracy"))})
    for sentence in tables.relative_seconds(grid):
        st.markdown(sentence)

st.subheader("What the papers' changes cost")
variants = study.variant_cost()
st.dataframe(variants, hide_index=True, width="content", column_config={
    "attention_entries": st.column_config.NumberColumn("attention entries", format="localized"),
    "relative": st.column_config.NumberColumn("relative to 16 tokens", format="%.3f×"),
    "values_per_token": st.column_config.NumberColumn("values per token"),
    "parameters": st.column_config.NumberColumn(format="localized")})
st.markdown(" ".join(tables.variant_cost_sentences(variants)))
timed = study.variant_seconds()
if timed.empty:
    st.info("No stored runs of the papers' variants yet: `python -m vitcore sweep papers` trains them.")
else:
    shown = timed.assign(std_seconds=[fmt.metric(std, "seconds") for std in timed["std_seconds"]])  # one seed: —
    st.dataframe(shown, hide_index=True, width="content", column_config={
        "mean_seconds": st.column_config.NumberColumn("mean seconds", format=fmt.printf("seconds")),
        "std_seconds": st.column_config.TextColumn("std seconds"),
        "runs": st.column_config.NumberColumn("random seeds"),
        "mean_test_accuracy": st.column_config.NumberColumn("mean test accuracy", format=fmt.printf("test_accuracy"))})
    st.caption("Wall seconds of one run, per timing group: compare rows only within one group (the same code, "
               "threads, concurrent workers and compile mode) — other groups ran under other load.")
