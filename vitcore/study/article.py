"""The Study's article-level views: the claims ledger, the headline re-measured, the data-size curve and the
seed-noise split, each computed once per store state (and margin) from the Study's cached comparisons; and its
plans: which plans judge the store, the report of their questions, and the words beside each verdict (lead).

A mixin of vitcore.study.Study (it uses the Study's `runs`, `compare` and `_cached`); results are the
library's own (vitcore.article.claims, vitcore.article.report, vitcore.analysis.scaling, .noise), so they
are the CLI's CSVs and the pages' tables. Frames are handed out as copies: a caller may change its own. A margin
outside (0, 1) is refused (config.metrics.checked_margin); a comparison the store holds no runs of reads "too few
seeds" in these tables (`_lenient`), where a single verdict asked for would be refused.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from vitcore.analysis import noise, pairing, scaling
from vitcore.article import claims, report
from vitcore.config.metrics import checked_margin
from vitcore.config.run import RunConfig
from vitcore.stats import plan_report, plan_store, plans
from vitcore.stats.estimates import MARGIN, TALLY_MARGINS
from vitcore.stats.families import ALONE
from vitcore.study import lead


@dataclasses.dataclass(frozen=True)
class Registered:
    """A plan written into a store (Study.register_plan): its file, the sha256 registered with it, and whether the
    store lies in a git work tree (where a commit can prove the plan came before its runs)."""
    plan: plans.Plan
    path: Path
    sha256: str
    tracked: bool


class ArticleViews:
    def _lenient(self, selection, baseline, margin, metrics):
        """Study.compare for an article table's rows: a claim or size without runs is a row, not an error."""
        return self.compare(selection, baseline, margin, metrics, missing_ok=True)

    def claims(self, margin: float = MARGIN, data_size: bool = True) -> pd.DataFrame:
        """claims.csv (article.claims.claims_table): every claim judged from the cached measurements; the data-size
        and seed-noise rows (which no margin changes) computed once."""
        margin = checked_margin(margin)
        return self._cached(("claims", margin, data_size), lambda: claims.claims_table(
            self.runs, margin, data_size=data_size, test_set=self.test_set, fixed=self._fixed_claims(),
            compare=self._lenient)).copy()

    def tally(self, margins=TALLY_MARGINS) -> pd.DataFrame:
        """The claims' one tally at each margin (article.claims.tally)."""
        margins = tuple(checked_margin(margin) for margin in margins)
        return self._cached(("tally", margins), lambda: claims.tally(
            self.runs, margins, test_set=self.test_set, compare=self._lenient, fixed=self._fixed_claims())).copy()

    def _fixed_claims(self) -> list[dict]:
        return self._cached("claims_fixed", lambda: claims.fixed_rows(self.runs, self.test_set, self._crossover()))

    def _crossover(self):
        """The article's ViT against its convnet along the data-size curve (scaling.crossover_estimate), computed
        once for the ViT vs convnet page and the claims' data-size row (a 2,000-replicate bootstrap each)."""
        return self._cached("crossover", lambda: scaling.crossover_estimate(self.runs, test_set=self.test_set))

    def headline(self, margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
        """(article.report.headline, .headline_deltas, .headline_sentences): the article's ViT − convnet per size."""
        margin = checked_margin(margin)
        table, deltas, sentences = self._cached(("headline", margin), lambda: (
            report.headline(self.runs, self.timing), report.headline_deltas(self.runs, margin, compare=self._lenient),
            report.headline_sentences(self.runs, margin, compare=self._lenient)))
        return table.copy(), deltas.copy(), list(sentences)

    def headline_deltas(self, margin: float = MARGIN) -> pd.DataFrame:
        """article.report.headline_deltas from the cached measurements."""
        return self.headline(margin)[1]

    def write_report(self, out: Path) -> list[str]:
        """headline.csv, headline_deltas.csv and headline.md into `out` (article.report.write_report)."""
        return report.write_report(self.runs, out, self.test_set, compare=self._lenient, timing=self.timing)

    def data_size(self, margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, str]:
        """The data-size curve: (scaling.curve, scaling.deltas, the crossover estimate's sentence and
        scaling.crossover's)."""
        margin = checked_margin(margin)

        def compute():
            deltas = scaling.deltas(self.runs, margin, compare=self._lenient)
            estimate = scaling.crossover_sentence(self._crossover())
            return scaling.curve(self.runs), deltas, f"{estimate} {scaling.crossover(deltas)}"

        curve, deltas, sentence = self._cached(("data_size", margin), compute)
        return curve.copy(), deltas.copy(), sentence

    def crossover_shift(self) -> str:
        """Does the papers' small-data variant move the crossover with the convnet? (scaling.variant_sentence)"""
        return self._cached("crossover_shift", lambda: scaling.variant_sentence(self.runs, self.test_set))

    def noise(self, margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
        """(noise.csv's table, pairing.csv's table, the advice sentences): where the seed noise comes from."""
        margin = checked_margin(margin)

        def compute():
            components, pairing = noise.noise_tables(self.runs, margin=margin)
            return components, pairing, noise.advice(components, pairing, margin)

        components, pairing, advice = self._cached(("noise", margin), compute)
        return components.copy(), pairing.copy(), list(advice)

    def pairing_survey(self) -> tuple[pd.DataFrame, str]:
        """(every stored paired comparison with what pairing by the random seed removes, the advice over all of
        them): analysis.pairing's survey of the whole store, not of one cell, once."""
        def compute():
            table = pairing.survey(self.runs)
            return table, pairing.advice(table)

        table, advice = self._cached("pairing survey", compute)
        return table.copy(), advice

    # -- the plans: which verdict leads, and what follows it ------------------------------------------
    def plans_checked(self) -> plan_report.Checked:
        """The plans that judge this store, the problems of those that judge nothing, git's word on their order and
        whether each is blind (plan_report.checked), once."""
        return self._cached("plans_checked", lambda: plan_report.checked(
            self.runs, self.store.root if self.store is not None else None))

    def _lead_columns(self, selection: RunConfig, baseline: RunConfig, row: dict) -> dict:
        """lead.LEAD_COLUMNS of a judged row of selection − baseline: where its verdict comes from, and the line
        that follows it (a confirmation's discovery and replication; another plan's state)."""
        family = self.family(selection, baseline) if selection.train_rows == baseline.train_rows else ALONE
        checked = self.plans_checked()
        owner = (family.plan or plan_store.builtin()) if family.looks else None
        only_builtin = all(p.name == plan_store.BUILTIN for p in checked.plans)
        report = None if only_builtin or owner is None else self.plan_report()
        return lead.columns(report, checked, selection, baseline, row, owner)

    def _effect_words(self, frame: pd.DataFrame, base: RunConfig | None = None) -> pd.DataFrame:
        """A main-effects frame with the columns that say where each verdict comes from (lead.effect_columns)."""
        return lead.effect_columns(self, frame, base, True)

    def draft_plan(self, name: str, vary, rows, seeds: tuple[int, int], looks=(10, 20, 30, 40), margin: float = 0.01,
                   base=None, caps=(), confirms: str | None = None, note: str = "") -> plans.Plan:
        """A new plan on this store (stats.plans.make's arguments: `python -m vitcore plan register`), checked and with
        everything that decides its verdicts written down (plan_report.settled), not yet written (register_plan).
        Registered on runs this store already holds, it lists them (`on_disk`: every view marks their verdicts
        seen). ValueError (a PlanError) for anything not allowed: a bad field, --confirms naming no plan here, a
        confirmation on random seeds some stored run of its configs used."""
        plan = plans.make(name, vary, rows, seeds, looks, margin, base, caps, confirms, note)
        known = {p.name: p for p in plan_store.load(self.store.root if self.store is not None else None)[0]}
        if plan.confirms is not None and plan.confirms not in known:
            raise ValueError(f"--confirms {plan.confirms!r}: no such plan (plans here: {', '.join(sorted(known))})")
        stored = plan_report.judged_ids(plan, self.runs)
        if len(stored) and plan.confirms is not None:
            raise ValueError(f"a confirmation runs on fresh random seeds: {len(stored)} runs of its configs at "
                             f"random seeds {plan.seeds_text} are stored already (e.g. {stored['run_id'].iloc[0]}); "
                             "pick random seeds no run used")
        if len(stored):  # registered on seen runs: it says so in its file, and every view marks its verdicts seen
            plan = dataclasses.replace(plan, on_disk=frozenset(stored["run_id"]))
        return plan_report.settled(plan, known.get(plan.confirms))

    def register_plan(self, plan: plans.Plan) -> Registered:
        """Write a drafted plan (draft_plan) into the store's plans/ with its sha256 (plan_store.register: never
        replacing one; PlanError when its name is taken). This Study's views stay those of the store it opened:
        open the store again to see the plan judge."""
        if self.store is None:
            raise ValueError("a Study built from a table has no store to register a plan in; use Study.open(path)")
        path = plan_store.register(self.store.root, plan)
        return Registered(plan, path, plans.sha256(plan.text()), plan_report.tracked(self.store.root))

    def plan_report(self):
        """Every plan on this store (the built-in one and the store's registered plans) with each question judged
        at its plan's looks, seen or blind, and a confirmation's discovery beside it (stats.plan_report)."""
        root = self.store.root if self.store is not None else None
        return self._cached("plans", lambda: plan_report.report(self.runs, self.test_set, root, self.plans_checked()))
