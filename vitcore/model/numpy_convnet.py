"""The source article's convnet in NumPy (vitcore.model.build.build_convnet), inference only: what a
stored convnet run's weights predict, without TensorFlow (the weights check, vitcore.store.weights).

    images (n, 28, 28, 1) -> conv1 3×3 valid, ReLU (n, 26, 26, 32) -> max pool 2 (n, 13, 13, 32)
    -> conv2 (n, 11, 11, 64) -> pool (n, 5, 5, 64) -> conv3 (n, 3, 3, 64) -> mean over positions (n, 64)
    -> dense ReLU (n, 64) -> classifier softmax (n, 10)
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from vitcore.model.numpy_vit import Weights, _softmax


def _conv(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Keras Conv2D, 'valid' padding, stride 1, ReLU: (n, H, W, c) -> (n, H-2, W-2, filters) for a 3×3 kernel."""
    windows = sliding_window_view(x, kernel.shape[:2], axis=(1, 2))   # (n, H-2, W-2, c, 3, 3)
    n, h, w = windows.shape[:3]
    columns = windows.reshape(n * h * w, -1)                              # one row per position (c·3·3)
    out = columns @ kernel.transpose(2, 0, 1, 3).reshape(-1, kernel.shape[-1]) + bias
    return np.maximum(out, 0).reshape(n, h, w, -1)


def _pool(x: np.ndarray) -> np.ndarray:
    """Keras MaxPooling2D(2): 2×2 windows, stride 2, the odd last row and column dropped."""
    n, h, w, c = x.shape
    return x[:, :h // 2 * 2, :w // 2 * 2].reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def convnet_probs(weights: Weights, images: np.ndarray) -> np.ndarray:
    """(n, 28, 28) images in [0, 1] -> (n, 10) class probabilities of the convnet with these weights."""
    x = np.asarray(images, dtype=np.float32)[..., None]
    x = _pool(_conv(x, *weights["conv1"]))
    x = _pool(_conv(x, *weights["conv2"]))
    x = _conv(x, *weights["conv3"]).mean(axis=(1, 2))
    kernel, bias = weights["dense"]
    x = np.maximum(x @ kernel + bias, 0)
    kernel, bias = weights["classifier"]
    return _softmax(x @ kernel + bias)
