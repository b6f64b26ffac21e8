"""A registered plan proves its own history from git: the file is what its registering commit added, and that
commit is an ancestor of every commit that added one of its runs.

    registering commit   the first commit that added `<store>/plans/NAME.json`
    unchanged            the file on disk is byte for byte that commit's version (a rewritten file with a
                         rewritten SHA256SUMS line passes the hash check, not this one)
    after it             every run the plan judges (its questions' configs at its random seeds) was added by a
                         descendant of that commit (a strict one: a run added with its plan was not trained blind),
                         or is not committed yet (newer than every commit); a run the plan lists as on disk when it
                         was registered is exempt (the plan says it saw it)

A plan that fails either judges nothing (`check` and `plans` name it, exit 1). Where the store is not in a git
work tree, or the plan file is not committed, the order is "not proven": the plan still judges, and every view
says its blindness rests on the runs' own trained_at. Git is asked a few questions per store state (~0.1 s on the
committed store); no pandas needed, no TensorFlow.
"""

from __future__ import annotations

import dataclasses
import subprocess
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from vitcore.stats.families import family_of
from vitcore.stats.plans import FOLDER, REPLICATION, TEST_IMAGES, Plan, sha256

PROVEN, NOT_PROVEN = "proven from git", "order not proven"
TIMEOUT = 30  # seconds for one git command (a huge history still answers; a hung one is not proof)


@dataclass(frozen=True)
class History:
    """What git says of one plan: `order` PROVEN or NOT_PROVEN (`why` says why not), `commit` its registering one."""
    order: str
    why: str = ""
    commit: str = ""

    @property
    def proven(self) -> bool:
        return self.order == PROVEN

    def words(self) -> str:
        if self.proven:
            return f"{PROVEN} (registered in commit {self.commit[:10]}, before every commit adding its runs)"
        return f"{NOT_PROVEN} ({self.why})"


def _git(top: Path, *args: str) -> str | None:
    """git's standard output, or None when it fails (no git, not a repository, a timeout)."""
    try:
        done = subprocess.run(["git", "-C", str(top), *args], capture_output=True, timeout=TIMEOUT,
                              env={"PATH": "/usr/bin:/bin:/usr/local/bin", "GIT_OPTIONAL_LOCKS": "0",
                                   "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"})
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def _top(root: Path) -> Path | None:
    out = _git(root, "rev-parse", "--show-toplevel")
    return Path(out.strip()) if out and out.strip() else None


def tracked(root) -> bool:
    """Whether a store folder lies in a git work tree (where `plan register` can be proven by a commit)."""
    return _top(Path(root)) is not None if Path(root).is_dir() else False


def _added(top: Path, pathspec: str) -> dict[str, str]:
    """path -> the oldest commit (in HEAD's history) that added it, for every file matching `pathspec`."""
    out = _git(top, "log", "--diff-filter=A", "--format=%x00%H", "--name-only", "--no-renames", "--", pathspec)
    first: dict[str, str] = {}
    commit = ""
    for line in (out or "").splitlines():
        if line.startswith("\x00"):
            commit = line[1:]
        elif line:
            first[line] = commit  # git log is newest first: the last commit seen is the oldest
    return first


def prove(root, plans: list[Plan], runs_of_plan) -> tuple[dict[str, History], list[str]]:
    """({plan name: History}, problems) for the store's registered plans; `runs_of_plan(plan)` -> the run ids the
    plan judges that are in the store. A problem means the plan judges nothing."""
    if not plans:
        return {}, []
    if root is None:
        return {p.name: History(NOT_PROVEN, "no store folder") for p in plans}, []
    root = Path(root)
    top = _top(root)
    if top is None:
        return {p.name: History(NOT_PROVEN, "the store is not in a git repository") for p in plans}, []
    try:
        rel = root.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return {p.name: History(NOT_PROVEN, "the store is outside its git work tree") for p in plans}, []
    if (_git(top, "rev-parse", "--is-shallow-repository") or "").strip() != "false":
        # a shallow clone (Streamlit Community Cloud's, a CI's --depth 1): its first commit "adds" every file
        return {p.name: History(NOT_PROVEN, "a shallow clone: the history that proves it is cut") for p in plans}, []
    prefix = "" if rel == "." else rel + "/"
    plan_added = _added(top, f"{prefix}{FOLDER}/*.json")
    run_added = _added(top, f"{prefix}*/summary.json")
    histories, problems = {}, []
    for plan in plans:
        path = f"{prefix}{FOLDER}/{plan.name}.json"
        commit = plan_added.get(path)
        if commit is None:
            histories[plan.name] = History(NOT_PROVEN, "its file is not committed")
            continue
        then = _git(top, "show", f"{commit}:{path}")
        if then is None or sha256(then) != plan.sha256:  # plan.sha256: the file's text as it was read now
            problems.append(f"plan {plan.name}.json: changed since commit {commit[:10]} registered it "
                            "(a registered plan never changes; register the change as a new plan)")
            continue
        after = set((_git(top, "rev-list", "--ancestry-path", f"{commit}..HEAD") or "").split())
        exempt = plan.on_disk or frozenset()
        early = sorted(run_id for run_id in runs_of_plan(plan)
                       if run_id not in exempt and f"{prefix}{run_id}/summary.json" in run_added
                       and run_added[f"{prefix}{run_id}/summary.json"] not in after)
        if early:
            problems.append(f"plan {plan.name}.json: {len(early)} of its runs (e.g. {early[0]}) were committed "
                            f"before or with commit {commit[:10]} that registered it: not blind")
            continue
        histories[plan.name] = History(PROVEN, commit=commit)
    return histories, problems


def code_version() -> str:
    """'vitcore 0.1.0 at <commit>' (the package's git commit; '(no git)' outside a checkout): a new plan's record."""
    try:
        release = version("vitcore")
    except PackageNotFoundError:  # run from a checkout that was never installed
        release = "(not installed)"
    here = Path(__file__).resolve().parent
    head = _git(here, "rev-parse", "HEAD") if _top(here) is not None else None
    return f"vitcore {release} at {head.strip()[:40] if head else '(no git)'}"


def settled(plan: Plan, confirmed: Plan | None = None) -> Plan:
    """`plan` with everything that decides its verdicts written down (vitcore.stats.plans): the test-image
    term and replication rule this code implements, each question's family size from the registry, a
    confirmation's discovery seeds (the confirmed plan's random seeds) and the code version."""
    sizes = tuple(family_of(None, q.base, q.variant).size for q in plan.questions)
    seeds = (confirmed.first_seed, confirmed.last_seed) if confirmed is not None else None
    return dataclasses.replace(plan, test_images=TEST_IMAGES, replication=REPLICATION, family_sizes=sizes,
                               discovery_seeds=seeds, code_version=code_version())
