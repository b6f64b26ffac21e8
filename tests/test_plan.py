"""The sequential plan (vitcore.stats.plan): its boundaries, its looks, its error rates, and `sweep plan`."""

import numpy as np
import pandas as pd
import pytest
from fakes import write_run
from scipy import stats as sp

from vitcore.cli import main
from vitcore.config.run import RunConfig
from vitcore.run.sweep import grid
from vitcore.stats import estimates as v
from vitcore.stats import plan
from vitcore.stats.compare import compare, paired_delta
from vitcore.stats.estimates import INCONCLUSIVE, paired_estimate
from vitcore.stats.families import family_of, switch_family
from vitcore.store.runs import RunStore


def test_the_20_questions_are_planned_with_their_families_and_caps():
    assert len(plan.questions()) == 20
    sizes = {(f, lv): switch_family(RunConfig(), f, lv).size for f, lv, _ in plan.questions()}
    assert sizes[("pos_embedding", "none")] == 2 and sizes[("patch_size", 4)] == 3 and sizes[("pooling", "cls")] == 1
    assert switch_family(RunConfig(), "patch_size", 2).looks == (10, 20)
    assert switch_family(RunConfig(train_rows=4000), "norm", "batch").looks == plan.LOOKS
    assert switch_family(RunConfig(train_rows=2000), "norm", "batch").looks == ()      # not a planned size
    assert switch_family(RunConfig(norm="batch"), "patch_size", 4).looks == ()          # not the article's ViT
    assert switch_family(RunConfig(), "warmup_epochs", 2).looks == ()                   # warm-up: fixed sample


@pytest.mark.parametrize("looks, alpha", [((10, 20, 30, 40), 0.05), ((10, 20, 30, 40), 0.05 / 3), ((10, 20), 0.05 / 3)])
def test_boundaries_spend_alpha_as_declared(looks, alpha):
    """The levels are the alpha spent look by look (RHO = 1: alpha * n_k / cap in all by look k) and add up
    to alpha; for z-statistics (corr sqrt(n_i / n_j), scipy's multivariate normal) the chance that any look
    crosses is then below alpha (the union bound is conservative), two-sided and one-sided."""
    levels = plan.nominal_levels(looks, alpha)
    assert np.cumsum(levels) == pytest.approx([alpha * n / looks[-1] for n in looks], rel=1e-12)
    n = np.array(looks, dtype=float)
    corr = np.sqrt(np.minimum.outer(n, n) / np.maximum.outer(n, n))
    law = sp.multivariate_normal(np.zeros(len(n)), corr, seed=1, abseps=1e-7, releps=0, maxpts=400_000)
    for sides in (2, 1):
        c = sp.norm.isf(np.array(levels) / sides)
        crossing = 1 - law.cdf(c, lower_limit=-c if sides == 2 else np.full(len(n), -np.inf))
        assert alpha * 0.6 < crossing <= alpha  # 4 looks at alpha: 0.035 crosses
    assert plan.nominal_levels((40,), alpha)[0] == pytest.approx(alpha)  # one look: the fixed-sample test
    assert plan.levels(looks, 3) == [(level, level) for level in plan.nominal_levels(looks, 0.05 / 3)]


def pairs_of(deltas) -> pd.DataFrame:
    return pd.DataFrame({"train_rows": 1000, "seed": np.arange(len(deltas)), "delta": deltas})


def judged(deltas, family=None):
    family = family or switch_family(RunConfig(), "norm_placement", "post")  # m = 1, looks 10..40
    est, row, used = plan.sequential(pairs_of(np.asarray(deltas, dtype=float)), "test_accuracy", v.MARGIN, family,
                                     lambda part: (paired_estimate(part["delta"]), {}))
    return est, row, used


def test_a_look_uses_its_own_pairs_only_and_the_first_decision_stands():
    rng = np.random.default_rng(0)
    first = 0.03 + rng.normal(0, 0.005, 10)
    est, row, used = judged(np.concatenate([first, [0.5] * 5]))  # 5 more pairs wait for look 2
    assert row["look"] == 1 and est.n == 10 and est.mean == pytest.approx(first.mean()) and len(used) == 10
    assert row["verdict"] == v.BETTER and "decided" in row["plan"]
    _, later, _ = judged(np.concatenate([first, -0.05 + rng.normal(0, 0.005, 10)]))  # look 2 would say worse
    assert later["look"] == 1 and later["verdict"] == v.BETTER
    assert row["p_adj"] == pytest.approx(row["p_value"] * 0.05 / plan.levels(plan.LOOKS, 1)[0][0])
    low, high = est.interval(1 - plan.levels(plan.LOOKS, 1)[0][0])  # the repeated CI at look 1
    assert (row["ci_adj_low"], row["ci_adj_high"]) == pytest.approx((low, high))


