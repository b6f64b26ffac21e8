"""What this server may do, checked once: its environment values (vitcore.config.environment) and
whether it can write its store. A wrong value is a visible note on every page and turns training off;
the notes name the variable, never a server path."""

from __future__ import annotations

import functools
import os
import tempfile
from types import SimpleNamespace

import streamlit as st

from vitcore.app import state
from vitcore.config import environment as checks
from vitcore.data.fashion import data_dir_problem

ENVIRONMENT = ("VITCORE_THREADS", "VITCORE_MAX_TRAIN_MINUTES", "VITCORE_DATA_DIR", "VITCORE_STORE",
               "VITCORE_ALLOW_TRAINING")


@functools.lru_cache(maxsize=8)
def _environment(values: tuple, store_path: str) -> tuple[float, tuple[str, ...]]:
    environ = {name: value for name, value in values if value is not None}
    try:
        budget = checks.budget_minutes(environ)
    except ValueError:
        budget = checks.DEFAULT_BUDGET_MINUTES  # unused: training is off while there is a problem
    return budget, tuple(checks.problems(environ, store_path,
                                         data=False) + list(filter(None, [data_dir_problem(environ)])))


def environment() -> SimpleNamespace:
    """budget_minutes and problems (one line each) of this server's environment, checked once per
    distinct setting."""
    values = tuple((name, os.environ.get(name)) for name in ENVIRONMENT)
    budget, problems = _environment(values, state.STORE_PATH)
    return SimpleNamespace(budget_minutes=budget, problems=problems)


def environment_note() -> None:
    """A visible note (never an exception box) for each environment value that is wrong."""
    for problem in environment().problems:
        st.warning(f"This server is misconfigured: {problem}. Training is off until it is fixed.",
                   icon=":material/settings_alert:")


def training_refused() -> str | None:
    """Why this server may not train now (a wrong environment value, a store it cannot write), or None.
    The store is probed with a real file: permission bits say nothing for root or a read-only mount."""
    problems = environment().problems
    if problems:
        return problems[0]
    try:
        os.makedirs(state.STORE_PATH, exist_ok=True)
        with tempfile.TemporaryFile(dir=state.STORE_PATH):
            pass
    except OSError as error:
        return f"it cannot write its store ({error.strerror or 'not writable'}), so a run could not be kept"
    return None
