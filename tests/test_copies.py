"""Which training a reply copies (vitcore.run.copies): an exact copy whatever its .npy header, a near copy (weights
nudged until a few predictions flip), never a run of the same training (the committed store holds one training
under two configs), and the threshold far above what distinct trainings of one cell share."""

import io
import json

import numpy as np
from stores import COMMITTED

from vitcore.config.run import RunConfig
from vitcore.run import copies
from vitcore.store.runs import RunStore

SEED0 = RunConfig(patch_size=14, train_rows=4000, seed=0)  # 2885f681e73b, committed
PAIR = ("033d0fe061a5", "dda3b8c5d2ba")  # one training, written with and without its seeds spelt out


def predictions(run_id: str) -> bytes:
    return (COMMITTED / run_id / "predictions.npy").read_bytes()


def npy(classes: np.ndarray, version=(1, 0)) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, classes, version=version)
    return buffer.getvalue()


def config(run_id: str) -> RunConfig:
    return RunConfig.from_dict(json.loads((COMMITTED / run_id / "summary.json").read_text())["config"])


def test_an_exact_copy_whatever_its_header_and_a_near_copy_are_found(tmp_path):
    index, data = copies.Copies(RunStore(tmp_path)), predictions(SEED0.run_id)
    index.add(SEED0, SEED0.run_id, data)
    other = npy(np.load(io.BytesIO(data)), version=(2, 0))
    assert other != data and copies.fingerprint(other) == copies.fingerprint(data)
    assert index.of(SEED0.replace(seed=1), other) == (SEED0.run_id, 1.0)
    nudged = np.load(io.BytesIO(data)).copy()
    nudged[:50] = (nudged[:50] + 1) % 10  # 50 of 10,000 predictions flipped
    assert index.of(SEED0.replace(seed=1), npy(nudged)) == (SEED0.run_id, 0.995)
    nudged[:300] = (nudged[:300] + 1) % 10  # 3%: below NEAR_COPY, no copy
    assert index.of(SEED0.replace(seed=1), npy(nudged)) is None
    assert index.of(SEED0, data) is None  # its own training: no copy
    assert copies.fingerprint(b"not a npy") is None and index.of(SEED0, b"not a npy") is None


def test_the_store_is_read_once_and_one_training_under_two_configs_is_no_copy(tmp_path):
    store = RunStore(tmp_path)
    (tmp_path / PAIR[0]).mkdir()
    for name in ("summary.json", "predictions.npy"):
        (tmp_path / PAIR[0] / name).write_bytes((COMMITTED / PAIR[0] / name).read_bytes())
    index = copies.Copies(store)
    first, second = config(PAIR[0]), config(PAIR[1])
    assert first.run_id != second.run_id and copies.training(first) == copies.training(second)
    assert predictions(PAIR[0]) == predictions(PAIR[1]) and index.of(second, predictions(PAIR[1])) is None
    assert index.of(second.replace(seed=7), predictions(PAIR[1])) == (PAIR[0], 1.0)  # another seed: a copy


def test_distinct_trainings_of_a_cell_share_far_fewer_predictions_than_a_near_copy():
    """The threshold's margin, measured on the committed runs of one cell (the ViT at patch 14, 4,000 rows)."""
    runs = [predictions(SEED0.replace(seed=seed).run_id) for seed in range(6)]
    arrays = np.stack([np.load(io.BytesIO(data)) for data in runs])
    alike = [(arrays[i] == arrays[j]).mean() for i in range(6) for j in range(i + 1, 6)]
    assert max(alike) < copies.NEAR_COPY - 0.03
