"""Registered plans: which questions are judged at which looks, on which random seeds, written to a file
with a sha256 before the runs it judges (a trial protocol; registered reports).

A plan file is JSON in `<store>/plans/NAME.json`; `<store>/plans/SHA256SUMS` (the `sha256sum` format,
`sha256sum -c SHA256SUMS` checks it) holds the hash it was registered with. A registered plan never
changes: a file whose hash moved is named by `check` and judges nothing; a change is a new plan. The
built-in plan (the 20 questions of issue 26, random seeds 0-39) ships beside this module with its true
history: written down on 2026-12-02 from the commits that made it, registered at its last rule change,
with the run ids that were on disk then.

    python -m vitcore plan register mine --vary depth=1,4 --rows 1000 --seeds 100-119 --looks 10,20
    python -m vitcore plans --out out/            # plans.csv, questions.csv
    python -m vitcore sweep plan mine --workers 2 # train it until decided, resumable

A question is a single-field change of a base config at one train_rows, on the plan's metric; its
family is the registry's (vitcore.stats.families); look n uses the plan's first n random seeds. A run is
"seen before the plan" when it was trained before the plan's registered_at (summary.json's trained_at),
or when it has no trained_at (trained before those were recorded) and the plan does not list what was on
disk when it was registered; the built-in plan lists that. No pandas, no TensorFlow.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from dataclasses import field as attribute
from datetime import datetime
from functools import lru_cache

from vitcore.config import switches
from vitcore.config.metrics import known
from vitcore.config.run import DEFAULTS, RunConfig
from vitcore.stats import plan_settings
from vitcore.stats.plan_settings import SETTINGS
from vitcore.store.timing import now_utc, trained_at
from vitcore.store.upkeep import PLANS

FORMAT = 1
FOLDER = PLANS                   # in a store
SUMS = "SHA256SUMS"              # beside the plan files
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
MAX_BYTES = 1 << 20              # a plan file is a few KB; larger is refused unread
METRICS = known("test_accuracy")  # a plan's metric (the others of a planned comparison stay fixed-sample)
SPENDING = "kim-demets power"    # alpha * t^rho (vitcore.stats.plan.spent)
FAMILY_RULE = "registry"         # one switch's registry levels against the base (vitcore.stats.families)


class PlanError(ValueError):
    """A plan file or a registration that is not what it must be: says what, and what is allowed."""


@dataclass(frozen=True)
class Question:
    """One planned comparison: `base` (seed 0, its train_rows) changed in `field` to `level`."""
    base: RunConfig
    field: str
    level: object

    @property
    def variant(self) -> RunConfig:
        return self.base.replace(**{self.field: self.level})

    @property
    def train_rows(self) -> int:
        return self.base.train_rows

    @property
    def name(self) -> str:
        """'patch_size=2' (the base's other changes from the article's ViT after a '|')."""
        changes = _changes(self.base)
        return f"{self.field}={self.level}" + (f" | base {_words(changes)}" if changes else "")

    def to_json(self) -> dict:
        return {"base": _changes(self.base), "train_rows": self.train_rows, "field": self.field, "level": self.level}


@dataclass(frozen=True)
class Plan:
    """A registered plan (see the module docstring); `sha256` is its file's, as registered."""
    name: str
    registered_at: str
    questions: tuple[Question, ...] = attribute(repr=False)
    first_seed: int = 0
    looks: tuple[int, ...] = (10, 20, 30, 40)
    caps: tuple[tuple[str, object, int], ...] = ()   # (field, level, cap): fewer looks for a slow variant
    margin: float = 0.01
    alpha: float = 0.05
    rho: float = 1.0
    metric: str = "test_accuracy"
    confirms: str | None = None                      # the discovery plan this one replicates on fresh seeds
    note: str = attribute(default="", repr=False)
    on_disk: frozenset[str] | None = attribute(default=None, repr=False)  # run ids on disk at registration (built-in)
    sha256: str = ""
    # SETTINGS (None / () / "": absent from the file, today's defaults): the test-image term, the replication rule,
    # each question's family size m (in question order), the random seeds of a fixed-sample discovery, the code
    test_images: str | None = None
    replication: str | None = None
    family_sizes: tuple[int, ...] = attribute(default=(), repr=False)
    discovery_seeds: tuple[int, int] | None = None
    code_version: str = ""

    @property
    def last_seed(self) -> int:
        return self.first_seed + self.looks[-1] - 1

    @property
    def seeds_text(self) -> str:
        return f"{self.first_seed}-{self.last_seed}"

    def looks_of(self, question: Question) -> tuple[int, ...]:
        cap = next((c for f, lv, c in self.caps if f == question.field and lv == question.level), self.looks[-1])
        return tuple(n for n in self.looks if n <= cap)

    def question_of(self, base: RunConfig, variant: RunConfig) -> Question | None:
        """The plan's question comparing these two configs (seeds ignored), else None."""
        key = (base.config_id, variant.config_id)
        return self._index().get(key)

    def _index(self) -> dict:
        return _index(self)

    def registered(self) -> datetime:
        return trained_at(self.registered_at)

    def seen(self, run_id: str, trained: str | None) -> bool:
        """Whether a run was trained before this plan was registered (see the module docstring)."""
        if trained is None or trained != trained:  # None or NaN: trained before trained_at was recorded
            return self.on_disk is None or run_id in self.on_disk
        return trained_at(trained) < self.registered()

    def to_json(self) -> dict:
        data = {"format": FORMAT, "name": self.name, "registered_at": self.registered_at, "note": self.note,
                "confirms": self.confirms, "metric": self.metric, "margin": self.margin, "alpha": self.alpha,
                "looks": list(self.looks), "caps": [{"field": f, "level": lv, "cap": c} for f, lv, c in self.caps],
                "spending": {"function": SPENDING, "rho": self.rho}, "family": FAMILY_RULE,
                "seeds": {"first": self.first_seed, "last": self.last_seed},
                "questions": [q.to_json() for q in self.questions]}
        if self.on_disk is not None:
            data["on_disk_at_registration"] = sorted(self.on_disk)
        for name in SETTINGS:
            value = getattr(self, name)
            if value:
                data[name] = list(value) if isinstance(value, tuple) else value
        return data

    def family_size(self, question: Question) -> int | None:
        """m of a question as the plan registered it (None: not in the file; the registry's, as today)."""
        return self.family_sizes[self.questions.index(question)] if self.family_sizes else None

    def text(self) -> str:
        """The file's text, as registered (its sha256 is this text's)."""
        return json.dumps(self.to_json(), indent=1, ensure_ascii=True) + "\n"


