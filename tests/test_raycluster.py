"""The Ray cluster tests' waits (tests/raycluster.py's Progress): a wait goes on while its sweep moves and fails once
nothing has moved for IDLE seconds, so a loaded machine is slower, never failed, and a hung one still fails. Fast:
the limits are shrunk to fractions of a second (the one that watches a busy process: slow)."""

import subprocess
import sys
import time

import pytest
import raycluster
from raycluster import Progress


@pytest.fixture(autouse=True)
def short(monkeypatch):
    monkeypatch.setattr(raycluster, "IDLE", 0.1)
    monkeypatch.setattr(raycluster, "CAP", 0.6)
    monkeypatch.setattr(raycluster, "WINDOW", 0.05)
    monkeypatch.setattr(raycluster, "POLL", 0.01)


def test_a_wait_where_nothing_moves_fails_after_idle_seconds_naming_what_it_waited_for():
    waiting, started = Progress("the first run was not stored", tail=lambda: "driver log tail"), time.monotonic()
    with pytest.raises(AssertionError, match="(?s)the first run was not stored: nothing moved .*driver log tail"):
        while True:
            waiting.step("the same listing")
    assert 0.1 <= time.monotonic() - started < 0.6


def test_each_step_seen_extends_the_wait_up_to_the_cap():
    waiting, started = Progress("the driver did not finish"), time.monotonic()
    for count in range(30):  # 0.3 s of polls, three times IDLE: each sees a new line
        waiting.step(count)
    assert time.monotonic() - started > 0.29 and waiting.steps == 30
    with pytest.raises(AssertionError, match="waited"):
        for count in range(30, 10_000):  # moving for ever: the cap ends it
            waiting.step(count)
    assert time.monotonic() - started < 2


@pytest.mark.slow  # a process kept busy for a second and a half
def test_cpu_spent_by_the_watched_processes_is_progress(monkeypatch):
    monkeypatch.setattr(raycluster, "IDLE", 0.5)  # a busy process gets a small share of a loaded machine:
    monkeypatch.setattr(raycluster, "CAP", 5.0)
    monkeypatch.setattr(raycluster, "WINDOW", 0.2)  # 0.2 s windows ...
    monkeypatch.setattr(raycluster, "BUSY", 0.01)   # ... in which it spends one clock tick
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # a training: nothing to see but its CPU
    try:
        waiting, started = Progress("training", pids=lambda: [busy.pid]), time.monotonic()
        while time.monotonic() - started < 1.5:  # three times IDLE, nothing observed changes
            waiting.step("the same listing")
        assert waiting.steps > 1
    finally:
        busy.kill()
        busy.wait()
    with pytest.raises(AssertionError, match="nothing moved"):  # once it is gone, the wait ends
        while True:
            waiting.step("the same listing")
