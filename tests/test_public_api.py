"""The public API (`from vitcore import …`), the README's example, the old import paths and the one rule
for finding the store."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from fakes import write_run

import vitcore
from vitcore.config.environment import NO_STORE, REPOSITORY_STORE, store_path
from vitcore.config.run import RunConfig


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


def test_old_import_paths_still_import_the_same_objects():
    from vitcore.config import RunConfig as old_config
    from vitcore.data.patches import patchify
    from vitcore.store import RunStore as old_store
    from vitcore.store.runs import RunStore

    assert old_config is RunConfig and old_store is RunStore
    with pytest.warns(DeprecationWarning, match="vitcore.data.patches"):
        sys.modules.pop("vitcore.patches", None)
        from vitcore.patches import patchify as old_patchify
    assert old_patchify is patchify
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import vitcore.compare
        import vitcore.stats.compare
    assert vitcore.compare is vitcore.stats.compare


@pytest.mark.slow  # the whole committed store's claims at three margins (test_study checks the same, faster)
def test_the_readme_example_runs(tmp_path, monkeypatch, capsys):
    """The README's "From Python" block, run as written from another folder (the store found by the rule)."""
    code = re.search(r"## From Python.*?```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    monkeypatch.delenv("VITCORE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "Study(" in out and "verdict" in out and "margin" in out


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
