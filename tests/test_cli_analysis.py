"""`compare`, `claims`, `effects --margin` and `diagnose-bn`'s refusals, called in-process."""

import re

import numpy as np
import paired_bootstrap as bootstrap
import pandas as pd
import pytest
from fakes import write_predicted_run, write_run
from scipy import stats as sp

from vitcore.article import claims as article_claims
from vitcore.cli import main
from vitcore.config.run import RunConfig
from vitcore.data.fashion import shipped_test_labels
from vitcore.stats import testset
from vitcore.stats.compare import CLASS_COLUMNS, CONFUSION_COLUMNS, METRIC_COLUMNS
from vitcore.stats.estimates import INCONCLUSIVE, WORSE
from vitcore.store.runs import RunStore


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> RunStore:
    """Three configs at 4 random seeds, written once for the module: its commands read the store and write
    elsewhere (--out)."""
    store = RunStore(tmp_path_factory.mktemp("filled") / "store")
    for seed in range(4):
        write_run(store, RunConfig(train_rows=1000, seed=seed), 0.80 + 0.002 * seed)
        write_run(store, RunConfig(train_rows=1000, norm="batch", seed=seed), 0.70 + 0.003 * seed)
        write_run(store, RunConfig(train_rows=4000, seed=seed), 0.85 + 0.001 * seed)
    return store


def test_compare_writes_the_three_tables(filled, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["compare", "--norm", "batch", "--train-rows", "1000", "--store", str(filled.root), "--out",
                 str(out)]) == 0
    metrics = pd.read_csv(out / "metrics.csv")
    assert list(metrics.columns) == METRIC_COLUMNS
    assert (metrics["n_pairs_with_test"] == 0).all()  # no run kept predictions: no interval over test images
    acc = metrics.set_index("metric").loc["test_accuracy"]
    assert acc["n_pairs"] == 4 and bool(acc["paired"]) and acc["verdict"] == INCONCLUSIVE  # planned: 4 of 10
    assert acc["look"] == 0 and acc["looks_planned"] == 4
    assert acc["plan"].startswith("planned (builtin): first look at 10")
    val = metrics.set_index("metric").loc["best_val_accuracy"]
    assert val["verdict"] == WORSE and val["plan"] == "fixed sample (not in the plan)"  # judged on all 4 pairs
    assert acc["mean_delta"] == pytest.approx(-0.10 + 0.0015, abs=1e-3)
    assert list(pd.read_csv(out / "classes.csv").columns) == CLASS_COLUMNS
    assert list(pd.read_csv(out / "confusion_delta.csv").columns) == CONFUSION_COLUMNS
    printed = capsys.readouterr().out
    assert "paired over random seeds 0–3 (4 pairs; each row's n: the pairs its verdict reads)" in printed
    lines = {line.split()[0]: line for line in printed.splitlines() if line.startswith("  ") and " Δ " in line}
    number = r"[+-][\d,]+\.\d{%d}"  # the app's rule: seconds to 0.1 s, accuracies to 4 decimals
    for metric, places in (("seconds", 1), ("test_accuracy", 4)):
        shape = rf"Δ {number % places} 95%( ×\d+)? \[{number % places}, {number % places}\] "
        assert re.search(shape, lines[metric]), lines[metric]
    sec = metrics.set_index("metric").loc["seconds"]
    assert f"Δ {sec['mean_delta']:+,.1f} " in lines["seconds"]


def test_compare_against_other_train_rows_is_unpaired(filled, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["compare", "--norm", "batch", "--train-rows", "1000", "--baseline", "train_rows=4000",
                 "--store", str(filled.root), "--out", str(out)]) == 0
    metrics = pd.read_csv(out / "metrics.csv")
    assert not metrics["paired"].any() and (metrics["n_pairs"] == 0).all()
    assert "UNPAIRED" in capsys.readouterr().out


