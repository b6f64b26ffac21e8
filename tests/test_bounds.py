"""Memory bounded by a file's real content: a fixed ceiling on every read whatever the config
says, weights files whose HDF5 storage cannot inflate past their declared arrays (checked before any array
is read), and a MemoryError confined to its run. The attack files are built in tmp_path and stay small on
disk (sparse files, a few KB of deflate stream)."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import fakes
import h5py
import numpy as np
import pytest
from conftest import ROOT
from hostile_weights import WEIGHTS, edit
from stores import copy_store

from vitcore.config.run import RunConfig
from vitcore.data.fashion import shipped_test_labels
from vitcore.store import files, validate
from vitcore.store.runs import RunStore

SMALL = "0e20848b91a9"  # a committed ViT p14 run with weights (412 KB): the cheapest forward pass
HUGE = RunConfig(width=4096, depth=64, heads=64, mlp_dim=65_536)  # legal: its parameter count allowed ~232 GB
GOAL_MB = 600  # `check`'s peak RSS with the attack files in the store


def huge_weighted_run(store: RunStore, weights: Path) -> Path:
    """A run of HUGE, valid up to its weights, whose summary says it has `weights` (moved into place)."""
    labels = shipped_test_labels()
    run = fakes.write_predicted_run(store, HUGE, labels, labels.copy()).path
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**summary, "has_weights": True}))
    weights.rename(run / WEIGHTS)
    return run


def sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes a few KB on disk: an HDF5 signature, then a hole."""
    with open(path, "wb") as out:
        out.write(b"\x89HDF\r\n\x1a\n")
        out.truncate(size)
    return path


def test_the_ceiling_is_fixed_whatever_the_config():
    assert files.weights_limit(HUGE) == files.CEILING < 232e9 / 1000
    assert not files.weights_fit(HUGE) and files.weights_fit(RunConfig())
    assert files.weights_limit(RunConfig()) < files.CEILING  # a grid model keeps its own, smaller limit


def test_a_read_takes_the_files_real_size_in_one_buffer(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 5000)
    data = files.read_bounded(path, 10_000)
    assert data == b"x" * 5000 and len(data) == 5000
    assert files.read_bounded(path, 10_000, head=7) == b"x" * 7
    with pytest.raises(validate.BadRun, match="over its limit of 4,999"):
        files.read_bounded(path, 4999)
    with pytest.raises(validate.BadRun, match="over its limit of 67,108,864"):
        files.read_bounded(sparse(tmp_path / "big", files.CEILING + 1), 1 << 40)


def bomb(run: Path, times: int = 2, mib: int = 1024) -> None:
    """The classifier's bias (10 floats) as one chunk of `mib` MiB (2^28 floats), deflated `times` times: a few KB
    on disk (1,895 bytes of stream). HDF5 allows a chunk past the shape of a dataset that may
    grow, so the bomb's dataset says it may."""
    stream = zlib.compressobj(9)
    data = b"".join([*(stream.compress(bytes(1 << 20)) for _ in range(mib)), stream.flush()])
    for _ in range(times - 1):
        data = zlib.compress(data, 9)

    def change(file, path, values):
        plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        plist.set_chunk((mib << 18,))
        for _ in range(times):
            plist.set_deflate(9)
        space = h5py.h5s.create_simple((10,), (h5py.h5s.UNLIMITED,))
        h5py.h5d.create(file.id, path.encode(), h5py.h5t.IEEE_F32LE, space, dcpl=plist)
        file[path].id.write_direct_chunk((0,), data)
    edit(run, "classifier", 1, change)


def inflating_chunk(run: Path) -> None:
    """The classifier's bias in a chunk of its own shape (40 bytes), gzip once, whose stored stream (a
    few dozen bytes) inflates to 1 MiB: HDF5's inflater would follow it."""
    def change(file, path, values):
        file.create_dataset(path, data=values, chunks=values.shape, compression="gzip")
        file[path].id.write_direct_chunk((0,), zlib.compress(bytes(1 << 20), 9))
    edit(run, "classifier", 1, change)


def fixed_shape_double_deflate(run: Path) -> None:
    def change(file, path, values):
        plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        plist.set_chunk(values.shape)
        plist.set_deflate(1)
        plist.set_deflate(1)
        h5py.h5d.create(file.id, path.encode(), h5py.h5t.IEEE_F32LE, h5py.h5s.create_simple(values.shape), dcpl=plist)
        file[path].write_direct(values)  # HDF5 deflates it twice itself
    edit(run, "classifier", 1, change)


