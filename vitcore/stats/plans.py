"""Registered plans: which questions are judged at which looks, on which random seeds, written to a file
with a sha256 before the runs it judges (a trial protocol; registered reports).

A plan file is JSON in `<store>/plans/NAME.json`; `<store>/plans/SHA256SUMS` (the `sha256sum` format,
`sha256sum -c SHA256SUMS` checks it) holds the hash it was registered with. A registered plan never
changes: a file whose hash moved is named by `check` and judges nothing; a change is a new plan. The
built-in plan (20 single-switch questions, random seeds 0-39) ships beside this module with its true
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
from vitcore.stats.hostile_json import (  # noqa: F401 (PlanError: the plans' error, raised here too)
    PlanError,
    fields,
    items,
    number,
    read_json,
    same_kind,
    shown,
    whole,
    words,
)
from vitcore.store.timing import now_utc, trained_at
from vitcore.store.upkeep import PLANS

FORMAT = 1
FOLDER = PLANS                   # in a store
SUMS = "SHA256SUMS"              # beside the plan files
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
METRICS = known("test_accuracy")  # a plan's metric (the others of a planned comparison stay fixed-sample)
SPENDING = "kim-demets power"    # alpha * t^rho (vitcore.stats.plan.spent)
FAMILY_RULE = "registry"         # one switch's registry levels against the base (vitcore.stats.families)
# The bounds of a plan that can be trained (`check`): the built-in plan asks for 22 configs x 40 seeds = 880 runs
# in 4 looks. The cheapest run (the article's ViT, 1,000 rows) takes 5-10 CPU-s, so MAX_RUNS is 1-2 CPU-days
# at the least; `sweep plan` holds one look's configs at a time, at most MAX_RUNS of them.
MAX_LOOKS = 20                   # interim analyses: alpha spent over more looks buys almost nothing
MAX_SEEDS = 1_000                # paired random seeds at the last look (the built-in plan: 40)
MAX_RUNS = 20_000                # runs at the last look: distinct configs of the questions x the last look
BOUND_WHY = "20,000 runs of even the cheapest config are 1-2 CPU-days"
# Every question is judged on every page load (a paired test per look): the count is bounded before any question is
# built, so a file of 15,000 copies of one question is refused in a millisecond, never evaluated (343 s before).
MAX_QUESTIONS = 300              # the built-in plan asks 20, the confirmation 28; every switch level x 20 row counts
MAX_NOTE = 4_000                 # characters of a note (the built-in plan's: 617)


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
    # SETTINGS (None / () / "": absent from the file, read as today's defaults)
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
        return _index(self).get((base.config_id, variant.config_id))

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


def asked(field: str, level, base_level) -> None:
    """PlanError unless `field` is a registry switch of the ViT and `level` one of its levels other than the base's
    (a plan asks what the registry offers: a field no switch has, e.g. the random seed, is no question)."""
    switch = switches.SWITCH.get(field)
    if switch is None or not switch.applies("vit"):
        raise PlanError(f"a question's field is a switch of the ViT, one of {', '.join(switches.NAMES)}; "
                        f"got {shown(field)}")
    if isinstance(level, bool) or level not in switch.levels or type(level) is not type(switch.default) and not (
            isinstance(switch.default, float) and type(level) is int):
        raise PlanError(f"{field}'s levels are {', '.join(map(str, switch.levels))}; got {shown(level)}")
    if level == base_level:
        raise PlanError(f"{field}={level} is its base's own level: a question changes the base")


def _question(item: dict) -> Question:
    if not isinstance(item, dict) or set(item) != {"base", "train_rows", "field", "level"}:
        raise PlanError(f"a question is {{base, train_rows, field, level}}; got {item!r:.200}")
    if not isinstance(item["base"], dict) or {"seed", "train_rows"} & set(item["base"]):
        raise PlanError(f"a question's base is an object of RunConfig fields but seed and train_rows; "
                        f"got {item['base']!r:.200}")
    field = words(item["field"], "a question's field")
    for key, value in {**item["base"], field: item["level"]}.items():
        if key in DEFAULTS:
            same_kind(value, DEFAULTS[key], f"question {item!r:.200}: {key}")
    asked(field, item["level"], item["base"].get(field, DEFAULTS.get(field)))
    try:
        base = RunConfig(train_rows=whole(item["train_rows"], "a question's train_rows"), **item["base"])
        question = Question(base, field, item["level"])
        question.variant
    except (TypeError, ValueError) as error:
        raise PlanError(f"question {item!r:.200}: {error}") from None
    return question


def parse(text: str, sha256: str = "") -> Plan:
    """A plan from its file's text (read as hostile input: read_json below); PlanError naming the first
    thing that is not as `Plan.to_json` writes it."""
    data = read_json(text)
    want = {"format", "name", "registered_at", "note", "confirms", "metric", "margin", "alpha", "looks", "caps",
            "spending", "family", "seeds", "questions"}
    fields(data, want, {"on_disk_at_registration", *SETTINGS})
    if whole(data["format"], "format") != FORMAT or data["family"] != FAMILY_RULE or data["metric"] not in METRICS:
        raise PlanError(f"format {FORMAT}, family {FAMILY_RULE!r} and metric one of {METRICS} are allowed")
    spending, seeds = data["spending"], data["seeds"]
    if not isinstance(spending, dict) or set(spending) != {"function", "rho"} or spending["function"] != SPENDING:
        raise PlanError(f"spending is {{function: {SPENDING!r}, rho}}")
    if not isinstance(seeds, dict) or set(seeds) != {"first", "last"}:
        raise PlanError("seeds is {first, last}")
    asks = items(data["questions"], "questions")
    if len(asks) > MAX_QUESTIONS:  # before any question is built: the work below grows with their number
        raise PlanError(f"a plan asks at most {MAX_QUESTIONS} questions (each is judged at every look on every page "
                        f"load); this one has {len(asks):,}")
    settings = read_settings(data)  # PlanError naming what is not allowed
    caps = []
    if len(items(data["caps"], "caps")) > len(asks):  # each is matched against every question (check)
        raise PlanError(f"a plan has at most one cap per question ({len(asks)}); this one has {len(data['caps']):,}")
    for cap in items(data["caps"], "caps"):
        if not isinstance(cap, dict) or set(cap) != {"field", "level", "cap"}:
            raise PlanError(f"a cap is {{field, level, cap}}; got {cap!r:.200}")
        caps.append((words(cap["field"], "a cap's field"), cap["level"], whole(cap["cap"], "a cap")))
    on_disk = data.get("on_disk_at_registration") if "on_disk_at_registration" in data else ()
    plan = Plan(name=words(data["name"], "name"), registered_at=words(data["registered_at"], "registered_at"),
                first_seed=whole(seeds["first"], "seeds.first"),
                questions=tuple(_question(q) for q in asks),
                looks=tuple(whole(n, "a look") for n in items(data["looks"], "looks")), caps=tuple(caps),
                margin=number(data["margin"], "margin"), alpha=number(data["alpha"], "alpha"),
                rho=number(spending["rho"], "spending.rho"), metric=data["metric"],
                confirms=words(data["confirms"], "confirms", none=True), note=words(data["note"], "note"),
                on_disk=frozenset(words(r, "a run id") for r in items(on_disk, "on_disk_at_registration"))
                if "on_disk_at_registration" in data else None,
                sha256=sha256, **settings)
    check(plan)
    if whole(seeds["last"], "seeds.last") != plan.last_seed:
        raise PlanError(f"seeds.last must be first + the last look - 1 ({plan.last_seed})")
    return plan


def check(plan: Plan) -> None:
    """PlanError unless the plan's own numbers are allowed, within the bounds of a plan that can be trained."""
    if not NAME.fullmatch(plan.name):
        raise PlanError(f"a plan's name is 1-40 of a-z, 0-9, '-' and '_', starting with a letter or digit; "
                        f"got {plan.name!r}")
    if len(plan.questions) > MAX_QUESTIONS:
        raise PlanError(f"a plan asks at most {MAX_QUESTIONS} questions (each is judged at every look on every page "
                        f"load); this one has {len(plan.questions):,}")
    if len(set(plan.questions)) != len(plan.questions):
        twice = next(q for k, q in enumerate(plan.questions) if q in plan.questions[:k])
        raise PlanError(f"the question {twice.name} at {twice.train_rows:,} rows is asked twice: each question once")
    for question in plan.questions:
        asked(question.field, question.level, getattr(question.base, question.field))
    check_note(plan.note)
    looks = plan.looks
    if not looks or any(n < 2 for n in looks) or list(looks) != sorted(set(looks)):
        raise PlanError(f"looks are increasing whole numbers of paired random seeds, each at least 2; got {looks}")
    if len(looks) > MAX_LOOKS or looks[-1] > MAX_SEEDS:
        raise PlanError(f"a plan has at most {MAX_LOOKS} looks and at most {MAX_SEEDS:,} paired random seeds at its "
                        f"last ({BOUND_WHY}); got {len(looks)} looks, the last at {looks[-1]:,}")
    if not 0 < plan.margin < 1 or not 0 < plan.alpha < 1 or not 0 < plan.rho <= 10:
        raise PlanError("margin and alpha are between 0 and 1, rho between 0 and 10")
    if not 0 <= plan.first_seed or plan.last_seed > 2**31 - 1:
        raise PlanError("the plan's random seeds are whole numbers from 0 to 2**31 - 1")
    if len({(field, level) for field, level, _ in plan.caps}) != len(plan.caps):
        raise PlanError("a plan gives each question at most one cap (FIELD=LEVEL once)")
    for field, level, cap in plan.caps:
        if not any(q.field == field and type(q.level) is type(level) and q.level == level for q in plan.questions) \
                or not looks[0] <= cap <= looks[-1]:
            raise PlanError(f"a cap is one of the plan's questions (FIELD=LEVEL) and a whole number from its first "
                            f"look to its last ({looks[0]}-{looks[-1]}); got {field!s:.40}={level!s:.40}:{cap}")
    configs = len({cfg for q in plan.questions for cfg in (q.base, q.variant)})
    if configs * looks[-1] > MAX_RUNS:
        raise PlanError(f"the plan's last look trains {configs:,} configs x {looks[-1]:,} random seeds = "
                        f"{configs * looks[-1]:,} runs; at most {MAX_RUNS:,} are allowed ({BOUND_WHY})")
    try:
        trained_at(plan.registered_at)
    except ValueError as error:
        raise PlanError(f"registered_at: {error}") from None
    if plan.confirms is not None and not NAME.fullmatch(str(plan.confirms)):
        raise PlanError(f"confirms names a plan; got {plan.confirms!r}")
    if plan.confirms == plan.name:
        raise PlanError("confirms names the plan itself: a confirmation replicates another plan on fresh random seeds")


