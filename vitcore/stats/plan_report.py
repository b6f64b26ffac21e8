"""Every registered plan's questions judged on a store: look, verdict, what is still needed, seen or blind, and
for a confirmation the discovery beside it (vitcore.stats.replication: replicated / contradicted / not
confirmed / pending / no decided discovery, the z between them and the two pooled as context).

    from vitcore.stats import plan_report
    report = plan_report.report(runs, test_set, root)   # runs: RunStore.table(); root: the store's folder
    report.plans_frame(), report.questions_frame()       # `python -m vitcore plans --out`'s two CSVs

A question's verdict is the one its plan gives: compare.paired_delta at the plan's margin, in the registry's family
(or the m the plan registered), at the plan's looks on the plan's random seeds only (vitcore.stats.plan). The
discovery of a confirmation's question is the confirmed plan's verdict on it when that plan asks it, else the
fixed-sample verdict at the confirmation's margin on the discovery's random seeds (the plan's `discovery_seeds`;
absent, the confirmed plan's random seeds: the depth/width study on random seeds 0-9 of 0-39). Which plans judge
at all is `checked`: registered, unchanged since they were (their sha256 and, in git, their registering commit),
registered before their runs (prove, below). No TensorFlow, no Streamlit.
"""

from __future__ import annotations

import dataclasses
import subprocess
from dataclasses import asdict, dataclass
from dataclasses import field as attribute
from datetime import datetime, timedelta, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pandas as pd

from vitcore.stats import plan as sequential
from vitcore.stats import plan_store, plans, replication
from vitcore.stats.compare import paired_delta
from vitcore.stats.families import family_of, planned_family, registered_size, runs_of
from vitcore.stats.plans import FOLDER, REPLICATION, REPLICATION_V1, TEST_IMAGES, Plan, sha256
from vitcore.stats.replication import (  # noqa: F401 (the words, re-exported for the pages and the CLI)
    CONTRADICTED,
    NOT_CONFIRMED,
    NOTHING,
    OUTCOMES,
    PENDING,
    POOLED_NOTE,
    REPLICATED,
    REPLICATED_DIRECTION,
    REPLICATED_INSIDE,
    outcome,
)
from vitcore.store.timing import trained_at

NOT_JUDGED = "nothing judged yet"  # a plan none of whose runs is stored: neither blind nor seen


@dataclass(frozen=True)
class QuestionStatus:
    """One question of one plan, judged on the store (questions.csv's row)."""
    plan: str
    question: str
    field: str
    level: object
    train_rows: int
    base_id: str              # config ids of both sides (the Ablations page finds the verdict by them)
    variant_id: str
    look: int                 # the look that judged it (0: before the first)
    looks_planned: int
    verdict: str
    size: str
    mean_delta: float
    n_pairs: int
    decided: bool
    at_cap: bool
    needs: str                # the plan's words: "decided", "at the plan's cap", or the next look's seeds
    seen_before_plan: bool
    text: str                 # the plan's line (plan column of every view)
    discovery_verdict: str = ""
    discovery_size: str = ""  # the discovery's size against the margin (readings: beyond / inside / undetermined)
    discovery_plan: str = ""  # the plan that decided the discovery, or "fixed sample"
    replicated: str = ""      # for a confirmation: one of replication.OUTCOMES
    discovery_delta: float = np.nan
    discovery_look: str = ""  # "look 2 of 4, seen" / "fixed sample on random seeds 0-39, 10 pairs"
    z: float = np.nan         # (confirmation − discovery) / sd of their difference (replication.pooled)
    pooled_delta: float = np.nan
    pooled_low: float = np.nan
    pooled_high: float = np.nan
    heterogeneity_p: float = np.nan
    pooled_df: float = np.nan  # the pooled interval's Welch–Satterthwaite df
    pooled_note: str = ""      # what the pooled columns are (replication.POOLED_NOTE): context, not a verdict
    side: replication.Side | None = attribute(default=None, repr=False, compare=False)  # the estimate, for pooling


