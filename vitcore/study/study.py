"""One analysis of one store state, computed once: the Study.

    from vitcore import RunConfig, Study
    study = Study.open("cached_runs")
    study.compare(RunConfig(pos_embedding="none")).metrics          # the Ablations card's numbers
    study.verdicts([(RunConfig(norm="batch"), RunConfig())]).to_frame()

A Study reads the store once (its valid runs' table, the test set's predictions on demand) and keeps
every pairing, estimate and correction family it computes: a comparison is measured once
(vitcore.stats.records.Measurement; effects: summaries.MeasuredEffects) and judged at each margin asked for,
so the claims or the effects at three margins cost one set of estimates. Results are the library's own
(stats.compare, summaries, percell, article.claims, article.report) with the Study's caches passed in, so a
number here is the number in the CLI's CSVs and on the pages. No Streamlit, no TensorFlow; safe to share
between threads (a value computed twice by two threads at once is the same value).
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from pathlib import Path

import pandas as pd

from vitcore.analysis import cost, flips, work
from vitcore.config.environment import NO_STORE, store_path, timing_path
from vitcore.config.metrics import checked, checked_margin
from vitcore.config.run import RunConfig, default_baseline
from vitcore.stats import centres, percell, seconds, summaries, testset
from vitcore.stats import compare as engine
from vitcore.stats.estimates import MARGIN, METRICS
from vitcore.stats.families import ALONE, Family, family_of, neighbours, runs_of
from vitcore.stats.records import Measurement, Verdict
from vitcore.stats.summaries import FLIP_COLUMNS
from vitcore.store.runs import RunStore, StoreWarning
from vitcore.study import lead, shelf
from vitcore.study.article import ArticleViews

KEPT = 4_096  # families, measurements and verdicts kept per kind: every comparison the pages and the CLI make on the
# committed store (the claims at three margins and the effects: 44 measurements), bounded whatever visitors forge
CENTRES = 32  # results of each kind kept around your own centres (a baseline off the article's ViT: _around)


class Verdicts(tuple):
    """A tuple of records.Verdict that turns into one long DataFrame (one row per contrast and metric), with where each
    verdict comes from and the line that follows it (`lead`: lead.columns of each, as every CSV carries them)."""
    lead: tuple = ()

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{**verdict.record(), **words} for verdict, words in zip(self, self.lead or ({},) * len(
            self))])


class Study(ArticleViews):
    """Every analysis of one store state. `runs`: the valid runs (RunStore.table()), `skipped`: {run id:
    why} for the rest. Build it with Study.open(path) (or Study(runs) for a table in hand).

    Its methods, by what they answer (each computed once per store state; a margin is applied last):
        one comparison    verdict, verdicts, compare, measurement, family
        the factorial     effects, main_effects, interactions, cell_effects, cell_spread, flip_effects, effects_of
        the article       claims, tally, headline, headline_deltas, write_report, data_size, crossover_shift,
                          noise, pairing_survey
        the plans         plans_checked, plan_report, draft_plan, register_plan
        the store         runs_of, seed_runs, holds_article, centre, default_baseline, stored, run_frames,
                          confusions, class_rates, flip_report, export_frames, test_set, timing, shelved
        seconds and cost  timed, token_timing_groups, token_seconds, variant_seconds, token_cost, variant_cost,
                          patch_work, work_table
    What no store changes (the committed BatchNorm diagnosis, the attention bench) is vitcore.study.committed's."""

    def __init__(self, runs: pd.DataFrame, store: RunStore | None = None, skipped: dict | None = None):
        self.runs = runs
        self.store = store
        self.skipped = dict(skipped or {})
        self._lock = threading.Lock()
        self._memo: dict = {}
        self._bounded: dict[str, OrderedDict] = {}
        self._computing: dict = {}  # key -> the lock its one computing caller holds

    @classmethod
    def open(cls, path: str | Path | None = None, warn: bool = True) -> Study:
        """The Study of the store at `path` (default: $VITCORE_STORE, else the repository's cached_runs/) as it is
        now; each skipped run folder is warned about (StoreWarning) when `warn`, as RunStore.table() does."""
        store = RunStore(store_path(path))
        scan = store.scan()
        if warn:
            for run_id, reason in scan.skipped.items():
                warnings.warn(f"skipping run {run_id} in {store.root}: {reason}", StoreWarning, stacklevel=2)
        return cls(scan.table(), store, scan.skipped)

    def __repr__(self) -> str:
        where = f"{self.store.root}, " if self.store is not None else ""
        return f"Study({where}{len(self.runs):,} runs)"

    def _cached(self, key, compute, keep: int | None = None):
        """compute() once per key, whatever the number of callers: one computes (outside the study's lock, so one
        slow analysis never blocks another), the others wait for its result; a crowd's sessions arriving at
        once held one copy of the same analysis's temporaries each. `keep`: hold at most that many results of
        this kind (key[0]), the least recently used dropped first: what grows with the selections visitors
        make (per-run frames, flipped images), so a long-lived server stays bounded."""
        memo = self._memo if keep is None else self._bounded.setdefault(key[0], OrderedDict())
        with self._lock:
            if key in memo:
                if keep is not None:
                    memo.move_to_end(key)
                return memo[key]
            computing = self._computing.setdefault(key, threading.Lock())
        with computing:
            with self._lock:
                if key in memo:  # computed by the caller this one waited for
                    return memo[key]
            try:
                value = compute()
                with self._lock:
                    value = memo.setdefault(key, value)
                    while keep is not None and len(memo) > keep:
                        memo.popitem(last=False)
                    return value
            finally:
                with self._lock:
                    self._computing.pop(key, None)

    # -- what every analysis shares ----------------------------------------------------------------
    @property
    def test_set(self):
        """The store's vitcore.stats.testset.TestSet (None without a store): test accuracy's verdicts
        include the test set's sampling wherever the runs kept predictions."""
        if self.store is None:
            return None
        return self._cached("test_set", lambda: testset.from_store(self.store))

    @property
    def timing(self) -> pd.DataFrame:
        """The valid runs of the store's dedicated timing set (`timing_runs/` beside it, vitcore.analysis.timing;
        empty when it is not trained): seconds only, never an accuracy comparison (its runs repeat the store's
        configs and random seeds). vitcore.stats.seconds.with_timing_set adds them where a seconds mean is taken."""
        folder = None if self.store is None else timing_path(self.store.root)
        if folder is None:
            return self.runs.iloc[:0]
        return self._cached("timing", lambda: RunStore(folder).scan().table())

    def run_frames(self, run_ids) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(histories, confusions) of just these runs, in the store's long formats (RunStore.histories /
        confusions): a view needs a few runs, not the store. A run damaged since the scan is warned about and
        left out."""
        ids = tuple(sorted(set(run_ids)))
        if self.store is None:
            return RunStore(NO_STORE).frames([])

        return self._cached(("frames", ids), lambda: self.store.frames(ids), keep=64)

    def confusions(self, configs) -> pd.DataFrame:
        """RunStore.confusions() restricted to the runs of `configs` (what compare's per-class Δs need)."""
        return self.run_frames([run_id for cfg in configs for run_id in runs_of(self.runs, cfg)["run_id"]])[1]

    def family(self, a: RunConfig, b: RunConfig) -> Family:
        """The correction family of a vs b (families.family_of), once per pair of configs, judged by the first plan
        that asks it in the store's lead order (blind plans git proves first: plan_report.Checked.lead)."""
        if a.train_rows != b.train_rows:
            return ALONE
        key = ("family", *sorted((a.config_id, b.config_id)))
        return self._cached(key, lambda: family_of(self.runs, a, b, lead.started(self.plans_checked(), self.runs,
                                                                                   a, b)), keep=KEPT)

    def stored(self, selection: RunConfig, baseline: RunConfig, spell=None) -> None:
        """ValueError when a side has no runs here (as the CLI's `compare`): not "too few seeds" but nothing run; it
        says what to ask instead (`_missing_hint`, each side's fields written as `spell[side]` says, e.g. the CLI's
        '--epochs 2')."""
        held = self._cached("config ids", lambda: frozenset(self.runs["config_id"].unique()))  # runs_of: per verdict
        for side, cfg in (("selection", selection), ("baseline", baseline)):
            if cfg.config_id not in held:
                where = f" in {self.store.root}" if self.store is not None else ""
                raise ValueError(f"no runs of the {side}, {cfg.label()} at {cfg.train_rows:,} rows,{where} "
                                 f"({self._missing_hint(cfg, (spell or {}).get(side))})")

    def _missing_hint(self, cfg: RunConfig, spell=None) -> str:
        """What to ask instead of cfg when it has no runs: in a store of your own study (no article's ViT), the fields
        every run holds at one value and those it varies (stats.centres.missing_hint, `spell` writing each field as
        the caller takes it: 'epochs=2' or '--epochs 2'); in a store of the built-in grids, where to see them."""
        if self.store is not None and not self.store.root.is_dir():
            return f"no folder at {self.store.root}: check the path (or $VITCORE_STORE)"
        if len(self.runs) and not self.holds_article():
            return centres.missing_hint(self.runs, cfg, spell)
        return "`python -m vitcore sweep --list` shows what the grids train"

    def measurement(self, selection: RunConfig, baseline: RunConfig, metric: str) -> Measurement:
        """selection − baseline on `metric`, before any margin (stats.compare.measure), once; seconds see the
        dedicated timing set too (`timing`: its interleaved pairs on a quiet machine are their best basis).
        ValueError for a metric name no Δ is taken over (config.metrics.JUDGED) or a side with no runs."""
        (metric,) = checked(metric)
        self.stored(selection, baseline)
        return self._measured(selection, baseline, metric)

    def _measured(self, selection: RunConfig, baseline: RunConfig, metric: str) -> Measurement:
        key = ("measure", selection.config_id, baseline.config_id, metric)
        return self._cached(key, lambda: engine.measure(  # seconds: the timing set joined once, not per Δ
            self._with_timing() if metric == "seconds" else self.runs, selection, baseline, metric,
            self.family(selection, baseline), self.test_set), keep=KEPT)

    def verdict(self, selection: RunConfig, baseline: RunConfig | None = None, metric: str = "test_accuracy",
                margin: float = MARGIN) -> Verdict:
        """One contrast on one metric judged at `margin` (records.Verdict), once per margin: a page that shows the
        same verdicts on every run (the landing's forest plot, the flip table) judges them once. ValueError for a
        bad metric or margin (config.metrics: the CLI's rules) or a side with no runs (`stored`)."""
        baseline = baseline or self.default_baseline(selection)
        margin, (metric,) = checked_margin(margin), checked(metric)
        self.stored(selection, baseline)
        key = ("verdict", selection.config_id, baseline.config_id, metric, margin)
        return self._cached(key, lambda: self._measured(selection, baseline, metric).judged(margin), keep=KEPT)

    def verdicts(self, pairs, metrics=METRICS, margin: float = MARGIN) -> Verdicts:
        """Every (selection, baseline) in `pairs` on every metric, judged at `margin`: .to_frame() for a DataFrame."""
        metrics = checked(metrics)
        verdicts = Verdicts(self.verdict(sel, base, metric, margin) for sel, base in pairs for metric in metrics)
        verdicts.lead = tuple(self._lead_columns(v.contrast.selection, v.contrast.baseline, v.row()) for v in verdicts)
        return verdicts

    # -- the views' tables -------------------------------------------------------------------------
    def compare(self, selection: RunConfig, baseline: RunConfig | None = None, margin: float = MARGIN,
                metrics=METRICS, confusions: pd.DataFrame | None = None, missing_ok: bool = False) -> engine.Comparison:
        """stats.compare.compare over the store, from the cached measurements; `confusions` (RunStore.confusions
        format, at least these two configs' runs) adds the per-class and confusion-matrix Δs. ValueError for a bad
        metric or margin, or a side with no runs unless `missing_ok` (a page's selection not trained yet, an
        article claim the store cannot judge: every Δ "too few seeds")."""
        baseline = baseline or self.default_baseline(selection)
        margin, metrics = checked_margin(margin), checked(metrics)
        if not missing_ok:
            self.stored(selection, baseline)
        measured = [self._measured(selection, baseline, metric) for metric in metrics]
        result = engine.judged(measured, margin, self.runs, confusions)
        lead_rows = [self._lead_columns(selection, baseline, row) for row in result.metrics.to_dict("records")]
        for name in lead.LEAD_COLUMNS:
            result.metrics[name] = [said[name] for said in lead_rows]
        return result

    def flip_effects(self, cfg: RunConfig, margin: float = MARGIN, metrics=METRICS) -> pd.DataFrame:
        """summaries.flip_effects (cfg against each single-switch change of it) from the cached measurements."""
        margin, metrics = checked_margin(margin), checked(metrics)
        if runs_of(self.runs, cfg).empty or cfg.model != "vit":
            return pd.DataFrame(columns=FLIP_COLUMNS)
        rows = []
        for switch, level, flipped in neighbours(self.runs, cfg):
            for metric in metrics:
                row = self.verdict(flipped, cfg, metric, margin).row()
                row = {k: row[k] for k in FLIP_COLUMNS if k in row}
                rows.append({"switch": switch, "from": getattr(cfg, switch), "to": level, **row,
                             "variant_config_id": flipped.config_id, **self._lead_columns(flipped, cfg, row)})
        return pd.DataFrame(rows, columns=FLIP_COLUMNS)

    def main_effects(self, metrics=METRICS, margin: float = MARGIN, cells: str = "", base: RunConfig | None = None
                     ) -> pd.DataFrame:
        """summaries.main_effects over the factorial grid (`cells`: one of stats.percell.SUBSETS), measured once;
        around `base` (your own study's centre) when given, as `effects`."""
        return self._effects("main", metrics, margin, cells, base).copy()

    def interactions(self, metrics=METRICS, margin: float = MARGIN, cells: str = "", base: RunConfig | None = None
                     ) -> pd.DataFrame:
        """summaries.interactions (two-way), measured once, judged once per margin; around `base` when given."""
        return self._effects("interactions", metrics, margin, cells, base).copy()

    def _effects(self, kind: str, metrics, margin: float, cells: str, base: RunConfig | None = None) -> pd.DataFrame:
        metrics, margin, cells = checked(metrics), checked_margin(margin), cells or percell.ALL  # the API's rules
        lead_order = self.plans_checked().lead()
        measured = self._around((f"{kind} measured", metrics, cells), lambda: (
            summaries.measure_main_effects(percell.restrict(self.runs, cells), metrics, self.test_set, base, lead_order)
            if kind == "main" else summaries.measure_interactions(percell.restrict(self.runs, cells), metrics,
                                                                   self.test_set, base)), base)  # once, any margin
        return self._around((kind, metrics, margin, cells), lambda: lead.effect_columns(
            self, measured.judged(margin), base, kind == "main"), base)

    def effects(self, margin: float = MARGIN, base: RunConfig | None = None) -> pd.DataFrame:
        """effects.csv: the main effects with their per-cell spread (percell.with_spread), around the article's ViT or
        `base` (your own study's centre, e.g. RunConfig(epochs=5): its fields are the reference, not its rows)."""
        cells, margin = self.cell_effects(METRICS, base=base), checked_margin(margin)
        return self._around(("effects", margin), lambda: percell.with_spread(
            self._effects("main", tuple(METRICS), margin, "", base), cells), base).copy()

    def cell_effects(self, metrics=METRICS, interactions: bool = False, cells: str = "",
                     base: RunConfig | None = None) -> pd.DataFrame:
        """stats.percell.cell_effects: each effect (or interaction) in each cell of the other switches, around base."""
        metrics, cells = checked(metrics), cells or percell.ALL
        return self._around(("cell_effects", tuple(metrics), interactions, cells), lambda: (
            percell.cell_effects(percell.restrict(self.runs, cells), tuple(metrics), interactions, base)), base).copy()

    def effects_of(self, run_ids, margin: float = MARGIN, base: RunConfig | None = None) -> pd.DataFrame:
        """effects.csv computed from just these runs (the Runs page's shown set), in the CLI's columns: the main
        effects with their per-cell spread (percell.effects_with_spread), around `base` when given, each verdict
        from the plan that leads it on the whole store (as `effects` says). Once per set of runs, margin and base."""
        ids, margin = tuple(sorted(set(run_ids))), checked_margin(margin)

        def compute():
            shown = self.runs[self.runs["run_id"].isin(set(ids))]
            return percell.effects_with_spread(shown, margin=margin, test_set=self.test_set, base=base,
                                               plans=self.plans_checked().lead(),
                                               words=lambda frame: self._effect_words(frame, base))

        key = ("effects of", ids, margin, None if base is None else base.config_id)
        return self._cached(key, compute, keep=8).copy()

    def shelved(self, name: str, compute, store_key: str) -> pd.DataFrame:
        """compute(study) (a DataFrame) once per store state, kept in memory (at most shelf.KEPT results: visitors
        pick many configs) and under the store (vitcore.study.shelf, `store_key`: the caller's key of the store's
        state, the app's store_mtime), so a restarted server reads what the last one computed instead of computing
        it again; a copy a caller may change."""
        root = self.store.root if self.store is not None else None
        return self._cached(("kept", name), lambda: shelf.kept(
            root, root and shelf.state_key(root, store_key), name, lambda: compute(self)), keep=shelf.KEPT).copy()

    def _around(self, key: tuple, compute, base: RunConfig | None):
        """_cached under key; around your own centre (a ViT) at most CENTRES of each kind, whatever is picked."""
        if base is None:
            return self._cached(key, compute)
        if base.model != "vit":
            raise ValueError(f"main effects are the ViT's switches: base must be a ViT, got the {base.model}")
        return self._cached((f"{key[0]} around", *key[1:], base.config_id), compute, keep=CENTRES)

    def cell_spread(self, metrics=METRICS, interactions: bool = False, cells: str = "",
                    base: RunConfig | None = None) -> pd.DataFrame:
        """percell.spread of `cell_effects`: per effect, how its cells spread and whether they disagree in sign."""
        metrics, cells = checked(metrics), cells or percell.ALL
        return self._around(("cell spread", tuple(metrics), interactions, cells), lambda: percell.spread(
            self.cell_effects(metrics, interactions, cells, base)), base).copy()

    # -- what the store holds ----------------------------------------------------------------------
    def runs_of(self, cfg: RunConfig) -> pd.DataFrame:
        """The valid runs of cfg at every random seed (families.runs_of), a copy a caller may change."""
        return runs_of(self.runs, cfg).copy()

    def holds_article(self) -> bool:
        """Whether the store has runs of the article's ViT at 4,000 rows (stats.centres.holds_article)."""
        return self._cached("holds article", lambda: centres.holds_article(self.runs))

    def centre(self) -> RunConfig | None:
        """Your own study's centre (stats.centres.store_centre), or None when the store holds the article's ViT or
        no run: the config the sidebar selects and compares with when no URL says otherwise."""
        return self._cached("centre", lambda: centres.store_centre(self.runs) if len(self.runs) and
                            not self.holds_article() else None)

    def default_baseline(self, selection: RunConfig) -> RunConfig:
        """What `selection` is compared with unless told otherwise (stats.centres.default_baseline): the article's ViT
        at its rows, or in a store of your own study without it, that study's centre at its rows."""
        centre = self.centre()
        return default_baseline(selection) if centre is None else centre.replace(train_rows=selection.train_rows)

    def seed_runs(self) -> pd.DataFrame:
        """The runs whose data sample, initial weights and batch order all come from the random seed
        (summaries.random_seed_runs: all but `sweep noise`'s crossed cells), a copy a caller may change."""
        return summaries.random_seed_runs(self.runs).copy()

    def class_rates(self, run_ids):
        """The (10, 10) row-normalised test rates averaged over these runs (compare.mean_rates of their confusions)."""
        ids = list(run_ids)
        return engine.mean_rates(self.run_frames(ids)[1], ids)

    # -- seconds and the token cost: what a change costs ----------------------------------------------

    def timed(self, cfg: RunConfig | None = None) -> tuple[pd.DataFrame, str]:
        """(cfg's runs of one timing group, that group; every run's when cfg is None): what a seconds mean is taken
        over (stats.seconds.one_group), the dedicated timing set's group first, never a mean pooled across groups."""
        runs = self.runs if cfg is None else runs_of(self.runs, cfg)
        return seconds.one_group(seconds.with_timing_set(runs, self.timing))

    def _with_timing(self) -> pd.DataFrame:
        """The store's runs and its timing set's runs of their configs (stats.seconds.with_timing_set): seconds only."""
        return self._cached("with timing", lambda: seconds.with_timing_set(self.runs, self.timing))

    def token_timing_groups(self) -> list[str]:
        """The timing groups with a tokens grid (the article's ViT at several patch sizes), best basis first
        (analysis.cost.tokens_timing_groups)."""
        return list(self._cached("token groups", lambda: cost.tokens_timing_groups(self._with_timing())))

    def token_seconds(self, group: str) -> pd.DataFrame:
        """Training seconds per patch size within one timing group (analysis.cost.tokens_grid_seconds)."""
        runs = self._with_timing()
        return self._cached(("token seconds", group), lambda: cost.tokens_grid_seconds(
            runs[runs["timing_group"] == group]), keep=CENTRES).copy()

    def variant_seconds(self) -> pd.DataFrame:
        """Training seconds of the article's ViT and each paper variant, per timing group (cost.variant_seconds)."""
        return self._cached("variant seconds", lambda: cost.variant_seconds(self._with_timing())).copy()

    def token_cost(self, image: int | None = None, patch: int | None = None):
        """The source article's 'Token count is the price' table, computed (analysis.cost.token_cost_table); with
        `image` and `patch`, that one row as a dict (ValueError when the patches do not tile the image)."""
        if image is not None or patch is not None:
            return cost.token_cost(image, patch)
        return self._cached("token cost", cost.token_cost_table).copy()

    def variant_cost(self) -> pd.DataFrame:
        """What each paper's change costs the article's ViT, computed from the configs (cost.variant_cost_table)."""
        return self._cached("variant cost", cost.variant_cost_table).copy()

    def patch_work(self) -> pd.DataFrame:
        """Multiply-adds per image by patch size, counted from the config (analysis.work.patch_work)."""
        return self._cached("patch work", work.patch_work).copy()

    def work_table(self, cfg: RunConfig) -> pd.DataFrame:
        """One image's forward pass of cfg, multiply-add by multiply-add (analysis.work.work_table): exact from the
        config, the deterministic measure of compute."""
        return self._cached(("work", cfg.config_id), lambda: work.work_table(cfg), keep=CENTRES).copy()

    def flip_report(self, selection: RunConfig, baseline: RunConfig):
        """analysis.flips.flip_report of the pairs of selection and baseline that kept predictions (a FlipReport),
        or None without a test set (no store, or the package's copy of the test labels is damaged)."""
        tests = self.test_set
        if tests is None:
            return None

        def report():
            runs = self.runs
            kept = runs[runs["has_predictions"]] if "has_predictions" in runs.columns else runs
            paired = flips.paired_predictions(tests.predictions, runs_of(kept, selection), runs_of(kept, baseline))
            return flips.flip_report(paired, tests.labels)

        return self._cached(("flips", selection.config_id, baseline.config_id), report, keep=8)  # ~0.9 MB each

    def export_frames(self) -> dict[str, pd.DataFrame]:
        """runs.csv, histories.csv, confusions.csv as DataFrames (RunStore.export_frames) from one read."""
        if self.store is None:
            raise ValueError("a Study built from a table has no store to export; use Study.open(path)")
        return self.store.export_frames()
