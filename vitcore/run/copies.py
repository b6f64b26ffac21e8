"""Which training a Ray worker's reply copies: the driver's index of the predictions it has seen (vitcore.run.verify).

A run's predictions.npy (its class for each of the 10,000 official test images) is its training's signature: two
trainings of one cell with other random seeds agree on at most 93.7% of the images in the committed store (81
cells, 1,685 pairs of nearest runs), and two configs that are one training (`training`: the same compiled graph and
data, init and order seeds) agree on all of them. So a reply whose predictions are another training's, exactly or on
NEAR_COPY of the images (weights nudged until a few predictions flip), is no training of its own config. `Copies`
holds the predictions of the store's runs (read when first asked) and of the replies stored since; `of(cfg, classes)`
names the run a reply copies, or None. Finding one only makes the driver retrain the reply (never taken on the
worker's word): its retrain decides, so two configs that happen to be one computation are not refused.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from vitcore.config.run import RunConfig
from vitcore.store.files import PREDICTIONS, BadRun, predictions_array, read_bounded
from vitcore.store.runs import RunStore
from vitcore.store.writer import SUMMARY

NEAR_COPY = 0.98      # of the test images predicted alike: a copy (distinct trainings: at most 0.937, above)
READ_LIMIT = 1 << 20  # bytes of a stored run's summary.json or predictions.npy read for the index


def training(cfg: RunConfig) -> tuple:
    """What makes two configs one training: one compiled graph and the same data, init and order seeds (a config
    written with its seeds spelt out is the run of its random seed: the committed store holds such pairs)."""
    return cfg.graph_id, tuple(cfg.seeds)


def classes(data) -> np.ndarray | None:
    """A predictions.npy's classes (its values, whatever its header), or None when the bytes are no predictions."""
    try:
        return predictions_array(data)
    except BadRun:
        return None


def fingerprint(data) -> str | None:
    """sha256 of a predictions.npy's classes (a v2.0 header or other padding around the same array is the same
    fingerprint); None when the bytes are no predictions (the run's check says why)."""
    found = classes(data)
    return None if found is None else hashlib.sha256(found.tobytes()).hexdigest()


class Copies:
    """The predictions of every training the driver has seen (see the module docstring)."""

    def __init__(self, store: RunStore):
        self.store = store
        self.exact: dict[str, dict[tuple, str]] | None = None  # fingerprint -> {training: a run id}
        self.trainings: list[tuple] = []
        self.run_ids: list[str] = []
        self.rows: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None  # rows stacked, (runs, 10,000) uint8; rebuilt after an add

    def add(self, cfg: RunConfig, run_id: str, data) -> None:
        """Index a run of cfg from its predictions.npy bytes (ignored when they are no predictions)."""
        self._load()
        self._add(training(cfg), run_id, classes(data))

    def of(self, cfg: RunConfig, data) -> tuple[str, float] | None:
        """(the run of another training whose predictions these are, the share of test images predicted alike) for a
        reply of cfg with this predictions.npy, or None: an exact copy first, else the nearest above NEAR_COPY."""
        found = classes(data) if data is not None else None
        if found is None:
            return None
        self._load()
        mine = training(cfg)
        key = hashlib.sha256(found.tobytes()).hexdigest()
        exact = sorted(run_id for what, run_id in self.exact.get(key, {}).items() if what != mine)
        if exact:
            return exact[0], 1.0
        if not self.rows:
            return None
        if self._matrix is None:
            self._matrix = np.stack(self.rows)
        alike = np.count_nonzero(self._matrix == found, axis=1) / found.size
        for index in np.argsort(-alike, kind="stable"):
            if alike[index] < NEAR_COPY:
                return None
            if self.trainings[index] != mine:
                return self.run_ids[index], float(alike[index])
        return None

    def _add(self, what: tuple, run_id: str, found: np.ndarray | None) -> None:
        if found is None:
            return
        runs = self.exact.setdefault(hashlib.sha256(found.tobytes()).hexdigest(), {})
        if what in runs:
            return
        runs[what] = run_id
        self.trainings.append(what)
        self.run_ids.append(run_id)
        self.rows.append(found)
        self._matrix = None

    def _load(self) -> None:
        """The store's runs, on first use: every run folder whose summary names a config and whose predictions.npy
        reads (an invalid run is still someone's predictions: a copy of it is no training either)."""
        if self.exact is not None:
            return
        self.exact = {}
        for run_id in self.store.run_ids():
            folder = self.store.root / run_id
            try:
                cfg = RunConfig.from_dict(json.loads(read_bounded(folder / SUMMARY, READ_LIMIT))["config"])
                data = read_bounded(folder / PREDICTIONS, READ_LIMIT)
            except (BadRun, ValueError, KeyError, TypeError, RecursionError):
                continue
            self._add(training(cfg), run_id, classes(data))
