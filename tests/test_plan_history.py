"""A registered plan proves its own history from git (vitcore.stats.plan_report): its file is its registering
commit's, and that commit is an ancestor of every commit adding one of its runs; else it judges nothing and
`plans` / `check` exit 1 naming it. Outside git: 'order not proven'. Each repository is made in tmp_path."""

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from fakes import write_run

from vitcore.cli import main
from vitcore.config.run import RunConfig
from vitcore.stats import plan_report, plans
from vitcore.store.runs import RunStore

ROOT = Path(__file__).resolve().parents[1]
PLAN = ["plan", "register", "mine", "--vary", "norm_placement=post", "--rows", "1000", "--seeds", "500-503",
        "--looks", "2,4"]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout


def commit(repo: Path, message: str, path: str = "-A") -> None:
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", message)


def runs(store: RunStore, seeds) -> None:
    for seed in seeds:
        write_run(store, RunConfig(train_rows=1000, seed=seed), 0.80 + seed % 3 * 0.001)
        write_run(store, RunConfig(train_rows=1000, seed=seed, norm_placement="post"), 0.83 + seed % 2 * 0.001)


@pytest.fixture
def repo(tmp_path) -> Path:
    git(tmp_path, "init", "-q")
    return tmp_path


def test_registered_then_run_is_proven_and_leads(repo, capsys):
    store = RunStore(repo / "store")
    assert main([*PLAN, "--store", str(store.root)]) == 0
    assert "commit it before any of its runs exists" in capsys.readouterr().out
    commit(repo, "register mine")
    runs(store, range(500, 504))
    commit(repo, "its runs")
    checked = plan_report.checked(store.table(), store.root)
    assert checked.history["mine"].proven and checked.blind["mine"] is True and checked.problems == ()
    assert [p.name for p in checked.lead()][:2] == ["mine", "builtin"]
    assert main(["plans", "--store", str(store.root)]) == 0


def test_a_plan_rewritten_with_its_hash_line_and_committed_judges_nothing(repo, capsys):
    store = RunStore(repo / "store")
    assert main([*PLAN, "--store", str(store.root)]) == 0
    commit(repo, "register mine")
    path, sums = store.root / "plans" / "mine.json", store.root / "plans" / plans.SUMS
    text = path.read_text().replace('"alpha": 0.05', '"alpha": 0.1')
    path.write_text(text)
    sums.write_text(f"{plans.sha256(text)}  mine.json\n")  # the hash check alone now passes
    commit(repo, "a quiet rewrite")
    capsys.readouterr()
    assert main(["plans", "--store", str(store.root), "--out", str(repo / "out")]) == 1
    err = capsys.readouterr().err
    assert "mine.json" in err and "changed since commit" in err and "Traceback" not in err
    assert "mine" not in set(pd.read_csv(repo / "out" / "plans.csv")["plan"])
    assert main(["check", "--store", str(store.root)]) == 1
    assert "plans: plan mine.json: changed since commit" in capsys.readouterr().out


def test_a_shallow_clone_proves_nothing_and_refuses_nothing(repo, tmp_path):
    """Streamlit Community Cloud (or a CI) may clone with --depth 1: its one commit 'adds' the plan and its runs
    alike, which must not read as runs committed with their plan."""
    store = RunStore(repo / "store")
    assert main([*PLAN, "--store", str(store.root)]) == 0
    commit(repo, "register mine")
    runs(store, range(500, 504))
    commit(repo, "its runs")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    cloned = RunStore(shallow / "store")
    checked = plan_report.checked(cloned.table(), cloned.root)
    assert checked.problems == () and "mine" in {p.name for p in checked.plans}
    assert checked.history["mine"].order == plan_report.NOT_PROVEN and "shallow" in checked.history["mine"].why