@dataclass(frozen=True)
class Checked:
    """The plans that judge a store (the built-in one first), the problems of those that judge nothing, git's word
    on each registered plan's order (History) and whether each is blind (None: nothing judged yet)."""
    plans: tuple[plans.Plan, ...]
    problems: tuple[str, ...]
    history: dict
    blind: dict

    def order(self, name: str) -> str:
        """'proven from git (...)' / 'order not proven (...)' / the built-in plan's own history."""
        if name == plan_store.BUILTIN:
            return "the built-in plan: registered on runs it had seen (its file lists them)"
        return self.history[name].words()

    def proven(self, name: str) -> bool:
        """Whether git proves a registered plan's order (plan_history below); the built-in plan's is its file's."""
        return name in self.history and self.history[name].proven

    def lead(self) -> tuple[plans.Plan, ...]:
        """The plans in the order they lead a comparison they ask (families.family_of's `plans`): blind plans whose
        order git proves first (by their registering commit), then the built-in one, then every other registered
        plan (blind but unproven, then seen; each by registered_at), and last the plans none of whose runs is stored
        (a store of your own study holds none of the built-in plan's: its blind plan leads there). A plan's own
        registered_at is a claim its file makes: it orders plans only among those of the same standing, never lifts
        one over a proven plan."""
        stored = [p for p in self.plans if self.blind[p.name] is not None]
        registered = sorted((p for p in stored if p.name != plan_store.BUILTIN), key=lambda p: p.registered_at)
        builtin = [p for p in stored if p.name == plan_store.BUILTIN]
        proven = sorted((p for p in registered if self.blind[p.name] and self.proven(p.name)),
                        key=lambda p: (self.history[p.name].date, p.name))
        unproven = [p for p in registered if self.blind[p.name] and p not in proven]
        idle = [p for p in self.plans if p not in stored]  # none of its runs is stored: it can judge nothing here
        return (*proven, *builtin, *unproven, *[p for p in registered if self.blind[p.name] is False], *idle)


def judged_ids(plan: plans.Plan, runs: pd.DataFrame) -> pd.DataFrame:
    """The store's runs a plan judges: its questions' configs at its random seeds."""
    ids = {cfg.config_id for q in plan.questions for cfg in (q.base, q.variant)}
    return runs[runs["config_id"].isin(ids) & runs["seed"].between(plan.first_seed, plan.last_seed)]


def blind(plan: plans.Plan, runs: pd.DataFrame) -> bool | None:
    """True when no run the plan judges was trained before it, False when one was, None when none is stored."""
    mine = judged_ids(plan, runs)
    if mine.empty:
        return None
    when = mine["trained_at"] if "trained_at" in mine.columns else [None] * len(mine)
    return not any(plan.seen(run_id, t) for run_id, t in zip(mine["run_id"], when))


def _judged_times(mine: pd.DataFrame) -> list[tuple[str, str | None]]:
    """(run id, trained_at or None) of each run a plan judges."""
    when = mine["trained_at"] if "trained_at" in mine.columns else [None] * len(mine)
    return [(run_id, t if isinstance(t, str) else None) for run_id, t in zip(mine["run_id"], when)]


def checked(runs: pd.DataFrame, root=None) -> Checked:
    """Checked for a store: plan_store.load's plans and problems, then git's proof of each registered plan's order
    (prove); a plan whose file changed since its commit, or whose runs were committed before it, is
    moved to the problems."""
    found, problems = plan_store.load(root)
    registered = [p for p in found if p.name != plan_store.BUILTIN]
    history, refused = prove(root, registered, lambda p: _judged_times(judged_ids(p, runs)))
    kept, orphans = plan_store.confirmable([p for p in found if p.name == plan_store.BUILTIN or p.name in history])
    return Checked(tuple(kept), (*problems, *refused, *orphans), history, {p.name: blind(p, runs) for p in kept})


def _status(plan: plans.Plan, question: plans.Question, runs: pd.DataFrame, test_set) -> QuestionStatus:
    delta = paired_delta(runs_of(runs, question.base), runs_of(runs, question.variant), plan.metric, plan.margin,
                         family=planned_family(plan, question), test_set=test_set)
    row = delta.row
    decided, at_cap = row["verdict"] in sequential.DECIDED, bool(np.isinf(row.get("seeds_needed", np.nan)))
    needs = "decided" if decided else sequential.needs({**row, "looks_planned": row["looks_planned"]})
    return QuestionStatus(plan.name, question.name, question.field, question.level, question.train_rows,
                          question.base.config_id, question.variant.config_id, int(row["look"]),
                          int(row["looks_planned"]), row["verdict"], row["size"], float(row["mean_delta"]),
                          int(row["n_pairs"]), decided, at_cap, needs, bool(row["seen_before_plan"]), row["plan"],
                          side=replication.Side.of(delta.estimate))


