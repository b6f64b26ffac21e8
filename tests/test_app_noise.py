"""AppTest of the Seed noise page on synthetic stores: the advice it prints is vitcore.analysis.noise's
on the same runs, the chart has every cell, an empty store gets a note, and TensorFlow stays unloaded."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_noise import TRUE, simulate, write_crossed

from vitcore.analysis import noise
from vitcore.app import state
from vitcore.store.runs import RunStore

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(tmp_path, monkeypatch) -> RunStore:
    monkeypatch.setattr(state, "STORE_PATH", str(tmp_path / "store"))
    return RunStore(tmp_path / "store")


def page() -> AppTest:
    return AppTest.from_file(str(ROOT / "views" / "noise.py"), default_timeout=120).run()


def test_the_page_prints_the_libraries_advice_and_charts_every_cell(store):
    learned = simulate(TRUE["data-heavy"], (3, 3, 2), 1, seed=11)[0]
    write_crossed(store, learned, learned + simulate(TRUE["interaction-heavy"], (3, 3, 2), 1, seed=12)[0])
    at = page()
    assert not at.exception
    components, pairing = noise.noise_tables(store.table())
    expected = noise.advice(components, pairing)
    shown = [md.value for md in at.markdown if md.value.startswith("- ")]
    assert shown == [f"- {line}" for line in expected] and len(shown) == 4  # 2 cells + the Δ, + its pairing
    assert "pairing by the data sample alone removes" in shown[-1]
    rows = json.loads(at.get("vega_lite_chart")[0].proto.spec)["facet"]["row"]["sort"]  # one chart row per cell
    assert rows == [f"{cell} · 1,000 rows" for cell in components["cell"].unique()] and len(rows) == 3
    assert len(at.dataframe) == 3  # every paired comparison's pairing, the decomposition, the pairing table
    from vitcore.analysis import pairing as survey

    advice = next(md.value for md in at.markdown if md.value.startswith("**Pairing by the random seed.**"))
    assert survey.advice(survey.survey(store.table())) in advice  # over every committed comparison, not one cell


def test_an_empty_store_gets_a_note(store):
    at = page()
    assert not at.exception and any("sweep noise" in info.value for info in at.info)


@pytest.mark.slow  # a fresh interpreter
def test_the_page_does_not_import_tensorflow(store):
    learned = simulate(TRUE["data-heavy"], (2, 2, 2), 1, seed=13)[0]
    write_crossed(store, learned, learned)
    code = (f"import sys; from vitcore.app import state; state.STORE_PATH = {str(store.root)!r}\n"
            f"from streamlit.testing.v1 import AppTest\n"
            f"at = AppTest.from_file({str(ROOT / 'views' / 'noise.py')!r}, default_timeout=120).run()\n"
            f"assert not at.exception\nprint('tensorflow' in sys.modules, 'keras' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "False"]
