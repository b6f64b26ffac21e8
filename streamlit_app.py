"""Entry point: `streamlit run streamlit_app.py` serves the dashboard in app.py.

Through `st.App` (Streamlit's ASGI entry point) for one reason: its lifespan hook runs once when
the server starts, before any visitor. It starts `vitcore.app.ablations.panels.warm_caches` in a background
thread (the server answers at once), which imports pandas, scipy and altair and fills the store
caches of the Ablations page's default view, so the first visitor after a start or a wake-up
from sleep gets the page as fast as the second one.
"""

import logging
import threading
import time
from contextlib import asynccontextmanager

import streamlit as st

from vitcore.app.memory import arrow_uses_malloc, freeze_survivors, keep_trimming, return_freed_memory

log = logging.getLogger("vitcore")
return_freed_memory()  # freed arrays go back to the system: RSS follows what the server holds
arrow_uses_malloc()  # Arrow's buffers too: its own allocator kept what finished sessions freed (vitcore.app.memory)


def _warm() -> None:
    from vitcore.app.ablations.panels import warm_caches  # noqa: PLC0415 - the runtime exists now; no pandas at start

    start = time.perf_counter()
    try:
        steps = warm_caches()
    except Exception:  # noqa: BLE001 - warming is an optimisation; the page computes what it lacks
        log.warning("vitcore: warming the caches failed; the first visitor will fill them", exc_info=True)
        return
    detail = ", ".join(f"{step} {seconds:.2f} s" for step, seconds in steps.items())
    frozen = freeze_survivors()  # out of the collection after every page run (vitcore.app.memory)
    print(f"vitcore: caches warm in {time.perf_counter() - start:.2f} s ({detail}); {frozen:,} objects frozen",
          flush=True)


@asynccontextmanager
async def lifespan(app):
    threading.Thread(target=_warm, name="vitcore-warm-caches", daemon=True).start()
    keep_trimming()  # the free pages inside the heaps go back to the system every second (vitcore.app.memory)
    yield


app = st.App("app.py", lifespan=lifespan)