def discovery_seeds(plan: plans.Plan, confirmed: plans.Plan) -> tuple[int, int]:
    """The random seeds of a confirmation's fixed-sample discovery: the plan's own record, else the confirmed plan's."""
    return plan.discovery_seeds or (confirmed.first_seed, confirmed.last_seed)


def _fixed_discovery(plan: plans.Plan, confirmed: plans.Plan, question: plans.Question, runs: pd.DataFrame,
                     test_set) -> tuple[str, str, str, replication.Side]:
    """(verdict, size, words, side) of the fixed-sample test on the discovery's random seeds (the registry's family)."""
    first, last = discovery_seeds(plan, confirmed)
    mine = runs[runs["seed"].between(first, last)]
    family = family_of(None, question.base, question.variant)
    family = type(family)(family.name, registered_size(plan, question) or family.size)  # fixed sample: no looks
    delta = paired_delta(runs_of(mine, question.base), runs_of(mine, question.variant), plan.metric,
                         plan.margin, family=family, test_set=test_set)
    words = f"fixed sample on random seeds {first}-{last}, {int(delta.row['n_pairs'])} pairs"
    return delta.row["verdict"], delta.row["size"], words, replication.Side.of(delta.estimate)


def _confirmed(status: QuestionStatus, plan, discovered, question, statuses, runs, test_set) -> QuestionStatus:
    """A confirmation's status with its discovery, the outcome, z and the pooled estimate beside it."""
    asked = discovered.question_of(question.base, question.variant)
    if asked is not None:
        first = statuses[(discovered.name, asked.name, asked.train_rows)]
        verdict, size, source, side = first.verdict, first.size, discovered.name, first.side
        look = f"look {first.look} of {first.looks_planned}, {'seen' if first.seen_before_plan else 'blind'}"
    else:
        verdict, size, look, side = _fixed_discovery(plan, discovered, question, runs, test_set)
        source = "fixed sample"
    pool = replication.pooled(side, status.side) if side is not None and status.side is not None \
        else replication.NO_POOL
    rule = plan.replication or REPLICATION_V1  # absent: a plan older than the field, read by the rule of its day
    said = outcome(verdict, status.verdict, status.decided, status.at_cap, size, status.size, rule)
    return QuestionStatus(**{**asdict(status), "side": status.side, "discovery_verdict": verdict,
                             "discovery_size": size,
                             "discovery_plan": source, "replicated": said, "discovery_look": look,
                             "discovery_delta": side.mean if side is not None else np.nan, "z": pool.z,
                             "pooled_delta": pool.delta, "pooled_low": pool.low, "pooled_high": pool.high,
                             "heterogeneity_p": pool.heterogeneity_p, "pooled_df": pool.df,
                             "pooled_note": pool.note if np.isfinite(pool.delta) else ""})


