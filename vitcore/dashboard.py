"""The dashboard's non-UI logic: sidebar choices, query-string checks, baseline cells, time
estimates and the one-training-per-server slot. No Streamlit and no TensorFlow here, so all of
it is unit-tested directly (tests/test_app_dashboard.py).
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from vitcore.config import MODELS, NORM_PLACEMENTS, NORMS, PATCH_SIZES, POS_EMBEDDINGS, VIT_FIELDS, RunConfig

# The sidebar's choices per widget key (== RunConfig field). Values appear in the URL as str(value).
# train_rows/warmup_epochs offer the swept values plus a few that can be trained on demand.
TRAIN_ROWS = (1_000, 2_000, 4_000, 8_000)
WARMUP_EPOCHS = (0, 2, 5)
CHOICES: dict[str, tuple] = {"model": MODELS, "pos_embedding": POS_EMBEDDINGS, "norm_placement": NORM_PLACEMENTS,
                             "norm": NORMS, "patch_size": PATCH_SIZES, "train_rows": TRAIN_ROWS,
                             "warmup_epochs": WARMUP_EPOCHS}
DEFAULTS = {key: getattr(RunConfig(), key) for key in CHOICES}
BASELINE_KEY = "baseline"
BASELINE = RunConfig()  # the seed's ViT: patch 7, pre-LN, learned positions, 4,000 rows
# The default baseline follows the sidebar's training rows, so a switch is compared like for like.
SAME_ROWS = "the seed's ViT at the selected rows"
# Fields outside the sidebar that a cached cell might still differ in (named in its cell name).
_EXTRA_FIELDS = ("width", "depth", "heads", "mlp_dim", "epochs", "batch_size", "lr")


COMMUNITY_CLOUD_ROOT = "/mount/src/"  # where Streamlit Community Cloud checks out an app's repository


def training_allowed(environ: Mapping[str, str] = os.environ, app_path: str = __file__) -> bool:
    """Train-on-demand: VITCORE_ALLOW_TRAINING=0/false/no/off turns it off, 1/true/yes/on turns it on;
    unset, it is on except on Streamlit Community Cloud (a public deploy: the app runs from /mount/src)."""
    value = environ.get("VITCORE_ALLOW_TRAINING")
    if value is None:
        return not app_path.startswith(COMMUNITY_CLOUD_ROOT)
    return value.strip().lower() not in {"0", "false", "no", "off"}


def _shown(value) -> str:
    """A query value made safe to print inside a Markdown code span: short, no backticks."""
    text = value[-1] if isinstance(value, list) and value else value
    text = str(text).replace("`", "'").replace("\n", " ")
    return text if len(text) <= 40 else text[:37] + "..."


def query_notes(params: Mapping, baselines: list[str] | None = None) -> list[str]:
    """One note per sidebar query parameter whose value is not allowed (it falls back to the default).

    Streamlit drops an invalid bound value silently; this is what the user gets told instead.
    Unknown parameter names are ignored (they are not ours).
    """
    allowed = {key: [str(choice) for choice in choices] for key, choices in CHOICES.items()}
    defaults = {key: str(value) for key, value in DEFAULTS.items()}
    if baselines is not None:
        allowed[BASELINE_KEY] = list(baselines)
        defaults[BASELINE_KEY] = SAME_ROWS
    notes = []
    for key, options in allowed.items():
        if key not in params:
            continue
        value = params[key]
        value = value[-1] if isinstance(value, list) and value else value
        if str(value) not in options:
            shown = ", ".join(options) if len(options) <= 8 else f"one of {len(options)} cached configs"
            notes.append(f"`{key}={_shown(value)}` is not a valid value (allowed: {shown}); "
                         f"showing the default `{defaults[key]}` instead.")
    return notes


def cell_name(cfg: RunConfig) -> str:
    """A config cell's human name, unique over the fields that split runs, e.g.
    'ViT p7 pre-LN pos · 4,000 rows' or 'convnet · 1,000 rows · epochs 5'."""
    name = f"{cfg.label()} · {cfg.train_rows:,} rows"
    default = RunConfig()
    for key in _EXTRA_FIELDS:
        if key in VIT_FIELDS and cfg.model == "convnet":
            continue
        if getattr(cfg, key) != getattr(default, key):
            name += f" · {key} {getattr(cfg, key)}"
    return name


def config_of_row(row: Mapping) -> RunConfig:
    """The seed-0 RunConfig of a runs-table row (ViT-only fields are None for the convnet)."""
    fields = {key: row[key] for key in RunConfig.__dataclass_fields__
              if key in row and row[key] is not None and not (isinstance(row[key], float) and pd.isna(row[key]))}
    fields["seed"] = 0
    for key in ("patch_size", "width", "depth", "heads", "mlp_dim", "train_rows", "epochs", "batch_size",
                "warmup_epochs"):
        if key in fields:
            fields[key] = int(fields[key])
    return RunConfig(**fields)


def baseline_cells(table: pd.DataFrame) -> dict[str, RunConfig | None]:
    """The baseline choices by name: SAME_ROWS (None: resolved against the selection), the seed's
    ViT at 4,000 rows (listed even before it is cached), then every cached config cell."""
    cells: dict[str, RunConfig | None] = {SAME_ROWS: None, cell_name(BASELINE): BASELINE}
    for _, row in table.drop_duplicates("config_id").sort_values(["model", "label", "train_rows"]).iterrows():
        cfg = config_of_row(row)
        cells.setdefault(cell_name(cfg), cfg)
    return cells


def resolve_baseline(name: str | None, cells: Mapping[str, RunConfig | None], selection: RunConfig) -> RunConfig:
    """The baseline config a choice names; SAME_ROWS (or an unknown name) -> the seed's ViT at the
    selection's training rows."""
    chosen = cells.get(name) if name is not None else None
    return chosen if chosen is not None else BASELINE.replace(train_rows=selection.train_rows)


