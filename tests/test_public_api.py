"""The public API (`from vitcore import …`), the README's example, the old import paths and the one rule
for finding the store."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from fakes import run_row, runs_table, write_run

import vitcore
from vitcore.article.claims import AGREES
from vitcore.config.environment import NO_STORE, REPOSITORY_STORE, store_path
from vitcore.config.run import RunConfig
from vitcore.stats.estimates import TOO_FEW


def test_all_gives_the_config_the_store_and_the_study():
    assert {"RunConfig", "REGISTRY", "RunStore", "Study", "Verdict", "Judgement"} <= set(vitcore.__all__)
    for name in vitcore.__all__:
        if name not in ("build_vit", "build_convnet"):  # TensorFlow: the training extra
            assert getattr(vitcore, name) is not None
    with pytest.raises(AttributeError, match="the public API"):
        vitcore.Nothing  # noqa: B018


@pytest.mark.slow  # a fresh interpreter
def test_import_vitcore_is_light():
    """No pandas, TensorFlow or Streamlit until a name is used; RunConfig alone stays off TensorFlow."""
    code = ("import sys, vitcore; print(sorted(m for m in ('pandas', 'tensorflow', 'streamlit') if m in sys.modules));"
            "vitcore.RunConfig, vitcore.Study; print('tensorflow' in sys.modules, 'streamlit' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split("\n")[:2] == ["[]", "False False"], done.stderr[-2000:]


def test_the_public_names_are_exactly_the_ones_loaded_on_first_use():
    """`__all__` and the names vitcore.__getattr__ imports (its `name in (...)` / `name == ...` tests) are one
    set: a name added to one and not the other fails here, not on a user's first `from vitcore import`."""
    tree = ast.parse(Path(vitcore.__file__).read_text())
    loader = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "__getattr__")
    loaded = {constant.value for test in ast.walk(loader) if isinstance(test, ast.Compare)
              for constant in ast.walk(test) if isinstance(constant, ast.Constant) and isinstance(constant.value, str)}
    assert loaded == set(vitcore.__all__) and len(vitcore.__all__) == len(set(vitcore.__all__))
    assert set(vitcore.__all__) <= set(dir(vitcore))


def test_old_module_paths_are_gone_and_listed_in_the_developer_guide():
    """The shims for module paths of earlier versions are removed (no finder, no forwarding __getattr__); the
    developer guide's table says where each went, and every new path it names exists."""
    assert not hasattr(vitcore, "MOVED") and not hasattr(importlib.import_module("vitcore.config"), "__getattr__")
    assert not any(type(finder).__module__ == "vitcore" for finder in sys.meta_path)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("vitcore.patches")
    guide = (ROOT / "docs" / "contributing.md").read_text()
    moved = dict(re.findall(r"^\| `(vitcore[\w.]*)` \| `(vitcore[\w.]*)` \|$", guide, re.M))
    assert len(moved) >= 40 and "vitcore.patches" in moved
    for old, new in moved.items():
        assert importlib.util.find_spec(old) is None and importlib.util.find_spec(new) is not None, (old, new)


