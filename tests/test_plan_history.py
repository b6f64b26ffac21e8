"""A registered plan proves its own history from git (vitcore.stats.plan_report): its file is its registering
commit's, and that commit is an ancestor of every commit adding one of its runs; else it judges nothing and
`plans` / `check` exit 1 naming it. Outside git: 'order not proven'. Each repository is made in tmp_path."""

import dataclasses
import re
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
from fakes import write_run

from vitcore.cli import main
from vitcore.config.run import RunConfig
from vitcore.stats import plan_report, plans
from vitcore.stats.estimates import INCONCLUSIVE
from vitcore.store.runs import RunStore

ROOT = Path(__file__).resolve().parents[1]
CONFIRM_COMMIT = "d660f2488c6f1329f7281ac5fe6a89809ad65922"  # the confirmation's registering commit (docs pin it)
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
    assert "commit it within 30 minutes and before any of its runs exists" in capsys.readouterr().out
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


def _backdated(store: RunStore, registered: str, trained: str, monkeypatch) -> None:
    """A plan `mine` registered_at `registered` (through the library: as a hand-made history writes it), and its
    runs on random seeds 500-503 with trained_at `trained`, none committed yet."""
    import fakes

    from vitcore.stats import plan_store

    found = plans.make("mine", [("norm_placement", ("post",))], (1000,), (500, 503), looks=(2, 4))
    plan_store.register(store.root, dataclasses.replace(found, registered_at=registered))
    monkeypatch.setattr(fakes, "now_utc", lambda: trained)
    runs(store, range(500, 504))


