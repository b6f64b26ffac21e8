"""The package installs: every layer and its package data, a working `python -m vitcore` outside the repo."""

import os
import shutil
import subprocess
import sys

import fakes
import pytest
from conftest import ROOT

from vitcore.config.run import RunConfig
from vitcore.store.runs import RunStore


@pytest.mark.slow
def test_an_installed_vitcore_runs_its_cli_outside_the_repo(tmp_path):
    source = tmp_path / "source"  # a copy: the build's build/ and *.egg-info stay out of the repo
    shutil.copytree(ROOT / "vitcore", source / "vitcore", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "requirements.txt"):  # the dependencies are requirements.txt's pins
        shutil.copy(ROOT / name, source)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(source)], check=True, capture_output=True, timeout=600)
    packages = {p.parent.relative_to(target).as_posix() for p in target.rglob("__init__.py")}
    wanted = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "vitcore").rglob("__init__.py")}
    assert packages == wanted  # every layer and page folder, nothing left out
    assert (target / "vitcore" / "data" / "assets" / "samples.npz").is_file()
    for measured in ("attention_cost.csv", "bn.csv"):  # what the pages read ships inside the package (no bench/)
        assert (target / "vitcore" / "analysis" / measured).is_file(), measured

    store = RunStore(tmp_path / "store")
    fakes.write_run(store, RunConfig(train_rows=1000))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "vitcore", *args], cwd=elsewhere, env=env,
                              capture_output=True, text=True, timeout=300)

    helped = cli("--help")
    assert helped.returncode == 0 and "check" in helped.stdout, helped.stderr[-2000:]
    checked = cli("check", "--store", str(store.root))
    assert checked.returncode == 0, checked.stdout + checked.stderr[-2000:]
    shipped = subprocess.run(  # the shipped sample images load from the installed package
        [sys.executable, "-c", "import vitcore.data.samples as s; print(s.__file__, len(s.gallery(False).images))"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert shipped.returncode == 0 and shipped.stdout.startswith(str(target)), shipped.stderr[-2000:]
