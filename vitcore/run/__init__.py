"""The run layer: deterministic training, named sweeps over worker processes, benchmarks.

Training needs TensorFlow and Keras, which the view-only install (requirements.txt) leaves out: the CLI
and the app's train panel check `training_installed()` and print `TRAIN_INSTALL` instead of failing.
"""

from __future__ import annotations

import importlib.util

TRAIN_INSTALL = "pip install -r requirements-train.txt"


def training_installed() -> bool:
    """Whether TensorFlow and Keras can be imported (without importing them: that takes seconds)."""
    return all(importlib.util.find_spec(name) is not None for name in ("tensorflow", "keras"))
