"""Training on a server others can reach: the per-click budget and Cancel between epochs."""

import threading

import pytest

from vitcore.app.training.slot import DEFAULT_BUDGET_MINUTES, TrainingSlot, budget_minutes, over_budget
from vitcore.config.run import RunConfig


@pytest.mark.parametrize("value, minutes", [(None, DEFAULT_BUDGET_MINUTES), ("3", 3.0), ("0.5", 0.5),
                                            ("-1", DEFAULT_BUDGET_MINUTES), ("lots", DEFAULT_BUDGET_MINUTES)])
def test_budget_comes_from_the_environment(value, minutes):
    assert budget_minutes({} if value is None else {"VITCORE_MAX_TRAIN_MINUTES": value}) == minutes


def test_a_click_over_budget_is_refused_with_its_estimate():
    assert over_budget(240.0, 1, 10) is None           # 4 minutes
    why = over_budget(240.0, 3, 10)                    # 12 minutes
    assert why is not None and "12 minutes" in why and "budget of 10 minutes" in why
    assert over_budget(None, 3, 10) is None            # no estimate: allowed, still stopped at the budget


def fake_trainer(epochs_done: list, gate: threading.Event | None = None):
    def trainer(cfg, progress):
        for epoch in range(1, cfg.epochs + 1):
            if gate is not None:
                gate.wait(5)
            progress(epoch, cfg.epochs, {"accuracy": 0.5})
            epochs_done.append(epoch)
        return "stored"
    return trainer


def test_cancel_stops_between_epochs_and_frees_the_slot():
    slot, gate, done = TrainingSlot(), threading.Event(), []
    assert slot.start(RunConfig(epochs=15), fake_trainer(done, gate))
    assert slot.cancel()
    gate.set()
    slot.join(5)
    assert not slot.busy and slot.status.cancelled == "cancelled" and done == []  # raised in epoch 1's callback
    assert slot.status.done and slot.status.error is None
    assert not slot.cancel()  # nothing running any more


def test_the_budget_stops_a_training_that_runs_long():
    slot, done = TrainingSlot(), []
    assert slot.start(RunConfig(epochs=15), fake_trainer(done), budget_seconds=0.0)
    slot.join(5)
    assert slot.status.cancelled.startswith("stopped at the budget") and done == []
    finished = TrainingSlot()
    assert finished.start(RunConfig(epochs=3), fake_trainer(done := []), budget_seconds=60)
    finished.join(5)
    assert finished.status.cancelled is None and done == [1, 2, 3]


def test_the_page_refuses_a_click_over_budget_and_says_why(monkeypatch):
    from test_app_pages import app, uncached

    from vitcore.app import state
    from vitcore.store.runs import RunStore

    monkeypatch.delenv("VITCORE_ALLOW_TRAINING", raising=False)
    monkeypatch.setenv("VITCORE_MAX_TRAIN_MINUTES", "0.001")
    at = app(uncached(RunStore(state.STORE_PATH).table()))
    assert not at.exception and "Train now" not in [button.label for button in at.button]
    assert any("over this server's budget of 0.001 minutes" in info.value for info in at.info)


def test_a_running_training_offers_cancel_and_cancel_stops_it(monkeypatch):
    from test_app_pages import app, uncached

    from vitcore.app import state
    from vitcore.store.runs import RunStore

    query = uncached(RunStore(state.STORE_PATH).table())
    cfg = RunConfig(**{key: int(value) if key in ("patch_size", "warmup_epochs") else value
                       for key, value in query.items()})
    gate, done = threading.Event(), []
    slot = state.training_slot()
    assert slot.start(cfg, fake_trainer(done, gate))
    try:
        at = app(query)
        assert not at.exception
        at.button(key="train_cancel").click().run()
        assert slot.status.cancel_requested
    finally:
        gate.set()
        slot.join(10)
    assert slot.status.cancelled == "cancelled" and not slot.busy
