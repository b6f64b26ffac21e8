"""A throw-away switch added to the registry (and its RunConfig field, written in the class) reaches every
layer.

The vitcore package is copied to a temporary folder, one `Switch` (dropout 0.0 / 0.1, crossed in the
default grid) is appended to the copy's registry and its field to the copy's RunConfig, and a fresh process importing
the copy shows that RunConfig, run labels, the URL check, the sidebar (drawn by Streamlit's AppTest), the effect names
and the statistics' effects, the sweep grid, the anatomy's flips and the Attention page's matching
all pick it up, while every committed run keeps its id.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT
from packages import insert, package_copy

DROPOUT = '''
REGISTRY = (*REGISTRY, Switch("dropout", (0.0, 0.1), 0.0, "Dropout", "Dropout rate after each sublayer.",
                               tag=lambda v: f" drop {v}" if v else "", grid=(0.0, 0.1)))
'''

CHECK = '''
import json, sys
from pathlib import Path
import vitcore
assert vitcore.__file__.startswith(sys.argv[1]), vitcore.__file__  # the copy, not the worktree
from vitcore.config.run import FIELD_NAMES, RunConfig
from vitcore.config import switches
out = {}
ids = {}
for folder in sorted(Path(sys.argv[2]).iterdir()):
    if folder.is_dir() and len(folder.name) == 12 and not folder.name.startswith("."):  # run folders, not plans/
        cfg = RunConfig.from_dict(json.loads((folder / "config.json").read_text())["config"])
        ids[folder.name] = cfg.run_id
out["ids_kept"] = all(name == run_id for name, run_id in ids.items())
out["n_runs"] = len(ids)
out["field"] = "dropout" in FIELD_NAMES and RunConfig().dropout == 0.0
try:
    RunConfig(dropout=0.5)
    out["rejects"] = ""
except ValueError as error:
    out["rejects"] = str(error)
out["label"] = RunConfig(dropout=0.1).label()
out["new_id"] = RunConfig(dropout=0.1).run_id != RunConfig().run_id

from vitcore.app import selection, tables
out["choices"] = list(selection.CHOICES["dropout"])
out["url_note"] = selection.query_notes({"dropout": "0.5"})
out["url_ok"] = selection.query_notes({"dropout": "0.1"})
out["effect_name"] = tables.SWITCH_NAMES["dropout"]

from vitcore.run import sweep
default = sweep.grid("default", seeds=(0, 0), rows=(1000,))
out["grid_vits"] = sum(cfg.model == "vit" for cfg in default)
out["grid_dropouts"] = sorted({cfg.dropout for cfg in default})

sys.path.insert(0, sys.argv[3])
import fakes
from vitcore.stats import summaries
rows = [fakes.run_row(cfg, accuracy=0.8 - 0.05 * cfg.dropout * (cfg.seed + 1))
        for cfg in sweep.grid("default", seeds=(0, 2), rows=(1000,))]
runs = fakes.runs_table(rows)
effects = summaries.main_effects(runs)
out["effect_factors"] = sorted(set(effects["factor"]))
labels = tables.effect_frame(effects)["effect"]
out["effect_labels_named"] = bool(labels.notna().all()) and any(l.startswith("dropout 0.1") for l in labels)
flips = summaries.flip_effects(runs, RunConfig(train_rows=1000))
out["flip_switches"] = sorted(set(flips["switch"]))

from vitcore.model import anatomy
out["anatomy_flips"] = sorted({row["switch"] for _, row in anatomy.toggle_effects(RunConfig()).iterrows()})
from vitcore.analysis import attention
out["matched"] = "dropout" in attention.MATCH_FIELDS

from streamlit.testing.v1 import AppTest
from vitcore.app.sidebar import PAINTED
at = AppTest.from_string("from vitcore.app.sidebar import render_sidebar; render_sidebar()", default_timeout=60)
at.session_state[PAINTED] = True
at.run()
radio = next(r for r in at.sidebar.radio if r.label == "Dropout")
out["sidebar_options"] = list(radio.options)
print(json.dumps(out))
'''


@pytest.mark.slow
def test_a_new_switch_is_one_registry_entry_and_its_field(tmp_path):
    copy = package_copy(tmp_path / "pkg")
    config = copy / "vitcore" / "config"
    insert(config / "switches.py", "# The order of the tags in a run label", textwrap.dedent(DROPOUT))
    insert(config / "run.py", "    width: int = 64", "    dropout: float = 0.0\n")
    (tmp_path / "empty_store").mkdir()
    env = {**os.environ, "PYTHONPATH": str(copy), "VITCORE_STORE": str(tmp_path / "empty_store")}
    done = subprocess.run([sys.executable, "-c", CHECK, str(copy), str(ROOT / "cached_runs"), str(ROOT / "tests")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["ids_kept"] and out["n_runs"] >= 590
    assert out["field"] and out["new_id"]
    assert "dropout must be one of 0.0, 0.1" in out["rejects"]
    assert out["label"] == "ViT p7 pre-LN pos drop 0.1"
    assert out["choices"] == [0.0, 0.1] and out["url_ok"] == []
    assert len(out["url_note"]) == 1 and "allowed: 0.0, 0.1" in out["url_note"][0]
    assert out["effect_name"] == "dropout"
    assert out["grid_vits"] == 48 and out["grid_dropouts"] == [0.0, 0.1]
    assert "dropout" in out["effect_factors"] and out["effect_labels_named"]
    assert "dropout" in out["flip_switches"]
    assert "dropout" in out["anatomy_flips"]
    assert out["matched"]
    assert out["sidebar_options"] == ["0.0", "0.1"]