def metric_rows(runs: pd.DataFrame, cfg: RunConfig, baseline: RunConfig) -> list[dict]:
    """Per metric: the selection's and baseline's seed mean/std and the seed-paired Δ (a stats.Delta,
    or None when either side has no runs). Runs pair by seed; when the two configs differ in
    training rows (an explicit baseline), they pair by seed alone."""
    from vitcore import stats

    selected, base = stats.runs_of(runs, cfg), stats.runs_of(runs, baseline)
    if cfg.train_rows != baseline.train_rows:
        base = base.assign(train_rows=cfg.train_rows)
    rows = []
    for metric in stats.METRICS:
        delta = stats.paired_delta(base, selected, metric) if len(selected) and len(base) else None
        rows.append({"metric": metric, "mean": selected[metric].mean(), "std": selected[metric].std(),
                     "n": len(selected), "baseline_mean": base[metric].mean(), "baseline_std": base[metric].std(),
                     "baseline_n": len(base), "delta": delta,
                     "higher_is_better": stats.HIGHER_IS_BETTER.get(metric, True)})
    return rows


def flip_table(flips: pd.DataFrame, metric: str) -> pd.DataFrame:
    """stats.flip_effects rows of one metric, readable: Switch, Change, Δ, 95% CI, Pairs, Verdict."""
    part = flips[flips["metric"] == metric]
    return pd.DataFrame({
        "Switch": part["switch"].str.replace("_", " "),
        "Change": [f"{a} → {b}" for a, b in zip(part["from"], part["to"])],
        "Δ": part["mean_delta"].astype(float),
        "95% CI": [_interval(lo, hi) for lo, hi in zip(part["ci_low"], part["ci_high"])],
        "Pairs": part["n_pairs"].astype(int),
        "Verdict": part["verdict"],
    }).reset_index(drop=True)


def _interval(low: float, high: float) -> str:
    return "n/a (one seed)" if pd.isna(low) else f"[{low:+.4f}, {high:+.4f}]"


def effect_labels(effects: pd.DataFrame, interaction: bool = False) -> pd.Series:
    """'patch_size 4 (vs 7)' or 'norm batch × patch_size 4' row names for the effect charts."""
    if interaction:
        return effects["factor"] + " " + effects["level"].astype(str) + " × " + effects["factor_b"] + " " + \
            effects["level_b"].astype(str)
    return effects["factor"] + " " + effects["level"].astype(str) + " (vs " + effects["reference"].astype(str) + ")"


def estimate_seconds(table: pd.DataFrame, cfg: RunConfig) -> tuple[float, str] | None:
    """Training time for cfg from similar cached runs, scaled by train rows x epochs.

    Similar = same model (and, for the ViT, same patch size: the token count drives the cost);
    falls back to any run of the same model. Returns (seconds, what it was based on) or None.
    """
    if table.empty:
        return None
    same_model = table[table["model"] == cfg.model]
    similar = same_model
    basis = "ViT runs" if cfg.model == "vit" else "convnet runs"
    if cfg.model == "vit":
        patch = same_model[same_model["patch_size"] == cfg.patch_size]
        if len(patch):
            similar, basis = patch, f"ViT runs at patch {cfg.patch_size}"
    if similar.empty:
        return None
    per_unit = (similar["seconds"] / (similar["train_rows"] * similar["epochs"])).median()
    return float(per_unit * cfg.train_rows * cfg.epochs), f"median of {len(similar)} cached {basis}"


def fmt_mean_std(mean: float, std: float, digits: int = 4) -> str:
    """How the pages print a seed mean: '0.7915 ± 0.0040' (std is NaN for a single seed)."""
    if std is None or pd.isna(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


# -- one training per server --------------------------------------------------------------------
Trainer = Callable[[RunConfig, Callable[[int, int, dict], None]], object]


@dataclass
class TrainingStatus:
    cfg: RunConfig
    started: float = field(default_factory=time.monotonic)
    epoch: int = 0
    total: int = 0
    history: list[dict] = field(default_factory=list)
    done: bool = False
    error: str | None = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class TrainingSlot:
    """Single flight: at most one training per server process, run in a background thread so it
    survives the page being left or rerun. Every session sees the same status (held by
    st.cache_resource in the app). `start` is atomic: of two sessions racing, exactly one wins."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.status: TrainingStatus | None = None  # the current or last training
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, cfg: RunConfig, trainer: Trainer) -> bool:
        """Begin training cfg unless a training is already running; False if busy."""
        with self._lock:
            if self.busy:
                return False
            status = TrainingStatus(cfg, total=cfg.epochs)
            self.status = status
            self._thread = threading.Thread(target=self._run, args=(status, trainer), daemon=True,
                                            name=f"vitcore-train-{cfg.run_id}")
            self._thread.start()
            return True

    def _run(self, status: TrainingStatus, trainer: Trainer) -> None:
        def progress(epoch: int, total: int, row: dict) -> None:
            status.epoch, status.total = epoch, total
            status.history.append(dict(row))

        try:
            trainer(status.cfg, progress)
        except Exception as error:  # shown to the user; the slot must free itself whatever happens
            status.error = f"{type(error).__name__}: {error}"
            traceback.print_exc()
        finally:
            status.done = True

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
