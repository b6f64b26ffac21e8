"""A derived metric reads any run file through one table (vitcore.store.derived.PARSERS, predictions.npy
included), the fakes read theirs through the same table, and whether a metric's interval adds the test images'
sampling is its registry entry's `test_set`, never its name.

In process, a throw-away registry entry (monkeypatched) marked `test_set` gets test accuracy's interval model in
`compare`'s pairing and in the main effects; a damaged or oversized predictions.npy is named, never parsed.
In a fresh process, a copy of the package whose registry gained one entry (test accuracy recomputed from
predictions.npy and the test labels its parser hands in, the copy's config layer importing nothing new) shows
the metric in the runs table, the index, the fakes and `compare`'s metrics.csv.
"""

import io
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import ROOT
from fakes import run_row, runs_table, write_predicted_run, write_run
from packages import insert, package_copy

from vitcore.config import metrics
from vitcore.config.metrics import HIGHER, Metric
from vitcore.config.run import RunConfig
from vitcore.data import fashion
from vitcore.stats import summaries, testset
from vitcore.stats.compare import paired_delta
from vitcore.stats.estimates import WORSE
from vitcore.store import derived
from vitcore.store.files import PREDICTIONS, BadRun
from vitcore.store.runs import RunStore

AGAIN = "test_accuracy_again"  # a second accuracy on the official test images
PLAIN = "test_accuracy_plain"  # the same numbers, its entry not marked test_set
IMAGES = 1_000


def entry(name: str, test_set: bool) -> Metric:
    return Metric(name, "Test accuracy again", "Test accuracy under another name (a throw-away metric).", HIGHER,
                  bound=1.0, test_set=test_set)


def predictions(rng, hard: np.ndarray, fixed: bool) -> np.ndarray:
    """Predicted classes of IMAGES images (all labels 0): about 20% wrong at random, and the variant (`fixed`)
    right on the same `hard` images under every random seed, so the images carry part of its Δ."""
    wrong = rng.random(IMAGES) < 0.2
    wrong[hard] = not fixed
    return wrong.astype(np.uint8)


def factorial(seeds: int = 4):
    """Rows of a norm × position-embedding factorial of the article's ViT (runs_table), random seeds 0 to seeds-1,
    and the TestSet of their predictions: batch norm wrong on 40 hard images every layer-norm run gets right."""
    rng, hard = np.random.default_rng(5), np.arange(40)
    predicted, rows = {}, []
    for seed in range(seeds):
        for norm in ("layer", "batch"):
            for pos in ("learned", "none"):
                cfg = RunConfig(norm=norm, pos_embedding=pos, seed=seed)
                predicted[cfg.run_id] = predictions(rng, hard, fixed=norm == "layer")
                accuracy = float((predicted[cfg.run_id] == 0).mean())
                rows.append(run_row(cfg, test_accuracy=accuracy))
    table = runs_table(rows)
    table[AGAIN] = table[PLAIN] = table["test_accuracy"]
    tests = testset.TestSet(lambda run_id: predicted.get(run_id), np.zeros(IMAGES, np.uint8))
    return table, tests


@pytest.fixture
def second_test_set_metric(monkeypatch):
    """The registry with two throw-away entries: AGAIN marked test_set, PLAIN not."""
    monkeypatch.setitem(metrics.METRIC, AGAIN, entry(AGAIN, test_set=True))
    monkeypatch.setitem(metrics.METRIC, PLAIN, entry(PLAIN, test_set=False))


def test_the_test_set_term_is_the_registry_field_not_the_name(second_test_set_metric):
    assert metrics.has_test_set("test_accuracy") and metrics.TEST_SET == ("test_accuracy",)
    assert metrics.has_test_set(AGAIN) and not metrics.has_test_set(PLAIN) and not metrics.has_test_set("gap")
    table, tests = factorial()
    learned = table[table["pos_embedding"] == "learned"]
    base, variant = learned[learned["norm"] == "layer"], learned[learned["norm"] == "batch"]
    rows = {name: paired_delta(base, variant, name, test_set=tests).row for name in ("test_accuracy", AGAIN, PLAIN)}
    assert rows["test_accuracy"]["interval"] == testset.WITH_TEST
    same = [column for column in ("mean_delta", "ci_low", "ci_high", "p_value", *testset.TEST_COLUMNS)
            if column in rows["test_accuracy"]]
    assert {c: rows[AGAIN][c] for c in same} == {c: rows["test_accuracy"][c] for c in same}
    assert rows[PLAIN]["interval"] == testset.SEEDS_ONLY and rows[PLAIN]["n_pairs_with_test"] == 0
    assert rows[PLAIN]["ci_high"] - rows[PLAIN]["ci_low"] < rows[AGAIN]["ci_high"] - rows[AGAIN]["ci_low"]