def readme_example() -> str:
    """The README's "From Python" block, as written."""
    return re.search(r"## From Python.*?```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)


def setup_commands() -> list[str]:
    """The README's set-up commands: the command lines (not the comments) of its first code block."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_both_readme_set_up_commands_install_the_package_after_its_requirements():
    """Without `pip install -e .` the README's environment has no `vitcore` outside the repository's root (before,
    its own "From Python" example, saved as a file, failed with No module named 'vitcore')."""
    commands = setup_commands()
    assert len(commands) == 2
    for command, requirements in zip(commands, ("requirements.txt", "requirements-dev.txt")):
        steps = [step.strip() for step in command.split("&&")]
        assert steps.index("pip install -e .") == steps.index(f"pip install -r {requirements}") + 1, command


def readme_environment(tmp_path: Path) -> str:
    """The interpreter of the environment the README's commands make: this venv's when it has vitcore installed
    (as both commands do), else a throwaway venv over this one's packages (the requirements) with the README's own
    `pip install -e .` of this checkout (no index, no build isolation: nothing downloaded; seconds)."""
    probe = subprocess.run([sys.executable, "-c", "import vitcore; print(vitcore.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    if probe.returncode == 0 and probe.stdout.strip() == str(ROOT / "vitcore" / "__init__.py"):
        return sys.executable
    import site
    import venv

    folder = tmp_path / "venv"
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                         text=True, check=True).stdout.strip()
    Path(own, "_requirements.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    "--no-build-isolation", "-e", str(ROOT)], check=True, capture_output=True, timeout=600)
    return str(python)


@pytest.mark.slow  # an editable install and a fresh interpreter over the whole committed store (tens of seconds)
def test_the_readme_example_runs_as_a_script_from_a_folder_outside_the_repository(tmp_path):
    """The README's "From Python" block saved as a file and run with `python file.py` from a folder outside the
    repository, in the environment the README's commands create (readme_environment): the store found by the rule."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "example.py").write_text(readme_example())
    env = {k: v for k, v in os.environ.items() if k not in ("VITCORE_STORE", "PYTHONPATH")}
    done = subprocess.run([readme_environment(tmp_path), "example.py"], cwd=elsewhere, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"Study({ROOT / 'cached_runs'}, " in done.stdout and "verdict" in done.stdout, done.stdout[-2000:]


SEL, BASE = RunConfig(norm="batch", train_rows=1000), RunConfig(train_rows=1000)
METRIC = "metric 'test_acc' is not one of test_accuracy, best_val_accuracy, final_train_accuracy, gap, seconds, "
MARGIN = "margin must be between 0 and 1 (exclusive), got "


@pytest.mark.parametrize("ask, message", [
    (lambda s: s.verdict(SEL, metric="test_acc"), METRIC),
    (lambda s: s.verdicts([(SEL, BASE)], metrics=["gap", "test_acc"]), METRIC),
    (lambda s: s.compare(SEL, metrics=("test_acc",)), METRIC),
    (lambda s: s.main_effects(metrics="test_acc"), METRIC),
    (lambda s: s.flip_effects(BASE, metrics=["test_acc"]), METRIC),
    (lambda s: s.verdict(SEL, margin=-0.01), MARGIN + "-0.01"),
    (lambda s: s.compare(SEL, margin=1), MARGIN + "1"),
    (lambda s: s.verdicts([(SEL, BASE)], margin=0), MARGIN + "0"),
    (lambda s: s.tally(margins=(0.01, 1.5)), MARGIN + "1.5"),
    (lambda s: s.claims(margin=float("nan")), MARGIN + "nan"),
    (lambda s: s.verdict(RunConfig(depth=7, train_rows=1000)),
     "no runs of the selection, ViT p7 pre-LN pos depth 7 at 1,000"),
    (lambda s: s.compare(SEL, RunConfig(train_rows=2000)), "no runs of the baseline, ViT p7 pre-LN pos at 2,000 rows"),
])
def test_the_public_api_refuses_what_the_cli_refuses_in_one_clear_message(ask, message):
    """A misspelt metric raised a bare KeyError, a margin of -0.01 was judged, a config with no runs read "too few
    seeds": each is now one ValueError saying what is allowed, the CLI's rule and words."""
    study = vitcore.Study(runs_table([run_row(cfg.replace(seed=seed), test_accuracy=0.8 + seed / 100)
                                      for cfg in (SEL, BASE) for seed in range(3)]))
    with pytest.raises(ValueError) as refused:
        ask(study)
    assert str(refused.value).startswith(message), str(refused.value)
    assert study.verdict(SEL, metric="test_accuracy").verdict in vitcore.VERDICTS  # what is allowed still works
    untrained = study.compare(RunConfig(depth=7, train_rows=1000), missing_ok=True).metrics.set_index("metric")
    assert untrained["verdict"].drop("seconds").eq(TOO_FEW).all()  # a page's selection not trained yet


@pytest.mark.slow  # the whole committed store's claims at three margins (test_study checks the same, faster)
def test_the_readme_example_runs(tmp_path, monkeypatch, capsys):
    """The README's "From Python" block, run as written from another folder (the store found by the rule)."""
    code = readme_example()
    monkeypatch.delenv("VITCORE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "Study(" in out and "verdict" in out and "margin" in out
    # readable whole: no frame hides its middle columns, the verdict prints as one short line
    assert "columns]" not in out and "..." not in out and {"train_rows", "mean_delta", AGREES} <= set(out.split())
    assert "Verdict(ViT p7 pre-LN no-pos − ViT p7 pre-LN pos at 4,000 rows, test_accuracy, Δ " in out
    # another margin: exploratory on the blind plan's random seeds, as its comment says (10 pairs, as its look used)
    assert "n=10, worse)" in out and "exploratory at ±0.02, blind random seeds 1000–1039" in out
    assert "fixed-sample test on 10 pairs" in out
    assert max(len(line) for line in out.splitlines()) <= 120  # a wide terminal's width, not wrapped


def test_store_rule(tmp_path):
    assert store_path("x", {"VITCORE_STORE": "y"}).name == "x"
    assert store_path(None, {"VITCORE_STORE": str(tmp_path)}) == tmp_path
    assert store_path(None, {}) == REPOSITORY_STORE == ROOT / "cached_runs"
    assert store_path(None, {"VITCORE_STORE": " "}) == Path(NO_STORE)  # empty: no store (a note), never the cwd


@pytest.mark.slow  # two CLI processes
def test_vitcore_store_is_read_from_another_folder(store, tmp_path):
    """`VITCORE_STORE=… python -m vitcore check` from another folder reads that store (not cached_runs/
    and not a cached_runs/ of the current folder)."""
    write_run(store, RunConfig(train_rows=1000))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_cli("check", cwd=elsewhere, env={"VITCORE_STORE": str(store.root)})
    assert done.returncode == 0, done.stderr
    assert f"{store.root}: 1 valid runs" in done.stdout
    env = {k: v for k, v in os.environ.items() if k != "VITCORE_STORE"}
    done = subprocess.run([sys.executable, "-m", "vitcore", "check", "--store", str(store.root)], cwd=elsewhere,
                          capture_output=True, text=True, timeout=600, env={**env, "PYTHONPATH": str(ROOT),
                                                                            "VITCORE_STORE": "/nonexistent"})
    assert done.returncode == 0 and "1 valid runs" in done.stdout  # --store wins over the variable


def test_pyproject_ranges_hold_the_pinned_versions():
    """pyproject.toml declares ranges (a library must not force exact pins); requirements*.txt keep the exact
    pins the app and CI install, and each pin lies inside its range."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {Requirement(line).name: Requirement(line).specifier
                for line in project["dependencies"] + sum(project["optional-dependencies"].values(), [])}
    pins = {}
    for name in ("requirements.txt", "requirements-train.txt", "requirements-ray.txt"):
        for line in (ROOT / name).read_text().splitlines():
            if line and not line.startswith(("#", "-r")):
                requirement = Requirement(line)
                pins[requirement.name] = next(iter(requirement.specifier)).version
    assert set(declared) == set(pins)
    assert not any(spec.operator == "==" for specifier in declared.values() for spec in specifier)
    assert {name: version for name, version in pins.items() if version not in declared[name]} == {}
