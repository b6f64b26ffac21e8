"""The persistent XLA compile cache (vitcore.run.compile_cache): its folder, its key, its labels, and a
run trained with it bit for bit the run trained without it."""

import os
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import TINY, run_cli, train_command

from vitcore.config import environment
from vitcore.run import compile_cache
from vitcore.store.runs import RunStore


def test_the_folder_setting(tmp_path):
    assert environment.xla_cache({"VITCORE_XLA_CACHE": "off"}) is None
    assert environment.xla_cache({"VITCORE_XLA_CACHE": "0"}) is None
    assert environment.xla_cache({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "vitcore" / "xla"
    assert environment.xla_cache({"VITCORE_XLA_CACHE": str(tmp_path / "x")}) == tmp_path / "x"
    (tmp_path / "file").write_text("")
    for bad, words in ((str(tmp_path / "a b"), "without spaces"), (str(tmp_path / "file"), "is a file")):
        with pytest.raises(ValueError, match=words):
            environment.xla_cache({"VITCORE_XLA_CACHE": bad})
        [problem] = environment.problems({"VITCORE_XLA_CACHE": bad}, data=False)
        assert words in problem and str(tmp_path) not in problem  # the app shows it: no path


def test_a_change_to_the_training_source_changes_the_key(tmp_path):
    package = tmp_path / "vitcore"
    shutil.copytree(compile_cache.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    original = compile_cache.source_hash(package)
    assert original == compile_cache.source_hash()  # the copy hashes as the checkout
    (package / "app" / "fmt.py").write_text("# not training code\n")
    assert compile_cache.source_hash(package) == original
    for part in ("run/train.py", "model/build.py", "config/run.py", "data/patches.py"):
        path = package / part
        text = path.read_text()
        path.write_text(text + "\n# a change\n")
        assert compile_cache.source_hash(package) != original, part
        path.write_text(text)
    assert compile_cache.source_hash(package) == original


def test_the_flag_names_the_folder():
    flag = f"--{compile_cache.FLAG}"
    assert compile_cache.folder({"TF_XLA_FLAGS": f"--tf_xla_auto_jit=1 {flag}=/tmp/c"}) == compile_cache.Path("/tmp/c")
    assert compile_cache.folder({"TF_XLA_FLAGS": f"{flag}="}) is None
    assert compile_cache.folder({}) is None


def test_a_run_is_cached_only_when_nothing_was_written():
    how = compile_cache.how_compiled
    assert how({}, {}) == "fresh"                          # no cache
    assert how({}, {"a.pb": 1}) == "fresh"                 # compiled and stored
    assert how({"a.pb": 1}, {"a.pb": 1}) == "cached"       # loaded
    assert how({"a.pb": 1}, {"a.pb": 2}) == "fresh"        # compiled again (rewritten)
    assert how({"a.pb": 1}, {"a.pb": 1, "b.pb": 1}) == "fresh"


def test_only_the_known_notices_are_kept_off_the_terminal(monkeypatch, capfd):
    monkeypatch.setitem(compile_cache._PROCESS, "folder", compile_cache.Path("/tmp"))
    with compile_cache.quiet_notices():
        os.write(2, b"E0000 cpu_aot_loader.cc:220] Loading XLA:CPU AOT result. Target machine feature "
                    b"+prefer-no-scatter is not  supported on the host machine.\n")
        os.write(2, b"E0000 text_format.cc:378] Error parsing text-format tensorflow.XlaSerializedCacheEntry: 2:1\n")
        os.write(2, b"E0000 something else went wrong\n")
    assert capfd.readouterr().err == "E0000 something else went wrong\n"


@pytest.mark.slow
def test_a_run_trained_with_the_cache_is_bit_for_bit_the_run_without(tmp_path):
    """Three fresh processes, one thread each: no cache; an empty cache (compiles, stores); the same
    cache again (loads). Same history, confusion, predictions, test loss and weights."""
    cache = tmp_path / "cache"
    runs = {}
    for name, setting in (("off", "off"), ("stored", str(cache)), ("loaded", str(cache))):
        store = RunStore(tmp_path / name)
        done = run_cli(*train_command(TINY, store.root), env={"VITCORE_THREADS": "1", "VITCORE_XLA_CACHE": setting})
        assert done.returncode == 0, done.stderr[-2000:]
        assert "cpu_aot_loader" not in done.stderr and "XlaSerializedCacheEntry" not in done.stderr
        runs[name] = store.get(TINY)
    [folder] = cache.iterdir()  # one key: this code, these versions, this CPU, one thread
    assert len(list(folder.glob("*.pb"))) == 2  # the epoch and the forward pass
    assert [runs[n].summary["timing"]["compile"] for n in runs] == ["fresh", "fresh", "cached"]
    columns = ["epoch", "loss", "accuracy", "val_loss", "val_accuracy", "lr"]  # not the wall seconds
    reference = runs["off"]
    for run in (runs["stored"], runs["loaded"]):
        pd.testing.assert_frame_equal(run.history()[columns], reference.history()[columns], check_exact=True)
        np.testing.assert_array_equal(run.confusion(), reference.confusion())
        np.testing.assert_array_equal(run.predictions(), reference.predictions())
        assert run.summary["test_loss"] == reference.summary["test_loss"]
        assert _weights(run) == _weights(reference)


def _weights(run) -> list[bytes]:
    """The stored weights' raw bytes, in the file's order (seed-0 runs keep their weights)."""
    import h5py

    arrays = []
    with h5py.File(run.path / "model.weights.h5") as h5:
        h5.visititems(lambda _, item: arrays.append(item[()].tobytes()) if isinstance(item, h5py.Dataset) else None)
    return arrays

