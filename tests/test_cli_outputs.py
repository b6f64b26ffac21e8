"""The CLI's outputs are whole or absent: each command writes into a staging folder and
renames each file into place, so a full disk (here: a file-size limit, RLIMIT_FSIZE, which fails a
write as ENOSPC does, without root or a real full disk) is one line, exit 1, and no partial file.
Before: ENOSPC tracebacks and truncated CSVs (histories.csv at 897,024 bytes, effects.csv cut at
4,096, 0-byte files). Also: an empty --out and a --baseline field given twice are refused."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT

from vitcore import cli
from vitcore.stats.replication import CONTRADICTED

LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
from vitcore.cli import main
sys.exit(main({argv!r}))
"""
STORE = str(ROOT / "cached_runs")
# "{store}": the page store (tests/stores.py: 81 runs), where every command reaches its writes with more than the
# limit's 2,048 bytes to write (effects.csv ~43 KB, claims.csv ~19 KB, the report's headline.md ~7.6 KB) at about
# half the cost of the committed store's grid.
COMMANDS = {
    "export": ["export", "--store", "{store}", "--out", "{out}"],
    "effects": ["effects", "--store", "{store}", "--out", "{out}/effects.csv"],
    "claims": ["claims", "--store", "{store}", "--out", "{out}/claims.csv"],
    "report": ["report", "--store", "{store}", "--out", "{out}"],
    "compare": ["compare", "--store", "{store}", "--norm", "batch", "--patch-size", "4", "--train-rows", "1000",
                "--out", "{out}"],
}


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_a_full_disk_is_one_line_and_exit_1_with_nothing_partial(tmp_path, command, page_store):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("an earlier file")
    argv = [arg.format(out=out, store=page_store.root) for arg in COMMANDS[command]]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", LIMITED.format(limit=2048, argv=argv)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: File too large"), done.stderr[-2000:]
    assert sorted(os.listdir(out)) == ["keep.txt"]  # nothing partial, no staging folder left


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_outputs_land_whole_and_replace_the_old_ones(tmp_path, capsys, page_store):
    out = tmp_path / "out"
    out.mkdir()
    (out / "runs.csv").write_text("old")
    assert cli.main(["export", "--store", str(page_store.root), "--out", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["confusions.csv", "histories.csv", "runs.csv"]
    assert (out / "runs.csv").read_text().startswith("run_id,")


@pytest.mark.parametrize("argv", [["export", "--store", STORE, "--out", ""],
                                  ["effects", "--store", STORE, "--out", " "],
                                  ["claims", "--store", STORE, "--out", ""]])
def test_an_empty_out_is_refused(tmp_path, monkeypatch, capsys, argv):
    """Before: `--out ''` wrote into the current folder."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    assert "--out is empty" in capsys.readouterr().err and os.listdir(tmp_path) == []


def test_a_baseline_field_given_twice_is_refused(tmp_path, capsys):
    """Before: `--baseline model=vit,model=convnet` silently took the last value."""
    argv = ["compare", "--store", STORE, "--out", str(tmp_path / "out"), "--baseline", "model=vit,model=convnet"]
    assert cli.main(argv) == 2
    assert "--baseline gives model more than once" in capsys.readouterr().err


def test_check_fix_on_a_read_only_store_does_not_claim_a_removal(tmp_path, monkeypatch, capsys):
    """Before: `check --fix` said "removed" for a folder still there. (As root no folder is read-only,
    so the removal is made to fail the way a read-only store fails it.)"""
    import shutil

    from damage import debris

    store = tmp_path / "store"
    store.mkdir()
    name = debris(store, age_seconds=7200)
    monkeypatch.setattr(shutil, "rmtree", lambda path, ignore_errors=False: None)
    assert cli.main(["check", "--store", str(store), "--fix"]) == 1
    out = capsys.readouterr().out
    assert "removed" not in out and f"{name}: unfinished write" in out


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_csv_counts_are_whole_and_no_column_is_named_like_an_sd_it_is_not(tmp_path, capsys, page_store):
    """claims.csv's train_rows and plans.csv's counts as integers; effects.csv's Δ in run-sd units says so."""
    import pandas as pd

    assert cli.main(["claims", "--store", str(page_store.root), "--out", str(tmp_path / "claims.csv")]) == 0
    claims = pd.read_csv(tmp_path / "claims.csv", dtype=str)
    assert claims["train_rows"].dropna().str.fullmatch(r"\d+").all(), claims["train_rows"].unique()
    assert "delta_in_run_sd" in claims.columns and "delta_sd" not in claims.columns
    assert cli.main(["plans", "--store", str(page_store.root), "--out", str(tmp_path / "plans")]) == 0
    plans = pd.read_csv(tmp_path / "plans" / "plans.csv", dtype=str)
    for name in ("questions", "decided", "at_cap", "replicated", CONTRADICTED, "not_confirmed"):
        assert plans[name].dropna().str.fullmatch(r"\d+").all(), (name, plans[name].unique())
