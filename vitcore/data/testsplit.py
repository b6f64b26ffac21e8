"""The official test images, when this machine has them: what a stored run's weights must reproduce its
predictions on, every one of the 10,000 (vitcore.store.weights.verify), and what a Ray driver recomputes a
remote run from (vitcore.run.remote).

They come from the local data set only ($VITCORE_DATA_DIR, else Debian's dataset-fashion-mnist package,
vitcore.data.fashion.local_folder), never from the internet, and count only when their pixels are the
official ones: the SHA-256 of the decoded 10,000 × 28 × 28 bytes in official order is pinned here (a 64-byte
constant instead of shipping 7.8 MB of images). Elsewhere (the view-only install, Community Cloud) there
are none: `images()` is None and `missing()` says why, in words a user can act on.
"""

from __future__ import annotations

import functools
import hashlib
import os

import numpy as np

from vitcore.data.fashion import FILES, TEST_ROWS, DataError, local_folder, read_idx

# hashlib.sha256(images.tobytes()) of t10k-images-idx3-ubyte.gz's (10000, 28, 28) uint8 pixels.
SHA256 = "c867c93ff95360594e8ec3287995350b824dd110b11595c0e13d5423f621867a"
INSTALL = ("install Debian's dataset-fashion-mnist package or set VITCORE_DATA_DIR to a folder of the four "
           "Fashion-MNIST IDX files")


def stamp() -> str:
    """What `images()` depends on (the file's path, size and mtime, or why there is none): part of the store
    index's data stamp, so verdicts judged without the test split are judged again once it appears."""
    try:
        folder = local_folder()
        if folder is None:
            return "absent"
        path = folder / FILES["test_images"]
        info = os.stat(path)
        return f"{path}:{info.st_size}:{info.st_mtime_ns}"
    except (DataError, OSError) as error:
        return f"unusable:{type(error).__name__}"


def images() -> np.ndarray | None:
    """(10000, 28, 28) uint8, official order, read-only: the official test images, or None (see `missing`)."""
    return _load(stamp(), SHA256)[0]


def missing() -> str | None:
    """Why there are no official test images here (None when `images()` has them)."""
    return _load(stamp(), SHA256)[1]


@functools.lru_cache(maxsize=2)
def _load(key: str, official: str) -> tuple[np.ndarray | None, str | None]:
    try:
        folder = local_folder()
        if folder is None:
            return None, f"the official test split is not on this machine ({INSTALL})"
        pixels = read_idx(folder / FILES["test_images"], 3)
    except (DataError, OSError) as error:
        return None, f"the official test split is unreadable here ({str(error)[:200]})"
    if pixels.shape != (TEST_ROWS, 28, 28) or hashlib.sha256(pixels.tobytes()).hexdigest() != official:
        return None, f"the local test images are not the official ones (their SHA-256 differs; {INSTALL})"
    pixels.setflags(write=False)
    return pixels, None
