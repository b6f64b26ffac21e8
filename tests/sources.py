"""Source files read as syntax trees, each parsed once per process: tests/test_import_graph.py and tests/test_layout.py
walk every module of vitcore/ in each of their probes (a dozen passes over ~150 files). A tree is kept under the
file's text, so a file written again (a probe's own file in tmp_path) is parsed again; trees are only read."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


def tree(path: Path) -> ast.Module:
    """ast.parse of the file at `path` as it is now."""
    return _parsed(Path(path).read_text(), str(path))


@functools.cache
def _parsed(text: str, filename: str) -> ast.Module:
    return ast.parse(text, filename)