@lru_cache(maxsize=32)
def _index(plan: Plan) -> dict:
    return {(q.base.config_id, q.variant.config_id): q for q in plan.questions}


def _changes(cfg: RunConfig) -> dict:
    """The fields of `cfg` off the article's ViT's defaults, but its seed and train_rows."""
    return {k: v for k, v in dataclasses.asdict(cfg).items()
            if k not in ("seed", "train_rows") and v != DEFAULTS[k]}


def _words(changes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in changes.items())


def questions_of(vary: list[tuple[str, tuple]], rows: tuple[int, ...],
                 base: dict | None = None) -> tuple[Question, ...]:
    """The questions of `sweep --vary`'s words: each field's levels other than the base's, one at a time, at
    every train_rows (rows outer, as the grids order them); PlanError for a field the ViT has not or a
    level RunConfig refuses."""
    out = []
    for count in rows:
        try:
            centre = RunConfig(train_rows=count, **(base or {}))
        except (TypeError, ValueError) as error:
            raise PlanError(f"--base: {error}") from None
        for field, levels in vary:
            if field not in switches.SWITCH or not switches.SWITCH[field].applies("vit"):
                raise PlanError(f"a plan varies a field of the ViT, one of {', '.join(switches.NAMES)}; got {field!r}")
            for level in levels:
                if level == getattr(centre, field):
                    continue
                question = Question(centre, field, level)
                try:
                    question.variant
                except ValueError as error:
                    raise PlanError(f"{field}={level}: {error}") from None
                out.append(question)
    if not out:
        raise PlanError("the plan has no question: --vary a field to a level other than the base's")
    return tuple(dict.fromkeys(out))


def _question(item: dict) -> Question:
    if not isinstance(item, dict) or set(item) != {"base", "train_rows", "field", "level"}:
        raise PlanError(f"a question is {{base, train_rows, field, level}}; got {item!r:.200}")
    try:
        base = RunConfig(train_rows=item["train_rows"], **item["base"])
        question = Question(base, item["field"], item["level"])
        question.variant
    except (TypeError, ValueError) as error:
        raise PlanError(f"question {item!r:.200}: {error}") from None
    return question


