"""Experiment (issue 32): can k random seeds of one cell train as ONE program, bit for bit?

Stacked weights with a leading seed axis (k, ...), one XLA-compiled epoch whose step maps the model
over that axis with `tf.vectorized_map` (so each matmul/einsum becomes a batched one carrying the seed
axis), one Keras Adam over the stacked variables (elementwise: the same update per slice). Each seed's
initial weights, data sample and batch order are drawn exactly as vitcore.run.train draws them; the
reference is vitcore's own single-seed trainer (`Trainer.fit`, what `python -m vitcore run` trains),
in the same process at the same thread count. Prints, per seed, whether history, confusion and
predictions are identical and, if not, the first differing value; then a one-step weight comparison
(initial weights / after 1 step) that says whether the difference is the initialisation, the data
order or the arithmetic; then the wall times (indicative: the box is shared).

    VITCORE_THREADS=1 nice -n 10 python bench/stacked_seeds.py [--rows 1000] [--epochs 2] [--mode vmap|copies]

Two ways to put the seeds in one program: "vmap" (the seed axis inside every matmul: the stacked
seeds the issue asks for) and "copies" (k copies of the single-seed graph side by side in one XLA
program, sliced from the stacked variables; the matmuls do not carry the seed axis).
Found (2026-12-01, TF 2.21 / Keras 3.15, 1,000 rows, seeds 0-3, 1 thread, box load 3-20: times
indicative only): initial weights, data and batch order identical in both modes. "vmap" is not bit
for bit: the forward pass alone is identical, but in the training program the step-1 probabilities
already differ (up to 1.8e-7) and so every gradient (e.g. patch_projection/bias up to 9.5e-7); after
one step 40-49 of patch_projection's 3,136 kernel entries differ by up to 4e-7; epoch losses differ
by ~1e-8, val_loss by 1.2e-7 (predictions and confusion still equal after 3 epochs). It is also ~7x
slower per epoch (49 s vs 6.3 s for 4 x 2 seed-epochs). "copies" is bit for bit (history, confusion,
predictions, weights after 1 step) but no faster (5.7 s vs 5.2 s per 4 x 2 seed-epochs at 1 thread;
11.6 s vs 9.2 s at 2 threads) and compiles a k-times larger program. Neither is adopted.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from sklearn.metrics import confusion_matrix  # noqa: E402

from vitcore.config.run import RunConfig, full_batches  # noqa: E402
from vitcore.data.fashion import load_split  # noqa: E402
from vitcore.data.patches import model_inputs  # noqa: E402
from vitcore.model.build import NUM_CLASSES, build_model  # noqa: E402
from vitcore.run.loop import EVAL_BATCH, Loop  # noqa: E402
from vitcore.run.train import Trainer, _optimizer, configure_tensorflow  # noqa: E402


def initial_weights(cfg: RunConfig) -> list[np.ndarray]:
    """The trainable weights a fresh single-seed run starts from (same seeding as train._fit)."""
    keras.utils.set_random_seed(cfg.seeds.init)
    return [v.numpy() for v in build_model(cfg).trainable_variables]


def seed_data(cfg: RunConfig):
    data = load_split(cfg.train_rows, cfg.seeds.data)
    return data, [model_inputs(cfg, x) for x in (data.x_train, data.x_val, data.x_test)]


MODES = ("vmap", "copies")


class Stacked:
    """k copies of cfg's model as one program: variables (k, *shape), one XLA epoch for all k."""

    def __init__(self, cfgs: list[RunConfig], mode: str = "vmap"):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
        cfg, k = cfgs[0], len(cfgs)
        self.template = build_model(cfg)
        if self.template.non_trainable_variables:
            raise ValueError("the experiment covers models without non-trainable state (no BatchNorm)")
        starts = [initial_weights(c) for c in cfgs]
        self.variables = [keras.Variable(np.stack(group), name=f"stacked_{i}")
                          for i, group in enumerate(zip(*starts))]  # each (k, *shape)
        steps, _ = full_batches(cfg.train_rows, cfg.batch_size)
        self.optimizer = _optimizer(cfg, steps)
        self.optimizer.build(self.variables)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(reduction="sum")
        template = self.template

        def call(weights, x, training):
            probs, _ = template.stateless_call(list(weights), [], x, training=training)
            return probs

        def step(x, y):  # x (k, batch, tokens, width), y (k, batch)
            values = [v.value for v in self.variables]
            with tf.GradientTape() as tape:
                tape.watch(values)

                def one(args):
                    weights, xi, yi = args
                    probs = call(weights, xi, True)
                    loss_sum = loss_fn(yi, probs)
                    correct = tf.reduce_sum(tf.cast(tf.argmax(probs, axis=-1, output_type=yi.dtype) == yi,
                                                    tf.float32))
                    return loss_sum, correct

                if mode == "vmap":  # batched matmuls/einsums carrying the seed axis
                    loss_sums, corrects = tf.vectorized_map(one, (values, x, y))  # each (k,)
                else:  # k copies of the single-seed graph side by side in the one program
                    outs = [one(([v[j] for v in values], x[j], y[j])) for j in range(k)]
                    loss_sums, corrects = (tf.stack(column) for column in zip(*outs))
                batch = tf.cast(tf.shape(x)[1], tf.float32)
                total = tf.reduce_sum(loss_sums / batch)  # d total / d loss_i = 1 exactly
            grads = tape.gradient(total, values)
            self.optimizer.apply_gradients(zip(grads, self.variables))
            return loss_sums, corrects

        @tf.function(jit_compile=True)
        def epoch(xs, ys):  # xs (steps, k, batch, ...), ys (steps, k, batch)
            steps = tf.shape(xs)[0]

            def body(i, losses, corrects):
                loss_sum, correct = step(xs[i], ys[i])
                return i + 1, losses.write(i, loss_sum), corrects.write(i, correct)

            empty = tf.TensorArray(tf.float32, size=steps)
            _, losses, corrects = tf.while_loop(lambda i, *_: i < steps, body, (0, empty, empty))
            return losses.stack(), corrects.stack()  # (steps, k)

        @tf.function(jit_compile=True)
        def forward(x):  # x (k, n, ...) -> (k, n, classes)
            values = [v.value for v in self.variables]
            if mode == "vmap":
                return tf.vectorized_map(lambda args: call(args[0], args[1], False), (values, x))
            return tf.stack([call([v[j] for v in values], x[j], False) for j in range(k)])

        self._epoch, self._forward = epoch, forward

    def predict(self, x: np.ndarray, k: int) -> np.ndarray:
        """x (n, ...) shared by every seed, tiled so each slice is its own operand: (k, n, classes)."""
        parts = [np.asarray(self._forward(np.broadcast_to(x[i:i + EVAL_BATCH], (k, *x[i:i + EVAL_BATCH].shape))))
                 for i in range(0, len(x), EVAL_BATCH)]
        return np.concatenate(parts, axis=1)


