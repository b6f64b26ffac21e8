"""What the sidebar can select: its choices, the query-string check, and the baseline cells.

No Streamlit and no TensorFlow, so all of it is unit-tested directly (tests/test_app_dashboard.py).
The widget keys are RunConfig field names; a URL holds str(value): `?patch_size=4`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from vitcore.config import switches
from vitcore.config.run import DEFAULTS as FIELD_DEFAULTS
from vitcore.config.run import MODELS, VIT_FIELDS, RunConfig, article_model, default_baseline
from vitcore.run.sweep import GRID_ROWS
from vitcore.study import Study
from vitcore.study.words import MARGIN, METRICS, config_of_row

# The sidebar's choices per widget key (== RunConfig field, switches.SELECTED). Values appear in the
# URL as str(value). The switches' levels come from the registry; train_rows offers every row count
# the sweep's grids train.
TRAIN_ROWS = GRID_ROWS
CHOICES: dict[str, tuple] = {key: MODELS if key == "model" else TRAIN_ROWS if key == "train_rows"
                             else switches.LEVELS[key] for key in switches.SELECTED}
SIDEBAR_KEYS = tuple(CHOICES)  # the sidebar's widget keys, in the order it draws them
FREE_KEYS = tuple(s.name for s in switches.REGISTRY if s.free)  # drawn only where the store varies them
# Each key's label (the sidebar, the Runs page's filters) and the sidebar's help.
LABELS = {"model": "Model", "train_rows": "Training rows", **{s.name: s.label for s in switches.REGISTRY}}
HELP = {"model": "The article's ViT (patch → Dense 64 → 2 transformer blocks) or its 60,554-parameter convnet.",
        "train_rows": "Stratified training rows (validation is a fixed 5,000; test is the official 10,000).",
        **{s.name: s.help for s in switches.REGISTRY}}
DEFAULTS = {key: getattr(RunConfig(), key) for key in CHOICES}
BASELINE_KEY = "baseline"
BASELINE = article_model("vit")  # the article's ViT: patch 7, pre-LN, learned positions, 4,000 rows
# The default baseline follows the sidebar's training rows, so a switch is compared like for like.
SAME_ROWS = "the article's ViT at the selected rows"
# The Ablations page's own URL-bound controls (Reset returns each to its default).
MARGIN_KEY, METRIC_KEY, INTERACTIONS_KEY, VIEW_KEY = "margin", "metric", "interactions", "view"
MARGINS = (0.005, 0.01, 0.02, 0.05)  # the sidebar's equivalence margins; the CLI's --margin takes any value
VIEWS = ("Learning curves", "Classes & confusions", "Flipped images", "Flip one switch", "Main effects")
# The metric control's options are also its URL values (a bound widget's URL value is its label): `?metric=gap`.
METRIC_LABELS = {metric.replace("_", " "): metric for metric in METRICS}
PAGE_DEFAULTS = {MARGIN_KEY: MARGIN, METRIC_KEY: next(iter(METRIC_LABELS)), INTERACTIONS_KEY: False,
                 VIEW_KEY: VIEWS[0]}


def config_from_state(state: Mapping, seed: int = 0) -> RunConfig:
    """The RunConfig the sidebar selects (other fields at the article's defaults); ValueError if invalid."""
    values = {key: state[key] for key in SIDEBAR_KEYS if key in state and state[key] is not None}
    return RunConfig(seed=seed, **values)


def selection_or_default(state: Mapping, fallback: RunConfig | None = None) -> tuple[RunConfig, str | None]:
    """(the sidebar's config, None), or (`fallback`: the store's centre, by default the article's ViT, and a note
    saying why) when it is not valid."""
    try:
        return config_from_state(state), None
    except ValueError as error:
        shown = "the article's ViT" if fallback is None else cell_name(fallback)
        return fallback or RunConfig(), f"The sidebar selection is not a valid config ({error}); showing {shown}."


def _shown(value) -> str:
    """A query value made safe to print inside a Markdown code span: short, no backticks."""
    text = value[-1] if isinstance(value, list) and value else value
    text = str(text).replace("`", "'").replace("\n", " ")
    return text if len(text) <= 40 else text[:37] + "..."


def _stored(study: Study, key: str) -> set:
    """The values of one sidebar key among the store's runs (but `sweep noise`'s crossed cells), typed."""
    if key not in study.runs.columns or not len(study.runs):
        return set()
    kind = type(FIELD_DEFAULTS[key])
    return {kind(v) for v in study.seed_runs()[key].dropna().unique()}


def allowed_choices(study: Study) -> dict[str, tuple]:
    """Every sidebar key's values a URL may hold for one store. A store that holds the article's ViT (the committed
    one) offers the grids' rows and every model and switch level; your own study (no article's ViT) offers its own
    models and row counts (300 included) and, for a free field (width, depth, epochs, ...), the values it holds
    (`--vary depth=1 --base epochs=2`: depth 1 and 2, epochs 2), never a registry level nobody trained there. In
    the committed store a free field offers its registry levels and every value the store holds where the store
    varies it or holds it off the article's, else only the one value stored."""
    own = bool(len(study.runs)) and not study.holds_article()
    out = {}
    for key, options in CHOICES.items():
        stored = _stored(study, key)
        if key in ("model", "train_rows", *FREE_KEYS) and own and stored:
            out[key] = tuple(sorted(stored, key=list(options).index)) if key == "model" else tuple(sorted(stored))
        elif key == "train_rows":
            out[key] = tuple(sorted(set(options) | stored))
        elif key not in FREE_KEYS:
            out[key] = options
        elif len(stored) > 1 or stored - {DEFAULTS[key]}:
            out[key] = tuple(sorted(set(options) | stored))
        else:
            out[key] = (DEFAULTS[key],)
    return out


def store_choices(study: Study) -> dict[str, tuple]:
    """The sidebar's controls for one store: allowed_choices of every key with a choice to make (the training
    rows always), so a free field shows only where the store varies it or holds it off the article's (your own
    `--base epochs=2` study's Epochs: its one value 2, folded away with the others it holds at one value)."""
    return {key: options for key, options in allowed_choices(study).items()
            if len(options) > 1 or key == "train_rows" or (key in FREE_KEYS and options != (DEFAULTS[key],))}


@dataclass(frozen=True)
class Offer:
    """What the sidebar offers for one store state (state.offer: built once per state)."""
    allowed: Mapping[str, tuple]  # every key: the values its URL parameter may hold
    choices: Mapping[str, tuple]  # the keys drawn, with their options
    defaults: Mapping[str, object]  # every key's value when the URL has none: the store's centre
    centre: RunConfig | None  # your own study's centre (its default selection and baseline); None: the article's ViT
    cells: Mapping[str, RunConfig | None]  # the baseline choices by name (baseline_cells)
    folded: frozenset = frozenset()  # drawn keys your own store holds at one value: folded away in the sidebar

    @property
    def fallback(self) -> RunConfig:
        """The default selection: the store's centre, else the article's ViT."""
        return self.centre or RunConfig()


def store_offer(study: Study, cells: Mapping[str, RunConfig | None] | None = None) -> Offer:
    """The sidebar of one store (its Study): the article's ViT is the default selection and baseline when the store
    holds it (or is empty); else your own study's centre (Study.centre, e.g. ViT epochs 2 at 300 rows)."""
    centre = study.centre()
    allowed = allowed_choices(study)
    defaults = dict(DEFAULTS) if centre is None else {key: getattr(centre, key) for key in CHOICES}
    choices = {key: allowed[key] for key in store_choices(study)}
    return Offer(allowed, choices, defaults, centre, baseline_cells(study, centre) if cells is None else cells,
                 folded_keys(study, choices))


def folded_keys(study: Study, choices: Mapping[str, tuple]) -> frozenset:
    """The sidebar keys of your own study (a store without the article's ViT) that its runs hold at one value: the
    sidebar folds them away under one line, so it shows what your study varies (`sweep --vary depth=1 --base
    epochs=2`: Depth and the rows; the ablation switches and Epochs folded). The committed store folds none."""
    if not len(study.runs) or study.holds_article():
        return frozenset()
    return frozenset(key for key in choices if key != "train_rows" and len(_stored(study, key)) <= 1)


def query_notes(params: Mapping, baselines: list[str] | None = None,
                choices: Mapping[str, tuple] = CHOICES, defaults: Mapping = DEFAULTS) -> list[str]:
    """One note per sidebar query parameter whose value is not allowed (it falls back to the default): a bad value
    or one the store lacks (`choices`: Offer.allowed; `defaults`: Offer.defaults).

    Streamlit drops an invalid bound value silently; this is what the user gets told instead.
    Unknown parameter names are ignored (they are not ours).
    """
    allowed = {key: [str(option) for option in options] for key, options in choices.items()}
    defaults = {key: str(value) for key, value in defaults.items()}
    if baselines is not None:
        allowed[BASELINE_KEY] = list(baselines)
        defaults[BASELINE_KEY] = baselines[0] if baselines else SAME_ROWS
    notes = _page_notes(params)
    for key, options in allowed.items():
        if key not in params:
            continue
        value = params[key]
        value = value[-1] if isinstance(value, list) and value else value
        if str(value) not in options:
            shown = ", ".join(options) if len(options) <= 8 else f"one of {len(options)} cached configs"
            notes.append(f"`{key}={_shown(value)}` is not a valid value (allowed: {shown}); "
                         f"showing `{defaults[key]}` (the default) instead.")
    return notes


def _page_notes(params: Mapping) -> list[str]:
    """Notes for the Ablations page's margin and metric parameters (Streamlit drops bad ones silently)."""
    notes = []
    if MARGIN_KEY in params and _shown(params[MARGIN_KEY]) not in map(str, MARGINS):
        notes.append(f"`{MARGIN_KEY}={_shown(params[MARGIN_KEY])}` is not a valid value (allowed: "
                     f"{', '.join(map(str, MARGINS))}); showing `{MARGIN}` (the default) instead.")
    if METRIC_KEY in params and _shown(params[METRIC_KEY]) not in METRIC_LABELS:
        notes.append(f"`{METRIC_KEY}={_shown(params[METRIC_KEY])}` is not a valid value (allowed: "
                     f"{', '.join(METRIC_LABELS)}); showing `{PAGE_DEFAULTS[METRIC_KEY]}` (the default) instead.")
    return notes


# -- coverage: which sidebar options have stored runs ---------------------------------------------
def seed_counts(table: pd.DataFrame) -> dict[str, int]:
    """Random seeds stored per config_id."""
    return table.groupby("config_id")["seed"].nunique().to_dict() if len(table) else {}


def current_choices(state: Mapping, params: Mapping, choices: Mapping[str, tuple] = CHOICES,
                    defaults: Mapping = DEFAULTS) -> dict:
    """The sidebar's values as they stand before its widgets are drawn: the session's value, else a
    valid URL value (a session's first run), else the default (Offer.defaults: the store's centre)."""
    values = {}
    for key in CHOICES:
        options = choices.get(key, CHOICES[key])
        if state.get(key) is not None:
            values[key] = state[key]
            continue
        raw = params.get(key)
        raw = raw[-1] if isinstance(raw, list) and raw else raw
        values[key] = next((option for option in options if str(option) == str(raw)), defaults[key])
    return values


def bound(state: Mapping, params: Mapping, key: str):
    """A URL-bound widget's value before the widget is drawn: the session's, else the URL's (a str), else None."""
    if state.get(key) is not None:
        return state[key]
    raw = params.get(key)
    return raw[-1] if isinstance(raw, list) and raw else raw


def option_seeds(key: str, values: Mapping, counts: Mapping[str, int], choices: Mapping[str, tuple] = CHOICES) -> dict:
    """For each option of one sidebar switch: the random seeds stored for the config with that
    option and every other switch as it stands (0: not trained; None: the switch does not apply)."""
    out = {}
    for option in choices[key]:
        try:
            cfg = config_from_state({**values, key: option})
        except ValueError:
            out[option] = 0
            continue
        out[option] = None if cfg.model == "convnet" and key in VIT_FIELDS else counts.get(cfg.config_id, 0)
    return out


def variants(cfg: RunConfig, counts: Mapping[str, int]) -> int:
    """How many configs with one switch of cfg changed (every registered switch) have runs: the
    rows of its flip table, counted without any statistics."""
    if cfg.model != "vit":
        return 0
    total = 0
    for key in switches.NAMES:
        for option in CHOICES[key]:
            try:
                other = cfg.replace(**{key: option})
            except ValueError:
                continue
            total += option != getattr(cfg, key) and counts.get(other.config_id, 0) > 0
    return total


def coverage_caption(seeds: int | None) -> str:
    """What a sidebar option has stored: '10 seeds', '1 seed', 'not trained' ('' where it does not apply).
    Shown as the radio option's caption, not in its label: a bound widget's URL value is its label."""
    if seeds is None:
        return ""
    return "not trained" if not seeds else f"{seeds} seed{'s' if seeds != 1 else ''}"


def cell_name(cfg: RunConfig) -> str:
    """A config cell's human name, unique over the fields that split runs (the label names every field
    off its default), e.g. 'ViT p7 pre-LN pos · 4,000 rows' or 'convnet epochs 5 · 1,000 rows'."""
    return f"{cfg.label()} · {cfg.train_rows:,} rows"


def same_rows(centre: RunConfig | None = None) -> str:
    """The default baseline's name: SAME_ROWS, or your own study's centre at the selected rows."""
    return SAME_ROWS if centre is None else f"{centre.label()} at the selected rows"


def baseline_cells(study: Study, centre: RunConfig | None = None) -> dict[str, RunConfig | None]:
    """The baseline choices by name: same_rows(centre) (None: resolved against the selection), the article's
    ViT at 4,000 rows (listed even before it is cached; not around your own study's `centre`), then every cached
    config cell (but the crossed cells of `sweep noise`, which hold one data/init/order seed fixed: the Seed noise
    page's)."""
    cells: dict[str, RunConfig | None] = {same_rows(centre): None}
    if centre is None:
        cells[cell_name(BASELINE)] = BASELINE
    stored = study.seed_runs().drop_duplicates("config_id").sort_values(["model", "label", "train_rows"])
    for _, row in stored.iterrows():
        cfg = config_of_row(row)
        cells.setdefault(cell_name(cfg), cfg)
    return cells


def resolve_baseline(name: str | None, cells: Mapping[str, RunConfig | None], selection: RunConfig,
                     centre: RunConfig | None = None) -> RunConfig:
    """The baseline config a choice names; the first (same_rows) or an unknown name -> the article's ViT, or your
    own study's `centre`, at the selection's training rows."""
    chosen = cells.get(name) if name is not None else None
    if chosen is not None:
        return chosen
    return default_baseline(selection) if centre is None else centre.replace(train_rows=selection.train_rows)


def forget_forged(state, key: str, options, limit: int | None = None) -> bool:
    """Drop a multiselect's value from the session `state` when no browser could have sent it (not a list
    of offered options, or more than `limit` of them: a forged widget message), so the widget shows its
    default, as a forged query string is ignored; True when one was dropped."""
    value = state.get(key)
    if value is None:
        return False
    offered = set(options)
    if isinstance(value, (list, tuple)) and (limit is None or len(value) <= limit) and \
            all(isinstance(item, (int, str)) and item in offered for item in value):
        return False
    del state[key]
    return True

