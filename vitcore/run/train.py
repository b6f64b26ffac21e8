"""Deterministic training of one RunConfig, stored in a RunStore; cached runs are returned as they are.

Speed (docs/speed.md): instead of `model.fit`, one XLA-compiled training epoch (a loop over its
batches) traced once (fixed batch shape: the last partial batch of an epoch is dropped), validation and
test in batches of 1,000, the optimizer built before tracing. `python -m vitcore bench` compares it
with a plain `model.fit` script side by side; the determinism test trains twice in two processes.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import keras
import numpy as np
import tensorflow as tf
from sklearn.metrics import confusion_matrix, log_loss

from vitcore.config import environment
from vitcore.config.run import RunConfig, full_batches
from vitcore.data.fashion import load_split
from vitcore.data.patches import model_inputs
from vitcore.model import initial
from vitcore.model.build import NUM_CLASSES, build_model
from vitcore.run import compile_cache, overlap
from vitcore.run.loop import Loop
from vitcore.store import files, timing, writer
from vitcore.store.runs import Run, RunStore

Progress = Callable[[int, int, dict], None]  # (epoch, total epochs, metrics of that epoch)
# Bump when the way `seconds` is measured changes (not the result): 1 = one XLA launch per step
# (runs without a "timing" entry), 2 = one launch per epoch, compiled fresh, reused per cell, or
# loaded from the persistent compile cache ("cached"); 3 = the same, with the epoch loop
# lowered once (no TensorArrays), the data set decoded beside TensorFlow's import: faster by code,
# so its seconds never pool with version 2's; 4 = the same, traced without autograph, the run's split made
# beside TensorFlow's import; 5 = the same, the validation and test sets scaled and turned into model
# inputs once per process (a sweep worker's reused runs no longer make them again): faster by code;
# 6 = the same, a reused run's initial weights drawn by replaying the cell's first build (vitcore.model.initial)
# instead of a fresh Keras build (a fraction of a second a run): faster by code.
TIMING_VERSION = 6


def machine_load() -> float:
    """The machine's 1-minute load average: runnable processes, this one's threads included."""
    return round(os.getloadavg()[0], 3)


def configure_tensorflow(threads: int | None = None) -> int:
    """Deterministic ops and sized thread pools; call before any TensorFlow op runs. Returns the
    intra-op thread count: results are bit-identical only for the same count (it changes the order
    of float reductions), so each summary records it."""
    tf.config.experimental.enable_op_determinism()
    threads = threads or environment.threads() or os.cpu_count() or 1  # ValueError on a bad VITCORE_THREADS
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        # Before TensorFlow's context starts (it reads TF_XLA_FLAGS then); ValueError on a bad VITCORE_XLA_CACHE.
        compile_cache.enable(threads)
    except RuntimeError:  # already initialised in this process: keep what is set (and no new cache)
        pass
    return tf.config.threading.get_intra_op_parallelism_threads() or threads


def learning_rate(cfg: RunConfig, steps_per_epoch: int):
    """Adam's learning rate: the constant lr, or a linear warm-up from 0 to lr over warmup_epochs,
    then constant (CosineDecay with alpha=1.0 decays from lr to 1.0 * lr, i.e. not at all, after
    its built-in linear warm-up)."""
    if not cfg.warmup_epochs:
        return cfg.lr
    return keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=0.0, decay_steps=1, alpha=1.0,
        warmup_target=cfg.lr, warmup_steps=cfg.warmup_epochs * steps_per_epoch)


def _optimizer(cfg: RunConfig, steps_per_epoch: int):
    return keras.optimizers.Adam(learning_rate(cfg, steps_per_epoch))


def train(cfg: RunConfig, store: RunStore, progress: Progress | None = None,
          save_weights: bool | None = None) -> Run:
    """Train cfg (or return its stored run) in a fresh engine. Weights are kept for random-seed-0
    runs (no data, init or order seed other than 0) unless told otherwise."""
    return Trainer().train(cfg, store, progress, save_weights)


CELLS = 4  # compiled cells a Trainer keeps: ~5 MB each (patches 7, 4 and 14 kept beside another cell at 1,000 rows:
# 1,441 vs 1,425 MB resident at the end, where one kept cell ends; a run's peak is its own activations, not these)


@dataclass
class _Cell:
    """One compiled cell: its model, its loop, and the recipe of its first build (checked yet?)."""

    model: keras.Model
    loop: Loop
    recipe: tuple[initial.Recipe, bool] | None


class Trainer:
    """Trains runs one after another in one process, compiling once per cell.

    A cell is a config without its random seed and data/init/order seeds (`graph_id`): all its
    runs have the same graph and the same batch shapes, so the second run on reuses the traced and
    XLA-compiled epoch and forward functions. Its model's variables take the values a fresh build for
    that init seed would have (built with the same Keras seeding, then copied in) and the optimizer's
    variables return to their just-built values: the result is bit for bit that of a fresh process at the same
    thread count (tests/test_train.py compares both paths). The sweep worker holds one Trainer.

    It keeps the last CELLS cells it trained (the least recently used one dropped first): a plan sweep's worker
    comes back to a cell at the plan's next look, and a process compiles a cell only once (the persistent compile
    cache serves only the first cell a process traces: TensorFlow names each traced function with a counter of
    that process, part of the cache's key).
    """

    def __init__(self, workers: int = 1, session: str | None = None):
        self.workers = workers  # concurrent training processes on this machine: part of the timing basis
        # Trainings of one session (a sweep's workers) overlap by design; any other one running in the
        # same store at any moment of a run makes it "overlapped" (vitcore.run.overlap): its own timing group.
        self.session = session or overlap.new_session()
        self.node: str | None = None  # on a Ray node: its kind (vitcore.run.cluster), part of the timing basis
        self._cells: OrderedDict[str, _Cell] = OrderedDict()  # graph_id -> its cell, the most recently used last
        self._inputs: tuple | None = None  # (key, the images, their model inputs): _held_out_inputs'

    @staticmethod
    def _initial_weights(cell: _Cell, cfg: RunConfig) -> list:
        """A reused cell's initial weights for cfg's init seed (set just before), bit for bit a fresh build's:
        the cell's first build replayed (vitcore.model.initial) once a fresh build of its second run matched the
        replay, else that fresh build's own weights (a recipe that did not match is dropped)."""
        if cell.recipe is not None and cell.recipe[1]:
            return cell.recipe[0].draw(cfg.seeds.init)
        fresh = build_model(cfg)
        if cell.recipe is not None:
            cell.recipe = (cell.recipe[0], True) if cell.recipe[0].matches(fresh, cfg.seeds.init) else None
        return fresh.weights

    def _held_out_inputs(self, cfg: RunConfig, data) -> tuple[np.ndarray, np.ndarray]:
        """The validation and test images as the model of cfg eats them (model_inputs), made once for all the
        runs of this trainer that share them: load_split hands every run of a process the same read-only
        arrays, and a cell's runs the same model inputs. Kept read-only too: no run can change another's."""
        made = self._inputs
        key = (cfg.model, cfg.patch_size, cfg.tokenizer)
        if made is None or made[0] != key or made[1][0] is not data.x_val or made[1][1] is not data.x_test:
            inputs = tuple(model_inputs(cfg, images) for images in (data.x_val, data.x_test))
            for array in inputs:
                array.setflags(write=False)
            made = self._inputs = (key, (data.x_val, data.x_test), inputs)
        return made[2]

    def train(self, cfg: RunConfig, store: RunStore, progress: Progress | None = None,
              save_weights: bool | None = None) -> Run:
        cached = store.get(cfg)
        if cached is not None:
            return cached
        return store.put(cfg, self.render(cfg, self.fit(cfg, progress, store), save_weights))

    @staticmethod
    def render(cfg: RunConfig, result: dict, save_weights: bool | None = None) -> dict[str, bytes]:
        """A fit's run files as bytes (vitcore.store.writer), what the store writes, here or on a Ray
        driver. Weights are kept for random-seed-0 runs unless told otherwise, and only when they fit under
        the store's fixed ceiling (vitcore.store.files.CEILING: a larger model's run is kept without them)."""
        keep = files.keeps_weights(cfg) if save_weights is None else save_weights and files.weights_fit(cfg)
        return writer.render(cfg, result["history"], result["confusion"], result["summary"],
                             result["model"] if keep else None, predictions=result["predictions"])

    def fit(self, cfg: RunConfig, progress: Progress | None = None, store: RunStore | None = None,
            markers: Path | None = None) -> dict:
        """Train cfg in memory: history (list of per-epoch dicts), confusion, predictions (uint8,
        official test order), summary (metrics + timing basis) and the trained model. With a store
        (or a `markers` folder: a Ray node's own, which never sees the driver's store), the training
        holds a marker there, and a training of another session running at any moment of it makes
        the summary's timing.context "overlapped"."""
        root = markers if markers is not None else store.root if store is not None else None
        if root is None:
            return self._fit(cfg, progress)
        with overlap.watch(root, self.session) as seen:
            result = self._fit(cfg, progress)
        if seen.overlapped:
            result["summary"]["timing"]["context"] = overlap.CONTEXT
        return result

    def _fit(self, cfg: RunConfig, progress: Progress | None = None) -> dict:
        threads = configure_tensorflow()
        started, cpu_started, load_started = time.perf_counter(), time.process_time(), machine_load()
        seeds = cfg.seeds  # data sample, initial weights, batch order: each the random seed unless set
        data = load_split(cfg.train_rows, seeds.data)
        x_train, (x_val, x_test) = model_inputs(cfg, data.x_train), self._held_out_inputs(cfg, data)
        steps_per_epoch, _ = full_batches(len(x_train), cfg.batch_size)

        # Seeds Python's, NumPy's and TensorFlow's global generators too; nothing after this draws
        # from them (the batch order has its own generator, the data sample was drawn above).
        keras.utils.set_random_seed(seeds.init)
        cell = self._cells.pop(cfg.graph_id, None)
        reused = cell is not None
        # Compiling writes (or rewrites) an entry of the persistent cache, loading not; a reused cell does neither.
        before = None if reused else compile_cache.entries(compile_cache.in_use())
        if reused:
            for target, source in zip(cell.model.weights, self._initial_weights(cell, cfg), strict=True):
                target.assign(source)
            cell.loop.reset_optimizer()
        else:
            with initial.record() as recorded:
                model = build_model(cfg)  # a fresh build draws this seed's initial weights
            # the recipe draws the cell's next seeds' initial weights (unchecked yet)
            cell = _Cell(model, Loop(model, _optimizer(cfg, steps_per_epoch)), initial.recipe_of(recorded, model))
            while len(self._cells) >= CELLS:
                self._cells.popitem(last=False)  # the least recently used cell
        self._cells[cfg.graph_id] = cell  # the most recently used, last
        model, loop = cell.model, cell.loop
        rng = np.random.default_rng(seeds.order)  # the epoch shuffles
        history = []
        for epoch in range(1, cfg.epochs + 1):
            start = time.perf_counter()
            loss, accuracy = loop.train_epoch(x_train, data.y_train, rng.permutation(len(x_train)), cfg.batch_size)
            val_loss, val_accuracy = loop.evaluate(x_val, data.y_val)
            row = {"epoch": epoch, "loss": loss, "accuracy": accuracy, "val_loss": val_loss,
                   "val_accuracy": val_accuracy, "lr": loop.learning_rate(), "seconds": time.perf_counter() - start}
            history.append(row)
            if progress is not None:
                progress(epoch, cfg.epochs, row)

        probs = loop.predict(x_test)
        predicted = probs.argmax(axis=1)
        probs64 = probs.astype(np.float64)  # float32 rows sum to 1 only within ~1e-7
        confusion = confusion_matrix(data.y_test, predicted, labels=range(NUM_CLASSES))  # rows: true, cols: predicted
        best = max(history, key=lambda row: row["val_accuracy"])  # first epoch reaching the max
        final = history[-1]
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        summary = {
            "test_loss": float(log_loss(data.y_test, probs64 / probs64.sum(axis=1, keepdims=True),
                                        labels=range(NUM_CLASSES))),
            "test_accuracy": float((predicted == data.y_test).mean()),
            "best_val_accuracy": best["val_accuracy"],
            "best_epoch": best["epoch"],
            "final_train_accuracy": final["accuracy"],
            "final_val_accuracy": final["val_accuracy"],
            "gap": final["accuracy"] - final["val_accuracy"],
            "per_class_accuracy": (confusion.diagonal() / confusion.sum(axis=1)).tolist(),
            "params": int(model.count_params()),
            "seconds": wall,
            # When it was trained (UTC, to the second): a planned verdict says whether its runs were trained
            # before its plan was registered (vitcore.stats.plans: seen or blind).
            "trained_at": timing.now_utc(),
            "data_source": data.source,
            "threads": threads,
            # What the wall time depends on: runs compare in seconds only when all of this is equal.
            "timing": {"code": TIMING_VERSION, "threads": threads, "workers": self.workers,
                       "compile": "reused" if reused else compile_cache.how_compiled(before),
                       **({"node": self.node} if self.node else {}),
                       # The load it ran under (vitcore.store.index.busy): a busy machine's seconds form their own
                       # group.
                       "load": {"loadavg_start": load_started, "loadavg_end": machine_load(),
                                "cpu_per_wall": round(cpu / wall, 4), "cores": os.cpu_count() or 1}},
        }
        return {"history": history, "confusion": confusion, "predictions": predicted.astype(np.uint8),
                "summary": summary, "model": model}
