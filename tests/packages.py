"""A copy of the vitcore package to edit, for the tests (and benchmarks) that add a switch or a metric the way a
contributor would: docs/contributing.md's recipes applied to a copy, never to the package under test."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_copy(folder: Path) -> Path:
    """vitcore copied to folder/vitcore (no __pycache__); returns folder (what PYTHONPATH names)."""
    shutil.copytree(ROOT / "vitcore", folder / "vitcore", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def insert(path: Path, before: str, text: str) -> None:
    """`text` written into the file at `path` just before the first `before` (ValueError if absent)."""
    old = path.read_text()
    at = old.index(before)
    path.write_text(old[:at] + text + old[at:])
