"""TensorFlow's native notices kept off a training process's stderr (vitcore.run.spawn): absl's preamble and its
INFO / WARNING lines dropped, everything else passed on in order, also when the process ends by spawn.exit."""

import subprocess
import sys

import pytest

from vitcore.run import spawn

PREAMBLE = b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
INFO = b"I0000 00:00:1733268390.123456   12345 cpu_feature_guard.cc:210] This TensorFlow binary is optimized"
WARN = b"W0000 00:00:1733268391.654321   12345 xla_bridge.cc:123] a native warning"
ERROR = b"E0000 00:00:1733268391.654321   12345 xla_bridge.cc:123] a native error"


@pytest.mark.parametrize("line, dropped", [(PREAMBLE, True), (INFO, True), (WARN, True), (ERROR, False),
                                           (b"UserWarning: mine", False), (b"I0000 is not a notice", False),
                                           (b"Traceback (most recent call last):", False)])
def test_which_lines_are_notices(line, dropped):
    assert spawn.notice(line) is dropped


def test_whole_lines_pass_and_a_bar_redrawn_in_place_is_not_held():
    out, rest = spawn.kept(INFO + b"\nkept\n" + b"half a li")
    assert (out, rest) == (b"kept\n", b"half a li")
    out, rest = spawn.kept(b"50%|#####     |\r60%|######    |\r70")
    assert out == b"50%|#####     |\r60%|######    |\r" and rest == b"70"


SCRIPT = """
import os, sys, types, warnings
from vitcore.run import spawn, spawn
spawn.quiet()
os.write(2, {native!r})
warnings.warn("mine")
os.write(2, {error!r} + b"\\n")
print("last words", file=sys.stderr)
if {hard}:
    sys.modules["tensorflow"] = types.ModuleType("tensorflow")  # as after training: spawn.exit skips teardown
spawn.exit(3)
"""


@pytest.mark.parametrize("hard", [False, True])
def test_a_process_keeps_its_own_words_and_loses_the_notices(hard):
    native = PREAMBLE + b"\n" + INFO + b"\n" + WARN + b"\n"
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(native=native, error=ERROR, hard=hard)],
                          capture_output=True, timeout=60)
    assert done.returncode == 3
    err = done.stderr.decode()
    assert "UserWarning: mine" in err and ERROR.decode() in err and err.rstrip().endswith("last words")
    assert "absl::InitializeLog" not in err and "I0000" not in err and "W0000" not in err