def parse(text: str, sha256: str = "") -> Plan:
    """A plan from its file's text; PlanError naming the first thing that is not as `Plan.to_json` writes it."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise PlanError(f"not JSON ({error})") from None
    want = {"format", "name", "registered_at", "note", "confirms", "metric", "margin", "alpha", "looks", "caps",
            "spending", "family", "seeds", "questions"}
    if not isinstance(data, dict) or not want <= set(data) <= want | {"on_disk_at_registration", *SETTINGS}:
        raise PlanError(f"a plan file holds exactly {', '.join(sorted(want))} (and on_disk_at_registration, "
                        f"{', '.join(SETTINGS)})")
    if data["format"] != FORMAT or data["family"] != FAMILY_RULE or data["metric"] not in METRICS:
        raise PlanError(f"format {FORMAT}, family {FAMILY_RULE!r} and metric one of {METRICS} are allowed")
    if not isinstance(data["spending"], dict) or data["spending"].get("function") != SPENDING:
        raise PlanError(f"spending is {{function: {SPENDING!r}, rho}}")
    seeds = data["seeds"]
    try:
        settings = plan_settings.read(data)
    except ValueError as error:
        raise PlanError(str(error)) from None
    try:
        caps = tuple((c["field"], c["level"], int(c["cap"])) for c in data["caps"])
        plan = Plan(name=str(data["name"]), registered_at=str(data["registered_at"]), first_seed=int(seeds["first"]),
                    questions=tuple(_question(q) for q in data["questions"]),
                    looks=tuple(int(n) for n in data["looks"]),
                    caps=caps, margin=float(data["margin"]), alpha=float(data["alpha"]),
                    rho=float(data["spending"]["rho"]), metric=data["metric"], confirms=data["confirms"],
                    note=str(data["note"]),
                    on_disk=frozenset(map(str, data["on_disk_at_registration"]))
                    if "on_disk_at_registration" in data else None, sha256=sha256, **settings)
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, PlanError):
            raise
        raise PlanError(f"malformed field ({error!r:.200})") from None
    check(plan)
    if seeds.get("last") != plan.last_seed:
        raise PlanError(f"seeds.last must be first + the last look - 1 ({plan.last_seed})")
    return plan


def check(plan: Plan) -> None:
    """PlanError unless the plan's own numbers are allowed."""
    if not NAME.fullmatch(plan.name):
        raise PlanError(f"a plan's name is 1-40 of a-z, 0-9, '-' and '_', starting with a letter or digit; "
                        f"got {plan.name!r}")
    looks = plan.looks
    if not looks or any(n < 2 for n in looks) or list(looks) != sorted(set(looks)):
        raise PlanError(f"looks are increasing whole numbers of paired random seeds, each at least 2; got {looks}")
    if not 0 < plan.margin < 1 or not 0 < plan.alpha < 1 or not 0 < plan.rho <= 10:
        raise PlanError("margin and alpha are between 0 and 1, rho between 0 and 10")
    if not 0 <= plan.first_seed or plan.last_seed > 2**31 - 1:
        raise PlanError("the plan's random seeds are whole numbers from 0")
    trained_at(plan.registered_at)
    if plan.confirms is not None and not NAME.fullmatch(str(plan.confirms)):
        raise PlanError(f"confirms names a plan; got {plan.confirms!r}")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make(name: str, vary, rows, seeds: tuple[int, int], looks=(10, 20, 30, 40), margin: float = 0.01, base=None,
         caps=(), confirms: str | None = None, note: str = "") -> Plan:
    """A new plan, registered now (not yet written: `register`); PlanError for anything not allowed."""
    looks = tuple(looks)
    check(Plan(name=name, registered_at=now_utc(), questions=(), first_seed=seeds[0], looks=looks, margin=margin))
    if seeds[1] - seeds[0] + 1 != looks[-1]:
        raise PlanError(f"--seeds {seeds[0]}-{seeds[1]} gives {seeds[1] - seeds[0] + 1} random seeds; the last look "
                        f"needs exactly {looks[-1]} (e.g. {seeds[0]}-{seeds[0] + looks[-1] - 1})")
    plan = Plan(name=name, registered_at=now_utc(), questions=questions_of(vary, rows, base), first_seed=seeds[0],
                looks=looks, caps=tuple(caps), margin=margin, confirms=confirms, note=note)
    check(plan)
    return plan
