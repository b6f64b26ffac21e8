"""vitcore.analysis.crossover's test-image bootstrap: its Poisson weights drawn in pieces are the numbers one
draw of the whole block gives (bit for bit, the generator left in the same state), and a block's draw holds
a third of the memory it did (a crowd's server ran two crossovers at once)."""

import tracemalloc

import numpy as np
import pytest

from vitcore.analysis import crossover as C


def replicate_deltas_before(deltas, image_diffs, reps, rng):
    """_replicate_deltas as it was before the weights were drawn in pieces (the reference)."""
    stacked = np.concatenate(image_diffs)
    active = np.flatnonzero(np.any(stacked != 0, axis=0))
    stacked, idle = stacked[:, active], stacked.shape[1] - len(active)
    out = np.empty((reps, len(stacked)))
    for start in range(0, reps, C.CHUNK):
        block = min(C.CHUNK, reps - start)
        weights = rng.poisson(1.0, (len(active), block)).astype(np.float32)
        total = weights.sum(axis=0) + rng.poisson(idle, block)
        out[start:start + block] = (stacked @ weights / total).T
    edges = np.cumsum([0] + [len(d) for d in image_diffs])
    return [out[:, lo:hi] for lo, hi in zip(edges[:-1], edges[1:])]


def image_diffs(seed: int, pairs=(3, 4, 5), images: int = 3000) -> list[np.ndarray]:
    """Per row count, (pairs, images) float32 differences of -1/0/1, most images agreed on (0)."""
    rng = np.random.default_rng(seed)
    return [(rng.choice([-1, 0, 0, 0, 0, 1], (n, images))).astype(np.float32) for n in pairs]


@pytest.mark.parametrize("images, block", [(1, 250), (C.DRAW_ROWS - 1, 250), (C.DRAW_ROWS, 7),
                                           (C.DRAW_ROWS + 1, 250), (2 * C.DRAW_ROWS + 5, 13)])
def test_weights_drawn_in_pieces_are_the_whole_draws_numbers(images, block):
    whole, pieces = np.random.default_rng(5), np.random.default_rng(5)
    expected = whole.poisson(1.0, (images, block)).astype(np.float32)
    got = C._poisson_weights(pieces, images, block)
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.array_equal(got, expected)
    assert whole.bit_generator.state == pieces.bit_generator.state  # the draws after it are the same too


@pytest.mark.parametrize("reps", [C.CHUNK, 2 * C.CHUNK + 37])
def test_replicate_deltas_are_bit_for_bit_the_earlier_ones(reps):
    diffs = image_diffs(1)
    deltas = [d.mean(axis=1) for d in diffs]
    got = C._replicate_deltas(deltas, diffs, reps, np.random.default_rng(0))
    expected = replicate_deltas_before(deltas, diffs, reps, np.random.default_rng(0))
    assert len(got) == len(expected) == 3
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_a_blocks_draw_holds_its_float32_weights_not_int64_ones():
    """10,000 images disagreed on, one block of 250 resamples: the float32 weights are 10 MB; drawn whole, NumPy's
    int64 draw (20 MB) and its float32 copy were held at once (30 MB)."""
    diffs = image_diffs(2, pairs=(2, 2, 2), images=10_000)
    for d in diffs:
        d[0] = 1.0  # every image active
    deltas = [d.mean(axis=1) for d in diffs]
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        C._replicate_deltas(deltas, diffs, C.CHUNK, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert 9.5 < peak < 15, f"{peak:.1f} MB"
