"""Environment values are checked once, before any work, with one line naming the variable
(vitcore.config.environment): the CLI exits 2, the app shows a note (tests/test_app_training.py)."""

import gzip

import pytest

from vitcore import cli
from vitcore.config import environment
from vitcore.data.fashion import FILES


@pytest.mark.parametrize("value, threads", [(None, None), ("", None), ("0", None), ("1", 1), (" 8 ", 8)])
def test_threads_from_the_environment(value, threads):
    assert environment.threads({} if value is None else {"VITCORE_THREADS": value}) == threads


@pytest.mark.parametrize("value", ["-1", "abc", "1.5", "99999", "٣"])
def test_bad_threads_are_refused(value):
    with pytest.raises(ValueError, match="VITCORE_THREADS must be a whole number"):
        environment.threads({"VITCORE_THREADS": value})


@pytest.mark.parametrize("value", ["-1", "abc"])
def test_the_cli_refuses_bad_threads_before_any_work(monkeypatch, capsys, tmp_path, value):
    """Before: -1 reached TensorFlow (a fatal check that killed the process), `abc` a traceback."""
    monkeypatch.setenv("VITCORE_THREADS", value)
    assert cli.main(["run", "--store", str(tmp_path / "store"), "--train-rows", "100", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "VITCORE_THREADS must be a whole number" in err
    assert not (tmp_path / "store").exists()  # nothing started


def corrupt_data_dir(folder):
    folder.mkdir()
    for name in FILES.values():
        (folder / name).write_bytes(gzip.compress(b"not an idx file at all"))
    return folder


def test_a_corrupt_data_dir_is_one_line_naming_the_variable(monkeypatch, capsys, tmp_path):
    """Before: `check` said "Fashion-MNIST not found" for a file with a bad magic number."""
    monkeypatch.setenv("VITCORE_DATA_DIR", str(corrupt_data_dir(tmp_path / "data")))
    (tmp_path / "store").mkdir()
    assert cli.main(["check", "--store", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "VITCORE_DATA_DIR does not hold Fashion-MNIST" in err and "bad magic" in err
    assert str(tmp_path) not in err  # the line names the variable, not the server's path


def test_the_app_budget_does_not_block_the_cli(monkeypatch, tmp_path):
    monkeypatch.setenv("VITCORE_MAX_TRAIN_MINUTES", "abc")  # the app's alone
    (tmp_path / "store").mkdir()
    assert cli.main(["check", "--store", str(tmp_path / "store")]) == 0
