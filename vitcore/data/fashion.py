"""The real Fashion-MNIST: found offline, parsed and validated, split the same way for every run.

Sources, in order: $VITCORE_DATA_DIR (a folder with the four IDX .gz files), the Debian package
`dataset-fashion-mnist` (/usr/share/datasets/fashion-mnist), then Keras' downloader (needs the
internet; used on Streamlit Community Cloud). Splits: validation = 5,000 rows of the 60k train
split, stratified, fixed; a run's training rows = a stratified sample of the other 55,000 drawn
with the run's seed; test = the official 10,000. Pixels are float32 in [0, 1], shape (n, 28, 28).
"""

from __future__ import annotations

import contextlib
import functools
import os
import struct
import threading
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vitcore.config.run import SPLIT_SEED, VAL_ROWS
from vitcore.data.regular import Refused, open_regular

CLASS_NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")
NUM_CLASSES = len(CLASS_NAMES)
DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}
# IDX magic numbers: 0x00000803 = unsigned byte, 3 dims (images); 0x00000801 = 1 dim (labels).
_MAGIC = {3: 0x0803, 1: 0x0801}
# The official test split holds 1,000 images of each class: every stored confusion matrix's rows
# sum to these counts (vitcore.store.validate checks it; _read_folder checks the files agree).
TEST_CLASS_COUNTS = (1_000,) * NUM_CLASSES
TEST_ROWS = sum(TEST_CLASS_COUNTS)
_EXPECTED_ROWS = {"train": 60_000, "test": TEST_ROWS}


class DataError(RuntimeError):
    """The data set is missing or a file is not valid IDX."""


@dataclass(frozen=True)
class Raw:
    x_train: np.ndarray  # (60000, 28, 28) uint8
    y_train: np.ndarray  # (60000,) uint8
    x_test: np.ndarray   # (10000, 28, 28) uint8
    y_test: np.ndarray   # (10000,) uint8
    source: str


@dataclass(frozen=True)
class Split:
    x_train: np.ndarray  # (train_rows, 28, 28) float32 in [0, 1]
    y_train: np.ndarray  # (train_rows,) int32
    x_val: np.ndarray    # (5000, 28, 28)
    y_val: np.ndarray
    x_test: np.ndarray   # (10000, 28, 28)
    y_test: np.ndarray
    source: str


# The most bytes an IDX file of Fashion-MNIST holds, compressed and inflated: the 60,000 training
# images (47,040,016 bytes inflated, 26.4 MB gzipped). A read stops there, whatever the file claims.
MAX_INFLATED = {3: 16 + 60_000 * 28 * 28, 1: 8 + 60_000}
MAX_GZIPPED = 64 << 20


def read_gzip(path: Path, limit: int) -> bytes:
    """The inflated bytes of the gzip file at `path`, at most `limit` of them (DataError beyond: a
    4.6 MB file inflating to 1 GiB is refused after `limit` bytes, never held). Only a regular file
    is read, opened without blocking (a FIFO or a device is refused, never waited on)."""
    inflate, fresh, parts, size = zlib.decompressobj(wbits=31), True, [], 0  # wbits 31: gzip's header and trailer
    try:
        with open_regular(path, MAX_GZIPPED) as handle:
            while chunk := os.read(handle, 1 << 20):
                while chunk:
                    part, fresh = inflate.decompress(chunk, limit + 1 - size), False
                    parts.append(part)
                    size += len(part)
                    if size > limit:
                        raise DataError(f"{path}: inflates past {limit:,} bytes, more than any Fashion-MNIST file")
                    if inflate.eof:  # another gzip member may follow (gzip.open reads them all)
                        chunk, inflate, fresh = inflate.unused_data, zlib.decompressobj(wbits=31), True
                    else:
                        chunk = inflate.unconsumed_tail
    except Refused as refused:
        raise DataError(f"{path}: " + refused.words("unreadable ({reason})", "not a regular file",
                                                    f"{{size}} bytes, over the {MAX_GZIPPED:,} of any Fashion-MNIST "
                                                    "file")) from None
    except OSError as error:
        raise DataError(f"{path}: unreadable ({error.strerror})") from None
    except zlib.error as error:  # a damaged deflate stream (not an OSError)
        raise DataError(f"{path}: not a readable gzip file ({error})") from None
    if not (inflate.eof or fresh) or size == 0:
        raise DataError(f"{path}: not a readable gzip file (truncated)")
    return b"".join(parts)


def read_idx(path: Path, dims: int) -> np.ndarray:
    """Parse one gzipped IDX file of unsigned bytes, checking magic, dimensions and length (read bounded: read_gzip)."""
    data = read_gzip(path, MAX_INFLATED[dims])
    header = 4 + 4 * dims
    if len(data) < header:
        raise DataError(f"{path}: truncated header ({len(data)} bytes, need {header})")
    magic = struct.unpack(">I", data[:4])[0]
    if magic != _MAGIC[dims]:
        raise DataError(f"{path}: bad magic number {magic:#010x}, expected {_MAGIC[dims]:#010x}")
    shape = struct.unpack(f">{dims}I", data[4:header])
    expected = header + int(np.prod(shape))
    if len(data) != expected:
        raise DataError(f"{path}: {len(data) - header} data bytes for shape {shape}, expected {expected - header}"
                        " (truncated or corrupt)")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape)