def train_stacked(cfgs: list[RunConfig], stacked: "Stacked", steps_only: int | None = None):
    """Train the k configs together; per seed: history, confusion, predictions (as train._fit)."""
    k, cfg = len(cfgs), cfgs[0]
    sets = [seed_data(c) for c in cfgs]
    rngs = [np.random.default_rng(c.seeds.order) for c in cfgs]
    steps, batch = full_batches(cfg.train_rows, cfg.batch_size)
    if steps_only:
        steps = steps_only
    histories = [[] for _ in cfgs]
    x_val = sets[0][1][1]
    for epoch in range(1, (1 if steps_only else cfg.epochs) + 1):
        index = [rng.permutation(cfg.train_rows)[:steps * batch].reshape(steps, batch) for rng in rngs]
        xs = np.stack([s[1][0][i] for s, i in zip(sets, index)], axis=1)  # (steps, k, batch, ...)
        ys = np.stack([s[0].y_train[i] for s, i in zip(sets, index)], axis=1)
        start = time.perf_counter()
        losses, corrects = stacked._epoch(xs, ys)
        if steps_only:
            return stacked
        losses, corrects = np.asarray(losses, np.float64), np.asarray(corrects, np.float64)
        probs = stacked.predict(x_val, k)
        y_val = sets[0][0].y_val
        for j in range(k):
            picked = np.clip(probs[j][np.arange(len(y_val)), y_val], 1e-7, 1.0)
            histories[j].append({"epoch": epoch, "loss": float(losses[:, j].sum() / (steps * batch)),
                                 "accuracy": float(corrects[:, j].sum() / (steps * batch)),
                                 "val_loss": float(-np.log(picked).mean()),
                                 "val_accuracy": float((probs[j].argmax(axis=1) == y_val).mean()),
                                 "seconds": time.perf_counter() - start})
    test = stacked.predict(sets[0][1][2], k)
    y_test = sets[0][0].y_test
    return [{"history": histories[j], "predictions": test[j].argmax(axis=1).astype(np.uint8),
             "confusion": confusion_matrix(y_test, test[j].argmax(axis=1), labels=range(NUM_CLASSES))}
            for j in range(k)]


