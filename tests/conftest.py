"""Shared fixtures: the one tiny config, the stores built from it, and the synthetic-run writer.

- `TINY` / `tiny_config`: the article's ViT on 300 rows for 2 epochs (many seconds to train).
- `tiny_store` (slow): TINY and TINY without position embedding, trained for real in fresh
  processes through the CLI, seed 0 so their weights are kept. Shared by the whole session.
- `committed_table`: the committed store's table, read once per session.
- `committed_study`: the committed store's Study (its analyses computed once), for the modules of
  `xdist_group("committed_study")`.
- `page_store`: a small copy of the committed runs the pages draw from (tests/stores.py), made once per
  session (as it starts: `page_store_copy`): the page tests render it instead of the whole committed store.
- `write_run` / `run_row` (tests/fakes.py): synthetic runs, no training, for everything else.

Tests that train, start a server or browser, or spawn a process are marked `slow`;
`python -m pytest -m "not slow" -n 2` is the inner loop. With pytest-xdist's `-n 2 --dist loadgroup` (the
README's and CI's commands) each worker takes whole groups: a test file (its module fixtures built once), every
test of the session's `tiny_store` (trained once), every test of `page_store` (the app's analyses of it computed
once), the tests that import TensorFlow (`xdist_group("tensorflow")`: one worker pays its import, seconds; all in
the slow tier, as that import alone is over the fast tier's ~1 s a test),
the modules sharing `committed_study` (`xdist_group("committed_study")`) and the tests that start Ray
(`xdist_group("ray")`: one Ray at a time on the machine).
"""

import functools
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vitcore.config.run import RunConfig  # noqa: E402
from vitcore.config.switches import FACTORS, LEVELS, REGISTRY  # noqa: E402
from vitcore.store.runs import RunStore  # noqa: E402

TINY = RunConfig(train_rows=300, epochs=2)  # the article's ViT on 300 rows: many seconds with compile
TINY_VARIANTS = (TINY, TINY.replace(pos_embedding="none"))  # what tiny_store holds


def switch_grid(**only: tuple) -> list[RunConfig]:
    """The tests' switch grid, from the registry: every combination of the factorial's switches at all
    their levels (`only` narrows one, e.g. switch_grid(patch_size=(4, 7, 14))), then each other ViT
    switch's other levels one at a time on the article's ViT. A new switch joins every test that loops
    over this grid; interactions of the non-factorial switches are listed by the tests that need them."""
    combos = [RunConfig(**dict(zip(FACTORS, levels)))
              for levels in itertools.product(*(only.get(name, LEVELS[name]) for name in FACTORS))]
    singles = [RunConfig(**{s.name: level}) for s in REGISTRY if not s.free and not s.grid and s.applies("vit")
               for level in only.get(s.name, s.levels) if level != s.default]
    return combos + singles


