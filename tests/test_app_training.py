"""Training on a server others can reach: the per-click budget, Cancel by the session that started
it (only), the slot out of reach of Streamlit's caches, and the training in a child process."""

import threading

import pytest

from vitcore.app.training import slot as slot_module
from vitcore.app.training.slot import DEFAULT_BUDGET_MINUTES, TrainingSlot, budget_minutes, over_budget
from vitcore.config.run import RunConfig


@pytest.mark.parametrize("value, minutes", [(None, DEFAULT_BUDGET_MINUTES), ("", DEFAULT_BUDGET_MINUTES),
                                            ("3", 3.0), ("0.5", 0.5), (" 1440 ", 1440.0)])
def test_budget_comes_from_the_environment(value, minutes):
    assert budget_minutes({} if value is None else {"VITCORE_MAX_TRAIN_MINUTES": value}) == minutes


@pytest.mark.parametrize("value", ["abc", "-1", "0", "nan", "inf", "1e9", "-inf"])
def test_a_budget_that_is_not_minutes_is_refused_not_replaced(value):
    """Before: each of these silently became 10 minutes (`inf`: no budget at all)."""
    with pytest.raises(ValueError, match="VITCORE_MAX_TRAIN_MINUTES must be a number of minutes"):
        budget_minutes({"VITCORE_MAX_TRAIN_MINUTES": value})


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


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
def test_the_page_refuses_a_click_over_budget_and_says_why(monkeypatch, on_page_store):
    from test_app_pages import app, uncached

    monkeypatch.delenv("VITCORE_ALLOW_TRAINING", raising=False)
    monkeypatch.setenv("VITCORE_MAX_TRAIN_MINUTES", "0.001")
    at = app(uncached(on_page_store.table()))
    assert not at.exception and "Train now" not in [button.label for button in at.button]
    assert any("over this server's budget of 0.001 minutes" in info.value for info in at.info)


def test_only_the_session_that_started_a_training_can_cancel_it():
    """Before: any visitor's Cancel stopped someone else's training."""
    slot, gate, done = TrainingSlot(), threading.Event(), []
    assert slot.start(RunConfig(epochs=3), fake_trainer(done, gate), owner="session-a")
    assert not slot.cancel("session-b") and not slot.cancel() and not slot.status.cancel_requested
    assert slot.owned_by("session-a") and not slot.owned_by("session-b")
    assert slot.cancel("session-a") and slot.status.cancel_requested
    gate.set()
    slot.join(5)
    assert slot.status.cancelled == "cancelled"


def test_clearing_streamlit_caches_does_not_free_the_slot():
    """Before: the slot lived in st.cache_resource, so one "clear cache" message from any client gave
    the next session a fresh, idle slot while the first training went on."""
    import streamlit as st


    release = threading.Event()
    slot = slot_module.SERVER_SLOT
    assert slot.start(RunConfig(), lambda cfg, progress: release.wait(30), owner="session-a")
    try:
        st.cache_resource.clear()
        st.cache_data.clear()
        assert slot_module.SERVER_SLOT is slot and slot_module.SERVER_SLOT.busy
        assert not slot_module.SERVER_SLOT.start(RunConfig(seed=1), lambda cfg, progress: None, owner="session-b")
    finally:
        release.set()
        slot.join(10)


def _blocking_train(gate: threading.Event, done: list):
    def fake_train(cfg, progress, seeds=1):
        for epoch in range(1, cfg.epochs + 1):
            gate.wait(10)
            progress(epoch, cfg.epochs, {"accuracy": 0.5, "val_accuracy": 0.4})
            done.append(epoch)
    return fake_train


