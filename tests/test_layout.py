"""The folder layout names the architecture, checked by reading imports (ast), not by importing:

- only vitcore/app/ imports Streamlit or Altair; only the CLI (vitcore/cli.py, or a vitcore/cli/
  package) imports argparse;
- nothing but vitcore/__main__.py (and tests, and the CLI itself) imports vitcore.cli: the library
  never calls its CLI;
- every module in vitcore/ reads in one sitting (≤ 500 lines) and every page in views/ is a
  description of the UI (≤ 120 lines).
"""

import ast
from pathlib import Path

import pytest
from conftest import ROOT
from sources import tree

PACKAGE = ROOT / "vitcore"
UI_LIBRARIES = {"streamlit", "altair"}
MAX_MODULE_LINES, MAX_PAGE_LINES = 500, 120


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def imported(path: Path, package: tuple[str, ...] | None = None) -> set[str]:
    """Every module name `path` imports, anywhere in the file (functions too), in absolute form;
    relative imports resolve against `package` (default: the folders from the repository root)."""
    package = path.relative_to(ROOT).parent.parts if package is None else package
    names = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else ()  # `from . import x`
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)  # `from vitcore import cli`
    return names


def top(names: set[str]) -> set[str]:
    return {name.split(".")[0] for name in names}


def where(predicate) -> list[str]:
    return [str(path.relative_to(ROOT)) for path in modules() if predicate(path)]


def in_app(path: Path) -> bool:
    return PACKAGE / "app" in path.parents


def in_cli(path: Path) -> bool:
    return path == PACKAGE / "cli.py" or PACKAGE / "cli" in path.parents


def imports_cli(path: Path) -> bool:
    return any(name == "vitcore.cli" or name.startswith("vitcore.cli.") for name in imported(path))


def test_the_probe_sees_imports_inside_functions_and_relative_ones(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from vitcore import cli\n    import streamlit as st\n")
    assert {"vitcore.cli", "streamlit"} <= imported(probe, package=())
    probe.write_text("from ..cli import main\nfrom . import fmt\n")
    assert {"vitcore.cli", "vitcore.app.fmt"} <= imported(probe, package=("vitcore", "app"))


def test_only_the_app_package_imports_streamlit_or_altair():
    assert where(lambda path: not in_app(path) and top(imported(path)) & UI_LIBRARIES) == []
    assert where(lambda path: in_app(path) and "streamlit" in top(imported(path)))  # the rule is not vacuous


def test_only_the_cli_imports_argparse():
    assert where(lambda path: not in_cli(path) and "argparse" in top(imported(path))) == []


def test_only_main_imports_the_cli():
    assert where(lambda path: path != PACKAGE / "__main__.py" and not in_cli(path) and imports_cli(path)) == []
    outside = [ROOT / "app.py", ROOT / "streamlit_app.py", *sorted((ROOT / "views").glob("*.py"))]
    assert [str(path.relative_to(ROOT)) for path in outside if imports_cli(path)] == []
    assert imports_cli(PACKAGE / "__main__.py")  # the rule is not vacuous


@pytest.mark.parametrize("folder, limit", [("vitcore", MAX_MODULE_LINES), ("views", MAX_PAGE_LINES)])
def test_files_read_in_one_sitting(folder, limit):
    long = {str(path.relative_to(ROOT)): lines for path in sorted((ROOT / folder).rglob("*.py"))
            if (lines := len(path.read_text().splitlines())) > limit}
    assert long == {}, f"over {limit} lines"


def test_the_app_packages_docstring_lists_its_modules():
    """vitcore/app/__init__.py's list named a `results` module that did not exist and left out six: every module
    it lists exists, and every module of the package is listed (dotted below vitcore.app, packages' __init__ aside)."""
    app = ROOT / "vitcore" / "app"
    real = {".".join(path.relative_to(app).with_suffix("").parts) for path in app.rglob("*.py")
            if path.name != "__init__.py"}
    listed = {line.split()[0] for line in ast.get_docstring(ast.parse((app / "__init__.py").read_text())).splitlines()
              if line.startswith("    ") and line.split()}
    assert listed == real, (sorted(listed - real), sorted(real - listed))
