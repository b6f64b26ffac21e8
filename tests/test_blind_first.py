"""Blind first, on the committed store: the confirmation's verdict leads every view of the questions it asks, the
discovery follows as one line, the replication outcome takes one of its words, and the counts
docs/plans-and-confirmation.md quotes are `plans`' (vitcore.study.lead, vitcore.stats.replication). One Study of the
committed store serves the module."""

import re
from pathlib import Path

import pandas as pd
import pytest

from vitcore.cli import main
from vitcore.config.run import RunConfig
from vitcore.stats import plans, replication
from vitcore.stats.estimates import BETTER, INCONCLUSIVE, WORSE
from vitcore.stats.replication import CONTRADICTED, NOT_CONFIRMED
from vitcore.study import Study

pytestmark = [pytest.mark.slow,  # the committed store's plan report (seconds) and its claims
              pytest.mark.xdist_group("committed_study")]  # on the worker that computes them for every module
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def study(committed_study) -> Study:
    return committed_study  # tests/conftest.py: one Study of cached_runs/ per worker, read-only


@pytest.fixture(scope="module")
def questions(study) -> pd.DataFrame:
    frame = study.plan_report().questions_frame()
    return frame[frame["plan"] == "confirm"].set_index(["question", "train_rows"])


def row(study, **changes) -> dict:
    cfg = RunConfig(**changes)
    return study.compare(cfg).metrics.set_index("metric").loc["test_accuracy"].to_dict()


def test_the_blind_verdict_leads_and_the_discovery_follows(study):
    sincos = row(study, pos_embedding="sincos", train_rows=4000)
    assert sincos["verdict"] == INCONCLUSIVE and sincos["n_pairs"] == 40
    assert sincos["verdict_from"] == "plan confirm, blind, look 4 of 4"
    assert sincos["discovery_verdict"] == BETTER and sincos["replication"] == replication.NOT_CONFIRMED
    assert sincos["discovery"].startswith("discovery: better (plan builtin, look 2 of 4, seen")
    depth = row(study, depth=4, train_rows=1000)  # no pooled fixed-sample test of 50 pairs leads it any more
    assert depth["verdict"] == INCONCLUSIVE and depth["verdict_from"].startswith("plan confirm, blind")
    assert depth["n_pairs"] == 40 and depth["replication"] == replication.NOTHING
    none = row(study, pos_embedding="none", train_rows=1000)
    assert none["verdict"] == WORSE and none["verdict_from"] == "plan confirm, blind, look 1 of 4"
    assert none["replication"] == replication.REPLICATED
    convnet = row(study, model="convnet", train_rows=1000)  # no plan asks it
    assert convnet["verdict_from"] == "fixed sample (not in a plan)" and convnet["replication"] == ""


def test_the_cli_writes_the_same_row(study, tmp_path):
    out = tmp_path / "out"
    assert main(["compare", "--pos-embedding", "sincos", "--train-rows", "4000", "--out", str(out)]) == 0
    written = pd.read_csv(out / "metrics.csv").set_index("metric").loc["test_accuracy"]
    assert (written["verdict"], written["verdict_from"], written["discovery_verdict"], written["replication"]) == (
        INCONCLUSIVE, "plan confirm, blind, look 4 of 4", BETTER, NOT_CONFIRMED)


@pytest.mark.parametrize("margin", ["0.02", "0.010001"])
def test_another_margin_reads_the_blind_plans_random_seeds_only(study, tmp_path, capsys, margin):
    """sincos at 4,000 rows at a margin no plan registered: it pooled random seeds 0-19 (seen) with 1000-1039 (blind),
    60 pairs whose count two sequential stops set, and read "slightly better" without saying where from. It is now
    the blind plan's 40 pairs alone, a fixed-sample test, and the printed line, metrics.csv and the record say so."""
    out = tmp_path / "out"
    assert main(["compare", "--pos-embedding", "sincos", "--train-rows", "4000", "--margin", margin,
                 "--out", str(out)]) == 0
    said = f"exploratory at ±{float(margin):g}, blind random seeds 1000–1039 (plan confirm, planned at ±0.01)"
    assert said in capsys.readouterr().out
    written = pd.read_csv(out / "metrics.csv").set_index("metric").loc["test_accuracy"]
    assert written["n_pairs"] <= 40 and written["plan"].startswith(said) and written["verdict_from"] == written["plan"]
    verdict = study.verdict(RunConfig(pos_embedding="sincos"), metric="test_accuracy", margin=float(margin))
    seeds = verdict.measurement.pairs["seed"]
    assert len(seeds) == verdict.measurement.estimate.n <= 40 and seeds.between(1000, 1039).all()
    assert repr(verdict).endswith(f"; exploratory at ±{float(margin):g}, blind random seeds)")