@pytest.mark.slow  # two sessions around a blocked training thread (seconds): the slow tier, still in CI
def test_cancel_is_offered_to_the_starting_session_only(monkeypatch, on_page_store):
    from test_app_pages import app, uncached

    from vitcore.app.training import train_panel

    monkeypatch.delenv("VITCORE_ALLOW_TRAINING", raising=False)
    monkeypatch.setenv("VITCORE_MAX_TRAIN_MINUTES", "600")  # the uncached cells estimate over 10 minutes
    query = uncached(on_page_store.table())
    gate, done = threading.Event(), []
    monkeypatch.setattr(train_panel, "_train_seeds", _blocking_train(gate, done))
    slot = slot_module.SERVER_SLOT
    starter = app(query)
    starter.button(key="train_now").click().run()
    try:
        assert slot.busy
        other = app(query)
        assert not other.exception and "Cancel" not in [button.label for button in other.button]
        assert any("started by another session" in info.value for info in other.info)
        assert "Cancel" in [button.label for button in starter.button]
        starter.button(key="train_cancel").click().run()
        assert slot.status.cancel_requested
    finally:
        gate.set()
        slot.join(10)
    assert slot.status.cancelled == "cancelled" and not slot.busy and done == []


def test_train_is_refused_up_front_on_a_store_the_server_cannot_write(tmp_path, monkeypatch):
    """Before: Train was offered on a read-only store and failed only after the whole training."""
    from test_app_pages import app

    from vitcore.app import state

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(state, "STORE_PATH", str(blocker / "store"))  # no folder can be made under a file
    monkeypatch.delenv("VITCORE_ALLOW_TRAINING", raising=False)
    at = app({"train_rows": 2_000})
    assert not at.exception and "Train now" not in [button.label for button in at.button]
    assert any("cannot write its store" in info.value for info in at.info)
    assert not any(str(tmp_path) in element.value for element in [*at.info, *at.warning, *at.caption])


@pytest.mark.parametrize("name, value", [("VITCORE_THREADS", "-1"), ("VITCORE_THREADS", "abc"),
                                         ("VITCORE_MAX_TRAIN_MINUTES", "inf"), ("VITCORE_MAX_TRAIN_MINUTES", "abc")])
def test_a_wrong_environment_value_is_a_note_and_turns_training_off(monkeypatch, on_page_store, name, value):
    """Before: VITCORE_THREADS=-1 + Train killed the server (TensorFlow's fatal check), `abc` gave a
    traceback, and a budget of `abc` or `inf` became 10 minutes or none."""
    from test_app_pages import app, uncached

    monkeypatch.delenv("VITCORE_ALLOW_TRAINING", raising=False)
    monkeypatch.setenv(name, value)
    at = app(uncached(on_page_store.table()))
    assert not at.exception and "Train now" not in [button.label for button in at.button]
    assert any(name in warning.value and "misconfigured" in warning.value for warning in at.warning)
    assert any(f"Training is off on this server: {name}" in info.value for info in at.info)


@pytest.mark.slow
def test_the_child_is_stopped_at_the_budget_even_before_its_first_epoch(tmp_path):
    """The budget bounds the first epoch too (compile included): the child process is killed, not
    asked between epochs (before: a 24-s budget ran about 3 minutes)."""
    import time

    from vitcore.app.training.child import train_in_child
    from vitcore.app.training.slot import Cancelled, Progress, TrainingStatus

    status = TrainingStatus(RunConfig(), budget_seconds=1.0)
    start = time.monotonic()
    with pytest.raises(Cancelled, match="stopped at the budget"):
        train_in_child(RunConfig(), Progress(status), str(tmp_path))
    assert time.monotonic() - start < 5 and status.epoch == 0
    assert not any(tmp_path.iterdir())  # nothing stored


@pytest.mark.slow
def test_the_child_trains_and_stores_a_run(tmp_path):
    from vitcore.app.training.child import train_in_child
    from vitcore.app.training.slot import Progress, TrainingStatus
    from vitcore.store.runs import RunStore

    cfg = RunConfig(train_rows=100, epochs=2)
    status = TrainingStatus(cfg)
    train_in_child(cfg, Progress(status), str(tmp_path))
    assert [row["epoch"] for row in status.history] == [1.0, 2.0] and status.epoch == 2
    assert RunStore(tmp_path).get(cfg) is not None
