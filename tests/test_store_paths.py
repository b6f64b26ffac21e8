"""Hostile paths: a symbolic link, a FIFO and a device node planted at every
name of the store that the code writes or touches — the training markers and their `.overlapped` flags,
`replaced_runs.csv`, `.index.json`, `.tmp-*` and `.index-*` debris, a run's folder and its predictions.npy,
`plans/` and `plans/SHA256SUMS`. Nothing outside the store may be created or touched, nothing may block, a
device is never opened (an audit hook sees every os.open and open()), and what was planted is left as it was.

Before: a link at `.training-<marker>.overlapped` made a training create or touch its target; a link at
`replaced_runs.csv` got a row appended outside the store, a FIFO there hung the backfill; a device at `.tmp-*`
or `.index.json` was opened, and the `.index.json` one was replaced by a regular file; a FIFO at a run's name
hung the training that stored that run. Devices are made with os.mknod in tmp_path (root only), never under /dev.
"""

import dataclasses
import os
import stat
import sys
import threading
import time
from pathlib import Path

import fakes
import numpy as np
import pytest
from test_hostile_files import ROOT_ONLY

from vitcore import cli
from vitcore.config.run import RunConfig
from vitcore.data import regular
from vitcore.run import overlap, sweep
from vitcore.stats import plan_store, plans
from vitcore.store import index, upkeep
from vitcore.store.runs import RunStore

SOON = 5.0  # seconds: an operation that takes longer blocked (then its FIFO is opened from the other side)
KINDS = ["link to a new file", "link to a file", "link to a folder", "FIFO",
         pytest.param("character device", marks=ROOT_ONLY)]

_OPENS: list | None = None  # (path, flags) of every open while a test records them


def _audit(event, args):
    if event == "open" and _OPENS is not None and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENS.append((os.fsdecode(args[0]), args[2] if len(args) > 2 and isinstance(args[2], int) else 0))


sys.addaudithook(_audit)  # for the whole session (hooks cannot be removed); records only inside `opens`


@pytest.fixture(params=[True, False], ids=["O_PATH", "lstat"])
def opens(request, monkeypatch):
    """Every path opened meanwhile, with the way regular.open_entry looks at an entry: through an O_PATH
    descriptor (Linux) or lstat before the open (elsewhere)."""
    global _OPENS
    monkeypatch.setattr(regular, "REOPEN", request.param and regular.REOPEN)
    _OPENS = []
    yield _OPENS
    _OPENS = None


def opened(opens: list, path: Path) -> list[int]:
    """The flags of each open of `path` that could open what is there: not an O_PATH descriptor (it names the
    entry, the file is not opened), not an exclusive create (it fails on anything there, a link included)."""
    exclusive = os.O_CREAT | os.O_EXCL
    return [flags for name, flags in opens if name == str(path) and not flags & getattr(os, "O_PATH", 0)
            and flags & exclusive != exclusive]


class Outside:
    """A folder outside the store that links point into; `snapshot()` shows any file created or touched."""

    def __init__(self, tmp_path: Path):
        self.root = tmp_path / "outside"
        (self.root / "folder").mkdir(parents=True)
        (self.root / "file").write_text("keep\n")
        os.utime(self.root / "file", ns=(10**18, 10**18))
        os.utime(self.root / "folder", ns=(10**18, 10**18))

    def snapshot(self) -> dict:
        found = {}
        for folder, names, files in os.walk(self.root):
            for name in names + files:
                info = os.lstat(Path(folder) / name)  # a file's atime shows a read too (a folder's, this walk)
                found[os.path.relpath(Path(folder) / name, self.root)] = (
                    info.st_size, info.st_mtime_ns, info.st_ctime_ns, None if name in names else info.st_atime_ns)
        return found


def plant(path: Path, kind: str, outside: Outside) -> Path:
    if kind == "link to a new file":
        os.symlink(outside.root / "created", path)
    elif kind == "link to a file":
        os.symlink(outside.root / "file", path)
    elif kind == "link to a folder":
        os.symlink(outside.root / "folder", path)
    elif kind == "FIFO":
        os.mkfifo(path)
    else:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's numbers
    return path