def _ago(minutes: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_history_made_today_proves_nothing(repo, monkeypatch, capsys):
    """Issue 57: `git init`, the plan committed first and its runs after, all of them trained days earlier: git shows
    the order of commits, not of training. The commit is dated days after the plan's registered_at: not proven, and
    the plan, blind by its runs' own trained_at, follows the built-in one wherever that judges a stored run."""
    store = RunStore(repo / "store")
    _backdated(store, _ago(3 * 24 * 60), _ago(2 * 24 * 60), monkeypatch)
    commit(repo, "the plan first", "store/plans")
    commit(repo, "its runs after")
    checked = plan_report.checked(store.table(), store.root)
    history = checked.history["mine"]
    assert not history.proven and checked.problems == () and checked.blind["mine"] is True
    assert "not within 30 minutes after its registered_at" in history.why and history.commit
    assert [p.name for p in checked.lead()] == ["mine", "builtin"]  # the built-in plan judges nothing here
    runs(store, [0])  # a pair the built-in plan judges: now it leads the unproven plan
    assert [p.name for p in plan_report.checked(store.table(), store.root).lead()] == ["builtin", "mine"]
    frame = plan_report.report(store.table(), None, store.root, checked).plans_frame().set_index("plan")
    assert frame.loc["mine", "order"].startswith("order not proven") and frame.loc["mine", "commit"] == history.commit
    assert main(["check", "--store", str(store.root)]) == 0  # judging, not a problem: said so
    assert "not proven: plan mine.json judges, after every proven plan and the built-in one: order not proven (its " \
           "registering commit" in capsys.readouterr().out


def test_runs_trained_before_the_registering_commit_are_not_proven_by_it(repo, monkeypatch):
    """The commit lies within minutes of registered_at, but the runs were trained between the two: the commit's
    date must precede every run's trained_at."""
    store = RunStore(repo / "store")
    _backdated(store, _ago(10), _ago(5), monkeypatch)
    commit(repo, "the plan", "store/plans")
    commit(repo, "its runs")
    history = plan_report.checked(store.table(), store.root).history["mine"]
    assert not history.proven and "were trained before its registering commit" in history.why


def test_an_unproven_plan_never_leads_over_a_proven_one_whatever_its_registered_at():
    """The lead order: blind plans proven from git (by their commit's date), the built-in plan, then the others."""
    from vitcore.stats import plan_store

    base = plans.make("x", [("norm_placement", ("post",))], (1000,), (500, 503), looks=(2, 4))
    proven, early, seen = (dataclasses.replace(base, name=name, registered_at=at) for name, at in
                           (("proven", "2026-12-02T16:10:18Z"), ("early", "2020-01-01T00:00:00Z"),
                            ("seen", "2019-01-01T00:00:00Z")))
    history = {"proven": plan_report.History(plan_report.PROVEN, "", "c" * 40, "2026-12-02T16:10:33Z"),
               "early": plan_report.History(plan_report.NOT_PROVEN, "its file is not committed"),
               "seen": plan_report.History(plan_report.PROVEN, "", "d" * 40, "2019-01-01T00:00:00Z")}
    checked = plan_report.Checked((plan_store.builtin(), early, seen, proven), (), history,
                                  {"builtin": False, "early": True, "seen": False, "proven": True})
    assert [p.name for p in checked.lead()] == ["proven", "builtin", "early", "seen"]


@pytest.mark.slow
def test_a_planted_backdated_plan_never_leads_the_committed_confirmation(tmp_path, capsys, committed_table):
    """Issue 57's attack on a full clone: a copy of confirm.json with alpha 0.95 and registered_at 2026-12-01, saved as
    aaa.json with its SHA256SUMS line, never committed, read "equivalent" over the confirmation's "undecided at the
    cap" at post-norm, 1,000 rows. Unproven, it now follows the proven confirmation (and the built-in plan), said so.
    (A shared clone with the plans and this comparison's runs checked out.)"""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(ROOT), str(clone)], check=True)
    base = RunConfig(train_rows=1000)
    ids = committed_table[committed_table["config_id"].isin({base.config_id,
                                                             base.replace(norm_placement="post").config_id})]["run_id"]
    git(clone, "checkout", "-q", "HEAD", "--", "cached_runs/plans", *(f"cached_runs/{i}" for i in ids))
    store = clone / "cached_runs"
    folder = store / "plans"
    text = (folder / "confirm.json").read_text()
    planted = text.replace('"alpha": 0.05', '"alpha": 0.95').replace('"name": "confirm"', '"name": "aaa"').replace(
        '"registered_at": "2026-12-02T16:10:18Z"', '"registered_at": "2026-12-01T00:00:00Z"')
    assert planted.count("aaa") == 1 and "2026-12-01T00:00:00Z" in planted
    (folder / "aaa.json").write_text(planted)
    with open(folder / plans.SUMS, "a") as sums:
        sums.write(f"{plans.sha256(planted)}  aaa.json\n")
    assert main(["compare", "--norm-placement", "post", "--train-rows", "1000", "--store", str(store),
                 "--out", str(tmp_path / "cmp")]) == 0
    row = pd.read_csv(tmp_path / "cmp" / "metrics.csv").set_index("metric").loc["test_accuracy"]
    assert row["verdict_from"] == "plan confirm, blind, look 4 of 4" and row["verdict"] == INCONCLUSIVE
    assert "plan aaa (blind, order not proven" in row["discovery"]
    capsys.readouterr()
    assert main(["plans", "--store", str(store), "--out", str(tmp_path / "plans")]) == 0
    frame = pd.read_csv(tmp_path / "plans" / "plans.csv").set_index("plan")
    assert frame.loc["confirm", "order"].startswith("proven from git")
    assert frame.loc["confirm", "commit"] == CONFIRM_COMMIT
    assert frame.loc["aaa", "order"] == "order not proven (its file is not committed)"


def test_the_docs_pin_the_confirmations_hash_and_commit_and_git_proves_it(committed_table):
    """docs/plans-and-confirmation.md gives confirm.json's sha256 and registering commit id (to compare with the public
    remote's); this checkout's file and history hold the same, and git proves its order: its commit is dated within
    minutes of its registered_at and before every one of its runs' trained_at (on a full clone)."""
    from vitcore.stats import plan_store

    docs = (ROOT / "docs" / "plans-and-confirmation.md").read_text()
    found = re.search(r"sha256\s+`([0-9a-f]{64})`, registering commit\s+`([0-9a-f]{40})`", docs)
    assert found, "the docs pin the confirmation's sha256 and commit id"
    store = ROOT / "cached_runs"
    (confirm,) = [p for p in plan_store.load(store)[0] if p.name == "confirm"]
    assert found.group(1) == confirm.sha256 == plans.sha256((store / "plans" / "confirm.json").read_text())
    assert found.group(2) == CONFIRM_COMMIT
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    if git(ROOT, "rev-parse", "--is-shallow-repository").strip() != "false":
        pytest.skip("a shallow clone: the history that proves it is cut")
    history, problems = plan_report.prove(store, [confirm], lambda p: plan_report._judged_times(
        plan_report.judged_ids(p, committed_table)))
    assert problems == [] and history["confirm"].proven and history["confirm"].commit == CONFIRM_COMMIT
    assert history["confirm"].date == "2026-12-02T16:10:33Z"