@dataclass(frozen=True)
class PlanReport:
    """Every plan on a store with its questions judged; `problems`: plan files that judge nothing, and why."""
    plans: tuple[plans.Plan, ...]
    questions: tuple[QuestionStatus, ...]
    blind: dict
    problems: tuple[str, ...]
    checked: Checked | None = attribute(default=None, repr=False, compare=False)

    def commit(self, name: str) -> str:
        """The plan's registering commit id ('' for the built-in plan, an uncommitted file, or outside git)."""
        history = self.checked.history.get(name) if self.checked is not None else None
        return history.commit if history is not None else ""

    def of(self, name: str) -> list[QuestionStatus]:
        return [q for q in self.questions if q.plan == name]

    def beside(self, base_id: str, variant_id: str) -> list[tuple[QuestionStatus, bool]]:
        """(status, mirrored) of one comparison in every plan that asks it, either way round: mirrored when the plan
        asks baseline − selection (its verdict words and Δ then read the other way: replication.mirrored)."""
        return [(q, (q.base_id, q.variant_id) != (base_id, variant_id)) for q in self.questions
                if {q.base_id, q.variant_id} == {base_id, variant_id}]

    def plans_frame(self) -> pd.DataFrame:
        rows = []
        for plan in self.plans:
            mine, state = self.of(plan.name), self.blind[plan.name]
            counts = {word: sum(q.replicated == word for q in mine) if plan.confirms else np.nan
                      for word in (REPLICATED, REPLICATED_DIRECTION, REPLICATED_INSIDE, CONTRADICTED, NOT_CONFIRMED)}
            rows.append({"plan": plan.name, "sha256": plan.sha256, "commit": self.commit(plan.name),
                         "registered_at": plan.registered_at,
                         "seeds": plan.seeds_text, "questions": len(mine), "decided": sum(q.decided for q in mine),
                         "at_cap": sum(q.at_cap and not q.decided for q in mine),
                         "blind": NOT_JUDGED if state is None else state,
                         "order": self.checked.order(plan.name) if self.checked is not None else "",
                         "confirms": plan.confirms or "", "margin": plan.margin,
                         "looks": ",".join(map(str, plan.looks)),
                         "replication_rule": (plan.replication or REPLICATION_V1) if plan.confirms else "",
                         **{_column(word): n for word, n in counts.items()}})
        return pd.DataFrame(rows)

    def questions_frame(self) -> pd.DataFrame:
        columns = ["plan", "question", "train_rows", "look", "verdict", "size", "seen_before_plan",
                   "discovery_verdict", "discovery_size", "replicated", "needs", "mean_delta", "n_pairs",
                   "looks_planned", "discovery_plan", "discovery_look", "discovery_delta", "z", "pooled_delta",
                   "pooled_low", "pooled_high", "pooled_df", "pooled_note", "heterogeneity_p", "field", "level",
                   "base_id", "variant_id", "text"]
        rows = [{k: v for k, v in asdict(q).items() if k != "side"} for q in self.questions]
        return pd.DataFrame(rows, columns=[*columns, "decided", "at_cap"])[columns]


def _column(word: str) -> str:
    """plans.csv's column of an outcome: 'replicated (direction)' -> 'replicated_direction'."""
    return word.replace(" (", "_").replace(")", "").replace(" ", "_")


def report(runs: pd.DataFrame, test_set, root=None, plans_checked: Checked | None = None) -> PlanReport:
    """The PlanReport of a store's runs (RunStore.table()) with its test set; `root`: the store's folder, whose
    registered plans judge it beside the built-in one (`plans_checked`: `checked(runs, root)` when in hand)."""
    plans_checked = plans_checked or checked(runs, root)
    found = plans_checked.plans
    by_name = {plan.name: plan for plan in found}
    statuses = {(plan.name, q.name, q.train_rows): _status(plan, q, runs, test_set)
                for plan in found for q in plan.questions}
    out = []
    for plan in found:
        for question in plan.questions:
            status = statuses[(plan.name, question.name, question.train_rows)]
            if plan.confirms is not None and plan.confirms in by_name:
                status = _confirmed(status, plan, by_name[plan.confirms], question, statuses, runs, test_set)
            out.append(status)
    return PlanReport(found, tuple(out), plans_checked.blind, plans_checked.problems, plans_checked)


# What git shows of a registered plan's order: the file is what its registering commit added, that commit is an
# ancestor of every commit that added one of its runs, and its date fits the plan's own times.
#
#     registering commit   the first commit that added `<store>/plans/NAME.json`
#     unchanged            the file on disk is byte for byte that commit's version (a rewritten file with a
#                          rewritten SHA256SUMS line passes the hash check, not this one)
#     after it             every run the plan judges (its questions' configs at its random seeds) was added by a
#                          descendant of that commit (a strict one: a run added with its plan was not trained blind),
#                          or is not committed yet (newer than every commit); a run the plan lists as on disk when it
#                          was registered is exempt (the plan says it saw it)
#     dated                the commit's committer date lies within COMMIT_WITHIN after the plan's registered_at and at
#                          or before every judged run's trained_at: git orders commits, not trainings (a history made
#                          today, the plan committed and then runs trained days earlier, proves nothing)
#
# A plan that fails "unchanged" or "after it" judges nothing (`check` and `plans` name it, exit 1); one that fails
# "dated", whose store is not in a git work tree, or whose file is not committed, reads "order not proven": it still
# judges, follows the built-in plan in the lead order, and every view says its blindness rests on the runs' own
# trained_at. What no check in one clone can show is a history rewritten as a whole (REWRITE): the Plans page,
# plans.csv and the docs give each plan's sha256 and registering commit id to compare with another copy. Git is
# asked a few questions per store state (a fraction of a second on the committed store); no TensorFlow.