def identity(path: Path) -> tuple:
    info = os.lstat(path)
    return info.st_mode, info.st_ino, info.st_rdev


def soon(call, fifos=()):
    """call()'s result, asserting it took under SOON seconds. A call blocked on a FIFO is released after
    SOON (each FIFO opened from both sides, without blocking), so the test fails instead of hanging."""
    done = threading.Event()

    def release():
        if done.wait(SOON):
            return
        while not done.is_set():
            for fifo in fifos:
                for flags in (os.O_RDONLY, os.O_WRONLY):
                    try:
                        os.close(os.open(fifo, flags | os.O_NONBLOCK))
                    except OSError:
                        pass
            time.sleep(0.05)

    helper = threading.Thread(target=release, daemon=True)
    helper.start()
    start = time.perf_counter()
    try:
        result = call()
    finally:
        done.set()
        helper.join()
    assert time.perf_counter() - start < SOON, "blocked"
    return result


def attempt(call, fifos=()):
    """soon(call), its exception returned instead of raised."""
    def caught():
        try:
            return call()
        except Exception as error:  # noqa: BLE001 (each test says which it expects)
            return error
    return soon(caught, fifos)


@pytest.fixture
def store(tmp_path) -> RunStore:
    store = RunStore(tmp_path / "store")
    fakes.write_run(store, RunConfig())
    return store


@pytest.fixture
def outside(tmp_path) -> Outside:
    return Outside(tmp_path)