def check_note(text: str) -> None:
    """PlanError unless a note is ASCII text (lines of printable characters, no lone surrogate, no terminal escape)
    of at most MAX_NOTE characters: every view shows it literally."""
    if len(text) > MAX_NOTE:
        raise PlanError(f"a note is at most {MAX_NOTE:,} characters; this one has {len(text):,}")
    if not text.isascii() or not all(line.isprintable() for line in text.split("\n")):
        bad = next(c for c in text if not c.isascii() or not (c.isprintable() or c == "\n"))
        raise PlanError(f"a note is ASCII text, printable lines (the character {ascii(bad)} is not)")


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


# What else decides a plan's verdicts besides its questions, looks and margin: written into every new plan file,
# so no later code change re-reads an old plan (vitcore.stats.plans).
#
#     test_images      the test set's term in test accuracy's interval (vitcore.stats.testset): TEST_IMAGES
#     replication      the rule that says replicated / contradicted / not confirmed (vitcore.stats.replication):
#                      REPLICATION; a file recording the earlier REPLICATION_V1 is read by that rule
#     family_sizes     each question's family size m, in question order (the registry's when the plan was made)
#     discovery_seeds  a confirmation's fixed-sample discovery (questions its confirmed plan does not ask): exactly
#                      these random seeds, [first, last] (absent: the confirmed plan's random seeds)
#     code_version     vitcore's version and git commit when the plan was made (a record; nothing reads it)
#
# The two committed plans (the built-in one and `confirm`) predate these fields: absent, each reads as today's
# default (the values above; the replication rule: REPLICATION_V1, the rule of their day, never a later one), so
# their files and hashes stay as registered. A value this code does not implement
# is refused, never read as something else. No pandas, no TensorFlow.

