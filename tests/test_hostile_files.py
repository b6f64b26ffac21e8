"""Hostile files: special files where outputs, upkeep, training markers and the
data are, compression bombs, empty paths, names that are terminal commands (the app's cases:
tests/test_hostile_app.py; the weights variants: tests/hostile_weights.py in the fuzz table). Each case
failed before (hung, replaced a device node, read 1 GiB, wrote into the current folder, printed a forged
line). Device nodes are made with os.mknod in a temporary folder (root only), never under /dev.
"""

import gzip
import os
import socket
import stat
import threading
import time
import tracemalloc
from pathlib import Path

import fakes
import numpy as np
import pytest
from conftest import ROOT

from vitcore import cli
from vitcore.config import environment
from vitcore.config.run import RunConfig
from vitcore.data import fashion
from vitcore.data.fashion import data_dir_problem
from vitcore.run import overlap
from vitcore.store.runs import RunStore

QUICK = 3.0  # seconds: what "without blocking" means here (a blocked open lasts until the FIFO is unblocked)
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="os.mknod of a device needs root")


def quick(call, fifos=()):
    """(call's result, seconds): after QUICK seconds each FIFO gets a writer that closes at once, so a
    reader that opened one blocking returns (late: the test fails) instead of hanging the suite."""
    stop = threading.Event()

    def unblock():
        if stop.wait(QUICK):
            return
        while not stop.is_set():
            for fifo in fifos:
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # no reader yet
                    pass
            time.sleep(0.05)

    helper = threading.Thread(target=unblock, daemon=True)
    helper.start()
    start = time.perf_counter()
    try:
        return call(), time.perf_counter() - start
    finally:
        stop.set()
        helper.join()


