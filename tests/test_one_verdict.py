"""One comparison, one verdict, on the committed store: every comparison that appears on more than
one view has one verdict and one interval; the CSVs carry both tests, recomputed here with scipy; no seconds
figure mixes timing groups."""

import itertools

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from scipy import stats as sp

from vitcore.analysis import cost, scaling
from vitcore.app import charts, tables
from vitcore.article import claims, report
from vitcore.cli import main
from vitcore.config import switches
from vitcore.config.run import RunConfig
from vitcore.stats import estimates as v
from vitcore.stats import plan, plan_store, seconds, summaries, testset
from vitcore.stats.compare import compare
from vitcore.stats.estimates import NOT_COMPARABLE
from vitcore.store.runs import RunStore
from vitcore.study import intervals

MIRROR = {v.BETTER: v.WORSE, v.SLIGHTLY_BETTER: v.SLIGHTLY_WORSE, v.HIGHER: v.LOWER,
          v.SLIGHTLY_HIGHER: v.SLIGHTLY_LOWER}
MIRROR.update({b: a for a, b in MIRROR.items()})
SHARED = ["verdict", "family", "family_size", "p_adj", "p_tost_adj", "n_pairs", "interval", "size", "borderline"]
EXACT = ("family", "interval", "size", "borderline")  # words and flags: equal, not approximately


@pytest.fixture(scope="module")
def runs(committed_table) -> pd.DataFrame:
    return committed_table.copy()  # the session's read of the store (tests/conftest.py)


@pytest.fixture(scope="module")
def tests() -> testset.TestSet:
    """The committed runs' predictions: test accuracy's verdicts count the test set's sampling on every view."""
    return testset.from_store(RunStore(ROOT / "cached_runs"))


def assert_same(a: dict, b: dict, flipped: bool = False, where: str = "") -> None:
    """b is a's comparison on another view (flipped: with selection and baseline swapped); a chart's data
    writes a missing number as None."""
    b = {k: np.nan if value is None else value for k, value in b.items()}
    verdict = MIRROR.get(a["verdict"], a["verdict"]) if flipped else a["verdict"]
    assert b["verdict"] == verdict, where
    for name in [n for n in SHARED[1:] if n in b]:  # a chart's data holds what it draws and its tooltip
        assert b[name] == pytest.approx(a[name], nan_ok=True) if name not in EXACT else b[name] == a[name], where
    sign = -1 if flipped else 1
    low, high = plan.chosen(a).interval  # the interval that goes with the verdict, chosen in one place
    low, high = (sign * high, sign * low) if flipped else (low, high)
    drawn = (b[intervals.LOW], b[intervals.HIGH]) if intervals.LOW in b else plan.chosen(b).interval  # a chart's ends
    assert drawn == pytest.approx((low, high), nan_ok=True), where
    assert b["mean_delta"] == pytest.approx(sign * a["mean_delta"], nan_ok=True), where


@pytest.mark.slow
def test_every_comparison_on_several_views_has_one_verdict_and_one_interval(runs, tests):
    seen = with_test = 0
    effects = summaries.main_effects(runs, test_set=tests)
    for train_rows in sorted(runs["train_rows"].unique()):
        base = RunConfig(train_rows=int(train_rows))
        flips = summaries.flip_effects(runs, base, test_set=tests)  # the landing's forest plot and the flip table
        if flips.empty:
            continue
        spec = charts.forest(tables.flip_frame(flips, "test_accuracy"), "test_accuracy", "t").to_dict()
        (drawn,) = [rows for rows in spec["datasets"].values() if "verdict_text" in rows[0]]
        for row, dot in zip(flips[flips["metric"] == "test_accuracy"].to_dict("records"), drawn):
            assert_same(row, dot, where="forest plot")
        for row in flips.to_dict("records"):
            variant = base.replace(**{row["switch"]: row["to"]})
            card = compare(runs, variant, base, metrics=(row["metric"],), test_set=tests).metrics.iloc[0].to_dict()
            assert_same(row, card, where=f"card {variant.label()} {row['metric']}")
            with_test += card["interval"] == testset.WITH_TEST
            back = summaries.flip_effects(runs, variant, metrics=(row["metric"],), test_set=tests)
            back = back[(back["switch"] == row["switch"]) & (back["to"] == row["from"])].iloc[0].to_dict()
            assert_same(row, back, flipped=True, where=f"flip table of {variant.label()}")
            single = effects[(effects["factor"] == row["switch"]) & (effects["level"] == row["to"])
                             & (effects["train_rows"] == train_rows) & (effects["metric"] == row["metric"])
                             & (effects["cells"] == 1)]
            for one in single.to_dict("records"):
                assert_same(row, one, where="main effect in one cell")
                seen += 1
            seen += 3
    for row, claim, selection, baseline in claims.evaluated(runs, test_set=tests):
        card = compare(runs, selection, baseline, metrics=(row["metric"],), test_set=tests).metrics.iloc[0].to_dict()
        assert_same(card, row, where=f"claim {row['claim']} at {row['train_rows']}")
        seen += 1
    for row in scaling.deltas(runs, test_set=tests).to_dict("records"):  # the data-size curve's Δs
        vit, convnet = RunConfig(train_rows=row["train_rows"]), RunConfig(model="convnet", train_rows=row["train_rows"])
        card = compare(runs, vit, convnet, metrics=(row["metric"],), test_set=tests).metrics.iloc[0].to_dict()
        assert (row["verdict"], row["interval"]) == (card["verdict"], card["interval"])
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((card["ci_low"], card["ci_high"]), nan_ok=True)
        seen += 1
    assert seen > 100 and with_test >= 10  # test-accuracy comparisons with predictions count the test set


