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

import io
from pathlib import Path

import numpy as np

from vitcore.config.run import RunConfig
from vitcore.model import anatomy
from vitcore.store.files import WEIGHTS, BadRun, read, weights_limit

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
TIE = 1e-4  # float32 NumPy vs TensorFlow agree to 1e-5 (tests/test_numpy_vit.py); committed runs' closest call: 4e-3


def checked(folder: Path, config: RunConfig) -> tuple[bytes, dict[str, list[np.ndarray]]]:
    """(the file's bytes, its arrays by layer name) when the weights file is self-contained, finite and
    exactly the config's model's layers and shapes; else BadRun."""
    from vitcore.model.numpy_vit import load_weights

    data = read(folder, WEIGHTS, weights_limit(config))
    if not data.startswith(HDF5_SIGNATURE):
        raise BadRun(f"{WEIGHTS} is not an HDF5 file")
    try:
        weights = load_weights(io.BytesIO(data), anatomy.layer_shapes(config))
    except ValueError as error:
        raise BadRun(f"{WEIGHTS}: {str(error)[:300]}") from None
    except Exception as error:  # noqa: BLE001 - h5py raises many kinds on a crafted file
        raise BadRun(f"{WEIGHTS} unreadable ({type(error).__name__})") from None
    return data, weights


def weights_bytes(folder: Path, config: RunConfig) -> bytes:
    """The weights file's bytes if it passes `checked` (self-contained, finite, the config's model); else BadRun."""
    return checked(folder, config)[0]


def probabilities(config: RunConfig, weights: dict, images: np.ndarray) -> np.ndarray:
    """(n, 10) class probabilities of config's model with these weights on (n, 28, 28) images, in NumPy."""
    if config.model == "convnet":
        from vitcore.model.numpy_convnet import convnet_probs

        return convnet_probs(weights, images)
    from vitcore.data.patches import model_inputs
    from vitcore.model.numpy_vit import NumpyViT

    return NumpyViT(config, weights).without_scores(model_inputs(config, images))[0]


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
