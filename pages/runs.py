"""Every stored run in one sortable, filterable table, and the CSV downloads (the CLI's bytes)."""

import streamlit as st

from vitcore.app import fmt, state
from vitcore.app.selection import SIDEBAR_KEYS

FILTERS = {"model": "Model", "train_rows": "Training rows", "patch_size": "Patch size", "seed": "Random seed"}

st.title("Runs & downloads")
runs = state.load_runs()
if runs.empty:
    st.info(f"No runs stored yet in `{state.STORE_PATH}`. Train one from the Ablations page, "
            "or run `python -m vitcore sweep default`.")
    st.stop()

st.caption(f"{fmt.rows(len(runs))} runs, {fmt.rows(runs['config_id'].nunique())} configs, from `cached_runs/`. "
           "Click a column header to sort; use the filters to narrow the table.")
shown = runs
for column, (key, label) in zip(st.columns(len(FILTERS)), FILTERS.items()):
    values = sorted(runs[key].dropna().unique())
    picked = column.multiselect(label, values, key=f"runs_filter_{key}")
    if picked:
        shown = shown[shown[key].isin(picked)]

st.dataframe(
    shown,
    hide_index=True,
    height=480,
    column_order=["label", "train_rows", "seed", "test_accuracy", "best_val_accuracy", "best_epoch",
                  "final_train_accuracy", "final_val_accuracy", "gap", "test_loss", "params", "seconds",
                  *SIDEBAR_KEYS, "epochs", "run_id", "config_id", "has_weights"],
    column_config={
        "label": st.column_config.TextColumn("Config", pinned=True),
        "train_rows": st.column_config.NumberColumn("Rows", format="localized"),
        "seed": st.column_config.NumberColumn("Random seed"),
        "test_accuracy": st.column_config.NumberColumn("Test acc", format=fmt.printf("test_accuracy")),
        "best_val_accuracy": st.column_config.NumberColumn("Best val acc", format=fmt.printf("best_val_accuracy"),
                                                           help="Highest validation accuracy over the epochs"),
        "best_epoch": st.column_config.NumberColumn("Best epoch"),
        "final_train_accuracy": st.column_config.NumberColumn("Final train acc",
                                                              format=fmt.printf("final_train_accuracy")),
        "final_val_accuracy": st.column_config.NumberColumn("Final val acc", format=fmt.printf("final_val_accuracy")),
        "gap": st.column_config.NumberColumn("Gap", format=fmt.printf("gap"),
                                             help="Final-epoch train accuracy minus final-epoch validation accuracy"),
        "test_loss": st.column_config.NumberColumn("Test loss", format=fmt.printf("test_loss")),
        "params": st.column_config.NumberColumn("Params", format=fmt.printf("params")),
        "seconds": st.column_config.NumberColumn("Seconds", format=fmt.printf("seconds")),
        "has_weights": st.column_config.CheckboxColumn("Weights"),
    },
)

st.subheader("Downloads")
st.caption("The same bytes as `python -m vitcore export --out DIR` (runs, histories, confusions) and "
           "`python -m vitcore effects` (seed-paired main effects of the four switches).")
for column, name in zip(st.columns(len(state.EXPORTS)), state.EXPORTS):
    column.download_button(name, lambda name=name: state.export_csv(name), file_name=name, mime="text/csv",
                           icon=":material/download:", on_click="ignore", key=f"download_{name}")
