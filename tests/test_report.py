"""vitcore.article.report and the `effects` / `report` commands, on small synthetic stores (no TensorFlow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fakes import write_run

from vitcore.article import report, sources
from vitcore.config.run import RunConfig
from vitcore.stats import plan
from vitcore.stats.estimates import BETTER, EQUIVALENT, NOT_COMPARABLE, WORSE
from vitcore.stats.percell import SPREAD_COLUMNS
from vitcore.stats.summaries import EFFECT_COLUMNS
from vitcore.store.runs import RunStore

ROOT = Path(__file__).resolve().parents[1]


def save_run(store: RunStore, cfg: RunConfig, accuracy: float, gap: float, seconds: float, params: int) -> None:
    """Best (and final) val accuracy `accuracy`, test accuracy 0.01 below it, train accuracy `gap` above."""
    write_run(store, cfg, accuracy - 0.01, val=accuracy, train=accuracy + gap, seconds=seconds, params=params)


def make_store(path: Path, vit_lead: float, seeds=(0, 1, 2)) -> RunStore:
    """The article's ViT, ViT without position embedding (0.03 worse) and convnet at both sizes. The ViT
    leads the convnet by vit_lead and has a 0.15 gap against 0.01; small per-seed noise. Accuracies
    start at 0.70 so that even a 0.10 lead plus its gap stays a valid accuracy (the store checks)."""
    store = RunStore(path)
    rng = np.random.default_rng(7)
    for train_rows in (1000, 4000):
        for seed in seeds:
            shift = 0.01 * seed  # a seed shift shared by all models: pairing removes it
            noise = lambda: rng.normal(0, 0.002)  # noqa: E731
            save_run(store, RunConfig(train_rows=train_rows, seed=seed), 0.70 + vit_lead + shift + noise(),
                     0.15 + noise(), 60 + seed, 71_946)
            save_run(store, RunConfig(pos_embedding="none", train_rows=train_rows, seed=seed),
                     0.67 + vit_lead + shift + noise(), 0.15 + noise(), 60 + seed, 70_922)
            save_run(store, RunConfig(model="convnet", train_rows=train_rows, seed=seed), 0.70 + shift + noise(),
                     0.01 + noise(), 80 + seed, 60_554)
    return store


@pytest.fixture(scope="module")
def leading(tmp_path_factory) -> pd.DataFrame:
    """The table of make_store(vit_lead=0.03), built once for the module."""
    return make_store(tmp_path_factory.mktemp("leading") / "store", vit_lead=0.03).table()


@pytest.fixture
def runs(leading) -> pd.DataFrame:
    """A copy of `leading` for one test (a test that changed it would change only its own)."""
    return leading.copy()


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vitcore", *args], cwd=ROOT, capture_output=True, text=True)


def test_headline_table_beside_the_source_article(runs):
    table = report.headline(runs)
    assert list(zip(table["model"], table["train_rows"])) == [("vit", 1000), ("convnet", 1000), ("vit", 4000),
                                                              ("convnet", 4000)]
    assert (table["n_seeds"] == 3).all()
    vit4k = table[(table["model"] == "vit") & (table["train_rows"] == 4000)].iloc[0]
    assert vit4k["params_mean"] == 71_946 and vit4k["seed_params"] == sources.VIT_PARAMS_QUOTED
    assert vit4k["seed_best_val_accuracy"] == 0.7970 and vit4k["seed_gap"] == 0.1545
    assert vit4k["gap_mean"] == pytest.approx(0.15, abs=0.01) and vit4k["best_val_accuracy_std"] > 0
    assert np.isnan(table.loc[0, "seed_gap"])  # the seed page gives no gap at 1,000 rows


def test_headline_keeps_missing_cells_visible(runs):
    table = report.headline(runs[runs["train_rows"] == 4000])
    assert list(table["n_seeds"]) == [0, 0, 3, 3]
    sentences = report.headline_sentences(runs[runs["train_rows"] == 4000])
    assert "no paired runs" in sentences[0] and "+0.0370" in sentences[0]


def test_headline_deltas_are_paired_vit_minus_convnet(runs):
    deltas = report.headline_deltas(runs).set_index(["train_rows", "metric"])
    val = deltas.loc[(4000, "best_val_accuracy")]
    assert val["mean_delta"] == pytest.approx(0.03, abs=0.005) and val["n_pairs"] == 3 and val["verdict"] == BETTER
    assert val["seed_delta"] == pytest.approx(0.7970 - 0.7620)
    assert deltas.loc[(4000, "gap"), "verdict"] == WORSE  # the ViT's larger gap is worse
    # 20 s faster at every seed, but 3 pairs a sweep timed one after another: the machine's as much as the model's
    secs = deltas.loc[(1000, "seconds")]
    assert secs["verdict"] == NOT_COMPARABLE and secs["mean_delta"] == pytest.approx(-20)
    assert "its 3 pairs were timed one run after another, not interleaved" in secs["timing_note"]
    sentences = report.headline_sentences(runs)
    assert any("not comparable: its 3 pairs were timed one run after another" in s for s in sentences)


def test_sentences_follow_the_numbers(tmp_path, runs):
    ahead = report.headline_sentences(runs)  # vit_lead=0.03
    behind = report.headline_sentences(make_store(tmp_path / "b", vit_lead=-0.03).table())
    level = report.headline_sentences(make_store(tmp_path / "c", vit_lead=0.0).table())
    assert ahead != behind != level
    assert "the ViT is better" in ahead[0] and "the convnet is better" in behind[0]
    assert EQUIVALENT in level[0]
    assert any("overfits more" in s for s in ahead)
    near = report.headline_sentences(make_store(tmp_path / "e", vit_lead=0.037).table())
    far = report.headline_sentences(make_store(tmp_path / "f", vit_lead=0.10).table())
    assert "lies inside, an ordinary draw" in near[1] and "lies outside" in far[1]  # vs the article's +0.0370
    one_seed = report.headline_sentences(make_store(tmp_path / "d", vit_lead=0.03, seeds=(0,)).table())
    assert "too few random seeds" in one_seed[0] and BETTER not in one_seed[0]


@pytest.mark.slow
def test_effects_command_writes_the_exact_columns(tmp_path):
    make_store(tmp_path / "store", vit_lead=0.03)
    out = tmp_path / "deep" / "effects.csv"
    done = cli("effects", "--store", str(tmp_path / "store"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    effects = pd.read_csv(out)
    # both tests, family, verdict; where each verdict comes from (the Study's words); the per-cell spread
    assert list(effects.columns) == EFFECT_COLUMNS + plan.LEAD_COLUMNS + SPREAD_COLUMNS
    assert {"p_value", "p_tost", "p_adj", "p_tost_adj", "family", "ci90_low", "ci_adj_low"} <= set(effects.columns)
    pos = effects[(effects["factor"] == "pos_embedding") & (effects["metric"] == "best_val_accuracy")]
    assert set(pos["train_rows"]) == {1000, 4000} and (pos["verdict"] == WORSE).all()
    assert pos["mean_delta"].to_numpy() == pytest.approx([-0.03, -0.03], abs=0.005)
    assert str(out) in done.stdout


@pytest.mark.slow
def test_report_command_writes_both_files(tmp_path):
    make_store(tmp_path / "store", vit_lead=-0.03)
    done = cli("report", "--store", str(tmp_path / "store"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "out" / "headline.csv")
    assert len(table) == 4 and {"best_val_accuracy_mean", "seed_best_val_accuracy", "n_seeds"} <= set(table.columns)
    text = (tmp_path / "out" / "headline.md").read_text()
    assert "the convnet is better" in text and "0.7970" in text and "± " in text
    assert "70,922" in text and "71,946" in text
    assert "No crossover estimate: it needs paired runs of both models" in text  # two row counts only


# A missing store: tests/test_cli.py (every bad input, nothing written).
def test_empty_store_exits_2(tmp_path, capsys):
    """In the test's process (cli.main); tests/test_cli.py runs bad inputs in a fresh `python -m vitcore` too."""
    from vitcore import cli as vitcore_cli

    (tmp_path / "empty").mkdir()
    assert vitcore_cli.main(["effects", "--store", str(tmp_path / "empty"), "--out", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert "no valid runs" in err and "Traceback" not in err and not (tmp_path / "x.csv").exists(), err
