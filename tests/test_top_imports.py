"""Imports at the top of their module (ruff's PLC0415, selected in pyproject.toml): an import kept inside a function
defers a heavy library (TensorFlow, Ray, scikit-learn, h5py, pandas...) or breaks an import cycle, and says why on
its line (`# noqa: PLC0415 - <reason>`); at most MOST of them in vitcore/, views/ and streamlit_app.py."""

import ast
import importlib.util
import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from sources import tree

# With tests/test_import_graph.py in one worker (pytest-xdist): the package's syntax trees are parsed once (sources.py).
pytestmark = pytest.mark.xdist_group("test_import_graph")
MOST = 45
# The rule's code among the noqa's codes, then a dash between spaces and a reason (at least one word).
REASON = re.compile(r"#\s*noqa:\s*(?:[A-Z]+[0-9]+\s*,\s*)*PLC0415(?:\s*,\s*[A-Z]+[0-9]+)*\s+[-\u2013\u2014]\s+\w")
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
PATHS = ("vitcore", "views", "streamlit_app.py")


def sources() -> list:
    return sorted(path for name in PATHS for path in ([ROOT / name] if name.endswith(".py")
                                                      else (ROOT / name).rglob("*.py")))


def nested_imports(path) -> list[tuple[int, str]]:
    """(line number, line) of every import statement inside a function or class body of the file at `path`."""
    found = []

    def visit(node, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child.lineno)
            visit(child, inside or isinstance(child, SCOPES))

    visit(tree(path), False)
    lines = path.read_text().splitlines()
    return [(number, lines[number - 1]) for number in found]


def unexplained(imports: dict) -> list[str]:
    """'path:line' of each import inside a function without its reason."""
    return [f"{path}:{number}" for path, found in imports.items() for number, line in found
            if not REASON.search(line)]


@pytest.fixture(scope="module")
def package_imports() -> dict:
    return {str(path.relative_to(ROOT)): nested_imports(path) for path in sources()}


def test_the_probe_sees_imports_inside_functions_and_classes_and_their_reasons(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import os\nif os:\n    import sys\n"
                      "def f():\n    import json  # noqa: PLC0415 - a reason\n"
                      "    def g():\n        import csv  # noqa: PLC0415\n"
                      "class C:\n    import re  # noqa: F401, PLC0415 - another reason\n"
                      "    def m(self):\n        from math import pi  # noqa: PLC0415-no\n"
                      "async def h():\n    import csv  # noqa: PLC0415 \u2014 why\n")
    found = nested_imports(source)
    assert [number for number, _ in found] == [5, 7, 9, 11, 13]  # the `if` at the top is the top
    assert unexplained({"m.py": found}) == ["m.py:7", "m.py:11"]


def test_at_most_MOST_imports_inside_functions_each_with_its_reason(package_imports):
    counted = sum(map(len, package_imports.values()))
    assert counted <= MOST, f"{counted} imports inside functions; at most {MOST}: move the new ones to the top"
    assert unexplained(package_imports) == []


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff comes with requirements-dev.txt")
def test_ruff_counts_the_same_imports_and_every_one_is_explained(package_imports):
    """The probe above and ruff's rule see the same lines; with the noqa comments, ruff finds nothing left."""
    def ruff(*flags: str) -> list[dict]:
        done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "PLC0415",
                               "--output-format", "json", *flags, *PATHS], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        return json.loads(done.stdout)

    seen = {(str(ROOT.joinpath(d["filename"]).relative_to(ROOT)), d["location"]["row"]) for d in ruff("--ignore-noqa")}
    assert seen == {(path, number) for path, found in package_imports.items() for number, _ in found}
    assert ruff() == []