def bonferroni_row(deltas: np.ndarray, size: int, margin: float = 0.01, test_se: float = 0.0,
                   level: float | None = None) -> dict:
    """Both tests and their adjusted values, recomputed with scipy (`test_se`: the test images' part of the
    standard error, added in quadrature; 0 = scipy's one-sample t-tests as they are). `level`: a planned look's
    nominal level (vitcore.stats.plan) instead of 0.05 / size."""
    n = len(deltas)
    mean, se = deltas.mean(), np.hypot(sp.sem(deltas), test_se)
    p = 2 * sp.t.sf(abs(mean) / se, n - 1)
    p_tost = max(sp.t.sf((mean + margin) / se, n - 1), sp.t.cdf((mean - margin) / se, n - 1))
    if test_se == 0:
        assert p == pytest.approx(sp.ttest_1samp(deltas, 0).pvalue, rel=1e-9)
    scale, level = (size, 0.05 / size) if level is None else (0.05 / level, level)
    return {"p_value": p, "p_tost": p_tost, "p_adj": min(1, scale * p), "p_tost_adj": min(1, scale * p_tost),
            "ci_low": sp.t.interval(0.95, n - 1, mean, se)[0], "ci90_high": sp.t.interval(0.90, n - 1, mean, se)[1],
            "ci_adj_low": sp.t.interval(1 - level, n - 1, mean, se)[0],
            "ci90_adj_high": sp.t.interval(1 - 2 * level, n - 1, mean, se)[1]}


def single_switch_family_size(switch: str) -> int:
    """A single-switch change's family: the switch's other levels in the registry, whatever is stored."""
    return len(switches.LEVELS[switch]) - 1


def check(csv_row: pd.Series, deltas: pd.Series, size: int) -> None:
    """A CSV row against scipy; a planned row (vitcore.stats.plan) on the pairs of its look (its plan's first n random
    seeds: the plan `verdict_from` names, `deltas` indexed by random seed) at the look's nominal level."""
    test_se = csv_row["test_se"] if csv_row.get("interval") == testset.WITH_TEST else 0.0
    level = None
    if csv_row.get("looks_planned", 0) > 0 and csv_row["look"] > 0:
        look, name = int(csv_row["look"]), str(csv_row["verdict_from"]).split(",")[0].removeprefix("plan ")
        owner = {p.name: p for p in plan_store.load(ROOT / "cached_runs")[0]}[name]
        first, n = owner.first_seed, owner.looks[look - 1]
        deltas = deltas[(deltas.index >= first) & (deltas.index < first + n)]
        level = plan.levels(owner.looks[:int(csv_row["looks_planned"])], size)[look - 1][0]
    deltas = np.asarray(deltas, dtype=float)
    expected = bonferroni_row(deltas, size, test_se=test_se, level=level)
    assert csv_row["family_size"] == size and csv_row["n_pairs"] == len(deltas)
    for name, value in expected.items():
        assert csv_row[name] == pytest.approx(value, rel=1e-9), name
    resolved, inside = expected["p_adj"] < 0.05, expected["p_tost_adj"] < 0.05
    word = v.direction(csv_row["metric"], deltas.mean() > 0, inside) if resolved else (
        v.EQUIVALENT if inside else v.INCONCLUSIVE)
    assert csv_row["verdict"] == word


def paired_deltas(runs, selection: RunConfig, baseline: RunConfig, metric: str) -> pd.Series:
    """selection − baseline per random seed (one train_rows), indexed by random seed, in seed order."""
    a, b = (runs[runs["config_id"] == c.config_id].set_index("seed")[metric] for c in (selection, baseline))
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").sort_index()
    return both["a"] - both["b"]