def test_main_effects_give_a_second_test_set_metric_the_same_interval(second_test_set_metric):
    table, tests = factorial()
    effects = summaries.main_effects(table, metrics=("test_accuracy", AGAIN, PLAIN), test_set=tests)
    norm = effects[effects["factor"] == "norm"].set_index("metric")
    assert norm.loc["test_accuracy", "interval"] == norm.loc[AGAIN, "interval"] == testset.WITH_TEST
    for column in ("mean_delta", "ci_low", "ci_high", "test_se", "verdict"):
        assert norm.loc[AGAIN, column] == norm.loc["test_accuracy", column], column
    assert norm.loc[PLAIN, "interval"] == testset.SEEDS_ONLY


def test_a_metric_without_a_test_set_term_cannot_be_marked_so():
    with pytest.raises(ValueError, match="test-set term"):
        Metric("x", "X", "", HIGHER, judged=False, test_set=True)
    with pytest.raises(ValueError, match="test-set term"):
        Metric("x", "X", "", HIGHER, source="vitcore.analysis.work", test_set=True)


def test_every_run_file_a_metric_may_read_has_one_parser():
    assert set(derived.PARSERS) == set(metrics.RUN_FILES) and PREDICTIONS in metrics.RUN_FILES
    Metric("x", "X", "", HIGHER, source=PREDICTIONS, derive=len)  # a source the registry accepts


def test_predictions_npy_is_parsed_by_the_stores_safe_reader(tmp_path):
    store = RunStore(tmp_path / "store")
    labels = np.repeat(np.arange(10, dtype=np.uint8), 1_000)
    predicted = labels.copy()
    predicted[::7] = (predicted[::7] + 1) % 10
    run = write_predicted_run(store, RunConfig(), labels, predicted)
    parsed = derived.parse(PREDICTIONS, run.path, run.config)  # the predicted classes and the labels beside them
    assert parsed.predicted.dtype == np.uint8 and np.array_equal(parsed.predicted, predicted)
    assert np.array_equal(parsed.labels, fashion.shipped_test_labels())
    assert derived.parse(PREDICTIONS, write_run(store, RunConfig(seed=1)).path, run.config) is None  # none kept
    bomb = io.BytesIO()  # a header claiming 10^12 classes: refused before any array is made
    np.lib.format.write_array_header_1_0(bomb, {"descr": "|u1", "fortran_order": False, "shape": (10 ** 12,)})
    for data, reason in ((bomb.getvalue(), "must be 10,000 uint8 classes"),
                         (b"not a numpy file", "predictions.npy unreadable"),
                         (b"\0" * (64 << 10), "over its limit")):
        (run.path / PREDICTIONS).write_bytes(data)
        with pytest.raises(BadRun, match=reason):
            derived.parse(PREDICTIONS, run.path, run.config)
    (run.path / PREDICTIONS).unlink()
    os.symlink(tmp_path / "elsewhere.npy", run.path / PREDICTIONS)
    with pytest.raises(BadRun, match="predictions.npy"):
        derived.parse(PREDICTIONS, run.path, run.config)  # a link is never followed


RECOMPUTED = '''

def accuracy_from_predictions(run) -> float:
    """The share of the official test images predicted right: test accuracy recomputed from predictions.npy
    (`run`: its predicted classes and the official test labels the store hands in; config imports no data)."""
    return float((run.predicted == run.labels).mean())


REGISTRY = (*REGISTRY, Metric("recomputed_accuracy", "Recomputed accuracy", "Test accuracy from predictions.npy.",
                              HIGHER, compared=True, bound=1.0, source="predictions.npy",
                              derive=accuracy_from_predictions, test_set=True))
'''

