"""The CLI as a user meets it: one-line errors with exit code 2 before any work starts, check's
exit code and counts, export's files."""

import sys
import types
from pathlib import Path

import fakes
import pandas as pd
import pytest
from conftest import run_cli

from vitcore import cli
from vitcore.analysis import cost
from vitcore.config.run import RunConfig


@pytest.fixture
def no_work(monkeypatch):
    """Training or benchmarking fails the test: a bad path must be refused before either starts.
    (A stand-in vitcore.run.train, so nothing imports TensorFlow either.)"""
    def started(*args, **kwargs):
        raise AssertionError("work started before the path was checked")

    monkeypatch.setitem(sys.modules, "vitcore.run.train",
                        types.SimpleNamespace(train=started, configure_tensorflow=started))
    monkeypatch.setattr(cost, "bench_attention", started)


@pytest.fixture
def paths(tmp_path, store):
    """A store with one run, a plain file, a folder, and a path no one can write (not even root)."""
    fakes.write_run(store, RunConfig())
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-folder").mkdir()
    return {"store": str(store.root), "file": str(tmp_path / "a-file"), "folder": str(tmp_path / "a-folder"),
            "unwritable": "/proc/vitcore-cannot-write-here", "missing": str(tmp_path / "no-store"),
            "under-a-file": str(tmp_path / "a-file" / "out")}


@pytest.mark.parametrize("args, words", [
    ("run --seed 5 --store {file}", "--store {file} is a file, not a folder"),
    ("run --seed 5 --store {unwritable}", "cannot write there"),
    ("run --seed 5 --store {under-a-file}", "cannot write there"),
    ("sweep headline --store {file}", "--store {file} is a file, not a folder"),
    ("export --store {store} --out {file}", "--out {file} is a file, not a folder"),
    ("export --store {store} --out {unwritable}", "cannot write there"),
    ("report --store {store} --out {file}", "--out {file} is a file, not a folder"),
    ("report --store {store} --out {under-a-file}", "cannot write there"),
    ("effects --store {store} --out {folder}", "--out {folder} is a folder; give a file name"),
    ("effects --store {store} --out {unwritable}/effects.csv", "cannot write there"),
    ("bench-attention --out {unwritable}/cost.csv", "cannot write there"),
    ("bench-attention --out {folder}", "is a folder; give a file name"),
    ("check --store {missing}", "no store at {missing}"),
    ("check --store {file}", "--store {file} is a file, not a folder"),
    ("export --store {missing} --out {folder}", "no store at"),
    ("effects --store {missing} --out {folder}/e.csv", "no store at"),
    ("report --store {missing} --out {folder}", "no store at"),
    ("report --store {missing} --out {folder}/new", "no store at"),  # the new folder not made
    ("run --train-rows 9", "train_rows must be a whole number from 10 to 55,000, got 9"),
    ("run --train-rows 99999", "train_rows must be a whole number from 10 to 55,000"),
    ("run --heads 3", "width (64) must be divisible by heads (3)"),
    ("run --patch-size 5", "choose from 2, 4, 7, 14"),
    ("run --norm group", "choose from 'layer', 'batch'"),
    ("run --warmup-epochs 20", "must not exceed epochs"),
    ("run --lr fast", "invalid float value"),
    ("frobnicate", "invalid choice"),
    ("sweep nope", "unknown grid 'nope'"),
    ("sweep default --workers 0", "--workers must be at least 1"),
    ("bench-attention --repeats 0", "--repeats must be at least 1"),
])
def test_bad_input_exits_2_in_one_line_before_any_work(capsys, no_work, paths, tmp_path, args, words):
    def outside_the_store() -> list[Path]:  # reading the store may write its index (.index.json), nothing else may
        return sorted(path for path in tmp_path.rglob("*") if Path(paths["store"]) not in (path, *path.parents))

    before = outside_the_store()
    assert cli.main(args.format(**paths).split()) == 2
    err = capsys.readouterr().err
    assert words.format(**paths) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert outside_the_store() == before  # nothing written: no output file or folder, no new store


