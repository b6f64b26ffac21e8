"""The compiled epoch and forward pass (vitcore.run.loop): one launch per epoch is one launch per step
bit for bit, and an epoch's batches."""

import numpy as np
import pytest

from vitcore.config.run import RunConfig


def _step_by_step(model, optimizer, x, y, orders, batch_size, xla):
    """The reference: one compiled call per batch (the loop before the epoch became one XLA launch)."""
    import keras
    import tensorflow as tf

    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(reduction="sum")

    spec = tf.TensorSpec((None, *model.input_shape[1:]), tf.float32)

    @tf.function(jit_compile=xla, input_signature=[spec, tf.TensorSpec((None,), tf.int32)])
    def step(xb, yb):
        with tf.GradientTape() as tape:
            probs = model(xb, training=True)
            loss_sum = loss_fn(yb, probs)
            loss = loss_sum / tf.cast(tf.shape(xb)[0], loss_sum.dtype)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss_sum, tf.reduce_sum(tf.cast(tf.argmax(probs, axis=-1, output_type=yb.dtype) == yb, tf.float32))

    history = []
    for order in orders:
        steps = len(order) // batch_size
        sums = np.asarray([step(x[i], y[i]) for i in np.split(order[:steps * batch_size], steps)], np.float64)
        history.append(tuple(float(v) for v in sums.sum(axis=0) / (steps * batch_size)))
    return history


@pytest.mark.slow
@pytest.mark.parametrize("cfg", [
    RunConfig(train_rows=300, seed=3),
    RunConfig(train_rows=300, patch_size=14, norm="batch", norm_placement="post", warmup_epochs=1, seed=3),
    RunConfig(model="convnet", train_rows=300, seed=3),
], ids=["the-article's-vit", "vit-post-batchnorm-warmup", "convnet"])
def test_one_launch_per_epoch_matches_one_launch_per_step_bit_for_bit(cfg):
    import keras

    from vitcore.data.fashion import load_split
    from vitcore.data.patches import model_inputs
    from vitcore.model.build import build_model
    from vitcore.run.loop import Loop
    from vitcore.run.train import _optimizer, configure_tensorflow

    configure_tensorflow()
    data = load_split(cfg.train_rows, cfg.seed)
    x, y = model_inputs(cfg, data.x_train), data.y_train
    orders = [np.random.default_rng(cfg.seed).permutation(len(x)) for _ in range(2)]
    results = []
    for fused in (True, False):
        keras.utils.set_random_seed(cfg.seed)
        model = build_model(cfg)
        optimizer = _optimizer(cfg, len(x) // cfg.batch_size)
        if fused:
            loop = Loop(model, optimizer)
            history = [loop.train_epoch(x, y, order, cfg.batch_size) for order in orders]
        else:
            history = _step_by_step(model, optimizer, x, y, orders, cfg.batch_size, xla=cfg.model == "vit")
        results.append((history, [w.numpy() for w in model.weights]))
    (fused_history, fused_weights), (step_history, step_weights) = results
    assert fused_history == step_history
    assert all(np.array_equal(a, b) for a, b in zip(fused_weights, step_weights))


@pytest.mark.slow  # imports TensorFlow
@pytest.mark.parametrize("rows, batch, shape", [(4_000, 64, (62, 64)), (64, 64, (1, 64)), (50, 64, (1, 50)),
                                                (10, 64, (1, 10))])
def test_an_epoch_is_full_batches_or_one_smaller_batch(rows, batch, shape):
    """At or above batch_size: the full batches of the permutation, the last partial one dropped (as
    every committed run was trained); below it: all rows as one batch."""
    from vitcore.run.loop import Loop

    seen = []
    loop = Loop.__new__(Loop)  # only train_epoch's batching, no model
    loop._epoch = lambda xs, ys: (seen.append((xs, ys)), (np.zeros(len(xs)), np.zeros(len(xs))))[1]
    loop._called = {"epoch"}  # its first call (the compile or the cache load, compile_cache) is not this test's
    order = np.random.default_rng(0).permutation(rows)
    loop.train_epoch(np.arange(rows) * 10, np.arange(rows), order, batch)
    xs, ys = seen[0]
    assert xs.shape == shape and np.array_equal(ys.ravel(), order[:shape[0] * shape[1]])
