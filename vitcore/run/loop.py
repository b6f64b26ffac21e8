"""One compiled training epoch and one compiled forward pass: the loop every run trains with.

Split from vitcore.run.train (which builds the model, the data and the run's record around it). Its
source is part of the persistent compile cache's key (vitcore.run.compile_cache.SOURCES).
"""

from __future__ import annotations

import contextlib

import keras
import numpy as np
import tensorflow as tf

from vitcore.config.run import full_batches
from vitcore.run import compile_cache

EVAL_BATCH = 1_000  # inference batch: no effect on the result, 15x fewer steps than 64


class Loop:
    """One compiled training epoch and one compiled forward pass, reused for every epoch and batch.

    Same semantics as `model.fit` (per-epoch shuffle, mean loss and accuracy of the training-mode
    predictions over the epoch, sample-weighted), without its per-epoch data pipeline and
    retracing. The epoch is a `tf.while_loop` over its batches inside one XLA computation: one
    launch per epoch instead of one per step (the step itself is small enough on this 2-core CPU
    that launching it cost more than running it). Same ops in the same order as a step-by-step
    loop: tests/test_train.py checks that the weights come out bit for bit the same.
    """

    def __init__(self, model: keras.Model, optimizer):
        self.model, self.optimizer = model, optimizer
        optimizer.build(model.trainable_variables)  # slots now, or tf.function traces twice
        self._optimizer_start = [v.value.numpy() for v in optimizer.variables]  # iterations 0, zero moments, lr
        loss_fn = keras.losses.SparseCategoricalCrossentropy(reduction="sum")

        spec = tf.TensorSpec((None, *model.input_shape[1:]), tf.float32)  # one trace for any batch
        batches = tf.TensorSpec((None, None, *model.input_shape[1:]), tf.float32)  # (steps, batch, ...)

        # XLA has no deterministic MaxPool gradient, so the convnet's epoch runs as a plain graph.
        xla = not any(isinstance(layer, keras.layers.MaxPooling2D) for layer in model.layers)

        def step(x, y):
            with tf.GradientTape() as tape:
                probs = model(x, training=True)
                loss_sum = loss_fn(y, probs)
                loss = loss_sum / tf.cast(tf.shape(x)[0], loss_sum.dtype)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            correct = tf.reduce_sum(tf.cast(tf.argmax(probs, axis=-1, output_type=y.dtype) == y, tf.float32))
            return loss_sum, correct

        # autograph=False: nothing here branches or loops in Python on a tensor, so autograph's rewrite of
        # this source (a fraction of a second of every process) gave the same program (same HLO).
        @tf.function(jit_compile=xla, autograph=False, input_signature=[batches, tf.TensorSpec((None, None), tf.int32)])
        def epoch(xs, ys):
            steps = tf.shape(xs)[0]

            def body(i, losses, corrects):
                loss_sum, correct = step(xs[i], ys[i])
                return (i + 1, tf.tensor_scatter_nd_update(losses, [[i]], [loss_sum]),
                        tf.tensor_scatter_nd_update(corrects, [[i]], [correct]))

            # Plain (steps,) tensors, not TensorArrays: XLA lowers a loop body that writes TensorArrays
            # twice (the first time to learn their shapes), a share of every process; same values.
            zeros = tf.zeros([steps], tf.float32)
            _, losses, corrects = tf.while_loop(lambda i, *_: i < steps, body, (0, zeros, zeros))
            return losses, corrects  # per step: summed loss, correct predictions

        @tf.function(jit_compile=True, autograph=False, input_signature=[spec])
        def forward(x):
            return model(x, training=False)

        self._epoch, self._forward = epoch, forward
        self._called: set[str] = set()  # the compiled functions called once already

    def reset_optimizer(self) -> None:
        """Back to the just-built optimizer state (step 0, zero moments) for the next seed."""
        for variable, start in zip(self.optimizer.variables, self._optimizer_start, strict=True):
            variable.assign(start)

    def train_epoch(self, x: np.ndarray, y: np.ndarray, order: np.ndarray, batch_size: int) -> tuple[float, float]:
        """One pass over full batches of a fresh permutation: the last partial batch (32 of 4,000
        rows at batch 64, other rows each epoch) is dropped so every step has one shape and XLA
        compiles once (another shape would cost another compile: longer than the 15 partial batches it would train).
        Fewer rows than one batch train as one smaller batch (at or above batch_size: unchanged)."""
        steps, batch_size = full_batches(len(order), batch_size)
        index = order[:steps * batch_size].reshape(steps, batch_size)  # (steps, batch)
        with self._first_call("epoch"):
            losses, corrects = self._epoch(x[index], y[index])
        seen = steps * batch_size
        return (float(np.asarray(losses, np.float64).sum() / seen),
                float(np.asarray(corrects, np.float64).sum() / seen))

    def predict(self, x: np.ndarray) -> np.ndarray:
        with self._first_call("forward"):
            return np.concatenate([np.asarray(self._forward(x[i:i + EVAL_BATCH]))
                                   for i in range(0, len(x), EVAL_BATCH)])

    def _first_call(self, name: str):
        """The first call of a compiled function compiles it or loads it from the persistent cache:
        the cache's harmless notices stay off the terminal then (compile_cache.quiet_notices)."""
        if name in self._called:
            return contextlib.nullcontext()
        self._called.add(name)
        return compile_cache.quiet_notices()

    def evaluate(self, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        probs = self.predict(x)
        picked = np.clip(probs[np.arange(len(y)), y], 1e-7, 1.0)  # Keras clips the same way
        return float(-np.log(picked).mean()), float((probs.argmax(axis=1) == y).mean())

    def learning_rate(self) -> float:
        return float(keras.ops.convert_to_numpy(self.optimizer.learning_rate))
