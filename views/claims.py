"""Claims, checked: what the source article and the published papers claim, and what our runs say —
vitcore.article.claims.claims_table, with its verdict, whether it agrees, the runs behind each row, and
claims.csv byte for byte as `python -m vitcore claims` writes it. Reads the store only."""

import streamlit as st

from vitcore.app import claims_view, fmt, state, tables

st.title("Claims, checked")
st.caption("Each row: what a source claims, in which setting it was measured (or only stated), and what our runs "
           "of the article's ViT and its variants say on Fashion-MNIST, paired by random seed.")

margin = state.margin()
table = tables.claims(margin)
if table.empty or table["n_pairs"].sum() == 0:
    st.info("No stored runs match the claims yet: `python -m vitcore sweep default` trains them.")

found = claims_view.counts(table)  # the one tally: the same numbers as the line below at this margin
ACROSS = 3  # cards per row: six direction words, each title readable beside the sidebar
for start in range(0, len(claims_view.REGISTRY), ACROSS):
    for column, direction in zip(st.columns(ACROSS), claims_view.REGISTRY[start:start + ACROSS]):
        column.metric(direction.card, f"{found[direction.word]} of {found['counted']}", border=True,
                      help=f"{direction.word}: {direction.meaning} Distinct comparisons, each counted once, at "
                           f"margin ±{margin:g} ({found['not_counted']} rows shown beside are not counted: the "
                           "Tally column says why).")
st.markdown(claims_view.tally_text(tables.claims_tally()))

pairs = claims_view.configs(table)
links = claims_view.links(table)
text = {name: st.column_config.TextColumn(width=width) for name, width in claims_view.WIDTHS.items()}
st.dataframe(claims_view.display(table, links), hide_index=True, width="stretch", row_height=claims_view.ROW,
             height=claims_view.ROW * len(table) + 38,
             column_config={**text,
                            "Claim": st.column_config.TextColumn(pinned=True, width=claims_view.WIDTHS["Claim"]),
                            "Sources": st.column_config.TextColumn(width=claims_view.WIDTHS["Sources"], help=(
                                "Who claims it (titles and settings: Where each claim comes from, below)")),
                            "Interval": st.column_config.TextColumn(width=claims_view.WIDTHS["Interval"],
                                                                    help=claims_view.HELP["Interval"]),
                            "Pairs": st.column_config.NumberColumn(width=claims_view.WIDTHS["Pairs"]),
                            "Runs": st.column_config.LinkColumn(
                                "Runs", display_text="open", width=claims_view.WIDTHS["Runs"], help=(
                                    "The Ablations page with the sidebar set to this row's selection and baseline: "
                                    "every Δ, curve and run"))})
st.markdown(claims_view.meaning(table, margin))

st.download_button("claims.csv", claims_view.csv_bytes(table), file_name="claims.csv", mime="text/csv",
                   icon=":material/download:", on_click="ignore", key="download_claims")
st.caption(f"The same bytes as `python -m vitcore claims --margin {margin:g} --out claims.csv` on this store.")

st.subheader("Where each claim comes from")
st.table(claims_view.origins(table), hide_index=True)

st.subheader("The runs behind a claim")
rows = [i for i, pair in enumerate(pairs) if pair]  # the curve's, noise and counted rows link elsewhere
pick = st.selectbox("Claim", rows, key="claims_pick",
                    format_func=lambda i: f"{table['claim'].iloc[i]} · {fmt.rows(table['train_rows'].iloc[i])} rows "
                                          f"· {fmt.title(table['metric'].iloc[i])}") if rows else None
if pick is not None:
    (selection, baseline), metric = pairs[pick], table["metric"].iloc[pick]
    behind = claims_view.runs_behind(state.study(), selection, baseline, metric, margin)
    st.markdown(f"Δ = **{table['comparison'].iloc[pick]}** at {fmt.rows(selection.train_rows)} rows, "
                f"{fmt.title(metric).lower()}, over {len(behind)} paired random seed{'s' if len(behind) != 1 else ''} "
                f"([open in Ablations]({links[pick]})).")
    st.dataframe(behind, hide_index=True, width="stretch", column_config={
        name: st.column_config.NumberColumn(format=fmt.printf(metric, signed=name == "Δ"))
        for name in ("selection", "baseline", "Δ")})