def node(path: Path, kind: str) -> Path:
    """A special file at `path`: a character device (the numbers of /dev/null), a FIFO, a socket, or a
    symbolic link to such a device."""
    if kind == "character device":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    else:
        os.mknod(path.with_name(path.name + ".dev"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.symlink(path.with_name(path.name + ".dev"), path)
    return path


def identity(path: Path) -> tuple:
    info = os.lstat(path)
    return info.st_mode, info.st_rdev, info.st_ino


KINDS = ("character device", "FIFO", "socket", "link to a device")


@ROOT_ONLY
@pytest.mark.parametrize("kind", KINDS)
def test_an_out_file_that_is_a_special_file_is_refused_and_left_alone(tmp_path, capsys, kind):
    """Before: `effects --out NODE` exited 0 and swapped a device node for a CSV."""
    target = node(tmp_path / "effects.csv", kind)
    before = identity(target)
    assert cli.main(["effects", "--store", str(ROOT / "cached_runs"), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file" in err
    assert identity(target) == before


@ROOT_ONLY
@pytest.mark.parametrize("kind", KINDS)
def test_an_out_folder_holding_a_special_file_is_refused_and_left_alone(tmp_path, capsys, kind):
    """Before: `export --out D` replaced D/runs.csv, a device node, by a CSV."""
    store = RunStore(tmp_path / "store")
    fakes.write_run(store, RunConfig())
    (tmp_path / "out").mkdir()
    target = node(tmp_path / "out" / "runs.csv", kind)
    before = identity(target)
    assert cli.main(["export", "--store", str(store.root), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "runs.csv there is a" in err
    assert identity(target) == before and sorted(os.listdir(tmp_path / "out")) == sorted(
        [target.name] + ([target.name + ".dev"] if kind == "link to a device" else []))


def fifo_store(tmp_path: Path, names) -> tuple[RunStore, list[Path]]:
    store = RunStore(tmp_path / "store")
    fakes.write_run(store, RunConfig())
    fifos = [store.root / name for name in names]
    for fifo in fifos:
        os.mkfifo(fifo)
    return store, fifos


@pytest.mark.parametrize("argv", [["check"], ["check", "--fix"]])
def test_fifos_named_like_debris_never_block_check(tmp_path, capsys, argv):
    """Before: `mkfifo STORE/.tmp-x` or `.index-x` made `check` and `check --fix` hang (upkeep._held)."""
    store, fifos = fifo_store(tmp_path, [".tmp-x", ".index-x"])
    code, seconds = quick(lambda: cli.main([*argv, "--store", str(store.root)]), fifos)
    assert seconds < QUICK and code == 1
    out = capsys.readouterr().out
    assert {".tmp-x", ".index-x"} <= {line.split(":")[0] for line in out.splitlines()}
    assert out.count("not a file or folder (never opened") == 2
    assert all(stat.S_ISFIFO(os.lstat(f).st_mode) for f in fifos)


def test_a_fifo_named_like_a_training_marker_never_blocks_a_training(tmp_path):
    """Before: `mkfifo STORE/.training-deadbeef` made `python -m vitcore run` hang before epoch 1."""
    store, fifos = fifo_store(tmp_path, [".training-deadbeef"])
    found, seconds = quick(lambda: overlap.live(store.root), fifos)
    assert seconds < QUICK and found == {} and stat.S_ISFIFO(os.lstat(fifos[0]).st_mode)  # skipped, left alone

    def train():
        with overlap.watch(store.root, overlap.new_session()) as seen:
            return seen.overlapped
    overlapped, seconds = quick(train, fifos)
    assert seconds < QUICK and overlapped is False
    assert [name for name in os.listdir(store.root) if name.startswith(overlap.MARKER)] == [".training-deadbeef"]


def data_dir(tmp_path: Path, labels) -> Path:
    """A VITCORE_DATA_DIR whose test labels are made by labels(path); the other files are placeholders."""
    folder = tmp_path / "data"
    folder.mkdir()
    for key, name in fashion.FILES.items():
        if key != "test_labels":
            (folder / name).write_bytes(b"")
    labels(folder / fashion.FILES["test_labels"])
    return folder


def bomb(path: Path, inflated: int = 1 << 30) -> None:
    """A gzip file of `inflated` zero bytes after an IDX labels header (~1 MB on disk for 1 GiB): one member
    holding the header, then one member of 1 MiB of zeros, compressed once and written `inflated` / 1 MiB times
    (a valid multi-member gzip, as `gzip -d` and gzip.open read it; compressing 1 GiB took seconds of the fast tier)."""
    megabyte = gzip.compress(bytes(1 << 20), compresslevel=9, mtime=0)
    with open(path, "wb") as out:
        out.write(gzip.compress(b"\x00\x00\x08\x01" + (10_000).to_bytes(4, "big"), mtime=0))
        out.write(megabyte * (inflated >> 20))


@pytest.mark.parametrize("case", ["FIFO", "1 GiB gzip bomb"])
def test_hostile_test_labels_in_the_data_dir_are_refused_quickly_and_small(tmp_path, monkeypatch, case):
    """Before: a FIFO as the test labels hung every page and command; a 4.6 MB gzip inflating to 1 GiB
    took 2.25 GB of memory (read_idx read the whole stream)."""
    folder = data_dir(tmp_path, os.mkfifo if case == "FIFO" else bomb)
    monkeypatch.setenv("VITCORE_DATA_DIR", str(folder))
    labels = folder / fashion.FILES["test_labels"]

    def read():
        tracemalloc.start()
        try:
            with pytest.raises(fashion.DataError) as refused:
                fashion.official_test_labels.__wrapped__()
            assert data_dir_problem() is not None  # and the note says so
            return str(refused.value), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    (message, peak), seconds = quick(read, [labels] if case == "FIFO" else [])
    assert seconds < QUICK and peak < 16 << 20, (seconds, peak)
    assert ("not a regular file" if case == "FIFO" else "inflates past") in message


def test_a_real_labels_file_still_reads(tmp_path, monkeypatch):
    monkeypatch.delenv("VITCORE_DATA_DIR", raising=False)
    labels = fashion.read_idx(fashion.SHIPPED_TEST_LABELS, 1)
    assert labels.shape == (10_000,) and np.bincount(labels).tolist() == [1_000] * 10


def debris_files(folder: Path) -> list[str]:
    """Two user files whose names look like store debris, an hour old: what `check --fix` would delete."""
    names = [".tmp-notes", ".index-draft"]
    for name in names:
        (folder / name).write_text("mine")
        os.utime(folder / name, (time.time() - 7200,) * 2)
    return names


@pytest.mark.parametrize("argv", [["check", "--fix", "--store", ""], ["check", "--store", " "],
                                  ["export", "--store", "", "--out", "OUT"],
                                  ["effects", "--store", "", "--out", "OUT/e.csv"]])
def test_an_empty_store_is_refused_never_the_current_folder(tmp_path, monkeypatch, capsys, argv):
    """Before: `check --fix --store ""` deleted the current folder's files named like debris."""
    monkeypatch.chdir(tmp_path)
    names = debris_files(tmp_path)
    argv = [str(tmp_path / "out") + value[3:] if value.startswith("OUT") else value for value in argv]
    assert cli.main(argv) == 2
    assert "--store: is empty" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == sorted(names)
    with pytest.raises(ValueError, match="empty"):
        RunStore("")


def test_check_fix_refuses_a_folder_that_is_not_a_store(tmp_path, capsys):
    names = debris_files(tmp_path)
    assert cli.main(["check", "--fix", "--store", str(tmp_path)]) == 2
    assert "is not a run store" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == sorted(names)


@pytest.mark.parametrize("name", ["VITCORE_STORE", "VITCORE_DATA_DIR"])
def test_an_empty_environment_path_is_refused_with_a_note(monkeypatch, capsys, name):
    """Before: VITCORE_STORE="" gave an empty dashboard and no note; VITCORE_DATA_DIR="" meant unset."""
    monkeypatch.setenv(name, "")
    assert any(name in problem and "empty" in problem for problem in environment.problems())
    assert cli.main(["check", "--store", str(ROOT / "cached_runs")]) == 2
    assert name in capsys.readouterr().err
    if name == "VITCORE_STORE":  # the app reads no folder at all (never the current one)
        assert environment.store_path() == Path(environment.NO_STORE)
        assert RunStore(environment.NO_STORE).table().empty
    else:
        with pytest.raises(fashion.DataError, match="empty"):
            fashion.local_folder()


def test_check_prints_names_from_the_disk_escaped(tmp_path, capsys):
    """Before: a folder named `evil\\n81be36c72149: all good\\e[2J` printed a forged "all good" line and
    cleared the terminal."""
    store = RunStore(tmp_path / "store")
    fakes.write_run(store, RunConfig())
    (store.root / "evil\n81be36c72149: all good\x1b[2J").mkdir()
    assert cli.main(["check", "--store", str(store.root)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and not any(line.startswith("81be36c72149") for line in out.splitlines())
    assert "evil\\n81be36c72149: all good\\x1b[2J: not a run folder" in out