TEST_IMAGES = "counted where every pair kept predictions"
# The replication rules this code implements (vitcore.stats.replication.outcome): a new plan records REPLICATION; a
# plan file without the field (the two committed ones) predates it and reads as REPLICATION_V1, the rule of its day.
REPLICATION_V1 = "vitcore-1: same claim decided replicates; an excluded claim contradicts"
REPLICATION = ("vitcore-2: size regions first, an excluded region contradicts; every claim shown replicates, "
               "a part of them replicates that part")
REPLICATION_RULES = (REPLICATION, REPLICATION_V1)
SETTINGS = ("test_images", "replication", "family_sizes", "discovery_seeds", "code_version")
MAX_FAMILY = 1_000


def read_settings(data: dict) -> dict:
    """The SETTINGS a plan file holds, checked: only the rules this code implements, m and seeds as whole numbers."""
    out = {}
    for name, allowed in (("test_images", (TEST_IMAGES,)), ("replication", REPLICATION_RULES)):
        if name in data and data[name] not in allowed:
            raise PlanError(f"{name} {data[name]!r:.80} is not a rule this code implements (allowed: "
                            f"{' or '.join(map(repr, allowed))})")
        out[name] = data.get(name)
    sizes, seeds = data.get("family_sizes", []), data.get("discovery_seeds")
    if not isinstance(sizes, list) or not all(type(m) is int and 1 <= m <= MAX_FAMILY for m in sizes) or \
            (sizes and len(sizes) != len(data.get("questions") or ())):
        raise PlanError(f"family_sizes is a whole number from 1 to {MAX_FAMILY:,} per question, in question order")
    if seeds is not None and not (isinstance(seeds, list) and len(seeds) == 2 and all(type(x) is int for x in seeds)
                                  and 0 <= seeds[0] <= seeds[1] <= 2**31 - 1):
        raise PlanError("discovery_seeds is [first, last], whole numbers from 0, first <= last")
    version = data.get("code_version", "")
    if not isinstance(version, str) or len(version) > 80 or not version.isascii() or not version.isprintable():
        raise PlanError("code_version is printable ASCII text of at most 80 characters")
    return {**out, "family_sizes": tuple(sizes), "discovery_seeds": tuple(seeds) if seeds else None,
            "code_version": version}
