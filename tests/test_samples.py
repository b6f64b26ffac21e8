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


def test_the_test_split_is_read_with_one_float_copy_at_a_time():
    """The server reads it once (the Patching and Attention pages): before, `astype / 255` held two 30 MB
    float32 copies at once (peak 2.2x the images); scaled in place it is the uint8 file plus one copy."""
    import tracemalloc

    from vitcore.data.samples import local_data_available

    if not local_data_available():
        pytest.skip("the test split is not on this machine")
    gallery(prefer_full=False)  # imports and the sample's own reads out of the measurement
    tracemalloc.start()
    try:
        split = gallery()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert split.source.startswith("test split") and split.images.dtype == np.float32
    assert peak < 1.6 * split.images.nbytes, f"peak {peak / 2**20:.0f} MB for {split.images.nbytes / 2**20:.0f} MB of images"
