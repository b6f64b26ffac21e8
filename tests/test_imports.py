"""The read-only side of vitcore never imports TensorFlow: the dashboard depends on it."""

import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow  # fresh interpreters: a clean sys.modules to look at

LIGHT = ["vitcore", "vitcore.config.run", "vitcore.store.runs", "vitcore.stats.summaries", "vitcore.article.report",
         "vitcore.data.patches",
         "vitcore.data.fashion", "vitcore.cli", "vitcore.run.sweep", "vitcore.analysis.cost", "vitcore.app.state",
         "vitcore.app.selection",
         "vitcore.app.tables", "vitcore.app.training.slot", "vitcore.app.sidebar", "vitcore.app.training.train_panel",
         "vitcore.app.charts", "vitcore.app.walkthrough.probes", "vitcore.model.anatomy", "vitcore.analysis.attention",
         "vitcore.model.numpy_vit",
         "vitcore.app.tables", "vitcore.app.walkthrough.walk", "vitcore.app.walkthrough.walk_charts",
         "vitcore.app.runs_view",
         "vitcore.app.claims_view", "vitcore.study", "vitcore.study.words"]


def test_light_modules_do_not_import_tensorflow():
    code = ("import importlib, sys\n"
            f"for name in {LIGHT!r}:\n"
            "    importlib.import_module(name)\n"
            "    heavy = [m for m in ('tensorflow', 'keras') if m in sys.modules]\n"
            "    if heavy: print(name, 'pulled in', heavy); break\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1000:]
    assert done.stdout.strip() == ""


def test_the_training_module_does_import_it():  # proves the probe above can see an import
    code = "import sys, vitcore.run.train; print('tensorflow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True"
