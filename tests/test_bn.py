"""vitcore.analysis.bn: stored BatchNorm statistics reproduce the stored accuracy; recalibration and debiasing
set the moving statistics to what they claim (checked against statistics computed independently,
on a probe model of the layer's input); the explanation states the numbers it is given."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, TINY

from vitcore.analysis import bn
from vitcore.config.run import RunConfig

TINY_BN = TINY.replace(norm="batch")  # 300 rows, 2 epochs: 8 steps, so the start values keep 0.99**8 = 92%


@pytest.fixture(scope="module")
def bn_store(tmp_path_factory):
    from vitcore.run.train import train
    from vitcore.store.runs import RunStore

    store = RunStore(tmp_path_factory.mktemp("bn_store"))
    train(TINY_BN, store)  # seed 0: weights kept
    return store


@pytest.mark.slow
def test_stored_weights_reproduce_the_stored_accuracy(bn_store):
    frame = bn.diagnose_bn(bn_store)
    assert list(frame.columns) == bn.COLUMNS
    assert len(frame) == 1
    row = frame.iloc[0]
    assert row.run_id == TINY_BN.run_id and row.bn_steps == 8
    assert row.test_accuracy_stored_weights == row.test_accuracy
    assert row.start_share == pytest.approx(0.99 ** 8)
    assert row.first_bn_sd_ratio > 1.5  # 8 steps: the stored variance is still mostly the start value 1


@pytest.mark.slow
def test_recalibration_sets_the_population_statistics_and_keeps_the_weights(bn_store):
    import keras

    from vitcore.data.fashion import load_split
    from vitcore.data.patches import model_inputs

    run = bn_store.get(TINY_BN)
    model = bn.load_model(run)
    x = model_inputs(TINY_BN, load_split(TINY_BN.train_rows, TINY_BN.seed).x_train)  # (300, 16, 49)
    layer = model.get_layer("block0_norm1")
    probe = keras.Model(model.input, layer.input)  # pre-norm: the patch projection + position embedding
    inputs = np.asarray(probe(x, training=False), dtype=np.float64)  # (300, 16, 64); no BatchNorm upstream
    mean, variance = inputs.mean(axis=(0, 1)), inputs.var(axis=(0, 1))
    assert not np.allclose(layer.moving_mean.numpy(), mean, atol=1e-3)  # stale before: the test can fail
    trainable = [w.numpy() for w in model.trainable_weights]

    bn.recalibrate(model, x)

    np.testing.assert_allclose(layer.moving_mean.numpy(), mean, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(), variance, rtol=1e-4, atol=1e-7)
    assert all(np.array_equal(a, b.numpy()) for a, b in zip(trainable, model.trainable_weights))
    assert all(norm.momentum == 0.99 for norm in bn.batch_norms(model))  # restored


@pytest.mark.slow
def test_debias_removes_exactly_the_start_share():
    """A BatchNorm layer fed one fixed batch T times: moving = r * start + (1 - r) * batch statistic."""
    import keras

    layer = keras.layers.BatchNormalization()
    x = np.random.default_rng(0).normal(3.0, 0.2, size=(64, 5, 8)).astype(np.float32)
    for _ in range(30):
        layer(x, training=True)
    model = keras.Sequential([keras.Input((5, 8)), layer])
    share = bn.debias(model, 30)
    assert share == pytest.approx(0.99 ** 30)
    np.testing.assert_allclose(layer.moving_mean.numpy(), x.mean(axis=(0, 1)), rtol=1e-4)
    np.testing.assert_allclose(layer.moving_variance.numpy(), x.var(axis=(0, 1)), rtol=1e-3)


def _frame(recalibrated: float, debiased: float) -> pd.DataFrame:
    rows = []
    for patch, stored in ((4, 0.12), (14, 0.72)):
        rows.append({"run_id": f"{patch:012d}", "label": f"ViT p{patch}", "patch_size": patch, "train_rows": 1000,
                     "seed": 0, "test_accuracy": stored, "test_accuracy_stored_weights": stored,
                     "test_accuracy_debiased": debiased if patch == 4 else stored,
                     "test_accuracy_recalibrated": recalibrated if patch == 4 else stored,
                     "final_train_accuracy": 0.9, "collapsed": bool(bn.collapsed(stored, 0.9)), "bn_steps": 225,
                     "start_share": 0.99 ** 225, "first_bn_variance": 0.03, "first_bn_sd_ratio": 2.1})
    return pd.DataFrame(rows, columns=bn.COLUMNS)


@pytest.mark.parametrize("recalibrated, debiased, words", [
    (0.70, 0.68, ["moving statistics, not the weights", "+0.580", "most of the damage",
                  "1 of 2 diagnosed runs collapsed",
                        "the 2 stored BatchNorm runs that kept their weights (2 configs, random seed 0)"]),
    (0.70, 0.15, ["moving statistics, not the weights", "little of the damage"]),
    (0.13, 0.13, ["Not the moving statistics", "+0.010"]),
])
def test_explain_states_the_measured_numbers(recalibrated, debiased, words):
    text = bn.explain(_frame(recalibrated, debiased))
    for word in words:
        assert word in text
    assert "sd ×2.10" in text and "reproduce every stored test accuracy" in text


def test_collapsed_is_low_test_with_high_train():
    assert bn.collapsed(0.19, 0.51) and not bn.collapsed(0.2, 0.9) and not bn.collapsed(0.1, 0.5)


def test_the_committed_diagnosis_reads_without_tensorflow():
    """vitcore/analysis/bn.csv, as the view-only dashboard reads it, has every column and explains itself."""
    frame = bn.read_diagnosis(ROOT / bn.BN_CSV)
    assert frame is not None and list(frame.columns) == bn.COLUMNS
    assert (frame["test_accuracy_stored_weights"] == frame["test_accuracy"]).all()
    assert bn.explain(frame).startswith("**")


@pytest.mark.slow
def test_importing_bn_does_not_import_tensorflow():
    code = "import sys, vitcore.analysis.bn; print([m for m in ('tensorflow', 'keras') if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stderr[-1000:]


def test_bn_steps_counts_full_batches():
    assert bn.bn_steps(RunConfig(train_rows=1000)) == 15 * 15
    assert bn.bn_steps(RunConfig(train_rows=4000)) == 62 * 15
