"""Synthetic runs for every test that needs stored results but not training: one metrics rule,
written either to a real RunStore (`write_run`) or as RunStore.table()-shaped rows (`run_row`).

Metrics are a plain function of the arguments, so tests can predict every number; nothing here
imports TensorFlow. `write_run(store, cfg, 0.8)` is a run whose test accuracy is 0.8.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vitcore.config.metrics import DERIVED, TABLE
from vitcore.config.run import FIELD_NAMES, VIT_FIELDS, RunConfig
from vitcore.data.fashion import CLASS_NAMES
from vitcore.model import anatomy
from vitcore.store import derived as derived_metrics
from vitcore.store import writer
from vitcore.store.files import BadRun
from vitcore.store.runs import HISTORY_COLUMNS, RunStore
from vitcore.store.timing import now_utc

CLASSES = len(CLASS_NAMES)
TEST_PER_CLASS = 1_000  # the official test split: 1,000 images per class
TEST_ROWS = CLASSES * TEST_PER_CLASS


def params_of(cfg: RunConfig) -> int:
    """The parameter count Keras reports for cfg's model (vitcore.model.anatomy; checked against
    Keras in test_anatomy): the store refuses a run whose params differ."""
    return anatomy.total(cfg)


def metrics(cfg: RunConfig, accuracy: float = 0.8, *, val: float | None = None, train: float | None = None,
            seconds: float = 30.0, params: int | None = None) -> dict:
    """A run's summary metrics: test accuracy `accuracy` (to the 1/10,000 the test split can give);
    best and final validation accuracy `val` (default: accuracy), reached at the last epoch; final
    train accuracy `train` (default: val + 0.1, at most 1); gap = train - val."""
    val = accuracy if val is None else val
    train = min(val + 0.1, 1.0) if train is None else train
    return {"test_loss": 1 - accuracy, "test_accuracy": round(accuracy * TEST_ROWS) / TEST_ROWS,
            "best_val_accuracy": val, "best_epoch": cfg.epochs, "final_train_accuracy": train,
            "final_val_accuracy": val, "gap": train - val,
            "params": params_of(cfg) if params is None else params, "seconds": seconds}


def history(cfg: RunConfig, summary: dict) -> list[dict]:
    """One row per epoch, accuracies rising linearly to the summary's final values (so the last
    epoch is the best), as the store's validation requires of a run's files."""
    epochs = cfg.epochs
    return [dict(zip(HISTORY_COLUMNS, [epoch, 2.0 / epoch, summary["final_train_accuracy"] * epoch / epochs,
                                       2.2 / epoch, summary["final_val_accuracy"] * epoch / epochs, cfg.lr,
                                       summary["seconds"] / epochs]))
            for epoch in range(1, epochs + 1)]


def confusion(accuracy: float) -> np.ndarray:
    """(classes, classes) counts: rows are the test split's 1,000 images per class, the trace is
    round(accuracy x 10,000) (spread over the classes as evenly as whole numbers allow), and each
    class's errors are spread evenly over the other classes."""
    base, extra = divmod(round(accuracy * TEST_ROWS), CLASSES)
    counts = np.zeros((CLASSES, CLASSES), dtype=np.int64)
    for true in range(CLASSES):
        correct = base + (true < extra)
        each, left = divmod(TEST_PER_CLASS - correct, CLASSES - 1)
        others = [c for c in range(CLASSES) if c != true]
        counts[true, others] = each
        counts[true, others[:left]] += 1
        counts[true, true] = correct
    return counts


def write_run(store: RunStore, cfg: RunConfig, accuracy: float = 0.8, **options):
    """Store one complete synthetic run of cfg (no training, no weights) whose files agree with its
    summary; options as `metrics`."""
    summary = metrics(cfg, accuracy, **options)
    summary["trained_at"] = now_utc()  # as a training records it: after every plan registered before it
    return store.save(cfg, history(cfg, summary), confusion(accuracy), summary)


def write_centre_factorial(store: RunStore, centre: RunConfig, seeds: int) -> RunStore:
    """Your own factorial around `centre` (e.g. 5 epochs): norm and position embedding crossed, random seeds 0 to
    seeds - 1, batch norm ~0.10 and no position embedding ~0.02 below it (`sweep --vary norm=layer,batch --vary
    pos_embedding=learned,none --cross --base epochs=5`)."""
    for seed in range(seeds):
        for norm, pos, acc in (("layer", "learned", 0.78), ("batch", "learned", 0.68), ("layer", "none", 0.76),
                               ("batch", "none", 0.67)):
            write_run(store, centre.replace(norm=norm, pos_embedding=pos, seed=seed), acc + 0.002 * seed)
    return store


def derived(cfg: RunConfig, summary: dict, counts: np.ndarray | None = None,
            predicted: np.ndarray | None = None) -> dict:
    """The registry's derived metrics (vitcore.config.metrics.DERIVED) of the run `write_run` would store (with
    `counts` and `predicted`: `write_predicted_run`'s): its files rendered as the store writes them and read
    through the store's own parsers (vitcore.store.derived.PARSERS), so every source the store can read is one
    the fakes give, and a file the run does not keep (predictions.npy) gives NaN, as in the store. Files the
    store would refuse (a row overridden past what a run can hold) give NaN too."""
    if not DERIVED:
        return {}
    counts = confusion(summary["test_accuracy"]) if counts is None else counts
    try:
        files = writer.render(cfg, history(cfg, summary), counts, {}, predictions=predicted)
        return derived_metrics.from_bytes(files, cfg)
    except BadRun:
        return {name: np.nan for name in DERIVED}


def run_row(cfg: RunConfig, **overrides) -> dict:
    """A row shaped like RunStore.table() for cfg, without a store: ids, label, config fields (None
    where they do not apply to the model), `metrics(cfg)` with any metric overridden by name, and the
    derived metrics of those (unless overridden too)."""
    fields = cfg.identity()
    row = {"run_id": cfg.run_id, "config_id": cfg.config_id, "label": cfg.label()}
    row.update({name: fields.get(name) for name in FIELD_NAMES})
    summary = {**metrics(cfg), **overrides}
    row.update({**summary, **derived(cfg, summary), **overrides, "has_weights": False})
    return row


def runs_table(rows: list[dict]) -> pd.DataFrame:
    """run_row()s as a frame with RunStore.table()'s columns and dtypes (ViT-only fields as objects)."""
    frame = pd.DataFrame(rows, columns=["run_id", "config_id", "label", *FIELD_NAMES, *TABLE, "has_weights"])
    for name in VIT_FIELDS:
        frame[name] = frame[name].astype(object)
    return frame


def write_predicted_run(store: RunStore, cfg: RunConfig, labels: np.ndarray, predicted: np.ndarray):
    """Store a synthetic run of cfg whose predictions.npy is `predicted` (against `labels`, one per
    test image) and whose confusion matrix and test accuracy follow from it."""
    counts = np.zeros((CLASSES, CLASSES), dtype=np.int64)
    np.add.at(counts, (labels, predicted), 1)
    summary = metrics(cfg, float(np.trace(counts)) / len(labels))
    return store.save(cfg, history(cfg, summary), counts, summary, predictions=predicted)
