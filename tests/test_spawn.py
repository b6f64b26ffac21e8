"""vitcore.run.spawn: spawn children do not re-run a script that Streamlit's AppTest left as __main__, and
die with their parent, even a SIGKILLed one (a killed sweep's workers went on training)."""

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT

from vitcore.run.spawn import foreign_main, neutral_main

SCRIPT = """
import streamlit as st
with open({marker!r}, "a") as out:
    out.write("ran\\n")
st.write("a dashboard")
"""


def start_child(guard: bool) -> int:
    child = multiprocessing.get_context("spawn").Process(target=os.getpid)
    if guard:
        with neutral_main():
            child.start()
    else:
        child.start()
    child.join(60)
    return child.exitcode


@pytest.mark.slow  # starts a process
@pytest.mark.parametrize("guard", [True, False])
def test_spawn_after_an_apptest_does_not_rerun_the_dashboard(tmp_path, monkeypatch, guard):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])  # put back after the test
    marker, script = tmp_path / "runs.txt", tmp_path / "dashboard.py"
    script.write_text(SCRIPT.format(marker=str(marker)))
    AppTest.from_file(str(script)).run()
    assert marker.read_text() == "ran\n"
    assert sys.modules["__main__"].__file__ == str(script) and foreign_main()  # the trap, reproduced
    assert start_child(guard) == 0
    assert sys.modules["__main__"].__file__ == str(script)  # restored after the children started
    if guard:
        assert marker.read_text() == "ran\n"
    else:  # without the guard the child re-ran the dashboard first: what the guard is for
        assert marker.read_text() == "ran\nran\n"


@pytest.mark.parametrize("file, argv0, foreign", [
    ("/srv/app.py", "/usr/bin/pytest", True),    # AppTest left the dashboard as __main__
    ("/srv/train.py", "/srv/train.py", False),   # `python train.py`: children may need its functions
    (None, "-c", False),                         # `python -c ...`: nothing to re-run
])
def test_only_a_foreign_main_is_hidden(monkeypatch, file, argv0, foreign):
    import types

    main = types.ModuleType("__main__")
    if file:
        main.__file__ = file
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setattr(sys, "argv", [argv0])
    assert foreign_main() == foreign
    with neutral_main():
        assert (sys.modules["__main__"] is not main) == foreign
    assert sys.modules["__main__"] is main


GONE_SECONDS = 10  # a killed parent's workers must be gone within this
CHILD_INIT = """
import os
from vitcore.run import spawn

def init(parent, prctl, folder):
    if not prctl:  # the fallback of platforms without prctl: a thread watching the parent's pid
        spawn._pdeathsig = lambda signum: False
        spawn.WATCH_SECONDS = 0.2
    spawn.die_with_parent(parent)
    open(os.path.join(folder, f"ready-{os.getpid()}"), "w").close()
"""
PARENT = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
import child_init

if __name__ == "__main__":
    pool = ProcessPoolExecutor(2, mp_context=get_context("spawn"), initializer=child_init.init,
                               initargs=(os.getpid(), {prctl}, {folder!r}))
    futures = [pool.submit(time.sleep, 600) for _ in range(2)]
    time.sleep(600)
"""


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running (a zombie waits only for its reaper: it runs nothing)."""
    running = []
    for process in processes:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            pass
    return running


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        assert time.monotonic() < deadline, f"no {what} within {seconds} s"
        time.sleep(0.2)
    return found


def kill_and_wait(driver: subprocess.Popen) -> list[psutil.Process]:
    """SIGKILL the driver; the processes it had started that still run GONE_SECONDS later."""
    descendants = psutil.Process(driver.pid).children(recursive=True)
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    deadline = time.monotonic() + GONE_SECONDS
    while alive(descendants) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = alive(descendants)
    for process in left:  # never left behind by the test, whatever it found
        process.kill()
    return left


@pytest.mark.slow  # starts processes (seconds)
@pytest.mark.parametrize("prctl", [True, False], ids=["prctl", "watching thread"])
def test_workers_die_with_their_killed_parent(tmp_path, prctl):
    (tmp_path / "child_init.py").write_text(CHILD_INIT)
    (tmp_path / "parent.py").write_text(PARENT.format(prctl=prctl, folder=str(tmp_path)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    driver = subprocess.Popen([sys.executable, str(tmp_path / "parent.py")], cwd=tmp_path, env=env)
    try:
        wait_for(lambda: len(list(tmp_path.glob("ready-*"))) == 2, 60, "2 workers ready")
    except AssertionError:
        driver.kill()
        raise
    assert kill_and_wait(driver) == []


@pytest.mark.slow  # a real sweep: 2 workers start training (tens of seconds)
def test_a_sigkilled_sweep_leaves_no_worker(tmp_path):
    """Before: the store went from 4 to 8 runs after the sweep was SIGKILLed, then its workers sat ~4.5 min
    each holding a training process's memory. Now they are gone within GONE_SECONDS, mid-training."""
    store = tmp_path / "store"
    driver = subprocess.Popen([sys.executable, "-m", "vitcore", "sweep", "--vary", "epochs=1,2", "--rows", "100",
                               "--seeds", "0-3", "--workers", "2", "--store", str(store)], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:  # both workers training: each holds a marker in the store (vitcore.run.overlap)
        wait_for(lambda: store.is_dir() and len([name for name in os.listdir(store) if name.startswith(".training-")
                                                 and not name.startswith(".training-new-")]) == 2, 50, "2 trainings")
    except AssertionError:
        kill_and_wait(driver)
        raise
    workers = [p for p in psutil.Process(driver.pid).children() if "multiprocessing" in " ".join(p.cmdline())]
    assert len(workers) >= 2
    assert kill_and_wait(driver) == []
