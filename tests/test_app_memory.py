"""vitcore.app.memory: SizedLRU (the Attention page's maps, bounded in bytes and shared by sessions) and trim."""

import sys
import threading
import time

import numpy as np
import pytest

from vitcore.analysis.attention import Forward
from vitcore.app.memory import SizedLRU, arrays_of, trim

MB = 2**20


def maps(mb: float) -> Forward:
    """A Forward whose arrays take `mb` MB (float32 scores of two blocks, a small probs array)."""
    floats = int(mb * MB / 4 / 2)
    return Forward(np.zeros((1, 10), np.float32), [np.zeros(floats, np.float32), np.zeros(floats, np.float32)])


def test_the_bytes_kept_never_exceed_the_limit_and_the_least_recent_goes_first():
    """Before: st.cache_data(max_entries=32) bounded entries, not bytes: 32 patch-2 views are 300 MB."""
    cache = SizedLRU(limit_mb=10)
    for key in "abc":
        cache.get(key, lambda: maps(3))
    cache.get("a", lambda: pytest.fail("a is kept"))  # a is now the most recent
    cache.get("d", lambda: maps(3))  # over 10 MB: b, the least recent, goes
    assert cache.nbytes <= 10 * MB and len(cache) == 3
    computed = []
    cache.get("b", lambda: computed.append("b") or maps(3))
    assert computed == ["b"]
    cache.get("a", lambda: pytest.fail("a is still kept"))


def test_a_result_larger_than_the_limit_is_returned_but_not_kept():
    cache = SizedLRU(limit_mb=1)
    assert arrays_of(cache.get("big", lambda: maps(2)))[1].size
    assert len(cache) == 0 and cache.nbytes == 0


def test_sessions_share_one_read_only_copy():
    """Before: st.cache_data unpickled a fresh copy of the maps for every session's every call."""
    cache = SizedLRU(limit_mb=10)
    first = cache.get("a", lambda: maps(1))
    assert cache.get("a", lambda: maps(1)) is first
    with pytest.raises(ValueError, match="read-only"):
        first.scores[0][0] = 1


def test_concurrent_callers_of_one_key_compute_it_once():
    cache, calls = SizedLRU(limit_mb=10), []

    def compute():
        calls.append(1)
        time.sleep(0.2)  # long enough for every thread to arrive while it runs
        return maps(1)

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("a", compute))) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(results) == 5 and all(result is results[0] for result in results)


def test_a_failed_computation_keeps_nothing_and_the_next_caller_tries_again():
    cache = SizedLRU(limit_mb=10)
    with pytest.raises(ZeroDivisionError):
        cache.get("a", lambda: 1 / 0)
    assert cache.get("a", lambda: maps(1)) is not None and len(cache) == 1


def test_the_attention_maps_keep_one_block_per_entry_and_it_is_that_blocks_maps():
    """Before: an entry kept every block's maps (depth times the bytes) though the page shows one block."""
    from vitcore.analysis import attention as A
    from vitcore.app.state import load_gallery
    from vitcore.app.walkthrough import probes
    from vitcore.config.run import RunConfig

    cfg, weights = probes.stored_weights(RunConfig())
    rows = (0, 1, 11, 12)
    full = A.forward(probes.attention_model(cfg, weights), cfg, load_gallery().images_of(rows))
    probes.MAPS.clear()
    for block in range(cfg.depth):
        maps = probes.forward(cfg, weights, rows, block)
        assert np.array_equal(maps.scores, full.scores[block]) and np.array_equal(maps.probs, full.probs)
    assert probes.MAPS.nbytes == sum(s.nbytes for s in full.scores) + cfg.depth * full.probs.nbytes
    probes.MAPS.clear()


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc_trim")
def test_trim_gives_back_the_free_pages_between_live_blocks():
    """Before: the server's heaps kept every free chunk below their top resident (29 MB at 30 visitors' peak)."""
    import psutil

    rss = lambda: psutil.Process().memory_info().rss  # noqa: E731
    blocks = [b"x" * (64 * 1024) for _ in range(800)]  # 50 MB of heap blocks (below any mmap threshold), touched
    del blocks[::2]  # 25 MB free between the live half: only malloc_trim returns it
    before = rss()
    assert trim()
    assert before - rss() > 10 * MB
    assert blocks[0][:1] == b"x"


def test_the_server_gives_arrows_buffers_to_malloc():
    """Before: pyarrow's own mimalloc pool held Arrow's buffers (pandas' strings, what Streamlit sends each
    session) and kept what finished script threads freed: a 30-visitor crowd peaked ~50 MB higher (bench/RESULTS.md)."""
    import os
    import subprocess

    from conftest import ROOT

    code = ("import pyarrow, streamlit_app\n"  # the server's entry point, imported as `streamlit run` loads it
            "print(pyarrow.default_memory_pool().backend_name)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.split()[-1] == "system"


def test_arrow_uses_malloc_keeps_arrows_results():
    """In a fresh interpreter: the default pool becomes "system" and a computation gives the same result."""
    import subprocess

    code = ("import pyarrow as pa, pyarrow.compute as pc\n"
            "before = pc.sum(pa.array(range(10**6))).as_py(), pa.default_memory_pool().backend_name\n"
            "from vitcore.app.memory import arrow_uses_malloc\n"
            "ok = arrow_uses_malloc()\n"
            "print(before[1], ok, pa.default_memory_pool().backend_name, pc.sum(pa.array(range(10**6))).as_py() == "
            "before[0])\n")
    from conftest import ROOT

    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.split()[1:] == ["True", "system", "True"]  # the pool moved, the sum did not


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_what_the_warm_up_left_is_frozen_out_of_every_full_collection():
    """Before: Streamlit's collection after every script run (runner.postScriptGC) walked every object of the
    warmed server, a noticeable pause holding the GIL, so the first paint's chart left the server that much later."""
    import gc

    from vitcore.app.memory import freeze_survivors

    kept = [{"a warmed cache entry": [i]} for i in range(50_000)]  # long-lived, tracked objects
    gc.collect()
    assert len(gc.get_objects(generation=2)) >= len(kept)
    try:
        frozen = freeze_survivors()
        assert frozen >= len(kept) and len(gc.get_objects(generation=2)) < len(kept) // 10
        assert gc.get_freeze_count() == frozen and kept[-1] == {"a warmed cache entry": [49_999]}  # alive, frozen
    finally:
        gc.unfreeze()