def _read_folder(folder: Path) -> Raw:
    arrays = {}
    for key, name in FILES.items():
        arrays[key] = read_idx(folder / name, 3 if key.endswith("images") else 1)
    for part in ("train", "test"):
        images, labels = arrays[f"{part}_images"], arrays[f"{part}_labels"]
        path = folder / FILES[f"{part}_images"]
        if images.shape != (_EXPECTED_ROWS[part], 28, 28):
            raise DataError(f"{path}: shape {images.shape}, expected ({_EXPECTED_ROWS[part]}, 28, 28)")
        if labels.shape != (len(images),):
            raise DataError(f"{folder / FILES[f'{part}_labels']}: {len(labels)} labels for {len(images)} images")
        if labels.max() > 9:
            raise DataError(f"{folder / FILES[f'{part}_labels']}: label {labels.max()} outside 0-9")
    if tuple(np.bincount(arrays["test_labels"], minlength=10)) != TEST_CLASS_COUNTS:
        raise DataError(f"{folder / FILES['test_labels']}: class counts {np.bincount(arrays['test_labels']).tolist()}, "
                        f"the official test split has {TEST_CLASS_COUNTS[0]:,} of each class")
    return Raw(arrays["train_images"], arrays["train_labels"], arrays["test_images"], arrays["test_labels"],
               source=str(folder))


def _has_files(folder: Path) -> bool:
    return all((folder / name).exists() for name in FILES.values())


def local_folder() -> Path | None:
    """The first local source that has the files ($VITCORE_DATA_DIR, then the Debian package), or None."""
    env = os.environ.get("VITCORE_DATA_DIR")
    if env is not None and not env.strip():  # Path("") is the current folder: never read it by accident
        raise DataError("VITCORE_DATA_DIR is empty: unset it, or name the folder of the four IDX .gz files")
    if env:
        if not _has_files(Path(env)):
            raise DataError(f"VITCORE_DATA_DIR={env} lacks some of {', '.join(FILES.values())}")
        return Path(env)
    return DEBIAN_DIR if _has_files(DEBIAN_DIR) else None


# The official test labels ship with the package (5 KB, the IDX file as Fashion-MNIST publishes it): every
# verdict on test accuracy includes the test set's sampling from them (vitcore.stats.testset), so a server
# without the data set (the view-only install, Community Cloud) gives the same verdicts as one with it.
SHIPPED_TEST_LABELS = Path(__file__).resolve().parent / "assets" / FILES["test_labels"]


@functools.lru_cache(maxsize=1)
def official_test_labels() -> np.ndarray:
    """The official test labels (10,000 uint8, official order), without parsing any image: `check`
    compares stored predictions with them. From the local data set, else the shipped copy."""
    folder = local_folder()
    return _checked_labels(SHIPPED_TEST_LABELS if folder is None else folder / FILES["test_labels"])


@functools.lru_cache(maxsize=1)
def shipped_test_labels() -> np.ndarray:
    """The shipped copy of the official test labels: what the verdicts use, whatever data this machine has."""
    return _checked_labels(SHIPPED_TEST_LABELS)


def _checked_labels(path: Path) -> np.ndarray:
    labels = read_idx(path, 1)
    if labels.shape != (TEST_ROWS,
                        ) or labels.max() > 9 or tuple(np.bincount(labels, minlength=10)) != TEST_CLASS_COUNTS:
        raise DataError(f"{path}: not the official test labels ({len(labels)} labels, "
                        f"class counts {np.bincount(labels).tolist()})")
    labels.setflags(write=False)
    return labels


def load_test() -> tuple[np.ndarray, np.ndarray, str]:
    """(test images uint8 (10000, 28, 28), test labels, source) without reading the training files
    when the data is on disk (the pages need only the test split: ~50 MB less server memory)."""
    folder = local_folder()
    if folder is None:
        raw = load_raw()
        return raw.x_test, raw.y_test, raw.source
    images, labels = read_idx(folder / FILES["test_images"], 3), official_test_labels()
    if len(images) != len(labels):
        raise DataError(f"{folder / FILES['test_images']}: {len(images)} images for {len(labels)} labels")
    return images, labels, str(folder)


