"""ViT vs convnet, re-measured: the source article's single-seed table beside mean ± std over our random
seeds, the seed-paired ViT − convnet differences and the sentences written from them — the report of
`python -m vitcore report` (vitcore.report), shown as it is. Reads the store only (no TensorFlow)."""

import streamlit as st

from vitcore import report
from vitcore.app import fmt, state, tables
from vitcore.app.charts import gap_chart

st.title("ViT vs convnet, re-measured")
st.caption(tables.headline_claim())

runs = state.load_runs()
headline = report.headline(runs)
if headline["n_seeds"].sum() == 0:
    st.info("No runs of the article's ViT or convnet (15 epochs, 1,000 or 4,000 rows) are stored yet. "
            "`python -m vitcore sweep default` trains them; until then only the source article's numbers exist.")

st.markdown(fmt.demote_headings(report.headline_markdown(runs)))
st.caption("The same text as `headline.md` from `python -m vitcore report --out DIR`.")

st.subheader("The overfitting gap")
gaps = tables.gap_frame(headline)
if len(gaps):
    st.altair_chart(gap_chart(gaps), width="content")
    st.caption("Gap = final train accuracy − final validation accuracy. A large gap means the model is "
               "memorising its training rows.")