def test_effects_and_claims_carry_where_each_verdict_comes_from(study):
    effects = study.effects()
    assert {"verdict_from", "replication", "discovery"} <= set(effects.columns)
    sincos = effects[(effects["factor"] == "pos_embedding") & (effects["level"] == "sincos")
                     & (effects["train_rows"] == 4000) & (effects["metric"] == "test_accuracy")].iloc[0]
    assert sincos["verdict"] == INCONCLUSIVE and sincos["verdict_from"].startswith("plan confirm, blind")
    claims = study.claims()
    assert {"verdict_from", "replication"} <= set(claims.columns)
    assert claims["verdict_from"].fillna("").str.contains("blind").sum() >= 10
    patches = claims[claims["claim"].str.contains(r"more accurate \(7 vs 14\)", regex=True)]
    assert len(patches) == 2 and set(patches["replication"]) == {replication.REPLICATED}  # 14 − 7 asked, 7 − 14 shown
    assert set(patches["discovery_verdict"]) == {WORSE}  # the discovery read the claim's way round


def test_questions_take_five_outcomes_and_pool_between_their_estimates(questions):
    assert set(questions["replicated"]) <= set(replication.OUTCOMES)
    assert questions.loc[("pos_embedding=sincos", 4000), "replicated"] == replication.NOT_CONFIRMED
    assert questions.loc[("norm_placement=post", 1000), "replicated"] == replication.NOT_CONFIRMED
    pooled = questions.dropna(subset=["pooled_delta"])
    assert len(pooled) == len(questions)
    low = pooled[["discovery_delta", "mean_delta"]].min(axis=1)
    high = pooled[["discovery_delta", "mean_delta"]].max(axis=1)
    assert ((pooled["pooled_delta"] >= low) & (pooled["pooled_delta"] <= high)).all()
    assert questions.loc[("pos_embedding=sincos", 4000), "z"] == pytest.approx(-0.37, abs=0.01)


def test_the_documented_counts_are_the_plans(study, questions):
    text = (ROOT / "docs" / "plans-and-confirmation.md").read_text()  # "Where the confirmation stands"
    said = {word: int(re.search(rf"\*\*(\d+) {word}\*\*", text).group(1))
            for word in ("replicated", CONTRADICTED, NOT_CONFIRMED, "with no decided discovery")}
    counts = questions["replicated"].value_counts()
    assert said == {"replicated": counts.get(replication.REPLICATED, 0),
                    CONTRADICTED: counts.get(replication.CONTRADICTED, 0),
                    NOT_CONFIRMED: counts.get(replication.NOT_CONFIRMED, 0),
                    "with no decided discovery": counts.get(replication.NOTHING, 0)}
    direction = int(re.search(r"\*\*\d+ replicated\*\* \((\d+) of them the direction only\)", text).group(1))
    confirm = next(p for p in study.plan_report().plans if p.name == "confirm")
    assert confirm.replication is None  # the committed plan predates the field: rule vitcore-1, said in the docs
    assert direction == sum(replication.outcome(q.discovery_verdict, q.verdict, q.decided, q.at_cap, q.discovery_size,
                                                q.size, plans.REPLICATION) == replication.REPLICATED_DIRECTION
                            for q in study.plan_report().of("confirm"))
    decided, capped = map(int, re.search(r"(\d+) decided and (\d+) at the cap undecided", text).groups())
    assert (decided, capped) == (int((questions["needs"] == "decided").sum()),
                                 int(questions["needs"].str.startswith("at the plan's cap").sum()))
    runs = int(re.search(r"\*\*(\d+) runs\*\* on random seeds 1000–1039", text).group(1))
    assert runs == int(study.runs["seed"].between(1000, 1039).sum())


def test_the_python_api_carries_the_same_words(study):
    frame = study.verdicts([(RunConfig(pos_embedding="sincos"), RunConfig())], metrics=("test_accuracy", "gap")
                           ).to_frame().set_index("metric")
    assert frame.loc["test_accuracy", "verdict_from"] == "plan confirm, blind, look 4 of 4"
    assert frame.loc["test_accuracy", "replication"] == replication.NOT_CONFIRMED
    assert frame.loc["gap", "verdict_from"] == "fixed sample (plan confirm judges test accuracy only)"