def gzip_of_its_own_size(run: Path) -> None:
    """Not an attack: gzip + shuffle in chunks of the array's shape, as h5py writes them. Still read."""
    def change(file, path, values):
        file.create_dataset(path, data=values, chunks=values.shape, compression="gzip", shuffle=True)
    edit(run, "classifier", 0, change)


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
@pytest.mark.parametrize("damage, words", [
    (bomb, "is filtered 2 times"),
    (lambda run: bomb(run, times=1, mib=64), "may grow"),  # 64 KB of stream: within the run's size limit
    (inflating_chunk, "stores a chunk in"),
    (fixed_shape_double_deflate, "each filter at most once"),
])
def test_hdf5_bombs_are_refused_before_any_array_is_read(tmp_path, damage, words):
    store = RunStore(copy_store(tmp_path / "store", keep={SMALL}))
    damage(store.root / SMALL)
    assert (store.root / SMALL / WEIGHTS).stat().st_size < 1 << 20
    assert any(words in reason for name, reason in store.check(shipped_test_labels()) if name == SMALL)


def test_a_chunk_inflating_past_its_size_within_the_stored_bound_is_refused(tmp_path):
    """A stored stream no longer than the chunk (so the size check passes) that inflates past it."""
    store = RunStore(copy_store(tmp_path / "store", keep={SMALL}))

    def change(file, path, values):
        file.create_dataset(path, data=values, chunks=values.shape, compression="gzip")
        stream = zlib.compress(bytes(values.nbytes * 50), 9)
        assert len(stream) <= values.nbytes
        file[path].id.write_direct_chunk((0,), stream)
    edit(store.root / SMALL, "classifier", 1, change)
    assert any("does not inflate to its 40 bytes" in reason for _, reason in store.check(shipped_test_labels()))


def test_gzip_chunks_of_the_arrays_own_size_still_read(tmp_path):
    store = RunStore(copy_store(tmp_path / "store", keep={SMALL}))
    gzip_of_its_own_size(store.root / SMALL)
    assert store.check(shipped_test_labels()) == []


def test_a_memory_error_skips_its_run_not_the_scan(store, monkeypatch):
    good, bad = RunConfig(seed=1), RunConfig(seed=2)
    for cfg in (good, bad):
        fakes.write_run(store, cfg)
    parse = validate.parse_history

    def short_of_memory(text, config):
        if config.run_id == bad.run_id:
            raise MemoryError
        return parse(text, config)
    monkeypatch.setattr(validate, "parse_history", short_of_memory)
    scan = store.scan()
    assert [row[0] for row in scan.rows] == [good.run_id]
    assert "out of memory" in scan.skipped[bad.run_id]
    assert ("out of memory" in reason for name, reason in store.check() if name == bad.run_id)
    monkeypatch.undo()
    assert sorted(row[0] for row in store.scan().rows) == sorted([good.run_id, bad.run_id])  # judged again


PEAK = """
import resource, subprocess, sys
done = subprocess.run([sys.executable, "-m", "vitcore", "check", "--store", sys.argv[1]], capture_output=True,
                      text=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
print(done.returncode)
print(done.stdout + done.stderr)
"""


@pytest.mark.slow
def test_check_refuses_a_sparse_gib_and_the_bomb_under_the_memory_goal(tmp_path):
    """`python -m vitcore check` on a store holding a sparse 1 GiB weights file (a huge legal config) and the
    HDF5 bomb: both named, peak RSS of the check process under GOAL_MB (seconds)."""
    store = RunStore(copy_store(tmp_path / "store", keep={SMALL}))
    bomb(store.root / SMALL)
    huge = huge_weighted_run(store, sparse(tmp_path / "sparse.h5", 1 << 30))
    assert (huge / WEIGHTS).stat().st_blocks * 512 < 1 << 20
    done = subprocess.run([sys.executable, "-c", PEAK, str(store.root)], capture_output=True, text=True, cwd=ROOT)
    peak, code, output = done.stdout.split("\n", 2)
    assert code == "1", output
    assert f"{HUGE.run_id}: {WEIGHTS} is 1,073,741,824 bytes, over its limit of 67,108,864" in output
    assert f"{SMALL}: {WEIGHTS}:" in output and "is filtered 2 times" in output
    print(f"check's peak RSS: {peak} MB")
    assert int(peak) < GOAL_MB
    assert np.isfinite(int(peak))