@pytest.mark.parametrize("flags, message", [
    (["--baseline", "colour=red"], "--baseline takes FIELD=VALUE"),
    (["--baseline", "patch_size=x"], "must be a int"),
    (["--baseline", "patch_size=5"], "patch_size must be one of"),
    (["--margin", "2"], "--margin must be between 0 and 1"),
    (["--norm", "batch", "--train-rows", "2000"], "no runs of the selection"),
])
def test_compare_refuses_bad_input_in_one_line(filled, tmp_path, capsys, flags, message):
    assert main(["compare", *flags, "--store", str(filled.root), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "metrics.csv").exists()


def test_claims_and_effects_take_a_margin(filled, tmp_path, capsys):
    assert main(["claims", "--store", str(filled.root), "--out", str(tmp_path / "claims.csv")]) == 0
    claims = pd.read_csv(tmp_path / "claims.csv")
    assert set(claims["direction"]) <= set(article_claims.DIRECTIONS) and len(claims) >= 1  # rows with runs
    assert {"p_value", "p_tost", "p_adj", "p_tost_adj", "family", "ci90_low", "ci_adj_high",
            "size"} <= set(claims.columns)
    assert "margin ±0.005" in capsys.readouterr().out  # the tally at three margins
    assert main(["effects", "--store", str(filled.root), "--out", str(tmp_path / "e.csv"), "--margin", "0.5"]) == 0
    effects = pd.read_csv(tmp_path / "e.csv")
    assert {"p_value", "p_tost", "p_adj", "p_tost_adj", "family", "seeds_needed"} <= set(effects.columns)
    assert main(["claims", "--store", str(filled.root), "--margin", "0", "--out", str(tmp_path / "x.csv")]) == 2


def test_diagnose_bn_refuses_a_store_without_batchnorm_weights(filled, tmp_path, capsys):
    assert main(["diagnose-bn", "--store", str(filled.root), "--out", str(tmp_path / "bn")]) == 2
    assert "no BatchNorm ViT runs with weights" in capsys.readouterr().err


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_compare_with_predictions_adds_the_test_set_interval_and_flips_csv(store, tmp_path, capsys):
    """Runs that kept predictions.npy: metrics.csv gets test accuracy's interval over random seeds and test
    images (recomputed here from the same predictions), flips.csv and flip_pairs.csv are written beside it."""
    labels = shipped_test_labels()  # what the verdicts use, whatever data the machine has
    rng = np.random.default_rng(3)
    hard = rng.random(len(labels)) < 0.3  # images each random seed gets right only half the time
    for seed in range(4):
        for cfg, extra in ((RunConfig(train_rows=1000), 0.0), (RunConfig(train_rows=1000, norm="batch"), 0.05)):
            wrong = np.where(hard, rng.random(len(labels)) < 0.5, rng.random(len(labels)) < 0.05 + extra)
            write_predicted_run(store, cfg.replace(seed=seed), labels, np.where(wrong, (labels + 1) % 10, labels))
    out = tmp_path / "out"
    assert main(["compare", "--norm", "batch", "--train-rows", "1000", "--store", str(store.root), "--out",
                 str(out)]) == 0
    metrics = pd.read_csv(out / "metrics.csv").set_index("metric")
    acc = metrics.loc["test_accuracy"]
    assert acc["n_pairs_with_test"] == 4 and acc["interval"] == testset.WITH_TEST
    table = store.table()
    sel, base = (table[table["config_id"] == c.config_id].sort_values("seed")["run_id"]
                 for c in (RunConfig(train_rows=1000, norm="batch"), RunConfig(train_rows=1000)))
    diffs = bootstrap.differences(np.stack([store.load(r).predictions() for r in sel]),
                                  np.stack([store.load(r).predictions() for r in base]), labels)
    # the verdict's interval, recomputed from the residuals of the pairs x images table, images nested in classes
    n, images = diffs.shape
    d = diffs.astype(float)
    ss_images = ss_residual = 0.0
    for label in np.unique(labels):  # within each class: the two-way table's image and residual sums of squares
        part = d[:, labels == label]
        ss_images += n * ((part.mean(axis=0) - part.mean()) ** 2).sum()
        ss_residual += ((part - part.mean(axis=1, keepdims=True) - part.mean(axis=0, keepdims=True) + part.mean())
                        ** 2).sum()
    classes = len(np.unique(labels))
    ms_images, ms_residual = ss_images / (images - classes), ss_residual / ((n - 1) * (images - classes))
    se = np.sqrt(d.mean(axis=1).var(ddof=1) / n + max(ms_images - ms_residual, 0) / (n * images))
    half = sp.t.ppf(0.975, n - 1) * se
    assert (acc["ci_low"], acc["ci_high"]) == pytest.approx((d.mean() - half, d.mean() + half))
    seeds_half = sp.t.ppf(0.975, n - 1) * d.mean(axis=1).std(ddof=1) / np.sqrt(n)
    assert acc["ci_high_seeds"] - acc["ci_low_seeds"] == pytest.approx(2 * seeds_half)
    # the pigeonhole bootstrap over random seeds and images estimates the same spread, erring wide (2,000
    # replicates: its sd is known to ~1.6%)
    boot = bootstrap.seed_and_test_estimate(diffs)
    assert se < boot.se * (1 + 4 * 0.016)
    assert np.isnan(metrics.loc["gap", "test_se"]) and metrics.loc["gap", "interval"] == testset.SEEDS_ONLY
    flips_csv = pd.read_csv(out / "flips.csv")
    assert {"flip_rate", "null_rate", "seed_null_rate", "q_value", "listed"} <= set(flips_csv.columns)
    assert len(pd.read_csv(out / "flip_pairs.csv")) == 4
    printed = capsys.readouterr().out
    assert "over random seeds and test images" in printed and "no image is ranked" in printed  # 4 pairs < 6


@pytest.fixture(scope="module")
def own_centre(tmp_path_factory) -> RunStore:
    """Your own study at 5 epochs (`sweep --vary norm=layer,batch --vary pos_embedding=learned,none --cross
    --base epochs=5`, and depth 4 alone): no run at the article's ViT's 15 epochs. Written once for the module:
    its commands read it and write elsewhere."""
    store = RunStore(tmp_path_factory.mktemp("own_centre") / "store")
    centre = RunConfig(train_rows=1000, epochs=5)
    for seed in range(4):
        write_run(store, centre.replace(seed=seed), 0.78 + 0.002 * seed)
        write_run(store, centre.replace(norm="batch", seed=seed), 0.68 + 0.003 * seed)
        write_run(store, centre.replace(pos_embedding="none", seed=seed), 0.76 + 0.002 * seed)
        write_run(store, centre.replace(norm="batch", pos_embedding="none", seed=seed), 0.67 + 0.003 * seed)
        write_run(store, centre.replace(depth=4, seed=seed), 0.79 + 0.001 * seed)
    return store


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_effects_around_your_own_centre(own_centre, tmp_path, capsys):
    """`effects --base epochs=5` measures the effects around the study's own centre, its factorial's family named
    by that centre; without --base the same store (no article's ViT) is measured around that centre too, saying so."""
    out, plain = tmp_path / "e.csv", tmp_path / "plain.csv"
    assert main(["effects", "--store", str(own_centre.root), "--out", str(plain)]) == 0
    assert "around this store's centre, ViT p7 pre-LN pos epochs 5 (it holds no run of the article's ViT): --base " \
           "epochs=5 says so" in capsys.readouterr().out
    assert main(["effects", "--store", str(own_centre.root), "--out", str(out), "--base", "epochs=5"]) == 0
    assert plain.read_text() == out.read_text()
    effects = pd.read_csv(out).set_index(["factor", "level", "metric"])
    norm, depth = effects.loc[("norm", "batch", "test_accuracy")], effects.loc[("depth", "4", "test_accuracy")]
    assert norm["reference"] == "layer" and norm["n_pairs"] == 4 and norm["cells"] == 2  # over both position cells
    assert norm["mean_delta"] == pytest.approx(-0.095 + 0.001 * 1.5, abs=1e-9)  # (-0.10 + -0.09) / 2 + seed term
    assert norm["family"] == f"main effects around {RunConfig(epochs=5).label()} at 1,000 rows"
    assert norm["verdict"] == WORSE and norm["cells_measured"] == 2
    assert depth["reference"] == "2" and depth["cells"] == 1  # one field alone: a single-switch change of the centre
    assert depth["mean_delta"] == pytest.approx(0.01 - 0.001 * 1.5, abs=1e-9)
    assert "epochs 5" in depth["family"]


@pytest.mark.parametrize("base, message", [
    ("colour=red", "--base takes FIELD=V1,V2,... with FIELD one of"),
    ("epochs=x", "--base epochs takes int values"),
    ("width=30", "width (30) must be divisible by heads (4)"),
    ("epochs=5,epochs=6", "--base gives epochs more than once"),
])
def test_effects_refuses_a_bad_base_in_one_line(own_centre, tmp_path, capsys, base, message):
    out = tmp_path / "e.csv"
    assert main(["effects", "--store", str(own_centre.root), "--out", str(out), "--base", base]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


@pytest.fixture
def base_study(store):
    """`sweep --vary depth=1 --seeds 0-1 --rows 300 --base epochs=2`, without training: no article's ViT stored."""
    for seed in range(2):
        write_run(store, RunConfig(train_rows=300, epochs=2, seed=seed), 0.42 + 0.01 * seed)
        write_run(store, RunConfig(train_rows=300, epochs=2, depth=1, seed=seed), 0.44 + 0.01 * seed)
    return store


def test_compare_defaults_to_your_own_studys_centre(base_study, tmp_path, capsys):
    """`compare --depth 1 --epochs 2 --train-rows 300` on a `--base epochs=2` study compares with its base,
    and says that it did and how to name it."""
    out = tmp_path / "out"
    assert main(["compare", "--depth", "1", "--epochs", "2", "--train-rows", "300", "--store", str(base_study.root),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ViT p7 pre-LN pos depth 1 epochs 2 (300 rows) − ViT p7 pre-LN pos epochs 2 (300 rows)" in printed
    assert "this store's centre" in printed and "--baseline epochs=2" in printed
    assert pd.read_csv(out / "metrics.csv").set_index("metric").loc["test_accuracy", "n_pairs"] == 2


def test_compare_names_the_centres_baseline_when_the_baseline_has_no_runs(base_study, tmp_path, capsys):
    assert main(["compare", "--depth", "1", "--epochs", "2", "--train-rows", "300", "--baseline", "depth=4",
                 "--store", str(base_study.root), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "no runs of the baseline" in err and "--baseline epochs=2" in err and len(err.strip().splitlines()) == 1
