"""Why do BatchNorm ViTs collapse? Re-estimate their BatchNorm statistics and look again.

A collapsed run (`collapsed` in runs.csv, vitcore.store.index: test accuracy < 0.2 while final train
accuracy > 0.5) learned its training rows but predicts test images near chance. Keras'
BatchNormalization trains on each batch's own statistics but predicts with moving averages updated as
    moving = momentum * moving + (1 - momentum) * batch_statistic,   momentum = 0.99,
starting from mean 0 / variance 1. After T training steps the start values keep a share
momentum**T of the average (1,000 rows: 15 steps x 15 epochs = 225 steps, 0.99**225 = 0.104;
4,000 rows: 930 steps, 0.0001), and the rest averages statistics of earlier, different weights.

`diagnose_bn` takes every stored BatchNorm ViT run that kept its weights and reports its test
accuracy three ways, never changing a trainable weight:
    stored weights     the run's own moving statistics (must reproduce the stored figure)
    debiased           the start values' share removed exactly: (moving - r * start) / (1 - r),
                       r = momentum**T (Adam's bias correction): tests the "0.99**225" hypothesis
    recalibrated       population statistics of the run's own training rows (see `recalibrate`)
and, for the first BatchNorm layer (block0_norm1, whose input depends on no other BatchNorm), the
median over channels of its input's variance on the training rows (first_bn_variance) and of the
stored over recalibrated standard deviation (first_bn_sd_ratio: > 1 means inference divides its
activations by too large an sd, shrinking them).

    python -m vitcore diagnose-bn --out analysis     # ~2 min for the 24 committed runs on 2 cores
`explain(frame)` turns the table into the sentences the dashboard shows, so the text never
drifts from the numbers. TensorFlow is imported inside the functions that need it: the
dashboard imports this module for `explain` and `read_diagnosis` without paying for it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from vitcore.config.run import RunConfig, full_batches
from vitcore.data.fashion import load_split
from vitcore.data.patches import model_inputs
from vitcore.store.index import collapsed
from vitcore.store.runs import Run, RunStore

# committed with the package, so the view-only dashboard can show it
BN_CSV = Path(__file__).resolve().parent / "bn.csv"
COLUMNS = ["run_id", "label", "patch_size", "train_rows", "seed", "test_accuracy", "test_accuracy_stored_weights",
           "test_accuracy_debiased", "test_accuracy_recalibrated", "final_train_accuracy", "collapsed",
           "bn_steps", "start_share", "first_bn_variance", "first_bn_sd_ratio"]


def bn_steps(cfg: RunConfig) -> int:
    """Training steps, i.e. moving-average updates per BatchNorm layer: the trainer's full batches
    (config.run.full_batches), one update per step (validation runs with training=False)."""
    return full_batches(cfg.train_rows, cfg.batch_size)[0] * cfg.epochs


def bn_runs(store: RunStore) -> list[Run]:
    """Every stored ViT run with norm="batch" that kept its weights (seed-0 runs), in run-id order."""
    return [run for run in store.runs()
            if run.config.model == "vit" and run.config.batch_norm and run.weights_path is not None]


def batch_norms(model) -> list:
    import keras  # noqa: PLC0415 - TensorFlow

    return [layer for layer in model.layers if isinstance(layer, keras.layers.BatchNormalization)]


def recalibrate(model, x: np.ndarray) -> None:
    """Set every BatchNorm layer's moving mean/variance to the population statistics of its input
    over x, given the already recalibrated layers before it; trainable weights stay as they are.

    Why one forward pass with momentum 0 does exactly that (Keras 3.x BatchNormalization.call, read
    in keras/src/layers/normalization/batch_normalization.py): with training=True a layer computes
    the batch mean and biased variance (tf.nn.moments over every axis but the last: rows x tokens),
    assigns moving = moving * momentum + batch * (1 - momentum), i.e. the batch statistic itself at
    momentum 0, and normalises its *output with those same batch statistics*. With the batch = all
    of x, each later layer therefore sees exactly the activations it will see at inference on x
    with the new moving statistics, and records their population statistics in turn. Training mode
    changes nothing else here: the ViT has no dropout (MultiHeadAttention's dropout is 0), and no
    gradient is taken, so no trainable weight moves (checked below, bit for bit).
    """
    layers = batch_norms(model)
    if not layers:
        raise ValueError("the model has no BatchNormalization layer to recalibrate")
    before = [weight.numpy() for weight in model.trainable_weights]
    momenta = [layer.momentum for layer in layers]
    try:
        for layer in layers:
            layer.momentum = 0.0
        model(x, training=True)  # (rows, tokens, patch**2): one batch of every row
    finally:
        for layer, momentum in zip(layers, momenta):
            layer.momentum = momentum
    if not all(np.array_equal(old, new.numpy()) for old, new in zip(before, model.trainable_weights, strict=True)):
        raise RuntimeError("recalibration changed a trainable weight")


def debias(model, steps: int) -> float:
    """Remove the start values' share from every BatchNorm layer's moving statistics in place:
    moving = r * start + (1 - r) * average, r = momentum**steps, so average = (moving - r * start) / (1 - r)
    (start: mean 0, variance 1; a negative variance estimate is clipped to 0, epsilon keeps it finite).
    Returns r."""
    share = 1.0
    for layer in batch_norms(model):
        share = layer.momentum ** steps
        mean, variance = layer.moving_mean.numpy(), layer.moving_variance.numpy()
        layer.moving_mean.assign(mean / (1 - share))  # start mean is 0
        layer.moving_variance.assign(np.maximum((variance - share) / (1 - share), 0.0))
    return share


def accuracy_of(model):
    """accuracy(x, y) with training=False, computed as train.py computes the stored figure: the same
    XLA-compiled forward pass on batches of EVAL_BATCH rows, so the stored weights reproduce it. It
    reads the model's variables when called: compiled once, it sees every later change of statistics."""
    import tensorflow as tf  # noqa: PLC0415 - TensorFlow

    from vitcore.run.loop import EVAL_BATCH  # noqa: PLC0415 - TensorFlow

    forward = tf.function(lambda batch: model(batch, training=False), jit_compile=True,
                          input_signature=[tf.TensorSpec((None, *model.input_shape[1:]), tf.float32)])

    def accuracy(x: np.ndarray, y: np.ndarray) -> float:
        probs = np.concatenate([np.asarray(forward(x[i:i + EVAL_BATCH])) for i in range(0, len(x), EVAL_BATCH)])
        return float((probs.argmax(axis=1) == y).mean())

    return accuracy


def load_model(run: Run):
    """The run's ViT with its stored weights (trainable weights and BatchNorm moving statistics)."""
    from vitcore.model.build import build_vit  # noqa: PLC0415 - TensorFlow

    model = build_vit(run.config)
    model.load_weights(run.weights_path)
    return model


def diagnose_run(run: Run) -> dict:
    """One row of the diagnosis (COLUMNS) for one stored BatchNorm run with weights."""
    cfg = run.config
    data = load_split(cfg.train_rows, cfg.seed)
    x_train, x_test = model_inputs(cfg, data.x_train), model_inputs(cfg, data.x_test)
    model = load_model(run)
    accuracy = accuracy_of(model)
    stored = accuracy(x_test, data.y_test)
    first = model.get_layer("block0_norm1")  # the first BatchNorm on the way in, pre- or post-norm
    stored_sd = np.sqrt(first.moving_variance.numpy() + first.epsilon)
    steps = bn_steps(cfg)
    start_share = debias(model, steps)
    debiased = accuracy(x_test, data.y_test)
    recalibrate(model, x_train)  # overwrites the debiased statistics entirely (momentum 0)
    recalibrated = accuracy(x_test, data.y_test)
    variance = first.moving_variance.numpy()  # (width,): population variance of its input
    summary = run.summary
    return {"run_id": run.run_id, "label": cfg.label(), "patch_size": cfg.patch_size, "train_rows": cfg.train_rows,
            "seed": cfg.seed,
            "test_accuracy": summary["test_accuracy"], "test_accuracy_stored_weights": stored,
            "test_accuracy_debiased": debiased, "test_accuracy_recalibrated": recalibrated,
            "final_train_accuracy": summary["final_train_accuracy"],
            "collapsed": bool(collapsed(summary["test_accuracy"], summary["final_train_accuracy"])),
            "bn_steps": steps, "start_share": start_share,
            "first_bn_variance": float(np.median(variance)),
            "first_bn_sd_ratio": float(np.median(stored_sd / np.sqrt(variance + first.epsilon)))}


def diagnose_bn(store: RunStore, progress=None) -> pd.DataFrame:
    """The diagnosis table (COLUMNS), one row per stored BatchNorm ViT run with weights, ordered by
    train_rows and label. progress(done, total, row) is called after each run if given."""
    from vitcore.run.train import configure_tensorflow  # noqa: PLC0415 - TensorFlow

    configure_tensorflow()
    runs = bn_runs(store)
    rows = []
    for done, run in enumerate(runs, 1):
        rows.append(diagnose_run(run))
        if progress is not None:
            progress(done, len(runs), rows[-1])
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.sort_values(["train_rows", "label"], kind="stable").reset_index(drop=True)


def save_diagnosis(frame: pd.DataFrame, folder: str | Path) -> Path:
    """Write frame as <folder>/bn.csv (temp file, then rename) and return the path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path, temp = folder / BN_CSV.name, folder / f".{BN_CSV.name}.tmp"
    frame.to_csv(temp, index=False)
    temp.replace(path)
    return path


def read_diagnosis(path: str | Path = BN_CSV) -> pd.DataFrame | None:
    """The saved diagnosis (no TensorFlow), or None when it has not been computed."""
    path = Path(path)
    return pd.read_csv(path) if path.is_file() else None


def explain(frame: pd.DataFrame) -> str:
    """The measured explanation of the collapse, in markdown, from the numbers of `frame` alone."""
    if frame.empty:
        return "No stored BatchNorm run with weights: nothing to diagnose."
    frame = frame.assign(collapsed=frame["collapsed"].astype(bool))
    lines = []
    for rows, part in frame.groupby("train_rows"):
        bad = part[part["collapsed"]]
        share = part["start_share"].iloc[0]
        lines.append(f"- **{rows:,} rows** ({part['bn_steps'].iloc[0]} steps, start values' share "
                     f"0.99^{part['bn_steps'].iloc[0]} = {share:.3g}): {len(bad)} of {len(part)} diagnosed runs "
                     "collapsed; "
                     f"{(part['test_accuracy'] < 0.5).sum()} below 0.5 test accuracy as stored, "
                     f"{(part['test_accuracy_recalibrated'] < 0.5).sum()} after recalibration. "
                     + _moves(part, "All runs") + ("; " + _moves(bad, "collapsed runs") if len(bad) else "") + ".")
    seeds = sorted(int(seed) for seed in frame["seed"].unique())
    lines.append(f"- The diagnosed runs: the {len(frame)} stored BatchNorm runs that kept their weights "
                 f"({frame['label'].nunique()} configs, random seed{'s' if len(seeds) > 1 else ''} "
                 f"{', '.join(map(str, seeds))}), not the random seeds of one config a card counts: another set, "
                 "so the two counts of collapsed runs differ.")
    stored_ok = np.allclose(frame["test_accuracy_stored_weights"], frame["test_accuracy"], rtol=0, atol=1e-4)
    lines.append("- The stored weights " + ("reproduce every stored test accuracy" if stored_ok else
                 "do **not** reproduce every stored test accuracy (largest difference "
                 f"{(frame['test_accuracy_stored_weights'] - frame['test_accuracy']).abs().max():.4f})") + ".")
    return _verdict(frame) + "\n\n" + _mechanism(frame) + "\n\n" + "\n".join(lines)


def _mechanism(frame: pd.DataFrame) -> str:
    """Why the start share matters: the first BatchNorm's input variance is far below the start value 1."""
    cells = frame.groupby(["train_rows", "patch_size"])[["first_bn_variance", "first_bn_sd_ratio"]].median()
    parts = "; ".join(f"{rows:,} rows, patch {patch}: variance {row.first_bn_variance:.3f}, "
                      f"sd ×{row.first_bn_sd_ratio:.2f}" for (rows, patch), row in cells.iterrows())
    return ("Mechanism: the first BatchNorm layer (block0_norm1) normalises the patch projection, whose variance on "
            "the training rows is far below the moving variance's start value 1; the start value's remaining share "
            "inflates the stored variance, so at inference that layer divides by too large a standard deviation "
            f"and shrinks every token. Median input variance and stored ÷ re-estimated sd by cell: {parts}.")


def _moves(part: pd.DataFrame, what: str) -> str:
    def span(column: str) -> str:
        return f"{part[column].min():.3f}–{part[column].max():.3f} (mean {part[column].mean():.3f})"

    return (f"{what}: test accuracy {span('test_accuracy')} stored, {span('test_accuracy_debiased')} with the "
            f"start values removed, {span('test_accuracy_recalibrated')} recalibrated")


def _verdict(frame: pd.DataFrame) -> str:
    """One sentence: does re-estimating the statistics undo the collapse, and does removing the start share?"""
    bad = frame[frame["collapsed"]]
    if bad.empty:
        return "**No run collapsed**, so there is nothing for recalibration to explain."
    fixed = collapsed(bad["test_accuracy_recalibrated"], bad["final_train_accuracy"]).eq(False)
    gain = (bad["test_accuracy_recalibrated"] - bad["test_accuracy"]).mean()
    start = (bad["test_accuracy_debiased"] - bad["test_accuracy"]).mean()
    if fixed.all():
        cause = (f"**The collapse is the BatchNorm moving statistics, not the weights**: re-estimating them on each "
                 f"run's own training rows (no weight changed) lifts all {len(bad)} collapsed runs, by "
                 f"{gain:+.3f} test accuracy on average.")
    elif fixed.any():
        cause = (f"**Partly the moving statistics**: recalibration lifts {int(fixed.sum())} of {len(bad)} collapsed "
                 f"runs out of collapse ({gain:+.3f} on average).")
    else:
        return (f"**Not the moving statistics**: recalibrating them leaves all {len(bad)} collapsed runs collapsed "
                f"({gain:+.3f} on average); the weights themselves fail on test images.")
    share = "most" if start > gain / 2 else "little"
    return cause + (f" Removing only the start values' share (0.99^steps) recovers {start:+.3f} of it: "
                    f"{share} of the damage is the slow start of the moving averages"
                    + ("." if share == "most" else "; the rest is averages of batch statistics that no longer "
                       "match the final weights."))
