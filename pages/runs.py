"""Every stored run in one sortable, filterable table, and the CSV downloads (the CLI's bytes)."""

import streamlit as st

from vitcore import app_data
from vitcore.dashboard import CHOICES

st.title("Runs & downloads")
runs = app_data.load_runs()
if runs.empty:
    st.info(f"No runs stored yet in `{app_data.STORE_PATH}`. Train one from the Ablations page, "
            "or run `python -m vitcore sweep default`.")
    st.stop()

st.caption(f"{len(runs):,} runs, {runs['config_id'].nunique():,} configs, from `cached_runs/`. "
           "Click a column header to sort; use the filters to narrow the table.")
filters = st.columns(4)
shown = runs
for column, key in zip(filters, ("model", "train_rows", "patch_size", "seed")):
    values = sorted(v for v in runs[key].dropna().unique())
    picked = column.multiselect(key.replace("_", " ").capitalize(), values, key=f"runs_filter_{key}")
    if picked:
        shown = shown[shown[key].isin(picked)]

st.dataframe(
    shown,
    hide_index=True,
    height=480,
    column_order=["label", "train_rows", "seed", "test_accuracy", "best_val_accuracy", "best_epoch",
                  "final_train_accuracy", "final_val_accuracy", "gap", "test_loss", "params", "seconds",
                  *CHOICES, "epochs", "run_id", "config_id", "has_weights"],
    column_config={
        "label": st.column_config.TextColumn("Config", pinned=True),
        "train_rows": st.column_config.NumberColumn("Rows", format="localized"),
        "test_accuracy": st.column_config.NumberColumn("Test acc", format="%.4f"),
        "best_val_accuracy": st.column_config.NumberColumn("Best val acc", format="%.4f",
                                                           help="Highest validation accuracy over the epochs"),
        "best_epoch": st.column_config.NumberColumn("Best epoch"),
        "final_train_accuracy": st.column_config.NumberColumn("Final train acc", format="%.4f"),
        "final_val_accuracy": st.column_config.NumberColumn("Final val acc", format="%.4f"),
        "gap": st.column_config.NumberColumn("Gap", format="%+.4f",
                                             help="Final-epoch train accuracy minus final-epoch validation accuracy"),
        "test_loss": st.column_config.NumberColumn("Test loss", format="%.4f"),
        "params": st.column_config.NumberColumn("Params", format="localized"),
        "seconds": st.column_config.NumberColumn("Seconds", format="%.1f"),
        "has_weights": st.column_config.CheckboxColumn("Weights"),
    },
)

st.subheader("Downloads")
st.caption("The same bytes as `python -m vitcore export --out DIR` (runs, histories, confusions) and "
           "`python -m vitcore effects` (seed-paired main effects of the four switches).")
for column, name in zip(st.columns(len(app_data.EXPORTS)), app_data.EXPORTS):
    column.download_button(name, lambda name=name: app_data.export_csv(name), file_name=name, mime="text/csv",
                           icon=":material/download:", on_click="ignore", key=f"download_{name}")