def first_difference(name: str, a, b) -> str | None:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    diff = np.flatnonzero(a.ravel() != b.ravel())
    if not diff.size:
        return None
    i = diff[0]
    return (f"{name}: {diff.size} of {a.size} differ; first at flat index {i}: {a.ravel()[i]!r} vs {b.ravel()[i]!r}"
            f" (max |diff| {np.abs(a - b).max():.3g})")


def compare(single: dict, stacked: dict) -> list[str]:
    notes = []
    for one, two in zip(single["history"], stacked["history"]):
        for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
            if one[key] != two[key]:
                notes.append(f"history epoch {one['epoch']} {key}: {one[key]!r} vs {two[key]!r} "
                             f"(|diff| {abs(one[key] - two[key]):.3g})")
    for key in ("confusion", "predictions"):
        note = first_difference(key, single[key], stacked[key])
        if note:
            notes.append(note)
    return notes


def one_step_check(cfgs: list[RunConfig], steps: int, mode: str) -> list[str]:
    """Weights after `steps` steps of the first epoch: single-seed Loop vs the stacked program."""
    notes = []
    stacked = Stacked(cfgs, mode)
    for j, cfg in enumerate(cfgs):
        note = first_difference(f"seed {cfg.seed} initial weights",
                                np.concatenate([w.ravel() for w in initial_weights(cfg)]),
                                np.concatenate([v.numpy()[j].ravel() for v in stacked.variables]))
        notes.append(note or f"seed {cfg.seed} initial weights: identical")
    train_stacked(cfgs, stacked, steps_only=steps)
    for j, cfg in enumerate(cfgs):
        data, (x_train, _, _) = seed_data(cfg)
        keras.utils.set_random_seed(cfg.seeds.init)
        model = build_model(cfg)
        loop = Loop(model, _optimizer(cfg, full_batches(cfg.train_rows, cfg.batch_size)[0]))
        _, batch = full_batches(cfg.train_rows, cfg.batch_size)
        index = np.random.default_rng(cfg.seeds.order).permutation(cfg.train_rows)[:steps * batch]
        index = index.reshape(steps, batch)
        loop._epoch(x_train[index], data.y_train[index])
        for var, st in zip(model.trainable_variables, stacked.variables):
            note = first_difference(f"seed {cfg.seed} after {steps} step(s) {var.path}", var.numpy(), st.numpy()[j])
            if note:
                notes.append(note)
                break
        else:
            notes.append(f"seed {cfg.seed} after {steps} step(s): all weights identical")
    return notes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--steps", type=int, nargs="*", default=[1, 2, 10], help="one-step checks")
    parser.add_argument("--mode", choices=MODES, default="vmap")
    args = parser.parse_args()
    threads = configure_tensorflow()
    cfgs = [RunConfig(train_rows=args.rows, epochs=args.epochs, seed=s) for s in args.seeds]
    print(json.dumps({"threads": threads, "rows": args.rows, "epochs": args.epochs, "seeds": args.seeds,
                      "mode": args.mode,
                      "load": os.getloadavg()}))

    start = time.perf_counter()
    trainer = Trainer()
    singles = [trainer.fit(cfg) for cfg in cfgs]
    sequential = time.perf_counter() - start
    start = time.perf_counter()
    stacked = train_stacked(cfgs, Stacked(cfgs, args.mode))
    together = time.perf_counter() - start
    same = True
    for cfg, single, stack in zip(cfgs, singles, stacked):
        notes = compare(single, stack)
        same &= not notes
        print(f"seed {cfg.seed}: " + ("bit for bit (history, confusion, predictions)" if not notes else
                                      "DIFFERS\n  " + "\n  ".join(notes[:6])))
    for steps in args.steps:
        print("\n".join(one_step_check(cfgs, steps, args.mode)))
    # Steady state: every epoch after the first (the first carries trace + compile).
    later = [sum(row["seconds"] for row in run["history"][1:]) for run in singles]  # same work: k x (epochs - 1)
    later_stacked = sum(row["seconds"] for row in stacked[0]["history"][1:])
    print(json.dumps({"bit_for_bit": bool(same), "sequential_seconds": round(sequential, 1),
                      "stacked_seconds": round(together, 1), "ratio": round(together / sequential, 3),
                      "epochs_after_first_sequential": round(sum(later), 2),
                      "epochs_after_first_stacked": round(later_stacked, 2),
                      "load_after": os.getloadavg()}))


if __name__ == "__main__":
    main()
