"""A run's model.weights.h5, judged like its other files: every byte from inside the run's own file,
exactly its config's model, and the run's own weights.

A weights file is read (vitcore.store.files: bounded, never a link or a FIFO) and parsed in memory;
it is accepted only when
- it is self-contained (vitcore.model.weights_file.load_weights: hard links only, no HDF5 external
  storage or virtual dataset, storage bounded by the declared shapes) and holds float32 arrays with
  finite values;
- its layers, names and shapes are exactly those of the config's model (vitcore.model.anatomy,
  built from the config, never from the file);
- the run keeps its predictions.npy: weights nothing could check are refused (`check`, every reader);
- (`screen`: every scan, the index's verdict) the model predicts, on the first CHECK_ROWS official test
  images shipped with the package, the classes predictions.npy stores there: a cheap first look;
- (`verify`: `check`, a Ray driver before it stores a remote run) the model reproduces EVERY one of
  the 10,000 stored predictions on the official test split (vitcore.data.testsplit), done once per
  content (vitcore.store.memo). Where the test split is not on this machine the run is "not verified
  here" (the screen alone judged it) and `check` says so.
Near ties: NumPy and TensorFlow agree on every probability to 1e-5 (tests/test_numpy_vit.py, every
switch), so where TensorFlow's top class b beat NumPy's a, NumPy's p_a - p_b is at most 2e-5 (TIE). A
row may differ from the stored class only when NumPy's probability of the stored class is within TIE of
its top one; any other differing row refuses the weights (the committed 87 weighted runs: no row differs).
Whatever the file holds, reading it raises BadRun or returns.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

import numpy as np

from vitcore.config.run import RunConfig
from vitcore.data import testsplit
from vitcore.data.patches import model_inputs
from vitcore.data.samples import check_images, to_float
from vitcore.model import anatomy
from vitcore.store import memo
from vitcore.store.files import PREDICTIONS, WEIGHTS, BadRun, OutOfMemory, read, weights_limit

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
TIE = 2e-5  # two probabilities each within 1e-5 of TensorFlow's (tests/test_numpy_vit.py): see the docstring
FULL_CHECK = "official test images"  # words only `verify`'s refusal says (a scan's screen never does)
RULE = "weights-verify/1"  # the verification memo's version: bump when `verify` or TIE changes


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
    from vitcore.model.weights_file import load_weights  # noqa: PLC0415 - h5py, only once a file is parsed

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
    """(n, 10) class probabilities of config's model with these weights on (n, 28, 28) images (float in
    [0, 1], or uint8 pixels), in NumPy, ROWS images at a time (10,000 at once would hold the ViT's tokens,
    157 MB, or the convnet's 865 MB)."""
    from vitcore.model.numpy_vit import NumpyViT, convnet_probs  # noqa: PLC0415 - h5py, scipy: only to run one

    if config.model == "convnet":
        forward = functools.partial(convnet_probs, weights)
    else:
        model = NumpyViT(config, weights)
        forward = lambda part: model.without_scores(model_inputs(config, part))[0]  # noqa: E731
    scale = to_float if images.dtype == np.uint8 else np.asarray  # uint8 pixels: 500 rows made float at a time
    parts = [forward(scale(images[start:start + ROWS])) for start in range(0, len(images), ROWS)]
    return np.concatenate(parts) if parts else np.zeros((0, 10), np.float32)


def differing(probs: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Rows whose stored class is not what these (n, 10) probabilities predict, near ties excepted: a row
    counts only when the stored class's probability is more than TIE below the top one. A row with a
    probability that is not finite always counts (NaN would compare as no difference)."""
    rows = np.flatnonzero((probs.argmax(axis=1) != stored) | ~np.isfinite(probs).all(axis=1))
    gap = probs[rows].max(axis=1) - probs[rows, stored[rows].astype(np.intp)]
    return rows[~(gap <= TIE)]


def beside_predictions(folder: Path, config: RunConfig, predictions: np.ndarray | None) -> tuple[bytearray, dict]:
    """`checked` (the file's bytes, its arrays), or BadRun when the run has no predictions to check them with."""
    if predictions is None:
        raise BadRun(f"{WEIGHTS} without {PREDICTIONS}: nothing could check these weights are this run's "
                     f"(weights are kept only beside the predictions they reproduce)")
    return checked(folder, config)


def screen(folder: Path, config: RunConfig, predictions: np.ndarray | None) -> tuple[bytearray, dict]:
    """BadRun unless the weights pass `checked`, the run keeps predictions, and the weights predict them on
    the CHECK_ROWS shipped test images (near ties excepted: `differing`). Cheap: every scan runs it.
    Returns `checked`'s (bytes, arrays)."""
    data, weights = beside_predictions(folder, config, predictions)
    images = check_images()
    with np.errstate(all="ignore"):
        bad = differing(probabilities(config, weights, images), predictions[:len(images)])
    if len(bad):
        raise BadRun(f"{WEIGHTS}: predicts other classes than {PREDICTIONS} on {len(bad)} of the first "
                     f"{len(images)} test images: not this run's weights")
    return data, weights


def verify(folder: Path, config: RunConfig, predictions: np.ndarray | None) -> str | None:
    """BadRun unless the weights pass `screen` and, where the official test split is on this machine,
    reproduce every stored prediction on it (near ties excepted: `differing`); once per content (the memo).
    Returns None when verified in full, else why not here (vitcore.data.testsplit.missing)."""
    data, weights = screen(folder, config, predictions)
    images = testsplit.images()
    if images is None:
        return testsplit.missing()
    entry = memo.token(RULE, config.run_id, data, predictions.tobytes(), testsplit.SHA256)
    if memo.remembered(entry):
        return None
    reproduce(config, weights, predictions, images)
    memo.remember(entry)
    return None


def reproduce(config: RunConfig, weights: dict, predictions: np.ndarray, images: np.ndarray) -> np.ndarray:
    """The (10000, 10) probabilities of these weights on the official test images; BadRun unless they
    give every stored prediction (near ties excepted)."""
    with np.errstate(all="ignore"):
        probs = probabilities(config, weights, images)
    bad = differing(probs, predictions)
    if len(bad):
        raise BadRun(f"{WEIGHTS}: predicts other classes than {PREDICTIONS} on {len(bad):,} of the "
                     f"{len(images):,} {FULL_CHECK} (test rows {', '.join(map(str, bad[:5]))}"
                     f"{', ...' if len(bad) > 5 else ''}): not this run's weights")
    return probs
