"""A run's model.weights.h5, judged like its other files: every byte from inside the run's own file,
exactly its config's model, and the run's own weights.

A weights file is read (vitcore.store.files: bounded, never a link or a FIFO) and parsed in memory;
it is accepted only when
- it is self-contained (vitcore.model.numpy_vit.load_weights: hard links only, no HDF5 external
  storage or virtual dataset, which would make HDF5 open other files, a FIFO or /dev/zero included;
  no filter but gzip, shuffle and lzf) and holds float32 arrays with finite values;
- its layers, names and shapes are exactly those of the config's model (vitcore.model.anatomy,
  built from the config, never from the file);
- (`predictions` given) the model with these weights predicts, on the first CHECK_ROWS official test
  images shipped with the package, the classes the run's predictions.npy stores there: weights of
  another run, or edited ones, do not pass. A near tie (top two probabilities within TIE) may fall
  either way between NumPy and TensorFlow, so one such row may differ, never more.
Whatever the file holds, reading it raises BadRun or returns.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

import numpy as np

from vitcore.config.run import RunConfig
from vitcore.model import anatomy
from vitcore.store.files import WEIGHTS, BadRun, OutOfMemory, read, weights_limit

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
TIE = 1e-4  # float32 NumPy vs TensorFlow agree to 1e-5 (tests/test_numpy_vit.py); committed runs' closest call: 4e-3


class Image(io.RawIOBase):
    """A read-only file over bytes already in memory, for h5py (which reads with readinto): io.BytesIO
    would copy a bytearray, holding the file twice."""

    def __init__(self, data: bytes | bytearray):
        super().__init__()
        self._view, self._at = memoryview(data).toreadonly(), 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        part = self._view[self._at:self._at + len(target)]
        target[:len(part)] = part
        self._at += len(part)
        return len(part)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._at = max(0, {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: len(self._view)}[whence] + offset)
        return self._at

    def tell(self) -> int:
        return self._at


def parsed(data: bytes | bytearray, config: RunConfig) -> dict[str, list[np.ndarray]]:
    """The arrays by layer name of a weights file's bytes when it is self-contained, bounded, finite and
    exactly the config's model's layers and shapes (vitcore.model.weights_file.load_weights); else BadRun.
    A MemoryError becomes OutOfMemory (this run skipped, not the scan)."""
    from vitcore.model.weights_file import load_weights

    if len(data) > weights_limit(config):
        raise BadRun(f"{WEIGHTS} is {len(data):,} bytes, over its limit of {weights_limit(config):,}")
    if not data.startswith(HDF5_SIGNATURE):
        raise BadRun(f"{WEIGHTS} is not an HDF5 file")
    try:
        return load_weights(Image(data), anatomy.layer_shapes(config))
    except ValueError as error:
        raise BadRun(f"{WEIGHTS}: {str(error)[:300]}") from None
    except MemoryError:
        raise OutOfMemory(f"{WEIGHTS}: out of memory while read (skipped; judged again next time)") from None
    except Exception as error:  # noqa: BLE001 - h5py raises many kinds on a crafted file
        raise BadRun(f"{WEIGHTS} unreadable ({type(error).__name__})") from None


def checked(folder: Path, config: RunConfig) -> tuple[bytearray, dict[str, list[np.ndarray]]]:
    """(the file's bytes, its arrays by layer name) when the weights file passes `parsed`; else BadRun."""
    data = read(folder, WEIGHTS, weights_limit(config))
    return data, parsed(data, config)


def weights_bytes(folder: Path, config: RunConfig) -> bytearray:
    """The weights file's bytes if it passes `checked` (self-contained, finite, the config's model); else BadRun."""
    return checked(folder, config)[0]


ROWS = 500  # images per forward pass: the convnet's first layer holds 500 x 26 x 26 x 32 floats (43 MB)


def probabilities(config: RunConfig, weights: dict, images: np.ndarray) -> np.ndarray:
    """(n, 10) class probabilities of config's model with these weights on (n, 28, 28) images, in NumPy,
    ROWS images at a time (10,000 at once would hold the ViT's tokens, 157 MB, or the convnet's 865 MB)."""
    if config.model == "convnet":
        from vitcore.model.numpy_convnet import convnet_probs

        forward = functools.partial(convnet_probs, weights)
    else:
        from vitcore.data.patches import model_inputs
        from vitcore.model.numpy_vit import NumpyViT

        model = NumpyViT(config, weights)
        forward = lambda part: model.without_scores(model_inputs(config, part))[0]  # noqa: E731
    parts = [forward(images[start:start + ROWS]) for start in range(0, len(images), ROWS)]
    return np.concatenate(parts) if parts else np.zeros((0, 10), np.float32)


def check(folder: Path, config: RunConfig, predictions: np.ndarray | None) -> None:
    """BadRun unless the weights file passes `checked` and, when the run keeps predictions, its weights
    predict them on the shipped check images (see the module docstring)."""
    from vitcore.data.samples import check_images

    _, weights = checked(folder, config)
    if predictions is None:
        return
    images = check_images()
    with np.errstate(all="ignore"):
        probs = probabilities(config, weights, images)
    ours, stored = probs.argmax(axis=1), predictions[:len(images)]
    differ = np.flatnonzero(ours != stored)
    top = np.sort(probs, axis=1)
    ties = top[differ, -1] - top[differ, -2] < TIE
    if len(differ) > 1 or not ties.all():
        raise BadRun(f"{WEIGHTS}: predicts other classes than predictions.npy on {len(differ)} of the first "
                     f"{len(images)} test images: not this run's weights")
