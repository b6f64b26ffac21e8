import numpy as np
import pytest

from vitcore.config.run import RunConfig
from vitcore.data.patches import model_inputs, patchify, unpatchify


@pytest.mark.parametrize("patch, tokens", [(2, 196), (4, 49), (7, 16), (14, 4)])
def test_round_trip_is_exact(patch, tokens):
    images = np.random.default_rng(0).random((5, 28, 28), dtype=np.float32)
    patched = patchify(images, patch)
    assert patched.shape == (5, tokens, patch * patch)
    assert np.abs(unpatchify(patched, patch) - images).max() == 0.0


def test_first_token_is_top_left_patch_and_row_major():
    image = np.arange(28 * 28).reshape(1, 28, 28)
    tokens = patchify(image, 7)
    np.testing.assert_array_equal(tokens[0, 0], image[0, :7, :7].ravel())
    np.testing.assert_array_equal(tokens[0, 1], image[0, :7, 7:14].ravel())  # next patch to the right
    np.testing.assert_array_equal(tokens[0, 4], image[0, 7:14, :7].ravel())  # next row of patches


@pytest.mark.parametrize("patch", [3, 5, 28, 0])
def test_bad_patch_size_names_allowed_values(patch):
    with pytest.raises(ValueError, match="2, 4, 7, 14"):
        patchify(np.zeros((1, 28, 28)), patch)


def test_bad_shapes_are_rejected():
    with pytest.raises(ValueError, match="shape"):
        patchify(np.zeros((1, 32, 32)), 4)
    with pytest.raises(ValueError, match="shape"):
        unpatchify(np.zeros((1, 16, 48)), 7)


def test_model_inputs_by_model():
    images = np.zeros((3, 28, 28), dtype=np.float32)
    assert model_inputs(RunConfig(patch_size=4), images).shape == (3, 49, 16)
    assert model_inputs(RunConfig(model="convnet"), images).shape == (3, 28, 28)