PROVEN, NOT_PROVEN = "proven from git", "order not proven"
TIMEOUT = 30  # seconds for one git command (a huge history still answers; a hung one is not proof)
# The registering commit's date against the plan's own registered_at: `plan register` writes the file, the commit
# follows within minutes. A commit dated long after (a history made today) or before (a backdated plan) proves nothing.
COMMIT_WITHIN = timedelta(minutes=30)
CLOCK_SKEW = timedelta(minutes=2)   # a commit dated a little before registered_at: two clocks
# What git cannot show, said wherever "proven from git" is: every view, plans.csv, the docs.
REWRITE = ("git proves the order within this clone's history; a history rewritten as a whole (every commit made "
           "again, dates included) is caught only against a copy someone else holds, e.g. the public remote: "
           "compare the plan's sha256 and registering commit id with theirs")


@dataclass(frozen=True)
class History:
    """What git says of one plan: `order` PROVEN or NOT_PROVEN (`why` says why not), `commit` its registering one
    (when its file is committed) and that commit's date (the committer's, UTC)."""
    order: str
    why: str = ""
    commit: str = ""
    date: str = ""

    @property
    def proven(self) -> bool:
        return self.order == PROVEN

    def words(self) -> str:
        if self.proven:
            return (f"{PROVEN} (registered in commit {self.commit[:10]} dated {self.date}, before every commit adding "
                    "its runs and before every one of them was trained; a history rewritten as a whole is caught only "
                    "against a copy someone else holds, e.g. the public remote)")
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


def head(root) -> str:
    """The commit the git checkout holding `root` is at ('' outside git): part of the app's key for the store."""
    return (_git(Path(root), "rev-parse", "HEAD") or "").strip() if Path(root).is_dir() else ""


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
        judged = [(run_id, when) for run_id, when in runs_of_plan(plan) if run_id not in exempt]
        early = sorted(run_id for run_id, _ in judged if f"{prefix}{run_id}/summary.json" in run_added
                       and run_added[f"{prefix}{run_id}/summary.json"] not in after)
        if early:
            problems.append(f"plan {plan.name}.json: {len(early)} of its runs (e.g. {early[0]}) were committed "
                            f"before or with commit {commit[:10]} that registered it: not blind")
            continue
        date = _commit_date(top, commit)
        why = _dates_disagree(plan, commit, date, judged)
        shown = date.strftime("%Y-%m-%dT%H:%M:%SZ") if date is not None else ""
        histories[plan.name] = History(NOT_PROVEN, why, commit, shown) if why else History(PROVEN, "", commit, shown)
    return histories, problems


def _commit_date(top: Path, commit: str) -> datetime | None:
    """The committer date of `commit` (when it entered a history: a rebase or a history made today moves it), UTC."""
    out = (_git(top, "show", "-s", "--format=%ct", commit) or "").strip()
    return datetime.fromtimestamp(int(out), timezone.utc) if out.isdigit() else None


def _dates_disagree(plan: Plan, commit: str, date: datetime | None, judged) -> str:
    """Why the registering commit's date does not prove the plan came first ('' when it does): it must lie within
    COMMIT_WITHIN of the plan's registered_at, and at or before every judged run's trained_at (whole seconds)."""
    if date is None:
        return f"git gives no date for its registering commit {commit[:10]}"
    registered = plan.registered()
    if not registered - CLOCK_SKEW <= date <= registered + COMMIT_WITHIN:
        return (f"its registering commit {commit[:10]} is dated {date:%Y-%m-%dT%H:%M:%SZ}, not within "
                f"{COMMIT_WITHIN.seconds // 60} minutes after its registered_at {plan.registered_at}")
    undated = sorted(run_id for run_id, when in judged if when is None)
    if undated:
        return (f"{len(undated)} of its runs (e.g. {undated[0]}) have no trained_at: their order against commit "
                f"{commit[:10]} cannot be shown")
    early = sorted((when, run_id) for run_id, when in judged if _time(when) is None or _time(when) < date)
    if early:
        return (f"{len(early)} of its runs (e.g. {early[0][1]}, trained_at {early[0][0]}) were trained before its "
                f"registering commit {commit[:10]} dated {date:%Y-%m-%dT%H:%M:%SZ}")
    return ""


def _time(value: str) -> datetime | None:
    try:
        return trained_at(value)
    except ValueError:
        return None


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
