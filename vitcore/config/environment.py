"""The environment variables vitcore reads, each checked once, in one place.

    VITCORE_THREADS            intra-op threads of a training (unset or 0: one per CPU)
    VITCORE_MAX_TRAIN_MINUTES  the app's per-click training budget (unset: 10 minutes)
    VITCORE_STORE              the store folder of the CLI (without --store), the app and Study.open()
                               (unset: cached_runs/ of the checkout: store_path)
    VITCORE_DATA_DIR           a folder with the four Fashion-MNIST IDX files (unset: the other sources)
    VITCORE_XLA_CACHE          the compiled-program cache (unset or empty: ~/.cache/vitcore/xla; "off": none)
    VITCORE_ALLOW_TRAINING     the app's Train button: 1/true/yes/on or 0/false/no/off (unset: on, but off
                               on Streamlit Community Cloud)

An empty VITCORE_STORE or VITCORE_DATA_DIR is refused (Path("") is the current folder), and so is any
other spelling of VITCORE_ALLOW_TRAINING (`flase` must not mean "on").

`problems()` (and vitcore.data.fashion.data_dir_problem, which reads the folder) says, one line each, what is wrong: the
CLI exits with code 2 before any work, the app shows a note and turns training off. The lines name the variable and
never a path, since the app shows them to visitors.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path

DEFAULT_BUDGET_MINUTES = 10.0  # one click may start at most this much estimated training
MAX_BUDGET_MINUTES = 24 * 60.0  # a day: a stored run's seconds must stay below it anyway
MAX_THREADS = 1024              # far above any machine this runs on; TensorFlow aborts the process on -1


def threads(environ: Mapping[str, str] = os.environ) -> int | None:
    """VITCORE_THREADS as a thread count, None when unset or 0 (one per CPU), else ValueError."""
    value = environ.get("VITCORE_THREADS", "").strip()
    if value in ("", "0"):
        return None
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_THREADS:
        raise ValueError(f"VITCORE_THREADS must be a whole number of threads from 1 to {MAX_THREADS} "
                         f"(or 0: one per CPU), got {value[:40]!r}")
    return int(value)


def budget_minutes(environ: Mapping[str, str] = os.environ) -> float:
    """VITCORE_MAX_TRAIN_MINUTES, else 10. Not a number above 0 and at most a day: ValueError (never
    silently the default: `abc` or `-1` must not mean 10, nor `inf` "no budget")."""
    value = environ.get("VITCORE_MAX_TRAIN_MINUTES", "").strip()
    if not value:
        return DEFAULT_BUDGET_MINUTES
    try:
        minutes = float(value)
    except ValueError:
        minutes = math.nan
    if not 0 < minutes <= MAX_BUDGET_MINUTES:  # False for NaN too
        raise ValueError(f"VITCORE_MAX_TRAIN_MINUTES must be a number of minutes above 0 and at most "
                         f"{MAX_BUDGET_MINUTES:g}, got {value[:40]!r}")
    return minutes


def xla_cache(environ: Mapping[str, str] = os.environ) -> Path | None:
    """VITCORE_XLA_CACHE as the folder of the persistent XLA cache (vitcore.run.compile_cache), None
    for "off"; unset or empty: ~/.cache/vitcore/xla (under $XDG_CACHE_HOME when set). A path with whitespace
    (TF_XLA_FLAGS splits on it) or naming a file: ValueError."""
    value = environ.get("VITCORE_XLA_CACHE", "").strip()
    if value.lower() in ("off", "0"):
        return None
    cache_home = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = Path(value) if value else Path(cache_home) / "vitcore" / "xla"
    if any(char.isspace() for char in str(folder)):
        raise ValueError("VITCORE_XLA_CACHE must be a folder path without spaces (or 'off'); "
                         "the default folder's path has one, so set it")
    if folder.is_file():
        raise ValueError("VITCORE_XLA_CACHE is a file, not a folder (set a folder, or 'off')")
    return folder


SWITCH_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
NO_STORE = os.devnull  # the app's store while VITCORE_STORE is empty: never a folder, so no run (and a note)


def allow_training(environ: Mapping[str, str] = os.environ) -> bool | None:
    """VITCORE_ALLOW_TRAINING as True or False, None when unset; any other spelling: ValueError."""
    value = environ.get("VITCORE_ALLOW_TRAINING")
    if value is None:
        return None
    if value.strip().lower() not in SWITCH_WORDS:
        raise ValueError(f"VITCORE_ALLOW_TRAINING must be one of {'/'.join(SWITCH_WORDS)}, got {value[:40]!r} "
                         "(training stays off)")
    return SWITCH_WORDS[value.strip().lower()]


REPOSITORY_STORE = Path(__file__).resolve().parents[2] / "cached_runs"  # the committed runs, beside the package


def store_path(given: str | os.PathLike | None = None, environ: Mapping[str, str] = os.environ) -> Path:
    """The one rule for finding the store, shared by the CLI, the app and Study.open(): `given` (--store),
    else $VITCORE_STORE, else the repository's cached_runs/ (whatever the current folder). An empty
    VITCORE_STORE is NO_STORE (never the current folder; store_value says why)."""
    if given is not None:
        return Path(given)
    value = environ.get("VITCORE_STORE")
    return REPOSITORY_STORE if value is None else Path(value) if value.strip() else Path(NO_STORE)


def missing_store(root: str | os.PathLike, environ: Mapping[str, str] = os.environ) -> str:
    """The CLI's one line for a store folder that does not exist: a mistyped --store or $VITCORE_STORE is the likely
    cause, never "train 500 runs into it" (the CLI prints paths; the app says it without one)."""
    value = environ.get("VITCORE_STORE")
    source = ("$VITCORE_STORE" if value and value.strip() and Path(value) == Path(root) else
              "--store" if Path(root) != REPOSITORY_STORE else "the repository's store")
    return (f"no store at {root}: that folder does not exist (it comes from {source}; check the path, or train a "
            f"store into it with `python -m vitcore sweep ... --store`)")


def timing_path(store: str | os.PathLike) -> Path | None:
    """The store's dedicated timing set (vitcore.analysis.timing): a store of its own, `timing_runs/` beside it
    (None for NO_STORE). Seconds views read it; it never enters an accuracy comparison."""
    return None if str(store) == NO_STORE else Path(store).absolute().parent / "timing_runs"


def store_value(environ: Mapping[str, str] = os.environ) -> None:
    """ValueError when VITCORE_STORE is set but empty (it would be the current folder)."""
    value = environ.get("VITCORE_STORE")
    if value is not None and not value.strip():
        raise ValueError("VITCORE_STORE is empty (that would be the current folder): unset it, or name the store "
                         "folder")


def store_problem(path: str) -> str | None:
    """Why the store folder cannot be read (None: readable, or not there yet: an empty store)."""
    if path == NO_STORE:  # an empty VITCORE_STORE: store_value says so
        return None
    try:
        if not os.path.exists(path):
            return None
        if not os.path.isdir(path):
            return "the store (VITCORE_STORE) is a file, not a folder"
        os.listdir(path)
    except OSError as error:
        return f"the store (VITCORE_STORE) is unreadable ({error.strerror})"
    return None


def data_dir_value(environ: Mapping[str, str] = os.environ) -> None:
    """ValueError when VITCORE_DATA_DIR is set but empty (it would be the current folder). Whether the folder
    holds Fashion-MNIST is the data layer's to check (vitcore.data.fashion.data_dir_problem)."""
    value = environ.get("VITCORE_DATA_DIR")
    if value is not None and not value.strip():
        raise ValueError("VITCORE_DATA_DIR is empty (that would be the current folder): unset it, or name the data "
                         "folder")


def problems(environ: Mapping[str, str] = os.environ, store: str | None = None, data: bool = True,
             budget: bool = True) -> list[str]:
    """One line per environment value that is wrong (threads, an empty VITCORE_STORE, the app's own values
    when `budget`: the budget and VITCORE_ALLOW_TRAINING, the store at `store`, an empty data dir when `data`);
    [] when all is well. The CLI and the app pass data=False and ask vitcore.data.fashion.data_dir_problem,
    which also reads the folder (this layer imports none above it)."""
    found = []
    for check in (threads, store_value, xla_cache, *((budget_minutes, allow_training) if budget else ()),
                  *((data_dir_value,) if data else ())):
        try:
            check(environ)
        except ValueError as error:
            found.append(str(error))
    if store is not None and (why := store_problem(store)):
        found.append(why)
    return found