def run_cli(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m vitcore ...` in a fresh process, as a user would run it."""
    return subprocess.run([sys.executable, "-m", "vitcore", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=600)


def tool(name: str) -> str:
    """The command-line tool `name` of the environment running the tests: beside sys.executable first (a venv's
    bin/ is on PATH only once activated; `shutil.which` then gave None and the test died in subprocess with a
    TypeError), else on PATH; pytest.skip saying where it looked when neither has it."""
    beside = Path(sys.executable).with_name(name)  # not resolved: a venv's python is a link out of its bin/
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"`{name}` is neither beside {sys.executable} nor on PATH (pip install -r requirements-dev.txt)")
    return found


def train_command(cfg: RunConfig, store: Path) -> list[str]:
    """The CLI arguments that train cfg (any fields off the article's defaults) into store."""
    default = RunConfig()
    flags = [item for name in ("pos_embedding", "train_rows", "epochs") if getattr(cfg, name) != getattr(default, name)
             for item in (f"--{name.replace('_', '-')}", str(getattr(cfg, name)))]
    return ["run", *flags, "--store", str(store)]


def script(name: str):
    """scripts/<name>.py loaded as a module (scripts/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SYNCED: list[str] = []


def pytest_configure(config):
    """The docs' copies of the verdict, claim and reading words (scripts/sync_docs.py) written from their one
    definition before any test reads them, once per session (the xdist controller, not each worker): a word renamed
    at its constant is renamed in the README and docs/methods-and-verdicts.md too, and fails no docs check. CI runs
    `scripts/sync_docs.py --check` first, so a stale copy never reaches main; the header names what was rewritten."""
    if hasattr(config, "workerinput"):
        return
    if hasattr(config.option, "loadscopereorder"):  # the groups go out in pytest_collection_modifyitems' order
        config.option.loadscopereorder = False
    # The suite starts a few hundred Python processes (pytest's workers, the CLI, trainings, servers): each compiles
    # vitcore and the test modules again unless their bytecode is cached, which PYTHONDONTWRITEBYTECODE (set on some
    # machines, this project's CI among them) forbids; caching it halves a worker's collection (8 -> 4 CPU-s).
    # __pycache__ is git-ignored. Set here, before xdist starts its workers, so they and their children inherit it.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    try:
        _SYNCED.extend(f"rewrote the generated words in {relative}" for relative in script("sync_docs").sync(ROOT))
    except (OSError, ValueError) as error:  # a read-only checkout, damaged markers: the docs checks then say where
        _SYNCED.append(f"could not sync the docs: {error}")


def pytest_report_header(config):
    return [f"scripts/sync_docs.py {said}" for said in _SYNCED]


# A session fixture made once per worker -> the xdist group of the tests that use it (all in one worker: made once).
SHARED = {"tiny_store": "tiny_store", "page_store": "page_store", "app_server": "test_browser",
          "app_browser": "test_browser"}

# The longest xdist groups, in seconds of wall on two idle cores (the whole suite's per-test durations, 2026-12-05):
# handed out first (longest first), so no long group starts last and leaves one core idle at the end. Before, xdist
# ordered groups by their number of tests: the Ray group (4 tests, 200 s) started at 515 s and ended the run alone.
# Only the order depends on these figures, never a result; a group not listed follows, largest first.
LONGEST_GROUPS = {"ray": 200, "test_browser": 140, "test_sweep": 134, "page_store": 67, "tiny_store": 64,
                  "committed_study": 63, "test_train": 53, "test_own_runs": 41, "test_plans": 41,
                  "test_plan_store": 32, "test_verify": 30, "test_one_verdict": 29, "test_compile_cache": 28}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """The xdist group of each test without one: `tiny_store` for its users (trained once), `page_store` for the app
    renders of page_store (the landing's analyses of it computed once, in one worker's caches), `test_browser` for the
    users of app_server / app_browser (one server and one Chromium), else its file. Then
    the longest groups first (LONGEST_GROUPS; xdist's own reordering by test count is turned off, pytest_configure),
    each group's tests in their own order."""
    groups = {}
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = next((group for fixture, group in SHARED.items() if fixture in item.fixturenames), item.path.stem)
            item.add_marker(pytest.mark.xdist_group(group))
        groups.setdefault(item.get_closest_marker("xdist_group").args[0], []).append(item)
    order = sorted(groups, key=lambda g: (-LONGEST_GROUPS.get(g, 0), -len(groups[g])))
    items[:] = [item for group in order for item in groups[group]]


@pytest.fixture(scope="session", autouse=True)
def scan_streamlit_components_once():
    """Every AppTest run scans all installed distributions for Streamlit components (a large share of
    each page test, reading ~600 metadata files); they cannot change during a session, so scan once."""
    from streamlit.components.v2 import manifest_scanner

    original = manifest_scanner.scan_component_manifests
    manifest_scanner.scan_component_manifests = functools.cache(original)
    yield
    manifest_scanner.scan_component_manifests = original


@pytest.fixture(scope="session", autouse=True)
def no_keras_reset_after_each_page_run():
    """After every script run Streamlit calls keras.backend.clear_session() (its gc.collect() included) once
    Keras is in sys.modules. The app never imports Keras (it trains in a child process: vitcore.app.training),
    but a worker that ran a model test has it, and then paid ~9 CPU-s of the fast tier in resets for page tests
    that never touch it. Page runs here close matplotlib's figures as Streamlit does, and leave Keras alone."""
    from streamlit.runtime.scriptrunner import script_runner

    def close_figures_only() -> None:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close("all")

    original = script_runner._clean_problem_modules
    script_runner._clean_problem_modules = close_figures_only
    yield
    script_runner._clean_problem_modules = original


@pytest.fixture(scope="session", autouse=True)
def own_compile_cache(tmp_path_factory):
    """The session's persistent XLA cache (vitcore.run.compile_cache) starts empty and is its own, never
    the user's ~/.cache; trainings in this process and in the processes it starts share it."""
    saved = os.environ.get("VITCORE_XLA_CACHE")
    os.environ["VITCORE_XLA_CACHE"] = str(tmp_path_factory.mktemp("xla_cache"))
    yield
    if saved is None:
        del os.environ["VITCORE_XLA_CACHE"]
    else:
        os.environ["VITCORE_XLA_CACHE"] = saved


@pytest.fixture(scope="session")
def tiny_config() -> RunConfig:
    return TINY


@pytest.fixture(scope="session")
def tiny_store(tmp_path_factory) -> RunStore:
    """A store holding TINY_VARIANTS, trained for real in fresh processes through the CLI."""
    store = RunStore(tmp_path_factory.mktemp("tiny_store"))
    for cfg in TINY_VARIANTS:
        done = run_cli(*train_command(cfg, store.root))
        assert done.returncode == 0, done.stderr[-2000:]
    return store


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """The app as `streamlit run streamlit_app.py` serves it from the committed store, training off (tests/browsing.py):
    one server for the browser tests of tests/test_browser.py and tests/test_app_picture.py (their xdist group
    "test_browser"). .url, .log (its output)."""
    from types import SimpleNamespace

    from browsing import streamlit_server

    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with streamlit_server(log, VITCORE_ALLOW_TRAINING="0") as (_, url):
        yield SimpleNamespace(url=url, log=log)


@pytest.fixture(scope="session")
def app_browser():
    """One context of Debian's Chromium for the same tests (its pages share the HTTP cache, as one visitor's tabs do),
    and its Chromium (.browser) for tests/test_hostile_clients.py: Playwright's sync API runs once per process."""
    from browsing import chromium

    with chromium() as browser:
        context = browser.new_context()
        yield context
        context.close()


@pytest.fixture(scope="session")
def committed_table():
    """RunStore(cached_runs/).table(), read once per session: a test that changes it changes a copy."""
    return RunStore(ROOT / "cached_runs").table()


@pytest.fixture(scope="session")
def committed_study():
    """Study.open(cached_runs/), once per worker: the modules that read the committed store's analyses (main
    effects, the plan report, claims: seconds each) share its caches, in one xdist group
    (`xdist_group("committed_study")`, so one worker computes them). Read-only: its frames are copies, its runs
    are not changed; a test that counts what a Study computes makes its own (Study(study.runs, study.store))."""
    from vitcore.study import Study

    return Study.open(ROOT / "cached_runs", warn=False)


@pytest.fixture(scope="session", autouse=True)
def page_store_copy(tmp_path_factory, committed_table) -> Path:
    """page_store's folder, copied as the session starts (quick), so that its files' times have settled by the
    time a test asks for page_store (see there)."""
    from stores import PAGE_CONFIGS, copy_store, page_runs

    return copy_store(tmp_path_factory.mktemp("page_store") / "store",
                      keep=page_runs(committed_table, configs=PAGE_CONFIGS))


@pytest.fixture(scope="session")
def page_store(page_store_copy) -> RunStore:
    """A copy of the committed runs the pages draw from (stores.page_runs and stores.PAGE_CONFIGS), made once
    per session; tests render it read-only (a test that damages runs copies them: stores.copy_store).
    Handed out once its files are older than vitcore.store.index.RACY_NS: a run changed within it has no
    stamp, so until then every store key the app takes is new (a Study opened, every run validated again and
    every analysis computed cold at each key: the first page test opened three): stores.settled."""
    from stores import settled

    return RunStore(settled(page_store_copy))


@pytest.fixture
def on_page_store(page_store, monkeypatch) -> RunStore:
    """The app reads page_store for this test (vitcore.app.state.STORE_PATH)."""
    from vitcore.app import state

    monkeypatch.setattr(state, "STORE_PATH", str(page_store.root))
    return page_store


@pytest.fixture
def store(tmp_path) -> RunStore:
    """An empty store in a temporary folder, for fakes.write_run."""
    return RunStore(tmp_path / "store")


@pytest.fixture
def screened_only(tmp_path, monkeypatch) -> None:
    """This test's `check` screens weights on the 64 shipped images and does not run the full pass on the
    official test split (VITCORE_DATA_DIR: the official files but other test images). On a fresh machine the
    full pass of a page store's weighted runs costs minutes of CPU (tests/test_weights_owned.py runs it)."""
    from stores import other_test_images

    for name, value in other_test_images(tmp_path / "screened-only-data").items():
        monkeypatch.setenv(name, value)
