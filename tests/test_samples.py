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
