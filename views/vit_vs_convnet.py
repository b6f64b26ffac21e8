"""ViT vs convnet, re-measured: the article's ViT against its convnet, paired by random seed — the
headline (test accuracy), the source article's single-seed differences against the spread of one
random seed, the data-size curve and the overfitting gap. Reads the store only (no TensorFlow)."""

import streamlit as st

from vitcore.app import layout, state, tables
from vitcore.app.walkthrough import walk
from vitcore.app.walkthrough.walk_charts import data_size_curve, gap_bars, paired_delta
from vitcore.study.words import EQUIVALENT, INCONCLUSIVE, INTERVAL_HELP

st.title("ViT vs convnet, re-measured")
st.caption(tables.headline_claim())

margin = state.margin()
headline, deltas, sentences = tables.headline(margin)
if headline["n_seeds"].sum() == 0:
    st.info("No runs of the article's ViT or convnet (15 epochs, 1,000 or 4,000 rows) are stored yet. "
            "`python -m vitcore sweep default` trains them; until then only the source article's numbers exist.")

st.subheader("How small can the data be before the convnet wins?")
curve, scaling_deltas, crossover = tables.data_size(margin)
if curve.empty:
    st.info("No runs of the article's ViT and convnet at any training size yet: "
            "`python -m vitcore sweep scaling` trains 1,000 to 16,000 rows.")
else:
    layout.side_by_side(data_size_curve(walk.curve_frame(curve)))
    st.caption("Line: mean over random seeds; band: mean ± sd over random seeds (each random seed draws its own "
               "training rows and initialisation). Test accuracy on the official 10,000 test images; final val "
               "accuracy at the last epoch on the fixed 5,000-row validation split.")
    if scaling_deltas.empty:
        st.caption("No row count has runs of both models yet, so there is no paired Δ.")
    else:
        layout.side_by_side(paired_delta(walk.delta_frame(scaling_deltas)))
        st.markdown(f"**Where the lead changes sides.** {crossover}")
        with st.expander("The paired Δ per row count, as a table"):
            st.dataframe(walk.scaling_table(scaling_deltas), hide_index=True, width="stretch",
                         column_config={"Interval": st.column_config.TextColumn(help=INTERVAL_HELP)})
    st.markdown(f"**Does the papers' small-data recipe move it?** {tables.crossover_shift()}")
    st.caption("The variant is the article's ViT with Shifted Patch Tokenization and Locality Self-Attention (Lee, "
               "Lee & Song 2021), its line in the curve above. Its crossover is estimated as the ViT's; the shift "
               "resamples the random seeds of the ViT, the variant and the convnet together, since they share each "
               "random seed's data sample.")

st.subheader("The headline: test accuracy, paired by random seed")
st.dataframe(walk.headline_table(deltas), hide_index=True, width="stretch",
             column_config={"Metric": st.column_config.TextColumn(width="large"),
                            "Interval": st.column_config.TextColumn(help=INTERVAL_HELP)})
with st.expander("The headline in sentences"):
    st.markdown("\n".join(f"- {sentence}" for sentence in sentences))
st.caption("Each Δ is ViT − convnet within one random seed (same training rows, same data sample), averaged over "
           "the paired random seeds; both means are over those seeds only. Test accuracy is the headline; best "
           "validation accuracy is the maximum over 15 epochs on the split it reports, so it is selected on the "
           f"validation split (optimistic). Verdicts at margin ±{margin:g}: *{EQUIVALENT}* when the 90% interval lies "
           f"inside it, *{INCONCLUSIVE}* when the data cannot tell yet. Seconds are compared only between runs timed "
           "the same way (one timing group); they depend on the machine and its load.")

st.subheader("The source article's single random seed, against the spread of one random seed")
st.markdown("The source article trained each model once. One run's difference scatters much more than the mean "
            "of many, so the right yardstick for it is not the confidence interval of our mean Δ but the **95% "
            "prediction interval of one paired difference**: where a single new random seed's Δ falls 95% of the "
            "time (mean ± t × sd × √(1 + 1/n) over our paired random seeds).")
single = walk.single_seed_table(deltas)
if single.empty:
    st.caption("No paired runs yet to place the source article's numbers.")
else:
    st.markdown("\n".join(f"- {sentence}" for sentence in walk.single_seed_sentences(deltas)))
    st.dataframe(single, hide_index=True, width="stretch", column_config={"Metric": st.column_config.TextColumn(
        width="large"), "The article's Δ lies": st.column_config.TextColumn(width="large")})
    st.caption("The source article's wall times come from another machine, so its seconds are not placed here.")

st.subheader("The overfitting gap")
gaps = walk.gap_frame(headline)
if len(gaps):
    layout.side_by_side(gap_bars(gaps))
    st.caption("Gap = final train accuracy − final validation accuracy: a large gap means the model memorises its "
               "training rows. Bars: mean over random seeds, whiskers ± sd; the source article's bar is its one "
               "random seed. The paired Δ of the gaps is in the headline table above.")
