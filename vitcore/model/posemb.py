"""The fixed 2-D sine-cosine position table (no parameters), in NumPy so the Keras layer and the NumPy
forward pass read one source. As big_vision's `posemb_sincos_2d` ("Better plain ViT baselines for
ImageNet-1k", Beyer, Zhai & Kolesnikov 2022): a quarter of the width each for sin(x·ω), cos(x·ω),
sin(y·ω), cos(y·ω), with frequencies ω = 1 / 10000^(i / (width/4 − 1)).
"""

from __future__ import annotations

import numpy as np

TEMPERATURE = 10_000.0


def sincos_2d(grid: int, width: int, temperature: float = TEMPERATURE) -> np.ndarray:
    """(grid·grid, width) float32 table for tokens in row-major grid order (the order patchify uses)."""
    if width % 4 or width < 8:
        raise ValueError(f"the sine-cosine table needs a width divisible by 4 and at least 8; got {width}")
    y, x = np.mgrid[:grid, :grid]                                   # each (grid, grid): token row, column
    omega = 1.0 / temperature ** (np.arange(width // 4) / (width // 4 - 1))  # (width/4,)
    x = x.reshape(-1, 1) * omega[None]                              # (tokens, width/4)
    y = y.reshape(-1, 1) * omega[None]
    return np.concatenate([np.sin(x), np.cos(x), np.sin(y), np.cos(y)], axis=1).astype(np.float32)