CHECK = '''
import json, sys, warnings
from pathlib import Path
import numpy as np
import vitcore
assert vitcore.__file__.startswith(sys.argv[1]), vitcore.__file__  # the copy, not the worktree
sys.path.insert(0, sys.argv[2])
import fakes
from vitcore.config.run import RunConfig
from vitcore.data.fashion import shipped_test_labels
from vitcore.store import derived
from vitcore.store.runs import RunStore

store, out, labels = RunStore(sys.argv[3]), {}, shipped_test_labels()
rng, hard = np.random.default_rng(3), np.flatnonzero(labels == 6)[:300]  # 300 shirts batch norm gets wrong
runs = {}
for seed in range(4):
    for norm in ("layer", "batch"):
        predicted = labels.copy()
        wrong = rng.random(len(labels)) < 0.15
        if norm == "batch":
            wrong[hard] = True
        predicted[wrong] = (labels[wrong] + 1) % 10
        runs[(norm, seed)] = fakes.write_predicted_run(store, RunConfig(norm=norm, seed=seed), labels, predicted)
fakes.write_run(store, RunConfig(seed=9), 0.8)  # keeps no predictions.npy
table = store.table().set_index("run_id")
out["equal"] = bool(np.allclose(table["recomputed_accuracy"].dropna(), table["test_accuracy"].dropna()[
    table["recomputed_accuracy"].notna()], atol=1e-12))
out["nan"] = table["recomputed_accuracy"].isna().sum().item()
run = runs[("batch", 0)]
counts = run.confusion()
out["fakes"] = fakes.derived(run.config, run.summary, counts, run.predictions())["recomputed_accuracy"]
out["table"] = float(table.loc[run.run_id, "recomputed_accuracy"])
out["fakes_no_predictions"] = fakes.run_row(RunConfig(seed=9))["recomputed_accuracy"]
head, _, body = (store.root / ".index.json").read_text().partition("\\n")
out["cached_keys"] = sorted({key for verdict in json.loads(body).values() for key in verdict[2]})
def no_read(*args):
    raise AssertionError("a warm table read a run file for a derived metric")
derived.parse, parse = no_read, derived.parse
out["warm_equal"] = store.table().set_index("run_id").equals(table)
derived.parse = parse
kept = (run.path / "predictions.npy").read_bytes()
(run.path / "predictions.npy").write_bytes(b"\\x93NUMPY damaged")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out["after_damage"] = len(store.table())
out["warned"] = [str(w.message) for w in caught]
(run.path / "predictions.npy").write_bytes(kept)
from vitcore.cli import main
folder = Path(sys.argv[4])
assert main(["compare", "--norm", "batch", "--store", str(store.root), "--out", str(folder)]) in (0, None)
import pandas as pd
rows = pd.read_csv(folder / "metrics.csv").set_index("metric")
out["compare"] = {name: rows.loc[name].to_dict() for name in ("test_accuracy", "recomputed_accuracy")}
print(json.dumps(out, default=float))
'''


@pytest.mark.slow
def test_a_metric_of_predictions_npy_is_one_registry_entry(tmp_path):
    copy = package_copy(tmp_path / "pkg")
    insert(copy / "vitcore" / "config" / "metrics.py", "\nMETRIC = {", textwrap.dedent(RECOMPUTED))
    store, out = tmp_path / "store", tmp_path / "out"
    store.mkdir()
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": str(copy), "VITCORE_STORE": str(store)}
    done = subprocess.run([sys.executable, "-c", CHECK, str(copy), str(ROOT / "tests"), str(store), str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["equal"] and found["nan"] == 1  # its value where predictions.npy is kept, NaN where not
    assert found["fakes"] == found["table"] and np.isnan(found["fakes_no_predictions"])  # the fakes read alike
    assert len(found["cached_keys"]) == 1 and found["cached_keys"][0].startswith("recomputed_accuracy@")
    assert found["warm_equal"]
    assert found["after_damage"] == 8 and any("predictions.npy" in w for w in found["warned"])  # named, skipped
    test, again = found["compare"]["test_accuracy"], found["compare"]["recomputed_accuracy"]
    assert test["interval"] == testset.WITH_TEST and again["verdict"] == WORSE
    # one interval model (test accuracy's verdict alone waits for its built-in plan's first look)
    assert all(again[column] == test[column] for column in ("mean_delta", "ci_low", "ci_high", "p_value",
                                                             *testset.TEST_COLUMNS))
