"""vitcore.data.samples: the shipped sample holds every class and the article's rows, looked up by test index."""

import numpy as np
import pytest

from vitcore.data.fashion import CLASS_NAMES
from vitcore.data.samples import SEED_ROWS, gallery


def test_shipped_sample_has_every_class_and_the_article_rows():
    sample = gallery(prefer_full=False)
    assert sample.source == "shipped sample" and set(sample.labels) == set(range(len(CLASS_NAMES)))
    assert set(SEED_ROWS) <= set(sample.indices) and sample.images.shape[1:] == (28, 28)


def test_rows_are_looked_up_by_official_test_index():
    sample = gallery(prefer_full=False)
    rows = (int(sample.indices[3]), int(sample.indices[0]))
    assert np.array_equal(sample.images_of(rows), sample.images[[3, 0]])
    assert sample.labels_of(rows).tolist() == [sample.labels[3], sample.labels[0]]
    missing = int(sample.indices.max()) + 1
    with pytest.raises(KeyError, match=f"test row {missing}"):
        sample.labels_of([missing])
    with pytest.raises(KeyError):
        sample.images_of([missing])


def test_the_test_split_is_kept_as_uint8_and_converted_row_by_row_to_the_same_numbers():
    """The server holds the gallery for every visitor (the Patching and Attention pages): as float32 the test split
    was 31 MB; kept as uint8 it is 7.8 MB, and the rows a page asks for are converted to the very numbers the whole
    float32 copy held (x / 255 in float32)."""
    import tracemalloc

    from vitcore.data.samples import local_data_available

    if not local_data_available():
        pytest.skip("the test split is not on this machine")
    gallery(prefer_full=False)  # imports and the sample's own reads out of the measurement
    tracemalloc.start()
    try:
        split = gallery()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert split.source.startswith("test split") and split.pixels.dtype == np.uint8 and len(split.pixels) == 10_000
    assert held < 1.2 * split.pixels.nbytes, (f"{held / 2**20:.0f} MB held for "
                                              f"{split.pixels.nbytes / 2**20:.1f} MB of pixels")
    whole = split.pixels.astype(np.float32)
    whole /= 255.0  # the float32 copy the server used to keep
    rows = [9_999, 0, 12, 4_321]
    assert split.images_of(rows).dtype == np.float32 and np.array_equal(split.images_of(rows), whole[rows])
    assert np.array_equal(split.head(5), whole[:5]) and np.array_equal(split.image(12), whole[12])


def test_holds_says_which_test_rows_the_sample_has():
    sample = gallery(False)
    inside, outside = int(sample.indices[0]), int(np.setdiff1d(np.arange(10_000), sample.indices)[0])
    assert sample.holds([inside, outside, inside]).tolist() == [True, False, True]
