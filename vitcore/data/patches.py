"""Patching is a reshape: (n, 28, 28) images <-> (n, tokens, patch * patch) token matrices.

Lossless in both directions (max |rebuilt - original| = 0); what it loses is adjacency, which is
why the ViT needs a position embedding. NumPy only, so pages can use it without TensorFlow.
"""

from __future__ import annotations

import numpy as np

from vitcore.config.run import IMAGE_SIDE, PATCH_SIZES

SIDE = IMAGE_SIDE


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


SHIFTS = ((-1, -1), (-1, 1), (1, -1), (1, 1))  # (rows, columns) directions: the four diagonals


def shifted_images(images: np.ndarray, patch: int = 7) -> np.ndarray:
    """(n, 28, 28) -> (n, 5, 28, 28): the image, then four copies shifted by half a patch along the
    diagonals (SHIFTS), zero-filled where the shift uncovers the border (Lee, Lee & Song 2021)."""
    images = np.asarray(images)
    half = patch // 2  # 3 pixels for patch 7
    padded = np.pad(images, ((0, 0), (half, half), (half, half)))   # (n, 28 + 2·half, 28 + 2·half)
    shifted = [padded[:, half + dy * half:half + dy * half + SIDE, half + dx * half:half + dx * half + SIDE]
               for dy, dx in SHIFTS]                                # each (n, 28, 28)
    return np.stack([images, *shifted], axis=1)


def shifted_patchify(images: np.ndarray, patch: int = 7) -> np.ndarray:
    """Shifted Patch Tokenization's parameter-free part: (n, 28, 28) -> (n, tokens, 5·patch²), each
    token its patch of the image and of the four shifted copies, in that order. The model then applies
    LayerNorm and the patch projection. Shuffling these tokens keeps each one's neighbourhood."""
    _check(patch)
    stacked = shifted_images(images, patch)                           # (n, 5, 28, 28)
    count = len(stacked)
    tokens = patchify(stacked.reshape(count * 5, SIDE, SIDE), patch)  # (n·5, tokens, patch²)
    tokens = tokens.reshape(count, 5, *tokens.shape[1:])              # (n, 5, tokens, patch²)
    return tokens.transpose(0, 2, 1, 3).reshape(count, tokens.shape[2], 5 * patch * patch)


def token_width(cfg) -> int:
    """Values per token the ViT of cfg eats: patch² (patch tokens) or 5·patch² (shifted)."""
    return (5 if cfg.tokenizer == "shifted" else 1) * cfg.patch_size ** 2


def model_inputs(cfg, images: np.ndarray) -> np.ndarray:
    """What the model of `cfg` eats: patch tokens (shifted ones for tokenizer "shifted") for the ViT,
    the (n, 28, 28) images for the convnet."""
    if cfg.model != "vit":
        return np.asarray(images)
    return shifted_patchify(images, cfg.patch_size) if cfg.tokenizer == "shifted" else patchify(images, cfg.patch_size)
