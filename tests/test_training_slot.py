"""The server's TrainingSlot is single flight: of many sessions clicking at once, exactly one trains.

The race is forced, not hoped for: every racer is held at a barrier inside start() after its
busy-check, so without the slot's lock all of them get through (the second case shows the test
can fail).
"""

import contextlib
import threading

import pytest

from vitcore.app.training import slot as training
from vitcore.app.training.slot import TrainingSlot
from vitcore.config.run import RunConfig

RACERS = 8


@pytest.mark.parametrize("locked", [True, False])
def test_racing_sessions_get_exactly_one_slot(monkeypatch, locked):
    barrier, release = threading.Barrier(RACERS), threading.Event()
    status = training.TrainingStatus

    def status_after_the_barrier(*args, **kwargs):  # built between the busy-check and the thread start
        try:
            barrier.wait(timeout=0.5)  # with the lock only one racer gets here: it waits, then goes on
        except threading.BrokenBarrierError:
            pass
        return status(*args, **kwargs)

    monkeypatch.setattr(training, "TrainingStatus", status_after_the_barrier)
    slot = TrainingSlot()
    if not locked:
        slot._lock = contextlib.nullcontext()
    go, results = threading.Barrier(RACERS), []

    def racer():
        go.wait()
        results.append(slot.start(RunConfig(), lambda cfg, progress: release.wait(5)))

    threads = [threading.Thread(target=racer) for _ in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    release.set()
    slot.join(5)
    winners = results.count(True)
    assert len(results) == RACERS
    assert winners == 1 if locked else winners == RACERS
