"""The Runs page's frames: its filters, the table as shown, the coverage grid and the filtered downloads.

No Streamlit: tests/test_app_walk.py checks these directly. The CSVs are the CLI's: the full set is
byte for byte `python -m vitcore export` / `effects`; a filtered set is the same frame restricted to
the shown runs (effects.csv: `stats.main_effects` of the shown runs).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from vitcore.app import fmt, state
from vitcore.app.selection import LABELS, cell_name
from vitcore.config.metrics import TABLE
from vitcore.config.metrics import metric as entry
from vitcore.config.numbers import whole_counts
from vitcore.config.run import DEFAULTS, RunConfig
from vitcore.config.switches import SWITCH
from vitcore.study.words import MARGIN, changes_text, config_of_row

# Every field the sidebar selects by, and the random seed, as (table column, filter label); the integer
# columns (patch size etc.; convnet rows: none) are the RunConfig fields with whole-number defaults.
FILTERS = {**LABELS, "seed": "Random seed"}
INTEGER_COLUMNS = (*(name for name, value in DEFAULTS.items() if type(value) is int),
                   *(name for name in TABLE if entry(name).digits == 0))
# the headline, then the registry's
METRIC_ORDER = ("test_accuracy", *(name for name in TABLE if name != "test_accuracy"))
NOT_APPLICABLE = "n/a"  # a ViT switch on a convnet row


def options(runs: pd.DataFrame, column: str) -> list:
    """A filter's choices: the column's stored values, sorted, as ints where the column is an integer
    (convnet rows leave None in the ViT columns, which pandas would otherwise print as 2.0, 4.0, …),
    plus NOT_APPLICABLE when some rows have none."""
    values = runs[column].dropna().unique().tolist()
    values = sorted(int(v) for v in values) if column in INTEGER_COLUMNS else sorted(map(str, values))
    return values + ([NOT_APPLICABLE] if runs[column].isna().any() else [])


def option_label(value) -> str:
    """A filter choice as shown: 4,000 for a row count, the value itself otherwise."""
    return fmt.rows(value) if isinstance(value, int) and value >= 1_000 else str(value)


def labeller(key: str):
    """The format of one filter's choices: a switch level in the registry's words (pooling 'class token', as the
    sidebar and the forest plot say it: Switch.word), anything else as option_label."""
    switch = SWITCH.get(key)
    return switch.word if switch is not None and switch.words else option_label


def apply_filters(runs: pd.DataFrame, picked: dict[str, list]) -> pd.DataFrame:
    """The rows matching every non-empty filter (an empty filter keeps everything)."""
    keep = pd.Series(True, index=runs.index)
    for column, values in picked.items():
        if not values:
            continue
        wanted = [v for v in values if v != NOT_APPLICABLE]
        column_values = runs[column].map(lambda v: None if v is None or pd.isna(v) else
                                         (int(v) if column in INTEGER_COLUMNS else str(v)))
        keep &= column_values.isin(wanted) | (column_values.isna() if NOT_APPLICABLE in values else False)
    return runs[keep]


def display(runs: pd.DataFrame) -> pd.DataFrame:
    """The table as shown: sorted by config, training rows and random seed; integer columns as nullable
    integers (4, not 4.0; blank for the convnet)."""
    shown = runs.copy()
    for column in INTEGER_COLUMNS:
        if column in shown.columns:
            shown[column] = pd.to_numeric(shown[column], errors="coerce").astype("Int64")
    order = [c for c in ("label", "train_rows", "seed") if c in shown.columns]
    return shown.sort_values(order, kind="stable").reset_index(drop=True) if order else shown


def metric_columns() -> dict[str, dict]:
    """How the table shows each metric (st.column_config.NumberColumn's arguments, METRIC_ORDER): the metric
    registry's title (an optimistic one says so), its format and its help."""
    return {name: {"label": fmt.title(name) + (" (optimistic)" if entry(name).optimistic else ""),
                   "format": fmt.printf(name), "help": entry(name).help} for name in METRIC_ORDER}


def table_height(rows: int, most: int = 480) -> int:
    """Pixels for a st.dataframe of `rows` rows: its header and rows (35 px each), at most `most`, so a
    short table leaves no empty rows below its data."""
    return min(most, 35 * (rows + 1) + 3)


def effects_note(shown: pd.DataFrame) -> str | None:
    """Why the shown runs have no main effects (effects.csv would be its header alone), or None: an effect
    pairs runs that differ in one switch, so it needs at least two configs of the same model."""
    configs = shown.groupby("model")["config_id"].nunique() if len(shown) else pd.Series(dtype=int)
    if configs.empty or configs.max() < 2:
        return ("the shown runs are one config per model, so no switch is compared in them; show more "
                "configs (All runs) to compute their main effects")
    return None


def caption(shown: pd.DataFrame, runs: pd.DataFrame, scope: str) -> str:
    """'Showing 10 of 285 runs (1 config): …'."""
    configs = shown["config_id"].nunique()
    collapsed = int(shown["collapsed"].sum()) if "collapsed" in shown.columns else 0
    text = (f"Showing **{fmt.rows(len(shown))} of {fmt.rows(len(runs))} runs** ({fmt.rows(configs)} "
            f"config{'s' if configs != 1 else ''}): {scope}.")
    if collapsed:
        text += f" {collapsed} of them collapsed (test accuracy < 0.2 with final train accuracy > 0.5)."
    return text


def cell_label(row) -> str:
    """A config cell without its row count: 'ViT p7 pre-LN pos', 'convnet epochs 5'."""
    cfg = config_of_row(row)
    return cell_name(cfg).replace(f" · {cfg.train_rows:,} rows", "")


def coverage(runs: pd.DataFrame) -> pd.DataFrame:
    """Random seeds stored per cell (rows) and training rows (columns); 0 where nothing is stored."""
    if runs.empty:
        return pd.DataFrame()
    cells = runs.assign(cell=[cell_label(row) for _, row in runs.iterrows()])
    grid = cells.pivot_table(index="cell", columns="train_rows", values="seed", aggfunc="nunique", fill_value=0)
    order = cells.drop_duplicates("cell").sort_values(["model", "label"], ascending=[False, True])["cell"]
    grid = grid.reindex(order)
    grid.columns = [f"{fmt.rows(c)} rows" for c in grid.columns]
    return grid.rename_axis("cell").reset_index()


def filtered_csv(name: str, frames: dict[str, pd.DataFrame], shown: pd.DataFrame, study, margin: float = MARGIN,
                 base: RunConfig | None = None) -> bytes:
    """One export restricted to the shown runs, in the CLI's format (runs/histories/confusions: the
    export frame's rows of those run ids; effects.csv: the Study's main effects of the shown runs, at `margin`,
    around `base` when given, each verdict from the plan that leads it on the store, as `effects` says)."""
    if name == "effects.csv":
        return whole_counts(study.effects_of(shown["run_id"], margin, base)).to_csv(index=False).encode()
    frame = frames[name]
    return frame[frame["run_id"].isin(set(shown["run_id"]))].to_csv(index=False).encode()


def effects_command(margin: float, base: RunConfig | None) -> str:
    """The CLI command whose effects.csv the Runs page's full download is: `--base` names the centre's fields off
    the article's ViT (state.effects_centre), as `sweep --base` takes them."""
    changed = "" if base is None else changes_text(base)  # as `compare --baseline` names it
    return f"python -m vitcore effects --margin {margin:g}" + (f" --base {changed}" if changed else "")


# The Runs page's filtered downloads, cached until the store changes: the CLI's CSVs restricted to the shown
# runs (vitcore.app.runs_view.filtered_csv).

@st.cache_data(show_spinner="Preparing the download…", max_entries=16)
def _filtered_csv(name: str, run_ids: tuple[str, ...], margin: float, base: RunConfig | None, path: str,
                  mtime: str) -> bytes:
    study = state.study()
    runs = study.runs
    frames = {} if name == "effects.csv" else study.export_frames()
    return filtered_csv(name, frames, runs[runs["run_id"].isin(set(run_ids))], study, margin, base)


def filtered_export_csv(name: str, run_ids, margin: float = MARGIN, base: RunConfig | None = None) -> bytes:
    """One of the Runs page's downloads restricted to these runs (vitcore.app.runs_view.filtered_csv);
    effects.csv judged at `margin` (the sidebar's), around `base` (state.effects_centre) when given."""
    if name not in state.EXPORTS:
        raise ValueError(f"unknown export {name!r}; exports: {', '.join(state.EXPORTS)}")
    effects = name == "effects.csv"  # one cached file per margin and centre only where they matter
    return _filtered_csv(name, tuple(sorted(run_ids)), margin if effects else MARGIN, base if effects else None,
                         state.STORE_PATH, state.store_mtime())
