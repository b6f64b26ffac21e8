"""vitcore.run.spawn: imports without garbage collections, and an exit without the interpreter's teardown
that keeps what Python's exit promises (exit handlers, flushed output, the exit code)."""

import gc
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, TINY, run_cli, train_command

from vitcore.run import spawn


def test_imports_run_without_the_collector_and_freeze_what_they_made():
    assert gc.isenabled()
    before = gc.get_freeze_count()
    try:
        with spawn.imports():
            assert not gc.isenabled()
            made = [[] for _ in range(1_000)]  # container objects, as modules and classes are
        assert gc.isenabled() and gc.get_freeze_count() >= before + len(made)
        gc.disable()  # a caller that keeps the collector off keeps it off, even when an import fails
        with pytest.raises(ImportError), spawn.imports():
            import vitcore_no_such_module  # noqa: F401
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


# A process that writes unflushed output, registers an exit handler and has an object whose finaliser
# only the interpreter's teardown runs (a module global), then ends through spawn.exit.
SCRIPT = textwrap.dedent("""
    import atexit, sys, threading, time, types
    from vitcore.run import spawn

    class Teardown:
        def __del__(self):
            sys.stderr.write("torn down\\n")

    kept = Teardown()
    if "{case}" != "no tensorflow":
        sys.modules["tensorflow"] = types.ModuleType("tensorflow")  # as after a training
    if "{case}" == "thread":
        threading.Thread(target=time.sleep, args=(0.3,)).start()
    atexit.register(lambda: sys.stderr.write("exit handler\\n"))
    sys.stdout.write("last line, unflushed")
    spawn.exit(3)
""")


@pytest.mark.slow  # spawns processes
@pytest.mark.parametrize("case, teardown", [("tensorflow", False), ("no tensorflow", True), ("thread", True)])
def test_exit_keeps_output_handlers_and_code_and_skips_the_teardown_only_after_tensorflow(case, teardown):
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(case=case)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 3
    assert done.stdout == "last line, unflushed"
    assert "exit handler" in done.stderr
    assert ("torn down" in done.stderr) == teardown, done.stderr


@pytest.mark.slow  # trains
def test_a_training_process_prints_its_last_line_and_stores_its_run(tmp_path):
    done = run_cli(*train_command(TINY, tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1].startswith(f"run {TINY.run_id}: params 71,946")
    assert (tmp_path / TINY.run_id / "summary.json").is_file()