def test_an_undecided_look_waits_and_says_what_the_next_one_needs():
    rng = np.random.default_rng(1)
    noisy = rng.normal(0.004, 0.012, 13)
    est, row, used = judged(noisy)
    assert row["verdict"] == v.INCONCLUSIVE and row["look"] == 1 and est.n == 10 and len(used) == 10
    assert (row["seeds_needed"], row["seeds_more"]) == (20, 7) and "3 pairs wait" in row["plan"]
    assert plan.needs(row) == "look 2 of 4 at 20 paired random seeds (7 more)"
    _, early, _ = judged(noisy[:5])
    assert early["look"] == 0 and np.isnan(early["p_adj"]) and early["seeds_more"] == 5
    assert plan.needs(early) == "first look at 10 paired random seeds (5 more)"
    gap = pairs_of(noisy)[lambda f: f["seed"] != 9]  # seed 9 missing: look 1 is not complete
    _, row, _ = plan.sequential(gap, "test_accuracy", v.MARGIN, switch_family(RunConfig(), "norm_placement", "post"),
                                lambda part: (paired_estimate(part["delta"]), {}))
    assert row["look"] == 0 and row["seeds_more"] == 1
    _, capped, _ = judged(rng.normal(0.006, 0.03, 40))
    assert capped["look"] == 4 and capped["verdict"] == v.INCONCLUSIVE and "cap" in plan.needs(capped)


def simulate(deltas, caps, sd, sims=6000, seed=0, margin=v.MARGIN) -> tuple[float, float]:
    """The plan's rule on a family of len(deltas) comparisons (true Δs `deltas`, caps in pairs), paired t-tests
    at every look: (share of families with any better/worse, slightly or not; share with any verdict that puts the Δ
    inside ±margin: "equivalent" or "slightly better/worse", each a false claim of size at Δ = ±margin)."""
    rng = np.random.default_rng(seed)
    m = len(deltas)
    x = rng.normal(np.asarray(deltas)[None, :, None], sd, size=(sims, m, max(caps)))
    any_direction, any_equivalent = np.zeros(sims, bool), np.zeros(sims, bool)
    for j, cap in enumerate(caps):
        looks = tuple(n for n in plan.LOOKS if n <= cap)
        done = np.zeros(sims, bool)
        for n, (a, b) in zip(looks, plan.levels(looks, m)):
            part = x[:, j, :n]
            mean, se = part.mean(axis=1), part.std(axis=1, ddof=1) / np.sqrt(n)
            p = 2 * sp.t.sf(np.abs(mean / se), n - 1)
            p_tost = np.maximum(sp.t.sf((mean + margin) / se, n - 1), sp.t.cdf((mean - margin) / se, n - 1))
            direction, inside = ~done & (p < a), ~done & (p_tost < b)  # inside: equivalent or slightly better/worse
            any_direction |= direction
            any_equivalent |= inside
            done |= direction | inside
    return float(any_direction.mean()), float(any_equivalent.mean())


@pytest.mark.parametrize("caps", [(20, 40, 40), (40,)])  # the patch family (patch 2 capped at 20); a switch alone
@pytest.mark.parametrize("sd", [0.008, 0.03])  # about a run's seed-to-seed sd; one where equivalence rarely stops it
def test_the_plans_family_wise_error_rates_stay_at_5_percent(caps, sd):
    false_direction, _ = simulate([0.0] * len(caps), caps, sd)
    _, false_equivalent = simulate([v.MARGIN * (-1) ** j for j in range(len(caps))], caps, sd, seed=1)
    assert false_direction <= 0.05 and false_equivalent <= 0.05
    naive_direction, _ = simulate([0.0] * len(caps), caps, sd, margin=0.0)  # sanity: the simulation detects errors
    assert naive_direction > 0.02


