"""A throw-away metric added as one registry entry and one function reaches every view.

Fast, in the package under test: a macro-F1 of predictions.npy registered for one test (the registry and its
views monkeypatched) is computed by the store from a committed run, the official test labels handed in by the
store's parser (vitcore.store.derived.Predictions), never imported by the config layer; it equals
scikit-learn's `f1_score(average="macro")` and the macro-F1 of the run's own confusion.csv.

Slow: the vitcore package is copied to a temporary folder and one function (macro-F1 of confusion.csv) and one
`Metric` entry (higher is better, the accuracy margin, compared by default) are appended to the copy's
registry (vitcore/config/metrics.py), nothing else. A fresh process importing the copy, on a small store of
synthetic runs (tests/fakes.py, which asks the registry for the derived metrics), shows the metric with its
direction and margin in `compare`'s metrics.csv, in `effects`'s effects.csv and on the Ablations page's
cards (drawn by Streamlit's AppTest); its value cached in the store's index beside the run's stamp, so a
warm table reads it back without opening confusion.csv; and a metric the registry does not know refused.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import ROOT
from fakes import write_run
from packages import insert, package_copy
from sklearn.metrics import f1_score

from vitcore.config import metrics
from vitcore.config.metrics import HIGHER, Metric
from vitcore.config.run import RunConfig
from vitcore.data import fashion
from vitcore.stats.estimates import WORSE
from vitcore.store import derived, index
from vitcore.store.files import PREDICTIONS
from vitcore.store.runs import RunStore

COMMITTED = "001fd68f8669"  # a committed run that keeps predictions.npy (and no weights: judged in milliseconds)


def macro_f1_of_predictions(run) -> float:
    """The mean over the ten classes of F1, from the run's predicted classes and the official test labels."""
    from sklearn.metrics import f1_score  # heavy: imported when a value is computed, not with the registry

    return float(f1_score(run.labels, run.predicted, average="macro"))


MACRO_F1_ENTRY = Metric("macro_f1", "Macro-F1", "The mean over the ten classes of F1 (a throw-away metric).",
                        HIGHER, compared=True, source=PREDICTIONS, derive=macro_f1_of_predictions)


@pytest.fixture
def macro_f1_registered(monkeypatch):
    """The real package's registry with MACRO_F1_ENTRY appended for one test: the entry, and the views the store
    reads of it (METRIC, DERIVED), as vitcore/config/metrics.py derives them from REGISTRY."""
    monkeypatch.setattr(metrics, "REGISTRY", (*metrics.REGISTRY, MACRO_F1_ENTRY))
    monkeypatch.setattr(metrics, "METRIC", {**metrics.METRIC, MACRO_F1_ENTRY.name: MACRO_F1_ENTRY})
    monkeypatch.setattr(metrics, "DERIVED", (*metrics.DERIVED, MACRO_F1_ENTRY.name))
    derived.key.cache_clear()
    yield MACRO_F1_ENTRY.name
    derived.key.cache_clear()


def test_a_metric_of_predictions_npy_is_one_entry_given_the_test_labels(macro_f1_registered):
    name, folder = macro_f1_registered, ROOT / "cached_runs" / COMMITTED
    config = RunConfig.from_dict(json.loads((folder / "summary.json").read_text())["config"])
    verdict, row = index.judge(folder, COMMITTED)  # what a scan of the store keeps in its index
    assert verdict[1] is None and row is not None
    from_index = verdict[2][derived.key(name)]
    from_file = derived.values(folder, config)[name]  # a cold read: predictions.npy through its parser
    # independently: the file as numpy reads it, the labels as the data layer reads them (the local data set's
    # when there is one), scikit-learn's macro-F1
    expected = f1_score(fashion.official_test_labels(), np.load(folder / PREDICTIONS), average="macro")
    assert from_index == from_file == pytest.approx(expected, abs=1e-12)
    counts = derived.parse("confusion.csv", folder, config).astype(float)  # the run's own confusion matrix
    assert expected == pytest.approx(np.mean(2 * np.diag(counts) / (counts.sum(axis=0) + counts.sum(axis=1))))
    accuracy = np.trace(counts) / counts.sum()
    assert abs(expected - accuracy) > 1e-4  # not the accuracy under another name: the classes differ


def test_a_run_without_predictions_gives_nan(macro_f1_registered, tmp_path):
    run = write_run(RunStore(tmp_path / "store"), RunConfig(seed=1))  # a synthetic run keeps no predictions.npy
    assert np.isnan(derived.values(run.path, run.config)[macro_f1_registered])

MACRO_F1 = '''

def macro_f1(confusion) -> float:
    """The mean over the classes of F1 = 2 TP / (2 TP + FP + FN), from (10, 10) counts (row = true class)."""
    import numpy as np

    counts = np.asarray(confusion, dtype=float)
    return float(np.mean(2 * np.diag(counts) / (counts.sum(axis=0) + counts.sum(axis=1))))


REGISTRY = (*REGISTRY, Metric("macro_f1", "Macro-F1", "The mean over the ten classes of F1 (a throw-away metric).",
                              HIGHER, compared=True, source="confusion.csv", derive=macro_f1))
'''

