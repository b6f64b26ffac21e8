"""The CLI as a user meets it: one-line errors with exit code 2, check's exit code, export's files."""

import pandas as pd
import pytest


from conftest import run_cli


@pytest.mark.parametrize("args, words", [
    (["run", "--patch-size", "5"], "choose from 2, 4, 7, 14"),
    (["run", "--norm", "group"], "choose from 'layer', 'batch'"),
    (["run", "--train-rows", "99999"], "train_rows must be a whole number from 10 to 55,000"),
    (["run", "--warmup-epochs", "20"], "must not exceed epochs"),
    (["run", "--lr", "fast"], "invalid float value"),
    (["frobnicate"], "invalid choice"),
    (["sweep", "nope"], "unknown grid 'nope'"),
    (["sweep", "default", "--workers", "0"], "--workers must be at least 1"),
    (["check", "--store", "/nonexistent/store"], "no store at"),
    (["export", "--store", "/nonexistent/store", "--out", "/tmp/x"], "no store at"),
])
def test_bad_input_is_one_line_exit_2(args, words):
    done = run_cli(*args)
    assert done.returncode == 2
    assert words in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_check_is_clean_then_reports_corruption(tiny_store, tmp_path):
    import shutil

    store = tmp_path / "store"
    shutil.copytree(tiny_store.root, store)
    done = run_cli("check", "--store", str(store))
    assert done.returncode == 0 and "1 complete runs, 0 problems" in done.stdout
    run_id = next(p.name for p in store.iterdir())
    (store / run_id / "summary.json").write_text("{not json")
    done = run_cli("check", "--store", str(store))
    assert done.returncode == 1 and f"{run_id}: summary.json unreadable" in done.stdout


def test_export_writes_the_same_tables_as_the_store(tiny_store, tmp_path):
    done = run_cli("export", "--store", str(tiny_store.root), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for name, frame in tiny_store.export_frames().items():
        written = (tmp_path / name).read_bytes()
        assert written == frame.to_csv(index=False).encode()
    assert len(pd.read_csv(tmp_path / "confusions.csv")) == 100
    assert pd.read_csv(tmp_path / "histories.csv")["epoch"].tolist() == [1, 2]


def test_committed_store_is_clean():
    """`python -m vitcore check` on the shipped cached_runs/: every committed run is valid and current."""
    done = run_cli("check")
    assert done.returncode == 0, done.stdout[-3000:]
