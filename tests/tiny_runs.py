"""Two tiny trained ViTs (500 rows, 1 epoch, seed 0, weights kept), pos_embedding none and learned,
trained once per test process into a temporary store and shared by the attention and page tests."""

from __future__ import annotations

import functools
import shutil
import tempfile
import atexit

from vitcore.config import RunConfig

TINY = dict(train_rows=500, epochs=1)


def tiny_config(pos_embedding: str) -> RunConfig:
    return RunConfig(pos_embedding=pos_embedding, **TINY)


@functools.lru_cache(maxsize=1)
def tiny_store() -> str:
    """Path of a store holding both tiny runs (about 15 s each on 2 cores)."""
    from vitcore.store import RunStore
    from vitcore.train import train

    path = tempfile.mkdtemp(prefix="vitcore-tiny-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    store = RunStore(path)
    for pos in ("none", "learned"):
        train(tiny_config(pos), store)
    return path
