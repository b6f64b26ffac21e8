"""vitcore.run.spawn: spawn children do not re-run a script that Streamlit's AppTest left as __main__."""

import multiprocessing
import os
import sys

import pytest

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
