"""Synthetic runs for the dashboard's unit tests: a real RunStore, written without training.

Metrics are a deterministic function of the config and seed, so tests can predict them; nothing
here imports TensorFlow.
"""

from __future__ import annotations

import numpy as np

from vitcore.config import RunConfig
from vitcore.store import RunStore


def fake_run(store: RunStore, cfg: RunConfig, accuracy: float, seconds: float = 30.0):
    """Store one synthetic run of cfg whose test accuracy is `accuracy` (other metrics follow it)."""
    epochs = cfg.epochs
    history = [{"epoch": e, "loss": 2.0 / e, "accuracy": accuracy + 0.1 * e / epochs,
                "val_accuracy": accuracy * e / epochs, "val_loss": 2.2 / e, "lr": cfg.lr,
                "seconds": seconds / epochs} for e in range(1, epochs + 1)]
    correct = int(round(accuracy * 1000))
    confusion = np.full((10, 10), (1000 - correct) // 9, dtype=np.int64)
    np.fill_diagonal(confusion, correct)
    train, val = history[-1]["accuracy"], history[-1]["val_accuracy"]
    metrics = {"test_loss": 1 - accuracy, "test_accuracy": accuracy, "best_val_accuracy": val, "best_epoch": epochs,
               "final_train_accuracy": train, "final_val_accuracy": val, "gap": train - val,
               "params": 70_922, "seconds": seconds}
    return store.save(cfg, history, confusion, metrics)
