"""The Study's public face (vitcore/study/study.py, article.py): help(Study) opens with its API and lists every public
method; the internals are private or elsewhere (vitcore.study.committed); no module outside vitcore/study reaches a
private attribute of the study package; a plan is drafted and registered through the Study."""

import ast
import hashlib
import pydoc
import re

import pandas as pd
import pytest
from conftest import ROOT
from sources import tree

from vitcore.stats.plans import FOLDER, SUMS
from vitcore.study import Study, committed
from vitcore.study.article import Registered

INTERNALS = {"attention_bench", "bn_diagnosis", "lead_columns", "effect_words", "missing_hint", "cached"}


def api_listing() -> set[str]:
    """The method names the Study's docstring lists under 'Its methods, by what they answer'."""
    text = Study.__doc__.split("Its methods, by what they answer")[1].split("What no store changes")[0]
    names = set()
    for line in text.splitlines()[1:]:
        listed = re.split(r"\s{2,}", line.strip(), maxsplit=1)[-1]  # 'one comparison    verdict, ...': the names
        names |= {name.strip() for name in listed.split(",") if name.strip()}
    return names


def test_help_opens_with_the_api_and_lists_every_public_method():
    public = {name for name in dir(Study) if not name.startswith("_")} - {"open"}  # open: the docstring's first line
    assert api_listing() == public
    assert not INTERNALS & public
    text = pydoc.render_doc(Study, renderer=pydoc.plaintext)
    assert text.index("Its methods, by what they answer") < text.index("Methods defined here")
    assert "vitcore.study.committed" in Study.__doc__ and callable(committed.bn_diagnosis)


def private_names() -> set[str]:
    """Every private attribute the study package defines: its classes' _methods and the self._names they set."""
    names = set()
    for path in (ROOT / "vitcore" / "study").glob("*.py"):
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ClassDef):
                names |= {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def private_reaches(path, names: set[str]) -> list[str]:
    """'line 214: found._cached' for each private study attribute `path` reaches on anything but self or cls."""
    return [f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree(path))
            if isinstance(node, ast.Attribute) and node.attr in names
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))]


def outside_the_study_package() -> list:
    package = ROOT / "vitcore"
    return [*(path for path in sorted(package.rglob("*.py")) if "study" not in path.relative_to(package).parts[:1]),
            *sorted((ROOT / "views").glob("*.py")), *sorted(ROOT.glob("*.py"))]


def test_the_probe_sees_a_private_study_method_called_from_outside(tmp_path):
    page = tmp_path / "state.py"
    page.write_text("def kept(found, name, compute):\n    return found._cached(('kept', name), compute)\n"
                    "class A:\n    def f(self):\n        return self._cached\n")
    assert private_reaches(page, private_names()) == ["line 2: found._cached"]


def test_no_module_outside_the_study_package_calls_a_private_study_method():
    names = private_names()
    assert {"_cached", "_lead_columns", "_memo"} <= names
    reached = {str(path.relative_to(ROOT)): found for path in outside_the_study_package()
               if (found := private_reaches(path, names))}
    assert reached == {}


def test_a_plan_is_drafted_and_registered_through_the_study(tmp_path):
    study = Study.open(tmp_path / "store", warn=False)  # no store yet: the plan comes before its runs
    plan = study.draft_plan("mine", [("depth", (1,))], (1_000,), (100, 109), (10,))
    assert plan.code_version and len(plan.family_sizes) == len(plan.questions) == 1 and not plan.on_disk
    registered = study.register_plan(plan)
    assert isinstance(registered, Registered) and registered.path == tmp_path / "store" / FOLDER / "mine.json"
    assert registered.sha256 == hashlib.sha256(registered.path.read_bytes()).hexdigest()
    assert f"{registered.sha256}  mine.json" in (tmp_path / "store" / FOLDER / SUMS).read_text()
    with pytest.raises(ValueError, match="exists"):  # a registered plan never changes
        study.register_plan(plan)
    with pytest.raises(ValueError, match="no such plan"):
        study.draft_plan("again", [("depth", (1,))], (1_000,), (200, 209), (10,), confirms="nope")
    with pytest.raises(ValueError, match="no store"):
        Study(pd.DataFrame()).register_plan(plan)


def studies_built(path) -> list[str]:
    """'line 70: Study(selected).timed()' for each Study a file builds (Study(...) or Study.open(...))."""
    return [f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree(path)) if isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("Study", "Study.open", "study.Study", "study.Study.open")]


def test_the_app_builds_one_study():
    """The app's one Study per store state is vitcore.app.state's: a card or a page never builds a throw-away Study."""
    app = [*sorted((ROOT / "vitcore" / "app").rglob("*.py")), *sorted((ROOT / "views").glob("*.py"))]
    built = {str(path.relative_to(ROOT)): found for path in app if (found := studies_built(path))}
    assert set(built) == {"vitcore/app/state.py"} and len(built["vitcore/app/state.py"]) == 1, built