def test_runs_committed_before_their_plan_refuse_it(repo, capsys):
    store = RunStore(repo / "store")
    runs(store, range(500, 502))
    commit(repo, "runs first")
    found = plans.make("late", [("norm_placement", ("post",))], (1000,), (500, 503), looks=(2, 4))
    from vitcore.stats import plan_store

    plan_store.register(store.root, found)  # through the library: the CLI would list the runs as seen
    commit(repo, "then the plan")
    checked = plan_report.checked(store.table(), store.root)
    assert "late" not in {p.name for p in checked.plans}
    assert any("late.json" in p and "before or with commit" in p for p in checked.problems)


def test_outside_git_the_order_is_not_proven(tmp_path, capsys):
    store = RunStore(tmp_path / "store")
    assert main([*PLAN, "--store", str(store.root)]) == 0
    assert "not in a git repository" in capsys.readouterr().out
    runs(store, range(500, 502))
    checked = plan_report.checked(store.table(), store.root)
    assert checked.history["mine"].order == plan_report.NOT_PROVEN and checked.problems == ()
    assert "order not proven" in plan_report.report(store.table(), None, store.root).plans_frame().set_index(
        "plan").loc["mine", "order"]


def test_a_confirmation_on_stored_random_seeds_is_refused_and_any_other_plan_lists_them(tmp_path, capsys):
    store = RunStore(tmp_path / "store")
    runs(store, range(500, 502))
    assert main([*PLAN, "--confirms", "builtin", "--store", str(store.root)]) == 2
    err = capsys.readouterr().err
    assert "fresh random seeds" in err and err.count("\n") == 1 and not (store.root / "plans" / "mine.json").exists()
    assert main([*PLAN, "--store", str(store.root)]) == 0
    assert "warning: 4 of its runs are stored already" in capsys.readouterr().err
    (mine,) = [p for p in plan_report.checked(store.table(), store.root).plans if p.name == "mine"]
    assert mine.on_disk == frozenset(store.table()["run_id"]) and mine.family_sizes == (1,)
    assert mine.test_images and mine.replication and mine.code_version.startswith("vitcore ")


@pytest.mark.slow
def test_the_committed_confirmation_rewritten_in_a_clone_is_refused(tmp_path, capsys):
    """The issue's check on the real history: a clone where confirm.json and its SHA256SUMS line were rewritten and
    committed. (A shared clone with only the plans checked out: the refusal needs no run.)"""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(ROOT), str(clone)], check=True)
    git(clone, "checkout", "-q", "HEAD", "--", "cached_runs/plans")
    store = clone / "cached_runs"
    assert main(["plans", "--store", str(store)]) == 0  # as committed: proven (no run here to judge)
    path, sums = store / "plans" / "confirm.json", store / "plans" / plans.SUMS
    text = path.read_text().replace('"alpha": 0.05', '"alpha": 0.1')
    path.write_text(text)
    sums.write_text(f"{plans.sha256(text)}  confirm.json\n")
    commit(clone, "rewrite the confirmation", "cached_runs/plans")
    capsys.readouterr()
    assert main(["plans", "--store", str(store)]) == 1
    assert "confirm.json: changed since commit d660f2488c" in capsys.readouterr().err


def test_compare_and_claims_say_order_not_proven_outside_git(tmp_path, capsys):
    """A blind plan outside git judges, and the CLI's lines say its order is not proven (as the app's rows do)."""
    store = RunStore(tmp_path / "store")
    assert main(["plan", "register", "bn", "--vary", "norm=batch", "--rows", "1000", "--seeds", "500-503",
                 "--looks", "2,4", "--store", str(store.root)]) == 0
    for seed in (500, 501):
        write_run(store, RunConfig(train_rows=1000, seed=seed), 0.80 + seed % 3 * 0.001)
        write_run(store, RunConfig(train_rows=1000, seed=seed, norm="batch"), 0.60 + seed % 2 * 0.001)
    capsys.readouterr()
    assert main(["compare", "--norm", "batch", "--train-rows", "1000", "--store", str(store.root),
                 "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "plan bn" in out and "blind (order not proven): `python -m vitcore plans` says why" in out
    assert main(["claims", "--store", str(store.root), "--out", str(tmp_path / "claims.csv")]) == 0
    out = capsys.readouterr().out
    assert "1 verdict: blind (order not proven) — `python -m vitcore plans` says why" in out
