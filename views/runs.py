"""Stored runs: the sidebar's selection (every random seed of it) or all runs with a filter for every
switch; which cells have runs at which sizes; the CSV downloads (the CLI's bytes), filtered or full."""

import streamlit as st

from vitcore.app import fmt, runs_view, state
from vitcore.app.selection import SIDEBAR_KEYS, cell_name

SIDEBAR, ALL = "The sidebar's selection", "All runs, filtered here"
OPTIONAL = ("has_predictions", "timing_group", "collapsed")  # newer store columns, shown when present

st.title("Runs & downloads")
runs = state.load_runs()
if runs.empty:
    st.info(f"No runs stored yet in this server's store (`{state.store_name()}`). Train one from the Ablations page, "
            "or run `python -m vitcore sweep default`.")
    st.stop()

cfg, note = state.selection()
if note:
    st.warning(note)
scope = st.radio("Show", (SIDEBAR, ALL), horizontal=True, key="runs_scope",
                 help="The sidebar's selection: every random seed of the config the sidebar selects. All runs: the "
                      "whole store, narrowed by the filters below (the sidebar is then ignored).")
if scope == SIDEBAR:
    shown = state.study().runs_of(cfg)
    described = (f"every random seed of the sidebar's selection, {cell_name(cfg)}; pick *{ALL}* to see the whole "
                 "store and filter it")
else:
    picked = {}
    columns = st.columns(4)
    for index, (key, label) in enumerate(runs_view.FILTERS.items()):
        picked[key] = columns[index % 4].multiselect(label, runs_view.options(runs, key), key=f"runs_filter_{key}",
                                                     placeholder="any", format_func=runs_view.labeller(key))
    shown = runs_view.apply_filters(runs, picked)
    described = ("all runs in the store, narrowed by the filters above" if any(picked.values())
                 else "all runs in the store (no filter set); the sidebar's selection is not applied")
st.markdown(runs_view.caption(shown, runs, described))

st.dataframe(
    runs_view.display(shown),
    hide_index=True,
    height=runs_view.table_height(len(shown)),
    column_order=list(dict.fromkeys([
        "label", "train_rows", "seed", *runs_view.METRIC_ORDER, *[c for c in OPTIONAL if c in runs.columns],
        *SIDEBAR_KEYS, "run_id", "config_id", "has_weights"])),
    column_config={
        "label": st.column_config.TextColumn("Config", pinned=True),
        "train_rows": st.column_config.NumberColumn("Rows", format="localized"),
        "seed": st.column_config.NumberColumn("Random seed"),
        **{name: st.column_config.NumberColumn(**shown) for name, shown in runs_view.metric_columns().items()},
        "timing_group": st.column_config.TextColumn("Timing group", help="Runs whose seconds compare: same training "
                                                    "code, threads, concurrent workers and compile mode"),
        "collapsed": st.column_config.CheckboxColumn("Collapsed", help="Test accuracy < 0.2 while final train "
                                                     "accuracy > 0.5: it learned its rows but predicts the test "
                                                     "split at about chance"),
        "has_predictions": st.column_config.CheckboxColumn("Predictions"),
        "patch_size": st.column_config.NumberColumn("patch_size", format="%d"),
        "has_weights": st.column_config.CheckboxColumn("Weights"),
    },
)

st.subheader("Coverage: random seeds stored per cell and training size")
st.dataframe(runs_view.coverage(runs), hide_index=True, width="content")
st.caption("Over the whole store, whatever is shown above: 0 means not trained yet (the Ablations page offers "
           "to train it).")

st.subheader("Downloads")
margin = state.margin()  # the sidebar's: effects.csv's verdicts are judged at it
centre = state.effects_centre(state.baseline())  # and centred on its baseline when that is your own study's centre
st.caption("Full: the same bytes as `python -m vitcore export --out DIR` (runs, histories, confusions) and "
           f"`{runs_view.effects_command(margin, centre)}` (main effects paired by random seed, judged at the "
           f"sidebar's ±{margin:g}). Shown: the same files restricted to the {fmt.rows(len(shown))} runs shown above "
           "(effects.csv: main effects computed from them).")
ids = tuple(shown["run_id"])
no_effects = runs_view.effects_note(shown)
for name in state.EXPORTS:  # one row per file: its name, then the shown and the full download
    file, filtered, full = st.columns([1, 2, 2], vertical_alignment="center")
    file.markdown(f"`{name}`")
    empty = shown.empty or (name == "effects.csv" and no_effects is not None)
    filtered.download_button(f"shown ({fmt.rows(len(shown))} runs)",
                             lambda name=name: runs_view.filtered_export_csv(name, ids, margin, centre),
                             file_name=name.replace(".csv", "_shown.csv"), mime="text/csv",
                             icon=":material/filter_alt:",
                             on_click="ignore", key=f"download_shown_{name}", disabled=empty, width="stretch",
                             help=no_effects if name == "effects.csv" and no_effects else None)
    full.download_button(f"all ({fmt.rows(len(runs))} runs)", lambda name=name: state.export_csv(name, margin, centre),
                         file_name=name, mime="text/csv", icon=":material/download:", on_click="ignore",
                         key=f"download_{name}", width="stretch")
if no_effects:
    st.caption(f"effects.csv, shown: off — {no_effects}.")
