"""Pictures for the walkthrough pages (patching, attention): RGB arrays in [0, 1] for st.image.

NumPy (and Pillow, Streamlit's own image library, for the token numbers), no Streamlit, no TensorFlow.
Integer upscaling, so every image pixel stays a crisp block at any layout width. Dark ink on white,
like the source article's figures, inside a thin grey frame so a white image does not dissolve into the page.
"""

from __future__ import annotations

import numpy as np

from vitcore.app.fmt import GUIDE, SELECTION
from vitcore.data.patches import SIDE

PIXEL = 9  # screen pixels per image pixel


def _rgb(colour: str) -> np.ndarray:
    """'#3b5bdb' -> array([0.23, 0.36, 0.86])"""
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255


GRID_RGB = _rgb(GUIDE)         # patch boundaries, orange
QUERY_RGB = _rgb(SELECTION)  # the query patch outline, selection blue
FRAME_RGB = _rgb("#adb5bd")  # the thin frame around every picture
HEAT_RGB = np.array([0.86, 0.1, 0.1])  # attention weight, blended over the image (colour_key shows the scale)


def _grey_rgb(image: np.ndarray, scale: int) -> np.ndarray:
    """(h, w) in [0, 1] -> (h*scale, w*scale, 3), dark ink on white."""
    big = np.kron(1.0 - np.clip(np.asarray(image, dtype=float), 0, 1), np.ones((scale, scale)))
    return np.repeat(big[..., None], 3, axis=2)


def framed(rgb: np.ndarray, width: int = 2) -> np.ndarray:
    """The picture inside a `width`-pixel grey frame."""
    out = np.pad(rgb, ((width, width), (width, width), (0, 0)))
    out[:width], out[-width:], out[:, :width], out[:, -width:] = FRAME_RGB, FRAME_RGB, FRAME_RGB, FRAME_RGB
    return out


def token_numbers(rgb: np.ndarray, patch: int, scale: int = PIXEL) -> np.ndarray:
    """Each patch's token number (row by row from the top left) in its top-left corner, blue on a white halo."""
    from PIL import Image, ImageDraw, ImageFont  # noqa: PLC0415 - PIL, for this one picture

    grid, size = rgb.shape[0] // (patch * scale), patch * scale
    picture = Image.fromarray((np.clip(rgb, 0, 1) * 255).astype(np.uint8))
    draw = ImageDraw.Draw(picture)
    font = ImageFont.load_default(size=max(8, min(18, int(size * 0.38))))
    for token in range(grid * grid):
        row, col = divmod(token, grid)
        draw.text((col * size + 3, row * size + 1), str(token), font=font, fill=tuple(int(255 * v) for v in QUERY_RGB),
                  stroke_width=2, stroke_fill=(255, 255, 255))
    return np.asarray(picture, dtype=float) / 255


def grid_picture(image: np.ndarray, patch: int, scale: int = PIXEL) -> np.ndarray:
    """The (28, 28) image as an RGB array with the patch boundaries drawn in orange (for st.image)."""
    rgb = _grey_rgb(image, scale)
    for cut in range(patch, image.shape[0], patch):
        at = cut * scale
        rgb[at - 1:at + 1, :] = GRID_RGB
        rgb[:, at - 1:at + 1] = GRID_RGB
    return rgb


def tiles_picture(tokens: np.ndarray, patch: int, scale: int = PIXEL) -> np.ndarray:
    """Each token reshaped back to a patch x patch tile, tiles laid out row-major with white gaps."""
    grid = int(round(np.sqrt(tokens.shape[0])))
    gap = max(2, scale)
    side = grid * patch * scale + (grid - 1) * gap
    canvas = np.ones((side, side, 3))
    for index, token in enumerate(tokens):
        row, col = divmod(index, grid)
        y, x = row * (patch * scale + gap), col * (patch * scale + gap)
        canvas[y:y + patch * scale, x:x + patch * scale] = _grey_rgb(token.reshape(patch, patch), scale)
    return canvas


def matrix_picture(tokens: np.ndarray, width: int = SIDE * PIXEL) -> np.ndarray:
    """The (tokens, values) matrix as an RGB picture, each cell an integer block, ~`width` wide."""
    count, values = tokens.shape
    across = max(1, width // values)
    down = max(1, min(width // count, 3 * across))
    return np.kron(_grey_rgb(tokens, 1), np.ones((down, across, 1)))


def colour_key(vmax: float, mark: float | None = None, width: int = 360, height: int = 18) -> np.ndarray:
    """The heat maps' colour key: a strip from weight 0 (left) to `vmax` (right), blended over white as
    attention_picture blends it, with a black tick at `mark` (the uniform weight 1/N)."""
    alpha = np.clip(np.linspace(0, 1, width), 0, 1)[None, :, None] * np.ones((height, 1, 1))
    rgb = (1 - 0.75 * alpha) + 0.75 * alpha * HEAT_RGB
    if mark is not None and 0 <= mark <= vmax:
        at = min(int(round(mark / vmax * (width - 1))), width - 2)
        rgb[:, at:at + 2] = 0
    return np.clip(rgb, 0, 1)


def attention_picture(image: np.ndarray, weights: np.ndarray, vmax: float, query: int | None = None,
                      scale: int = 6) -> np.ndarray:
    """The image with a head's per-patch weights (grid, grid) blended over it in red (weight / vmax),
    the query patch outlined in blue."""
    side, grid = image.shape[0], weights.shape[0]
    patch = side // grid
    rgb = _grey_rgb(image, scale)
    alpha = np.kron(np.clip(np.asarray(weights) / max(vmax, 1e-12), 0, 1), np.ones((patch * scale,) * 2))[..., None]
    rgb = (1 - 0.75 * alpha) * rgb + 0.75 * alpha * HEAT_RGB
    if query is not None:
        row, col = divmod(int(query), grid)
        y0, x0, size = row * patch * scale, col * patch * scale, patch * scale
        for edge in (slice(y0, y0 + 2), slice(y0 + size - 2, y0 + size)):
            rgb[edge, x0:x0 + size] = QUERY_RGB
        for edge in (slice(x0, x0 + 2), slice(x0 + size - 2, x0 + size)):
            rgb[y0:y0 + size, edge] = QUERY_RGB
    return np.clip(rgb, 0, 1)
