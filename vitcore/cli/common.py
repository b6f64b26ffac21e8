"""What every command shares: the one-line usage error, path checks made before any work, and
outputs written atomically (`staged`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import stat
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

from vitcore.config import metrics, numbers
from vitcore.config.environment import missing_store, store_path
from vitcore.config.metrics import checked_margin as margin_rule
from vitcore.data.regular import kind
from vitcore.run import spawn
from vitcore.stats import estimates, plan, readings
from vitcore.store.runs import RunStore
from vitcore.study import Study, words

VERDICTS_EPILOG = ("verdicts (both tests on every Δ, adjusted within its family):\n"
                   + estimates.definitions_text(bullet="  ") + "\nbeside every verdict:\n"
                   + readings.definitions_text(bullet="  "))


class UsageError(Exception):
    """Bad input from the command line: reported as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage + message; we want one line, no usage dump
        raise UsageError(f"{self.prog}: {message}")


@contextlib.contextmanager
def usage():
    """A library ValueError (a bad value, with what is allowed) becomes a UsageError: exit 2."""
    try:
        yield
    except ValueError as error:
        raise UsageError(str(error)) from None


def existing_store(path: str) -> RunStore:
    """The store a read-only command reads: it must be a folder."""
    _named(path, "--store")
    store = RunStore(path)
    if not store.root.is_dir():
        if store.root.exists():
            raise UsageError(f"--store {store.root} is a file, not a folder")
        raise UsageError(missing_store(store.root))
    return store


def open_study(store: RunStore):
    """The vitcore.study.Study of a store that existing_store() accepted: every analysis a command prints or
    writes comes from it (one read of the store, each estimate computed once)."""
    return Study.open(store.root)


STAGE_PREFIX = ".vitcore-out-"  # a command's outputs before they are renamed into place


