"""Test images for the pages: the real test split when it is on disk, else a small shipped sample.

`vitcore/assets/samples.npz` holds a few test images per class (plus the source article's rows 0, 1, 11 and 12)
with their official test indices, so the patching page works on a machine without the data set.
`gallery()` never triggers Keras' downloader (which would import TensorFlow): it only reads local
IDX files. Rebuild the sample with `python scripts/make_samples.py`.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vitcore.data.fashion import CLASS_NAMES, DEBIAN_DIR, FILES, DataError, load_raw, load_test

SAMPLES_PATH = Path(__file__).resolve().parent / "assets" / "samples.npz"
# The first CHECK_ROWS official test images, shipped: a stored run's weights must predict on them what its
# predictions.npy says (vitcore.store.weights), on every machine alike, with or without the data set.
CHECK_PATH = SAMPLES_PATH.with_name("check_images.npz")
CHECK_ROWS = 64
PER_CLASS = 4
SEED_ROWS = (0, 1, 11, 12)  # the source article's attention table: boot, pullover, sandal->boot, sneaker->bag


def to_float(pixels: np.ndarray) -> np.ndarray:
    """uint8 pixels as float32 in [0, 1], as training sees them (x / 255 in float32)."""
    return pixels.astype(np.float32) / np.float32(255.0)


@dataclass(frozen=True)
class Gallery:
    """Test images by official test index. The pixels stay uint8 (the test split: 7.8 MB, not 31 MB as float32);
    the float32 images in [0, 1] are made for the rows asked for, the same numbers as converting them all."""
    pixels: np.ndarray   # (n, 28, 28) uint8
    labels: np.ndarray   # (n,) int, class ids
    indices: np.ndarray  # (n,) int, row numbers in the official 10,000-row test split
    source: str          # "test split (<folder>)" or "shipped sample"

    @property
    def images(self) -> np.ndarray:
        """(n, 28, 28) float32 in [0, 1]: every image (a new array; `head` or `images_of` for a few)."""
        return to_float(self.pixels)

    def head(self, count: int) -> np.ndarray:
        """(count, 28, 28) float32: the first `count` images."""
        return to_float(self.pixels[:count])

    def rows_of_class(self, label: int) -> np.ndarray:
        """Test indices of one class, ascending."""
        return self.indices[self.labels == label]

    def image(self, index: int) -> np.ndarray:
        """The (28, 28) float32 image at official test index `index`; KeyError if not in this gallery."""
        return to_float(self.pixels[self._position(index)])

    def images_of(self, rows) -> np.ndarray:
        """(len(rows), 28, 28) float32: the images at these official test indices, in that order."""
        return to_float(self.pixels[[self._position(row) for row in rows]])

    def labels_of(self, rows) -> np.ndarray:
        """(len(rows),) class ids at these official test indices, in that order."""
        return self.labels[[self._position(row) for row in rows]]

    def holds(self, rows) -> np.ndarray:
        """(len(rows),) bool: which of these official test indices this gallery has (the shipped sample has few)."""
        return np.isin(np.asarray(rows, dtype=np.int64), self.indices)

    def _position(self, index: int) -> int:
        where = np.flatnonzero(self.indices == index)
        if not len(where):
            raise KeyError(f"test row {index} is not in the {self.source}")
        return int(where[0])


def local_data_available() -> bool:
    """True when the four IDX files are on disk ($VITCORE_DATA_DIR or the Debian package)."""
    env = os.environ.get("VITCORE_DATA_DIR")
    folder = Path(env) if env else DEBIAN_DIR
    return all((folder / name).exists() for name in FILES.values())


def pick_sample_indices(labels: np.ndarray, per_class: int = PER_CLASS) -> np.ndarray:
    """The first `per_class` test rows of every class plus the source article's rows, sorted."""
    labels = np.asarray(labels)
    first = [np.flatnonzero(labels == label)[:per_class] for label in range(len(CLASS_NAMES))]
    return np.unique(np.concatenate([*first, np.asarray(SEED_ROWS)]))


def make_samples(path: Path = SAMPLES_PATH, per_class: int = PER_CLASS) -> Path:
    """Write the shipped sample from the real test split (uint8 pixels, labels, test indices)."""
    raw = load_raw()
    picked = pick_sample_indices(raw.y_test, per_class)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, images=raw.x_test[picked], labels=raw.y_test[picked], indices=picked)
    return path


def make_check_images(path: Path = CHECK_PATH, rows: int = CHECK_ROWS) -> Path:
    """Write the first `rows` official test images (uint8) the weights check runs the model on."""
    images, _, _ = load_test()
    np.savez_compressed(path, images=images[:rows])
    return path


@functools.lru_cache(maxsize=1)
def check_images() -> np.ndarray:
    """(CHECK_ROWS, 28, 28) float32 in [0, 1]: official test rows 0 to CHECK_ROWS - 1 (read-only)."""
    with np.load(CHECK_PATH, allow_pickle=False) as data:
        images = data["images"]
    if images.shape != (CHECK_ROWS, 28, 28) or images.dtype != np.uint8:
        raise ValueError(f"{CHECK_PATH}: not {CHECK_ROWS} test images ({images.dtype} {images.shape})")
    pixels = to_float(images)
    pixels.setflags(write=False)
    return pixels


def load_samples(path: Path = SAMPLES_PATH) -> Gallery:
    with np.load(path) as data:
        return Gallery(data["images"], data["labels"].astype(int),
                       data["indices"].astype(int), "shipped sample")


def gallery(prefer_full: bool = True) -> Gallery:
    """The full test split if it is on disk (and wanted) and reads as Fashion-MNIST, else the shipped
    sample (a damaged $VITCORE_DATA_DIR is reported once, by vitcore.data.fashion.data_dir_problem)."""
    if prefer_full and local_data_available():
        try:
            images, labels, _ = load_test()
        except DataError:
            return load_samples()
        return Gallery(images, labels.astype(int), np.arange(len(labels)), f"test split ({source_name()})")
    return load_samples()


def source_name() -> str:
    """Where the local test split comes from, in words a visitor may see (never a server path)."""
    return "$VITCORE_DATA_DIR" if os.environ.get("VITCORE_DATA_DIR") else "Debian's dataset-fashion-mnist package"
