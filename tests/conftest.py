"""Shared fixtures: one tiny real training run (real data, real store) reused by several tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vitcore.config import RunConfig  # noqa: E402
from vitcore.store import RunStore  # noqa: E402

TINY = RunConfig(train_rows=300, epochs=2)  # the seed's ViT on 300 rows: ~15 s with compile


def run_cli(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m vitcore ...` in a fresh process, as a user would run it."""
    return subprocess.run([sys.executable, "-m", "vitcore", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=600)


@pytest.fixture(scope="session")
def tiny_store(tmp_path_factory) -> RunStore:
    """A store holding TINY, trained for real in a fresh process through the CLI."""
    store = RunStore(tmp_path_factory.mktemp("tiny_store"))
    done = run_cli("run", "--train-rows", str(TINY.train_rows), "--epochs", str(TINY.epochs), "--store", str(store.root))
    assert done.returncode == 0, done.stderr[-2000:]
    return store