def test_sweep_plan_asks_for_the_next_look_of_every_undecided_question(tmp_path, capsys):
    store, rng = RunStore(tmp_path / "runs"), np.random.default_rng(2)
    for seed in range(10):
        base = 0.80 + rng.normal(0, 0.01)
        write_run(store, RunConfig(train_rows=1000, seed=seed), base)
        write_run(store, RunConfig(train_rows=1000, seed=seed, norm="batch"), base - 0.2)   # decided: worse
        write_run(store, RunConfig(train_rows=1000, seed=seed, pooling="cls"), base + rng.normal(0.004, 0.012))
    runs = store.table()
    row = compare(runs, RunConfig(train_rows=1000, pooling="cls"), metrics=("test_accuracy",)).metrics.iloc[0]
    assert row["verdict"] == v.INCONCLUSIVE and row["seeds_needed"] == 20
    configs = set(grid("plan", store=store))
    cls, batch = RunConfig(train_rows=1000, pooling="cls"), RunConfig(train_rows=1000, norm="batch")
    assert {cls.replace(seed=s) for s in range(20)} <= configs and {RunConfig(train_rows=1000, seed=19)} <= configs
    assert not any(c.config_id == batch.config_id for c in configs)  # decided: nothing more
    assert RunConfig(train_rows=4000, patch_size=2, seed=9) in configs and \
        RunConfig(train_rows=4000, patch_size=2, seed=10) not in configs  # before look 1: seeds 0-9 only
    assert len(configs) == 20 + 20 + 8 * 10 + 10 + 10 * 10  # cls and its base to 20; every other question to 10
    before = sorted(store.root.iterdir())
    assert main(["sweep", "plan", "--dry-run", "--store", str(store.root), "--rows", "1000"]) == 0
    out = capsys.readouterr().out
    assert "grid plan: 120 runs, 20 in" in out and "100 to train" in out and "cls" in out and "pre-BN" not in out
    # it ends with what the plan decided, one line per question (not "0 to train", no word more)
    summary = out[out.index("plan builtin: "):].splitlines()
    assert summary[0].startswith("plan builtin: 1 of 20 questions decided, 0 undecided at the cap, 19 still open")
    (batch_line,) = [line for line in summary if line.split()[:2] == ["norm=batch", "1,000"]]
    assert "worse (beyond)" in batch_line and "look 1 of 4" in batch_line and "n=10" in batch_line
    (cls_line,) = [line for line in summary if line.split()[:2] == ["pooling=cls", "1,000"]]
    assert INCONCLUSIVE in cls_line and "look 2 of 4 at 20 paired random seeds (10 more)" in cls_line
    assert len(summary) == 21 and max(map(len, summary)) <= 120, "\n".join(summary)
    assert sorted(store.root.iterdir()) == before  # the dry run trained nothing


def test_the_plan_grid_needs_a_store():
    with pytest.raises(ValueError, match="needs the store"):
        grid("plan")


def test_compare_rows_carry_the_plan_and_fixed_sample_rows_say_so(tmp_path):
    store = RunStore(tmp_path / "runs")
    for seed in range(10):
        write_run(store, RunConfig(train_rows=1000, seed=seed), 0.8 + 0.001 * seed)
        write_run(store, RunConfig(train_rows=1000, seed=seed, norm="batch"), 0.6 + 0.002 * seed)
    result = compare(store.table(), RunConfig(train_rows=1000, norm="batch")).metrics.set_index("metric")
    assert result.loc["test_accuracy", "looks_planned"] == 4 and result.loc["test_accuracy", "look"] == 1
    assert result.loc["best_val_accuracy", "plan"] == plan.FIXED
    assert result.loc["best_val_accuracy", "looks_planned"] == 0
    runs = store.table()
    delta = paired_delta(runs[runs["norm"] == "layer"], runs[runs["norm"] == "batch"], "test_accuracy",
                         family=family_of(runs, RunConfig(train_rows=1000), RunConfig(train_rows=1000, norm="batch")))
    assert delta.row["verdict"] == v.WORSE and delta.row["look"] == 1


def test_pairs_beyond_the_look_wait_and_the_card_header_says_so(tmp_path):
    from vitcore.app.ablations import cards

    store, rng = RunStore(tmp_path / "runs"), np.random.default_rng(3)
    post = RunConfig(train_rows=1000, norm_placement="post")
    for seed in range(13):
        base = 0.8 + rng.normal(0, 0.01)
        write_run(store, RunConfig(train_rows=1000, seed=seed), base)
        write_run(store, post.replace(seed=seed), base + rng.normal(0.002, 0.012))
    result = compare(store.table(), post)
    rows = result.metrics.set_index("metric")
    assert rows.loc["test_accuracy", "n_pairs"] == 10 and rows.loc["best_val_accuracy", "n_pairs"] == 13
    assert result.seeds == list(range(13))
    text = cards.header(result, post, RunConfig(train_rows=1000))
    assert "random seeds 0–12 (13 pairs)" in text
    assert "Test accuracy is planned (builtin): look 1 of 4 (random seeds 0–9)" in text
    assert "3 pairs wait for it" in text