def marker_names(root: Path) -> list[str]:
    return [name for name in os.listdir(root) if name.startswith(overlap.MARKER) and not name.endswith(overlap.FLAG)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_flag_planted_beside_a_live_marker_creates_and_touches_nothing(store, outside, opens, kind):
    """Another session's training holds a marker; its flag's name holds the planted entry. A training that
    starts now sees the live marker (it overlapped) and leaves no flag through the planted entry."""
    before = outside.snapshot()
    with overlap.watch(store.root, "victim") as victim:
        [marker] = marker_names(store.root)
        flag = plant(store.root / (marker + overlap.FLAG), kind, outside)
        planted = identity(flag)

        def train():
            with overlap.watch(store.root, "other") as seen:
                return seen.overlapped
        assert attempt(train, [flag]) is True
        assert identity(flag) == planted and opened(opens, flag) == []
    assert victim.overlapped is False  # the planted entry is no flag of ours (nor was one left through it)
    assert outside.snapshot() == before and not os.path.lexists(flag)  # the victim removed its flag's name


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_flag_does_not_tag_a_training_that_ran_alone(store, outside, opens, kind):
    with overlap.watch(store.root, "alone") as seen:
        [marker] = marker_names(store.root)
        flag = plant(store.root / (marker + overlap.FLAG), kind, outside)
    assert seen.overlapped is False and opened(opens, flag) == []


@pytest.mark.parametrize("kind", KINDS)
def test_an_entry_named_like_a_marker_is_never_opened(store, outside, opens, kind):
    planted = plant(store.root / f"{overlap.MARKER}{'d' * 32}", kind, outside)
    before = outside.snapshot()
    assert soon(lambda: overlap.live(store.root), [planted]) == {}

    def train():
        with overlap.watch(store.root, "s") as seen:
            return seen.overlapped
    assert soon(train, [planted]) is False
    assert opened(opens, planted) == [] and outside.snapshot() == before and os.path.lexists(planted)


def replaced(cfg: RunConfig) -> dict:
    return {"run_id": cfg.run_id, "label": cfg.label(), "train_rows": cfg.train_rows, "seed": cfg.seed,
            **{f"{age}_{name}": 0.5 for name in sweep.REPLACED_METRICS for age in ("old", "new")}}


@pytest.mark.parametrize("kind", KINDS)
def test_the_backfill_log_is_appended_only_when_a_regular_file(store, outside, opens, kind):
    """Before: a link appended a row to its target (exit 0); a FIFO hung the command after the run was
    replaced. Now one message, and the sweep checks the log before it trains or replaces anything."""
    log = plant(store.root / sweep.REPLACED_LOG, kind, outside)
    planted, before = identity(log), outside.snapshot()
    error = attempt(lambda: upkeep.log_replaced(store.root, replaced(RunConfig())), [log])
    assert isinstance(error, ValueError) and str(log) in str(error)
    assert ("a link is never followed" if kind.startswith("link") else
            f"is {regular.kind(planted[0])}: never opened") in str(error)
    cfg = RunConfig(seed=7)
    fakes.write_run(store, cfg)  # a run without predictions.npy to backfill: refused before any worker starts
    early = attempt(lambda: sweep.run_sweep([cfg], store, backfill=True, replace=True), [log])
    assert isinstance(early, ValueError) and str(early) == str(error)
    assert identity(log) == planted and opened(opens, log) == [] and outside.snapshot() == before


@pytest.mark.parametrize("name", [sweep.REPLACED_LOG, f"{plans.FOLDER}/{plans.SUMS}"])
def test_an_append_never_writes_through_a_hard_link(store, outside, name):
    """A hard link in the store to a file elsewhere is a regular file: appending to it would write there."""
    (store.root / plans.FOLDER).mkdir()
    os.link(outside.root / "file", store.root / name)
    if name == sweep.REPLACED_LOG:
        with pytest.raises(ValueError, match="is a regular file with 1 other hard link"):
            upkeep.log_replaced(store.root, replaced(RunConfig()))
    else:
        with pytest.raises(plans.PlanError, match="not a plain file"):
            plan_store.register(store.root, dataclasses.replace(plan_store.builtin(), name="mine"))
    assert (outside.root / "file").read_text() == "keep\n"


def test_the_backfill_log_gets_its_header_once(store):
    for seed in (1, 2):
        upkeep.log_replaced(store.root, replaced(RunConfig(seed=seed)))
    lines = (store.root / sweep.REPLACED_LOG).read_text().splitlines()
    assert len(lines) == 3 and lines[0].startswith("run_id,label,") and lines[2].startswith(RunConfig(seed=2).run_id)


@pytest.mark.parametrize("kind", KINDS)
def test_an_index_that_is_not_a_regular_file_is_never_opened_or_replaced(store, outside, opens, kind):
    """Before: a device at `.index.json` was opened (without blocking) and then replaced by a regular file."""
    path = plant(store.root / index.NAME, kind, outside)
    planted, before = identity(path), outside.snapshot()
    table = soon(lambda: store.table(), [path])
    problems = dict(soon(lambda: store.check(), [path]))
    assert len(table) == 1 and list(problems) == [index.NAME]
    kind = regular.kind(planted[0])
    assert problems[index.NAME].startswith(f"is {kind}, not a regular file: never opened or replaced")
    assert identity(path) == planted and opened(opens, path) == [] and outside.snapshot() == before
    assert not [name for name in os.listdir(store.root) if name.startswith(index.INDEX_TEMP_PREFIX)]


@pytest.mark.parametrize("name", [".tmp-x", ".index-x", "RUN/.tmp-x"])
@pytest.mark.parametrize("kind", KINDS)
def test_debris_names_are_never_opened(store, outside, opens, capsys, kind, name):
    """Before: a device at `.tmp-*` was opened to see whether a writer held it (upkeep._held)."""
    folder = store.root / RunConfig().run_id if name.startswith("RUN/") else store.root
    path = plant(folder / name.removeprefix("RUN/"), kind, outside)
    os.utime(path, ns=(10**18, 10**18), follow_symlinks=False)  # old enough for `check --fix`
    planted, before = identity(path), outside.snapshot()
    for argv in (["check"], ["check", "--fix"]):
        assert soon(lambda: cli.main([*argv, "--store", str(store.root)]), [path]) == 1
        out = capsys.readouterr().out
        assert f"{name.replace('RUN', folder.name)}: named like an unfinished write but {regular.kind(planted[0])}, " \
               "not a file or folder (never opened" in out
    assert identity(path) == planted and opened(opens, path) == [] and outside.snapshot() == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_is_not_stored_over_an_entry_that_is_not_a_folder(store, outside, opens, kind):
    """Before: a FIFO at a run's name hung the training that stored the run (shutil.rmtree opened it)."""
    cfg = RunConfig(seed=5)
    path = plant(store.root / cfg.run_id, kind, outside)
    planted, before = identity(path), outside.snapshot()
    error = attempt(lambda: fakes.write_run(store, cfg), [path])
    assert isinstance(error, ValueError) and f"{cfg.run_id} in the store is {regular.kind(planted[0])}" in str(error)
    assert identity(path) == planted and opened(opens, path) == [] and outside.snapshot() == before
    assert [name for name in os.listdir(store.root) if name.startswith(".tmp-")] == []


@pytest.mark.parametrize("kind", KINDS)
def test_backfilled_predictions_never_replace_what_is_not_a_regular_file(store, outside, opens, kind):
    run = store.get(RunConfig())
    predictions = np.repeat(np.arange(10), run.confusion().sum(axis=0))  # agrees with its confusion matrix
    path = plant(run.path / "predictions.npy", kind, outside)
    planted, before = identity(path), outside.snapshot()
    error = attempt(lambda: store.add_predictions(run, predictions), [path])
    assert isinstance(error, ValueError) and f"is {regular.kind(planted[0])}, not a regular file" in str(error)
    assert identity(path) == planted and opened(opens, path) == [] and outside.snapshot() == before
    assert sorted(os.listdir(run.path)) == sorted(["config.json", "history.csv", "confusion.csv", "summary.json",
                                                   "predictions.npy"])


@pytest.mark.parametrize("name", [plans.FOLDER, f"{plans.FOLDER}/{plans.SUMS}", f"{plans.FOLDER}/mine.json"])
@pytest.mark.parametrize("kind", KINDS)
def test_registering_a_plan_follows_and_opens_nothing_planted(store, outside, opens, kind, name):
    if name != plans.FOLDER:
        (store.root / plans.FOLDER).mkdir()
    path = plant(store.root / name, kind, outside)
    planted, before = identity(path), outside.snapshot()
    error = attempt(lambda: plan_store.register(store.root, dataclasses.replace(plan_store.builtin(), name="mine")),
                    [path])
    assert isinstance(error, (plans.PlanError, OSError)), error
    assert identity(path) == planted and opened(opens, path) == [] and outside.snapshot() == before
    if name != plans.FOLDER:
        assert sorted(os.listdir(store.root / plans.FOLDER)) == [Path(name).name]  # no plan without its sum


def test_open_entry_opens_regular_files_and_folders_only_when_asked(tmp_path, opens):
    (tmp_path / "file").write_bytes(b"abc")
    os.symlink(tmp_path / "file", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    handle = regular.open_entry(tmp_path / "file", os.O_RDONLY)
    assert os.read(handle, 9) == b"abc"
    os.close(handle)
    os.close(regular.open_entry(tmp_path, folders=True))
    opens.clear()
    for path, follow, kind in [(tmp_path, False, "special"), (tmp_path / "link", False, "unreadable"),
                               (tmp_path / "fifo", False, "special"), (tmp_path / "fifo", True, "special")]:
        with pytest.raises(regular.Refused) as refused:
            regular.open_entry(path, follow=follow)
        assert refused.value.kind == kind and opened(opens, path) == []
    with pytest.raises(regular.Refused) as refused:
        regular.open_or_create(tmp_path / "fifo", os.O_WRONLY | os.O_APPEND)
    assert refused.value.what == "a FIFO"
    with pytest.raises(regular.Refused):
        regular.replace(tmp_path / "file", tmp_path / "fifo")
    assert (tmp_path / "file").exists() and stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)
