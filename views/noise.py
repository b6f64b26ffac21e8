"""Seed noise: where the random seed's spread comes from — the data sample, the initial weights, the
batch order or their interactions — from the crossed runs of `python -m vitcore sweep noise`, and what
that means for pairing a Δ. vitcore.analysis.noise computes; this page shows. Reads the store only."""

import streamlit as st

from vitcore.app import layout, noise_view, state

st.title("Seed noise")
st.caption("One random seed sets three things: which training rows are sampled, the initial weights and the "
           "batch order. The crossed runs set each on its own and split the test-accuracy variance between them.",
           help="Data × init × order seeds, crossed; the split is a random-effects model (method of moments) with "
                "95% generalized confidence intervals.")

margin = state.margin()
survey, survey_advice = noise_view.pairing_survey()  # every committed paired comparison, not one cell
st.markdown(f"**Pairing by the random seed.** {survey_advice}")
with st.expander(f"What pairing removes, comparison by comparison ({len(survey)})"):
    st.dataframe(noise_view.survey_display(survey), hide_index=True, width="stretch")

components, pairing, advice = noise_view.tables(margin)
if components.empty:
    st.info("No crossed runs stored yet: `python -m vitcore sweep noise` trains them "
            "(every data seed × init seed × order seed of the article's ViT and its convnet).")
    st.stop()

for line in advice:
    st.markdown(f"- {line}")
st.markdown("**Where the test-accuracy variance comes from** (bars: share; lines: 95% intervals)")
layout.side_by_side(noise_view.shares_chart(components), stacked=True)
st.caption("Data sample, initialisation, batch order: the part of the variance that follows that seed whatever "
           "the other two are. Interactions: the rest, e.g. a data sample that is lucky only with some "
           "initialisations.",
           help="The interactions include the three-way term: training is deterministic, so there is no other "
                "residual. A negative estimate shows as 0, so the shares can add up to more than 100%.")

st.subheader("The table")
st.dataframe(noise_view.display(components), hide_index=True, width="stretch")
st.subheader("Pairing a Δ")
st.dataframe(noise_view.pairing_display(pairing, margin), hide_index=True, width="stretch")
st.caption("Removes: the share of the unpaired Δ's variance that pairing the two arms by that source alone takes "
           "away; the random seed pairs all three. Random seeds for ±margin: how many give a 95% interval of the "
           "mean Δ that narrow at that sd.",
           help="The unpaired Δ: each arm's runs independent of the other's.")
st.caption(f"The same tables as `python -m vitcore noise --margin {margin:g} --out DIR` (noise.csv, pairing.csv).")
