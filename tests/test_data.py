import gzip
import shutil
import struct

import numpy as np
import pytest

from vitcore.config.run import VAL_ROWS
from vitcore.data import fashion as data


@pytest.fixture()
def uncached():
    """load_raw's cache empty before the test and again after it (the test reads another data folder)."""
    data.load_raw.cache_clear()
    yield
    data.load_raw.cache_clear()


@pytest.fixture()
def data_copy(tmp_path):
    """A writable copy of the real IDX files, to corrupt one at a time."""
    source = data.DEBIAN_DIR
    if not source.is_dir():
        pytest.skip(f"{source} missing: apt-get install -y dataset-fashion-mnist")
    for name in data.FILES.values():
        shutil.copy(source / name, tmp_path / name)
    return tmp_path


def test_real_data_shapes_and_classes():
    raw = data.load_raw()
    assert raw.x_train.shape == (60_000, 28, 28) and raw.x_test.shape == (10_000, 28, 28)
    assert raw.x_train.dtype == np.uint8
    assert np.bincount(raw.y_test).tolist() == [1_000] * 10
    assert len(data.CLASS_NAMES) == 10


def test_split_is_fixed_stratified_and_disjoint():
    val = data.validation_indices()
    assert len(val) == VAL_ROWS and len(np.unique(val)) == VAL_ROWS
    assert np.bincount(data.load_raw().y_train[val]).tolist() == [VAL_ROWS // 10] * 10
    split = data.load_split(1_000, seed=3)
    assert np.bincount(split.y_train).tolist() == [100] * 10
    assert split.x_train.dtype == np.float32 and 0.0 <= split.x_train.min() and split.x_train.max() <= 1.0
    # training rows never come from the validation rows
    raw = data.load_raw()
    val_images = {raw.x_train[i].tobytes() for i in val}
    train_images = {(img * 255).round().astype(np.uint8).tobytes() for img in split.x_train}
    assert not (train_images & val_images - {np.zeros((28, 28), np.uint8).tobytes()})


def test_train_sample_depends_on_seed_only():
    a, b, c = data.load_split(500, 0), data.load_split(500, 0), data.load_split(500, 1)
    np.testing.assert_array_equal(a.x_train, b.x_train)
    assert not np.array_equal(a.x_train, c.x_train)
    np.testing.assert_array_equal(a.x_val, c.x_val)


def _rewrite(path, payload: bytes):
    with gzip.open(path, "wb", compresslevel=1) as handle:
        handle.write(payload)


def test_truncated_file_names_the_file(data_copy):
    path = data_copy / data.FILES["test_images"]
    with gzip.open(path, "rb") as handle:
        payload = handle.read()
    _rewrite(path, payload[:-1000])
    with pytest.raises(data.DataError, match=r"t10k-images.*truncated or corrupt"):
        data._read_folder(data_copy)


def test_bad_magic_and_bad_labels(data_copy):
    labels = data_copy / data.FILES["train_labels"]
    with gzip.open(labels, "rb") as handle:
        payload = bytearray(handle.read())
    _rewrite(labels, struct.pack(">I", 0x0803) + bytes(payload[4:]))
    with pytest.raises(data.DataError, match="bad magic number"):
        data._read_folder(data_copy)
    payload[8] = 42  # first label out of 0-9
    _rewrite(labels, bytes(payload))
    with pytest.raises(data.DataError, match="label 42 outside 0-9"):
        data._read_folder(data_copy)


def test_not_gzip(data_copy):
    (data_copy / data.FILES["test_labels"]).write_bytes(b"hello")
    with pytest.raises(data.DataError, match="not a readable gzip"):
        data._read_folder(data_copy)


def test_env_dir_without_files_says_what_is_missing(tmp_path, monkeypatch, uncached):
    monkeypatch.setenv("VITCORE_DATA_DIR", str(tmp_path))
    with pytest.raises(data.DataError, match="VITCORE_DATA_DIR"):
        data.load_raw()


def test_no_source_lists_all_three(monkeypatch, tmp_path, uncached):
    monkeypatch.delenv("VITCORE_DATA_DIR", raising=False)
    monkeypatch.setattr(data, "DEBIAN_DIR", tmp_path / "absent")
    monkeypatch.setitem(__import__("sys").modules, "keras", None)  # the downloader fails at once, as offline
    with pytest.raises(data.DataError) as caught:
        data.load_raw()
    message = str(caught.value)
    assert "VITCORE_DATA_DIR" in message and "apt-get install -y dataset-fashion-mnist" in message
    assert "Keras" in message


def test_the_background_read_is_load_raw(data_copy, monkeypatch, uncached):
    """read_in_background decodes the data set into load_raw's cache: the same arrays, read once."""
    monkeypatch.setenv("VITCORE_DATA_DIR", str(data_copy))
    thread = data.read_in_background()
    assert thread is not None and thread.daemon
    thread.join()
    assert data.load_raw.cache_info().currsize == 1
    raw, direct = data.load_raw(), data._read_folder(data_copy)
    assert data.load_raw.cache_info().hits == 1  # not decoded again
    for name in ("x_train", "y_train", "x_test", "y_test"):
        assert np.array_equal(getattr(raw, name), getattr(direct, name))


def test_the_background_split_waits_for_ready_and_is_taken_once(uncached):
    """With (train_rows, seed) the thread also makes that split, only after `ready` is set (the caller's
    scikit-learn import); load_split takes it once, equal to the split it would make itself."""
    import threading

    ready = threading.Event()
    thread = data.read_in_background((1_000, 3), ready)
    assert thread is not None
    for _ in range(600):  # until the decode is done: the thread then waits for ready
        if data.load_raw.cache_info().currsize:
            break
        thread.join(0.05)
    thread.join(0.2)
    assert thread.is_alive() and not data._PREPARED  # no split before ready
    ready.set()
    thread.join()
    prepared = data._PREPARED[(1_000, 3)]
    assert data.load_split(1_000, 3) is prepared and not data._PREPARED  # taken, once
    again = data.load_split(1_000, 3)  # made here, equal
    for name in ("x_train", "y_train", "x_val", "y_val", "x_test", "y_test"):
        assert np.array_equal(getattr(again, name), getattr(prepared, name))
    assert data.load_split(1_000, 4).y_train.tolist() != prepared.y_train.tolist()  # another seed is not it


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_a_failed_background_read_is_raised_by_the_next_load(data_copy, monkeypatch, uncached):
    path = data_copy / data.FILES["train_images"]
    with gzip.open(path, "rb") as handle:
        payload = handle.read()
    _rewrite(path, payload[:-1000])
    monkeypatch.setenv("VITCORE_DATA_DIR", str(data_copy))
    data.read_in_background().join()  # fails quietly in its thread
    with pytest.raises(data.DataError, match=r"train-images.*truncated or corrupt"):
        data.load_raw()


def test_no_background_read_without_local_files(monkeypatch, tmp_path):
    monkeypatch.delenv("VITCORE_DATA_DIR", raising=False)
    monkeypatch.setattr(data, "DEBIAN_DIR", tmp_path / "absent")
    assert data.read_in_background() is None  # Keras' downloader is never started in a thread
    monkeypatch.setenv("VITCORE_DATA_DIR", str(tmp_path))  # lacks the files: the caller's load_raw says so
    assert data.read_in_background() is None