@pytest.mark.slow
def test_the_csvs_carry_both_tests_recomputed_with_scipy(runs, tmp_path, capsys):
    base, batch = RunConfig(train_rows=1000), RunConfig(train_rows=1000, norm="batch")
    assert main(["compare", "--norm", "batch", "--train-rows", "1000", "--out", str(tmp_path / "c")]) == 0
    metrics = pd.read_csv(tmp_path / "c" / "metrics.csv").set_index("metric", drop=False)
    size = single_switch_family_size("norm")
    for metric in ("test_accuracy", "best_val_accuracy", "gap"):
        check(metrics.loc[metric], paired_deltas(runs, batch, base, metric), size)

    assert main(["claims", "--out", str(tmp_path / "claims.csv")]) == 0
    table = pd.read_csv(tmp_path / "claims.csv")
    vit_convnet = table[(table["claim"] == "the ViT beats the convnet")].head(2)  # the article's two models: m = 1
    for row in vit_convnet.to_dict("records"):
        selection, baseline = (cfg.replace(train_rows=int(row["train_rows"]))
                               for cfg in (RunConfig(), RunConfig(model="convnet")))
        check(pd.Series(row), paired_deltas(runs, selection, baseline, row["metric"]), 1)
    bn = table[(table["claim"].str.startswith("BatchNorm")) & (table["train_rows"] == 4000)].iloc[0]
    check(bn, paired_deltas(runs, RunConfig(norm="batch"), RunConfig(), "test_accuracy"),
          single_switch_family_size("norm"))

    assert main(["effects", "--out", str(tmp_path / "effects.csv")]) == 0
    effects = pd.read_csv(tmp_path / "effects.csv")
    vit = summaries.factorial_runs(runs)
    for factor, level, rows in (("norm", "batch", 4000), ("pos_embedding", "none", 1000),
                                ("norm_placement", "post", 4000)):
        row = effects[(effects["factor"] == factor) & (effects["level"] == level) & (effects["train_rows"] == rows)
                      & (effects["metric"] == "test_accuracy")].iloc[0]
        part = vit[vit["train_rows"] == rows]
        others = [s for s in ("pos_embedding", "norm_placement", "norm", "patch_size") if s != factor]
        wide = part.pivot_table(index=[*others, "seed"], columns=factor, values="test_accuracy")
        diffs = (wide[level] - wide[summaries.REFERENCE[factor]]).dropna()
        cells = diffs.groupby(level="seed").size()  # the seeds with every cell (a sweep adds some cells' seeds first)
        per_seed = diffs.groupby(level="seed").mean()[cells == cells.max()]
        check(row, per_seed, summaries.declared_size("main effects"))
    capsys.readouterr()


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_no_seconds_figure_mixes_timing_groups(runs):
    groups = runs.set_index("run_id")["timing_group"]
    # report: the headline's seconds come from one named group
    for row in report.headline(runs).to_dict("records"):
        if row["seconds_n"]:
            cfg = RunConfig() if row["model"] == "vit" else RunConfig(model="convnet")
            cfg = cfg.replace(train_rows=row["train_rows"])
            own = runs[(runs["config_id"] == cfg.config_id) & (runs["timing_group"] == row["seconds_timing_group"])]
            assert row["seconds_mean"] == pytest.approx(own["seconds"].mean()) and len(own) == row["seconds_n"]
    # compare (cards, report deltas, claims): every pair behind a seconds Δ is timed in the row's group
    for selection, baseline in itertools.product([RunConfig(), RunConfig(patch_size=4)], [RunConfig(model="convnet")]):
        result = compare(runs, selection, baseline, metrics=("seconds",))
        pairs = result.pairs
        row = result.metrics.iloc[0]
        if pairs.empty:  # only groups timed under load (replaced, overlapped, busy) hold pairs: none is used
            assert (row["timing_group"], row["verdict"]) == ("", NOT_COMPARABLE)
            continue
        assert set(groups[pairs["selection_run_id"]]) | set(groups[pairs["baseline_run_id"]]) == {row["timing_group"]}
        assert seconds.rank(row["timing_group"]) < 2  # never a group timed under load nobody chose
    for row in claims.claims_table(runs).to_dict("records"):
        assert (row["metric"] == "seconds") == bool(row["timing_group"])  # named where seconds are shown
    # the token-cost table: one group per row
    grid = cost.tokens_grid_seconds(runs)
    for row in grid.to_dict("records"):
        part = runs[(runs["model"] == "vit") & (runs["patch_size"] == row["patch_size"])
                    & (runs["train_rows"] == row["train_rows"]) & (runs["timing_group"] == row["timing_group"])]
        assert len(part) >= row["runs"]
    assert grid.groupby(["patch_size", "train_rows", "epochs"])["timing_group"].count().max() >= 1