@functools.lru_cache(maxsize=1)
def load_raw() -> Raw:
    """The full data set from the first source that has it; DataError names all three otherwise."""
    folder = local_folder()
    if folder is not None:
        return _read_folder(folder)
    try:  # last resort: needs the internet (fine on Streamlit Community Cloud)
        import keras  # noqa: PLC0415 - TensorFlow, only when no local copy exists

        (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    except Exception as error:  # noqa: BLE001 - any failure means "no source"
        raise DataError(
            "Fashion-MNIST not found. Sources tried: $VITCORE_DATA_DIR (a folder with the four IDX .gz files), "
            f"{DEBIAN_DIR} (install with: apt-get install -y dataset-fashion-mnist), "
            f"and Keras' downloader (failed: {type(error).__name__})") from None
    return Raw(x_train, y_train, x_test, y_test, source="keras.datasets.fashion_mnist")


def read_in_background(split: tuple[int, int] | None = None,
                       ready: threading.Event | None = None) -> threading.Thread | None:
    """Decode the local data set (load_raw) in a daemon thread (None without local files: Keras' downloader
    would import Keras there). zlib and NumPy run without the GIL: the second core works while the caller
    imports TensorFlow (docs/speed.md). With `split` (train_rows, seed) the thread makes it once `ready` is
    set (scikit-learn imported: never two imports at once); the next load_split takes it. Join it before
    the next load_raw or load_split; a failure is not kept (the caller's own load meets and raises it)."""
    with contextlib.suppress(DataError):
        if local_folder() is not None:
            thread = threading.Thread(target=_read_quietly, args=(split, ready), name="vitcore-data", daemon=True)
            thread.start()
            return thread
    return None


_PREPARED: dict[tuple[int, int], Split] = {}  # a split read_in_background made, until load_split takes it


def _read_quietly(split: tuple[int, int] | None, ready: threading.Event | None) -> None:
    with contextlib.suppress(Exception):  # raised again, in the caller's thread, by its own load_raw
        load_raw()
        if split is not None and (ready is None or ready.wait()):
            _PREPARED[split] = load_split(*split)


def _stratified_pick(labels: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of a stratified sample: each class in proportion, via scikit-learn."""
    from sklearn.model_selection import train_test_split  # noqa: PLC0415 - scikit-learn

    if count >= len(labels):
        return np.arange(len(labels))
    picked, _ = train_test_split(np.arange(len(labels)), train_size=count, stratify=labels,
                                 random_state=int(rng.integers(2**31 - 1)))
    return np.sort(picked)


@functools.lru_cache(maxsize=1)
def validation_indices() -> np.ndarray:
    """The 5,000 held-out rows of the train split: the same for every run and machine."""
    raw = load_raw()
    return _stratified_pick(raw.y_train, VAL_ROWS, np.random.default_rng(SPLIT_SEED))


def _scaled(images: np.ndarray) -> np.ndarray:
    return images.astype(np.float32) / 255.0


_HELD_OUT: list[tuple[Raw, tuple[np.ndarray, ...]]] = []  # [(raw, what _held_out made of it)]: at most one


def _held_out(raw: Raw) -> tuple[np.ndarray, ...]:
    """The pool of training rows (the 55,000 not held out, sorted), the validation and test images scaled and
    their labels: made once per `raw`, read-only, the very arrays every Split of a sweep worker's runs holds."""
    if not (_HELD_OUT and _HELD_OUT[0][0] is raw):
        val = validation_indices()
        arrays = (np.setdiff1d(np.arange(len(raw.y_train)), val), _scaled(raw.x_train[val]),
                  raw.y_train[val].astype(np.int32), _scaled(raw.x_test), raw.y_test.astype(np.int32))
        for array in arrays:
            array.setflags(write=False)
        _HELD_OUT[:] = [(raw, arrays)]
    return _HELD_OUT[0][1]


def load_split(train_rows: int, seed: int) -> Split:
    """The run's data: `train_rows` stratified rows (by seed), the fixed validation and test sets (_held_out's)."""
    prepared = _PREPARED.pop((train_rows, seed), None)
    if prepared is not None:
        return prepared
    raw = load_raw()
    pool, x_val, y_val, x_test, y_test = _held_out(raw)
    picked = pool[_stratified_pick(raw.y_train[pool], train_rows, np.random.default_rng(seed))]
    return Split(_scaled(raw.x_train[picked]), raw.y_train[picked].astype(np.int32), x_val, y_val, x_test, y_test,
                 raw.source)


# Whether $VITCORE_DATA_DIR can be used: checked before any work (the CLI exits with code 2, the app turns
# training off), reading the folder's official test labels now (vitcore.data.fashion reads the rest when needed).

def data_dir_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why VITCORE_DATA_DIR cannot be used (None when unset or usable): a folder holding the four IDX
    files whose test labels are the official ones (the images are checked when first read)."""
    folder = environ.get("VITCORE_DATA_DIR")
    if folder is None:
        return None
    if not folder.strip():
        return "VITCORE_DATA_DIR is empty (that would be the current folder): unset it, or name the data folder"
    try:
        official_test_labels.__wrapped__()  # not its per-process cache: this checks the folder now
    except DataError as error:
        return f"VITCORE_DATA_DIR does not hold Fashion-MNIST ({str(error).replace(folder, '$VITCORE_DATA_DIR')})"
    except OSError as error:
        return f"VITCORE_DATA_DIR is unreadable ({error.strerror})"
    return None