@contextlib.contextmanager
def staged(folder: Path):
    """A hidden folder inside `folder` to write a command's outputs into. When the block ends
    without error each file is renamed into `folder` (a reader sees the old file or the new one,
    never part of one); on any error, a full disk included, none is and the folder is removed."""
    stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=folder))
    try:
        yield stage
        for name in sorted(os.listdir(stage)):
            os.replace(stage / name, folder / name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _named(path: str | Path, flag: str) -> None:
    if not str(path).strip():  # Path("") is ".": an empty --out would write into the current folder
        raise UsageError(f"{flag} is empty; give a path")


def _special(path: Path) -> str | None:
    """What the existing entry at `path` is when it is neither a regular file nor a folder (never
    followed: a link is itself the entry an output would replace), else None."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return "a dangling symbolic link"
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return f"a symbolic link to {kind(mode)}"
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return kind(mode)


def _refuse_special(path: Path, flag: str) -> None:
    """An output never replaces a device, FIFO or socket (as root, `--out /dev/null` would destroy it)."""
    if found := _special(path):
        raise UsageError(f"{flag} {_shown(path)} is {found}, not a regular file; give a file path (nothing written)")


def _shown(path: str | Path) -> str:
    """A path from the command line or the disk as printed: control characters escaped (vitcore.cli.common.clean)."""
    return clean(str(path))


def clean(text: str) -> str:
    """`text` with every non-printable character (newlines, escapes: a terminal's commands) escaped, so a
    name from the disk cannot forge a line or clear the terminal."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@contextlib.contextmanager
def escaped_warnings():
    """Within the block, a warning printed on stderr shows its message clean()ed: the library's warnings
    name runs, folders and files from the disk (e.g. a skipped run's reason). Warnings recorded instead of
    printed (pytest.warns, catch_warnings(record=True)) keep their message as it was."""
    original = warnings.formatwarning

    def formatted(message, category, filename, lineno, line=None):
        return original(clean(str(message)), category, filename, lineno, line)

    warnings.formatwarning = formatted
    try:
        yield
    finally:
        warnings.formatwarning = original


def escaped_excepthook(exc_type, error, trace) -> None:
    """sys.excepthook of `python -m vitcore`: a bug's traceback as Python prints it (causes first), each
    exception's message clean()ed as one line (it may hold a name from the disk)."""
    print("".join(_traceback(error)).rstrip("\n"), file=sys.stderr)


def _traceback(error: BaseException) -> list[str]:
    parts = []
    if error.__cause__ is not None:
        parts += [*_traceback(error.__cause__), "\nThe above exception was the direct cause of the following "
                  "exception:\n\n"]
    elif error.__context__ is not None and not error.__suppress_context__:
        parts += [*_traceback(error.__context__), "\nDuring handling of the above exception, another exception "
                  "occurred:\n\n"]
    message = "".join(traceback.format_exception_only(type(error), error)).rstrip("\n")
    return [*parts, "Traceback (most recent call last):\n", *traceback.format_tb(error.__traceback__),
            clean(message) + "\n"]


def writable_folder(path: str | Path, flag: str) -> Path:
    """`path` as a folder this command can write into, created if missing, or UsageError. The probe
    is a real (anonymous) file: permission bits say nothing for root or a read-only mount."""
    _named(path, flag)
    folder = Path(path)
    _refuse_special(folder, flag)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{flag} {folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise UsageError(f"{flag} {folder}: cannot write there ({error.strerror or error})") from None
    return folder


def writable_file(path: str | Path, flag: str, example: str) -> Path:
    """`path` as a file this command can (over)write, its folder created if missing, or UsageError."""
    _named(path, flag)
    file = Path(path)
    _refuse_special(file, flag)
    if file.is_dir():
        raise UsageError(f"{flag} {file} is a folder; give a file name (e.g. {file / example})")
    writable_folder(file.parent, flag + " folder")
    if file.exists():
        try:
            with open(file, "r+b"):
                pass
        except OSError as error:
            raise UsageError(f"{flag} {file}: cannot overwrite it ({error.strerror})") from None
    return file


def files_in(folder: Path, names, flag: str) -> None:
    """The files a command will write into `folder` must not be folders."""
    for name in names:
        if found := _special(folder / name):
            raise UsageError(f"{flag} {_shown(folder)}: {name} there is {found}, so the file cannot be written "
                             "(nothing was written)")
        if (folder / name).is_dir():
            raise UsageError(f"{flag} {folder}: {name} there is a folder, so the file cannot be written")


STORE_HELP = "run store folder (default: $VITCORE_STORE, else the repository's cached_runs/)"


def judging_parser(sub, name: str, help: str):
    """A subcommand that gives verdicts: --margin sets them, and its --help ends with what each one means."""
    parser = sub.add_parser(name, help=help, epilog=VERDICTS_EPILOG,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_margin_flag(parser)
    return parser


def named(value: str) -> str:
    """argparse type of a path flag: an empty path would be the current folder."""
    if not value.strip():
        raise argparse.ArgumentTypeError("is empty; give a path (an empty one would be the current folder)")
    return value


def add_store_flag(parser) -> None:
    parser.add_argument("--store", type=store_flag, default=store_path(), help=STORE_HELP)


def store_flag(value: str) -> Path:
    """argparse type of --store: a non-empty path (named), found by the one rule (config.environment.store_path)."""
    return store_path(named(value))


def add_io_flags(parser, out: str | None = None) -> None:
    """--store, and --out: a folder (required) when `out` is None, else a CSV file with `out` as its default."""
    add_store_flag(parser)
    if out is None:
        parser.add_argument("--out", required=True, help="output folder (created if missing)")
    else:
        parser.add_argument("--out", default=out, help=f"output CSV file (default {out})")


def add_margin_flag(parser) -> None:
    """--margin: the verdicts' equivalence margin (vitcore.stats.estimates), shared by every command that judges."""
    parser.add_argument("--margin", type=float, default=0.01,
                        help="equivalence margin for accuracies and the gap, 0 to 1 exclusive (default 0.01)")


def verdict_line(row: dict) -> str:
    """One Δ row as `compare` prints it: Δ, the interval that goes with the verdict, both tests, the verdict
    and, when inconclusive, the assurance-based seeds (a total and how many more, as the app says it)."""
    places = numbers.digits(row["metric"])  # the app's rule: seconds to 0.1 s, accuracies to 4 decimals
    which = f"{words.interval_short(row)} {words.verdict_interval(row, places, 'no CI')}"  # the study's one choice
    text = (f"{row['metric']:21} Δ {numbers.delta(row['mean_delta'], places)} {which}  "
            f"{words.tests_line(row, '  ')}  n={row['n_pairs']}  {row['verdict']}")
    if row["verdict"] == estimates.INCONCLUSIVE:
        text += f", {words.needs(row)}"  # the app's words (a guess from fewer than words.MIN_PAIRS pairs)
    elif row.get("size") in (readings.SIZE_BEYOND, readings.SIZE_OPEN) and row["verdict"] in estimates.BEYOND:
        text += f", size {row['size']}"  # vitcore.stats.readings: "better" beyond ±margin or maybe inside it
    if row.get("borderline") in (True,):  # a bool or numpy bool; NaN (no reading) is not
        text += f" · borderline: {row['flips']}"
    if row.get("timing_group"):
        text += f" (timed as {row['timing_group']})"
    if metrics.metric(row["metric"]).optimistic:
        text += " (optimistic: selected on this split)"
    if plan.planned(row) or str(row.get("plan", "")).startswith("exploratory"):
        text += f"\n  {'':21} {row['plan']}"  # which plan judged it (or that this margin is not its plan's)
        if words.source(row) == words.BLIND_UNPROVEN:  # git does not prove the plan came first: `plans` says why
            text += f" · {words.BLIND_UNPROVEN}: `python -m vitcore plans` says why"
    if row.get("discovery"):  # the line that follows the verdict: a confirmation's discovery, another plan's state
        text += f"\n  {'':21} {row['discovery']}"
    return text


def checked_margin(margin: float) -> float:
    try:
        return margin_rule(margin)  # the library's one rule (vitcore.config.metrics), as a usage error
    except ValueError as error:
        raise UsageError(f"--{error}") from None


def import_tensorflow_quietly() -> None:
    """Import TensorFlow with its start-up notices (oneDNN, CPU features, absl) kept off the terminal.

    They are written by native code before any Python logging exists, so TF_CPP_MIN_LOG_LEVEL=2
    removes only some; the rest goes to file descriptor 2 while the import runs and nowhere else.
    An import that fails raises as usual, after stderr is back."""
    spawn.quiet()  # absl's notices at the first compile too, for the rest of the process (vitcore.run.spawn)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            import tensorflow  # noqa: F401, PLC0415 - TensorFlow, its import-time noise silenced
    finally:
        os.dup2(saved, 2)
        os.close(saved)