CHECK = '''
import json, sys, warnings
from pathlib import Path
import vitcore
assert vitcore.__file__.startswith(sys.argv[1]), vitcore.__file__  # the copy, not the worktree
sys.path.insert(0, sys.argv[2])
import fakes
from vitcore.app.selection import BASELINE
from vitcore.config import metrics
from vitcore.stats import estimates
from vitcore.store.runs import RunStore

store, out = RunStore(sys.argv[3]), {}
POST = BASELINE.replace(norm_placement="post")
for seed, (base, post) in enumerate([(0.80, 0.70), (0.81, 0.72), (0.79, 0.68)]):
    fakes.write_run(store, BASELINE.replace(seed=seed), base)
    fakes.write_run(store, POST.replace(seed=seed), post)
out["compared"] = list(metrics.COMPARED)
table = store.table()
out["table_f1"] = sorted(round(v, 6) for v in table["macro_f1"])
out["fakes_f1"] = round(fakes.run_row(BASELINE, test_accuracy=0.80)["macro_f1"], 6)
head, _, body = (store.root / ".index.json").read_text().partition("\\n")
out["cached_keys"] = sorted({key for verdict in json.loads(body).values() for key in verdict[2]})
from vitcore.store import derived
def no_read(*args):
    raise AssertionError("a warm table read a run file for a derived metric")
derived.parse, parse = no_read, derived.parse
table_again = store.table()  # warm: the value comes from the index, confusion.csv is not opened
derived.parse = parse
out["warm_equal"] = table_again.equals(table)
out["cards_help"] = metrics.metric("macro_f1").help

from vitcore.cli import main
folder = Path(sys.argv[4])
for argv in (["compare", "--norm-placement", "post", "--train-rows", str(BASELINE.train_rows), "--out",
              str(folder / "compare")], ["effects", "--out", str(folder / "effects.csv")]):
    code = main(argv + ["--store", str(store.root)])
    assert code in (0, None), (argv, code)
import pandas as pd
row = pd.read_csv(folder / "compare" / "metrics.csv").set_index("metric").loc["macro_f1"]
out["compare_row"] = {k: (round(float(row[k]), 6) if k != "verdict" else row[k])
                      for k in ("mean_delta", "margin", "verdict")}
effects = pd.read_csv(folder / "effects.csv")
effect = effects[(effects["metric"] == "macro_f1") & (effects["factor"] == "norm_placement")]
out["effects_rows"] = [{"verdict": r.verdict, "margin": round(float(r.margin), 6),
                        "delta": round(float(r.mean_delta), 6)} for r in effect.itertuples()]
try:
    estimates.judge("macro_f2", estimates.paired_estimate([0.1, 0.2, 0.3]))
    out["unknown"] = ""
except ValueError as error:
    out["unknown"] = str(error)

from streamlit.testing.v1 import AppTest
from vitcore.app.sidebar import PAINTED
at = AppTest.from_file(sys.argv[5], default_timeout=120)
at.query_params["norm_placement"] = "post"
at.session_state[PAINTED] = True
at.run()
assert not at.exception, [e.value for e in at.exception]
out["cards"] = [(m.label, m.value, m.delta) for m in at.metric]
out["card_text"] = "\\n".join(md.value for md in at.markdown)
print(json.dumps(out))
'''


@pytest.fixture
def package_with_macro_f1(tmp_path):
    """A copy of vitcore whose metric registry gained one function and one entry (macro-F1 of confusion.csv)."""
    return with_macro_f1(tmp_path / "pkg")


def with_macro_f1(folder):
    """package_copy(folder) with macro-F1 appended to its metric registry (also bench/derived_metric.py's)."""
    copy = package_copy(folder)
    insert(copy / "vitcore" / "config" / "metrics.py", "\nMETRIC = {", textwrap.dedent(MACRO_F1))
    return copy


@pytest.mark.slow
def test_a_new_metric_is_one_registry_entry_and_one_function(package_with_macro_f1, tmp_path):
    copy, store, out = package_with_macro_f1, tmp_path / "store", tmp_path / "out"
    store.mkdir()
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": str(copy), "VITCORE_STORE": str(store)}
    done = subprocess.run([sys.executable, "-c", CHECK, str(copy), str(ROOT / "tests"), str(store), str(out),
                           str(ROOT / "app.py")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["compared"][-1] == "macro_f1"
    # fakes' confusion matrices spread each class's errors about evenly: F1 is the accuracy within 1e-5 there
    assert found["table_f1"] == pytest.approx([0.68, 0.7, 0.72, 0.79, 0.8, 0.81], abs=1e-5)
    assert found["fakes_f1"] == pytest.approx(0.8, abs=1e-5)
    assert len(found["cached_keys"]) == 1 and found["cached_keys"][0].startswith("macro_f1@")
    assert found["warm_equal"]
    # higher is better, judged at the accuracy margin: post-norm's lower macro-F1 reads "worse" at ±0.01
    row = found["compare_row"]
    assert row["mean_delta"] == pytest.approx(-0.1, abs=1e-4) and row["margin"] == 0.01 and row["verdict"] == WORSE
    assert found["effects_rows"] and all(r["verdict"] == WORSE and r["margin"] == 0.01 and r["delta"] < 0
                                         for r in found["effects_rows"])
    assert "unknown metric 'macro_f2'" in found["unknown"]
    cards = {label: (value, delta) for label, value, delta in found["cards"]}
    assert cards["Macro-F1"] == ("0.7000", "-0.1000")
    assert len(found["cards"]) == len(found["compared"])
    assert ":red-badge[worse]" in found["card_text"]