@pytest.mark.parametrize("args, words", [
    ("--patchsize 4", "--patchsize is not an option: did you mean --patch-size? It goes after a subcommand (run, "
                      "compare take it): python -m vitcore run --patch-size …"),
    ("--patch-size=4", "--patch-size goes after a subcommand (run, compare take it)"),
    ("--store x check", "--store goes after a subcommand (run, check, export, sweep and "),
    ("--frobnicate", "--frobnicate is not an option of any subcommand; the subcommand comes first"),
    ("compare --patchsize 4 --out x", "unrecognized arguments: --patchsize 4 (did you mean --patch-size?)"),
    ("plan register x --vary depth=1 --seeds 1-2 --lookz 2", "arguments: --lookz 2 (did you mean --looks?)"),
])
def test_an_option_before_its_subcommand_or_misspelt_says_which_in_one_line(capsys, no_work, args, words):
    """`python -m vitcore --patchsize 4` said "invalid choice: '4' (choose from 'run', …)": not which option."""
    assert cli.main(args.split()) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_help_states_the_allowed_ranges(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "10 to 55,000; fewer than --batch-size train as one smaller batch per epoch" in text
    assert "1 to 1,000, default 15" in text and "between 0 and 1, exclusive" in text
    assert "Train one config (or print its cached result)." in text  # a description line


@pytest.mark.slow
@pytest.mark.parametrize("args, words", [(["run", "--lr", "fast"], "invalid float value"),
                                         (["check", "--store", "/nonexistent/store"], "no store at")],
                         ids=["argparse", "a-missing-store"])
def test_bad_input_is_one_line_exit_2_from_a_fresh_process(args, words):
    """`python -m vitcore` as a user runs it (its own excepthook and exit), for a value argparse refuses and a store
    path refused before any work; every bad input goes through the same cli.main in the test's process (above)."""
    done = run_cli(*args)
    assert done.returncode == 2
    assert words in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_check_is_clean_then_reports_corruption(tiny_store, tmp_path):
    import shutil

    store = tmp_path / "store"
    shutil.copytree(tiny_store.root, store)
    runs = len(tiny_store.table())
    done = run_cli("check", "--store", str(store))
    assert done.returncode == 0 and f"{runs} valid runs, 0 problems" in done.stdout
    run_id = next(p.name for p in store.iterdir() if not p.name.startswith("."))
    (store / run_id / "summary.json").write_text("{not json")
    done = run_cli("check", "--store", str(store))
    assert done.returncode == 1 and f"{run_id}: summary.json unreadable" in done.stdout
    assert f"{runs - 1} valid runs, 1 problems" in done.stdout


@pytest.mark.slow
def test_export_writes_the_same_tables_as_the_store(tiny_store, tmp_path):
    done = run_cli("export", "--store", str(tiny_store.root), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for name, frame in tiny_store.export_frames().items():
        written = (tmp_path / name).read_bytes()
        assert written == frame.to_csv(index=False).encode()
    runs = len(tiny_store.table())
    assert len(pd.read_csv(tmp_path / "confusions.csv")) == 100 * runs
    assert pd.read_csv(tmp_path / "histories.csv")["epoch"].tolist() == [1, 2] * runs


@pytest.mark.slow
def test_committed_store_is_clean(tmp_path):
    """`python -m vitcore check` on the shipped cached_runs/: every committed run is valid and current. Run
    without the official test split (VITCORE_DATA_DIR: test images that are not the official ones), each run's
    weights are screened on the shipped check images and check says the full check was not run: on a fresh
    machine it costs minutes of CPU for the 87 weighted runs. tests/test_weights_owned.py runs the full check on
    committed runs that cover every architecture. It checks a copy: checked in place, the committed store's
    index would be rewritten under this test's key and data, and the next `check` there would call it damaged."""
    from stores import copy_store, other_test_images

    env = {**other_test_images(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = run_cli("check", "--store", str(copy_store(tmp_path / "cached_runs")), env=env)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "valid runs' weights not verified here" in done.stdout, done.stdout[-3000:]
