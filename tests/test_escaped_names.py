"""Every name printed is escaped, on stdout and on stderr, in every command.

Before: a folder named with terminal escapes inside a run folder was escaped on `check`'s stdout, but the
StoreWarning that `check` and `export` print on stderr showed it raw: it cleared the screen and printed a
green "ALL GOOD". The store here is itself named with an escape too (its path is in every warning).
"""

import sys
import warnings
from pathlib import Path

import fakes
import pytest
from conftest import run_cli

from vitcore import cli
from vitcore.cli.common import escaped_excepthook
from vitcore.config.run import RunConfig
from vitcore.store.runs import RunStore

EVIL = "x\x1b[2J\x1b[32mALL GOOD\x1b[0m\n81be36c72149: valid"  # clears the screen, forges a line


@pytest.fixture
def store(tmp_path) -> RunStore:
    """A store (its folder's name holds an escape) with one valid run and one whose folder holds EVIL."""
    store = RunStore(tmp_path / "store\x1b[31m")
    fakes.write_run(store, RunConfig())
    bad = fakes.write_run(store, RunConfig(seed=1))
    (bad.path / EVIL).mkdir()
    return store


def printed_warnings(call):
    """call()'s result, its warnings printed on stderr as Python prints them (pytest records warnings
    instead of printing them: showwarning writes what formatwarning makes, as Python's own does)."""
    def show(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        return call()


def commands(tmp_path) -> list[list[str]]:
    out = tmp_path / "out"
    return [["check"], ["check", "--fix"], ["export", "--out", str(out)], ["effects", "--out", str(out / "e.csv")],
            ["claims", "--out", str(out / "claims.csv")], ["report", "--out", str(out)], ["noise", "--out", str(out)],
            ["plans"], ["sweep", "headline", "--dry-run", "--seeds", "0"]]


def assert_escaped(text: str) -> None:
    assert "\x1b" not in text and not any(line.startswith("81be36c72149: valid") for line in text.splitlines())


@pytest.mark.parametrize("index", range(len(commands(Path(".")))), ids=lambda i: " ".join(commands(Path("."))[i][:2]))
def test_every_command_prints_names_from_the_disk_escaped(store, tmp_path, capsys, index):
    argv = commands(tmp_path)[index]
    printed_warnings(lambda: cli.main([*argv, "--store", str(store.root)]))
    out, err = capsys.readouterr()
    assert_escaped(out)
    assert_escaped(err)
    assert "store\\x1b[31m" in out + err  # the store's name, escaped, is printed somewhere
    said = "x\\x1b[2J\\x1b[32mALL GOOD\\x1b[0m\\n81be36c72149: valid is not a plain file"
    if argv[0] == "check":  # check names each skipped run once, in its own list on stdout (not again as a warning)
        assert said in out and said not in err
    elif argv[0] != "sweep":  # every other reader of the store warns about the bad run, on stderr
        assert said in err


def test_a_warning_recorded_keeps_its_message(store):
    """The escaping is the printing's: pytest.warns and catch_warnings(record=True) see the message as it was."""
    with pytest.warns(UserWarning, match="skipping run") as said:
        cli.main(["export", "--store", str(store.root), "--out", str(store.root.parent / "out")])
    assert any(EVIL in str(warning.message) for warning in said)


def test_a_bugs_traceback_is_printed_escaped(capsys):
    try:
        try:
            raise OSError(f"cannot read {EVIL}")
        except OSError as error:
            raise RuntimeError(f"while reading {EVIL}") from error
    except RuntimeError:
        escaped_excepthook(*sys.exc_info())
    err = capsys.readouterr().err
    assert_escaped(err)
    assert err.count("Traceback (most recent call last):") == 2 and "direct cause" in err
    assert "OSError: cannot read x\\x1b[2J" in err and err.endswith("RuntimeError: while reading x\\x1b[2J\\x1b[32mALL "
                                                                   "GOOD\\x1b[0m\\n81be36c72149: valid\n")


@pytest.mark.slow  # two CLI processes: seconds
def test_check_and_export_print_escaped_names_on_stderr(store, tmp_path):
    """As a user sees it: `python -m vitcore check` and `export` in a fresh process, Python printing the warnings."""
    for argv in (["check"], ["export", "--out", str(tmp_path / "out")]):
        done = run_cli(*argv, "--store", str(store.root))
        assert_escaped(done.stdout)
        assert_escaped(done.stderr)
        where = done.stdout if argv == ["check"] else done.stderr  # check names a skipped run once, in its list
        assert ("StoreWarning: skipping run" in done.stderr) == (argv != ["check"]) and "\\x1b[2J" in where
