"""Claims, checked: what the source article and the published papers claim, and what our runs say —
vitcore.article.claims.claims_table, with its verdict, whether it agrees, the runs behind each row, and
claims.csv byte for byte as `python -m vitcore claims` writes it. Reads the store only."""

import streamlit as st

from vitcore.app import fmt, results, state
from vitcore.app.claims import claims_view
from vitcore.article.claims import CLAIMS

st.title("Claims, checked")
st.caption("Each row: what a source claims, in which setting it was measured (or only stated), and what our runs "
           "of the article's ViT and its variants say on Fashion-MNIST, paired by random seed.")

margin = state.margin()
table = results.claims(margin)
if table["n_pairs"].sum() == 0:
    st.info("No stored runs match the claims yet: `python -m vitcore sweep default` trains them.")

found = claims_view.counts(table)
for column, (word, title) in zip(st.columns(3), (("yes", "Agree"), ("no", "Disagree"),
                                                ("unresolved", "Unresolved"))):
    column.metric(title, f"{found[word]} of {len(table)}", border=True)

links = claims_view.links(table, CLAIMS)
st.dataframe(claims_view.display(table, links), hide_index=True, width="stretch", height=35 * (len(table) + 1) + 3,
             column_config={"Claim": st.column_config.TextColumn(pinned=True),
                            "Setting": st.column_config.TextColumn(width="large"),
                            "Runs": st.column_config.LinkColumn(
                                "Runs", display_text="open in Ablations", help="The Ablations page with the sidebar "
                                "set to this claim's selection and baseline: every Δ, curve and run")})
st.markdown(claims_view.meaning(table, margin))

st.download_button("claims.csv", claims_view.csv_bytes(table), file_name="claims.csv", mime="text/csv",
                   icon=":material/download:", on_click="ignore", key="download_claims")
st.caption(f"The same bytes as `python -m vitcore claims --margin {margin:g} --out claims.csv` on this store.")

st.subheader("The runs behind a claim")
pick = st.selectbox("Claim", range(len(CLAIMS)), key="claims_pick",
                    format_func=lambda i: f"{CLAIMS[i].claim} · {fmt.rows(CLAIMS[i].selection.train_rows)} rows "
                                          f"· {fmt.title(CLAIMS[i].metric)}")
claim = CLAIMS[pick]
behind = claims_view.runs_behind(state.load_runs(), claim.selection, claim.baseline, claim.metric, margin)
st.markdown(f"Δ = **{claim.comparison}** at {fmt.rows(claim.selection.train_rows)} rows, "
            f"{fmt.title(claim.metric).lower()}, over {len(behind)} paired random seed{'s' if len(behind) != 1 else ''} "
            f"([open in Ablations]({links[pick]})).")
st.dataframe(behind, hide_index=True, width="stretch", column_config={
    name: st.column_config.NumberColumn(format=fmt.printf(claim.metric, signed=name == "Δ"))
    for name in ("selection", "baseline", "Δ")})
