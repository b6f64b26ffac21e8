"""Patching is a reshape: (n, 28, 28) images <-> (n, tokens, patch * patch) token matrices.

Lossless in both directions (max |rebuilt - original| = 0); what it loses is adjacency, which is
why the ViT needs a position embedding. NumPy only, so pages can use it without TensorFlow.
"""

from __future__ import annotations

import numpy as np

from vitcore.config.run import PATCH_SIZES

SIDE = 28


def _check(patch: int) -> int:
    if patch not in PATCH_SIZES:
        raise ValueError(f"patch must be one of {', '.join(map(str, PATCH_SIZES))}; got {patch!r}")
    return SIDE // patch


def patchify(images: np.ndarray, patch: int = 7) -> np.ndarray:
    """(n, 28, 28) -> (n, grid*grid, patch*patch), tokens in row-major grid order, as the seed."""
    grid = _check(patch)
    images = np.asarray(images)
    if images.ndim != 3 or images.shape[1:] != (SIDE, SIDE):
        raise ValueError(f"images must have shape (n, {SIDE}, {SIDE}); got {images.shape}")
    count = len(images)
    reshaped = images.reshape(count, grid, patch, grid, patch)  # (n, row, y, col, x)
    return reshaped.transpose(0, 1, 3, 2, 4).reshape(count, grid * grid, patch * patch)


def unpatchify(tokens: np.ndarray, patch: int = 7) -> np.ndarray:
    """The exact inverse of patchify: (n, grid*grid, patch*patch) -> (n, 28, 28)."""
    grid = _check(patch)
    tokens = np.asarray(tokens)
    if tokens.ndim != 3 or tokens.shape[1:] != (grid * grid, patch * patch):
        raise ValueError(f"tokens must have shape (n, {grid * grid}, {patch * patch}) for patch {patch}; "
                         f"got {tokens.shape}")
    count = len(tokens)
    reshaped = tokens.reshape(count, grid, grid, patch, patch)  # (n, row, col, y, x)
    return reshaped.transpose(0, 1, 3, 2, 4).reshape(count, SIDE, SIDE)


def model_inputs(cfg, images: np.ndarray) -> np.ndarray:
    """What the model of `cfg` eats: patch tokens for the ViT, the (n, 28, 28) images for the convnet."""
    return patchify(images, cfg.patch_size) if cfg.model == "vit" else np.asarray(images)
