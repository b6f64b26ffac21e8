"""Server start-up for the Ablations page: fill the store caches of its default view before any visitor.

Above the page's modules (state, cards, panels) so that none of them imports back up: no import cycle.
"""

from __future__ import annotations

from vitcore.app import state
from vitcore.stats.estimates import MARGIN


def warm_caches() -> dict[str, float]:
    """Server start-up (streamlit_app.py's lifespan hook, in a background thread): import what the
    Ablations page imports and fill the store caches of its default view (the article's ViT, or your own
    study's centre, against itself), so the first visitor does not pay for them. Returns seconds per step. The
    hook catches what this raises: a failure only means the first visitor computes what is missing."""
    import time

    seconds: dict[str, float] = {}
    start = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal start
        now = time.perf_counter()
        seconds[step], start = now - start, now

    from vitcore.app import charts  # altair
    from vitcore.app.ablations import cards, panels

    lap("imports")
    study = state.study()  # the runs table (scipy.stats came with the Study's summaries)
    cfg, base = state.default_selection(), state.baseline({})  # your own study's centre without the article's ViT
    cards.metric_cards(None, study.runs_of(cfg), study.runs_of(base), MARGIN, is_baseline=True, timed=study.timed(cfg))
    lap("runs table and metric cards")
    ids = [*study.runs_of(cfg)["run_id"], *study.runs_of(base)["run_id"]]
    histories, _ = state.run_frames(ids)
    charts.learning_curves(charts.curve_frame(histories, dict.fromkeys(ids, "runs")), ["runs"]).to_dict()
    lap("curves and confusions")  # to_dict: altair loads and checks its schema once per process
    panels.forest_spec(cfg, "test_accuracy", MARGIN)  # the landing's forest plot: its flip effects and spec
    state.main_effects("test_accuracy", base=state.effects_centre(base))
    lap("flip and main effects")
    return seconds
