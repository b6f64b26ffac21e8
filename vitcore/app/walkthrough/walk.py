"""Frames and sentences for the walkthrough pages (ViT vs convnet, Runs, Token cost, Attention),
built from library results: vitcore.article.report, vitcore.analysis.scaling, the store table.

No Streamlit and no TensorFlow: tests/test_app_walk.py checks these directly. Numbers are printed
through vitcore.app.fmt; the statistics themselves come from the library.
"""

from __future__ import annotations

import pandas as pd

from vitcore.app import fmt
from vitcore.app.tables import timing_basis  # noqa: F401 (a timing group in words: the core's, re-exported)
from vitcore.article.sources import SEED_VIT_TEST_ACCURACY
from vitcore.config.metrics import TABLE, known
from vitcore.config.metrics import metric as metric_entry
from vitcore.study import intervals
from vitcore.study.words import CURVE_METRICS, interval_kind, verdict_interval

OPTIMISTIC = "selected on the validation split (optimistic)"
SINGLE_SEED_METRICS = known("best_val_accuracy", "gap")  # what the source article states for one random seed
CURVE_NAMES = {m: fmt.title(m) for m in CURVE_METRICS}  # the scaling curves' panels


def metric_label(metric: str) -> str:
    """A metric's title; an optimistic one (best validation accuracy) always carries its caveat."""
    name = fmt.title(metric)
    return f"{name} — {OPTIMISTIC}" if metric_entry(metric).optimistic else name


# -- ViT vs convnet ------------------------------------------------------------------------------
def headline_table(deltas: pd.DataFrame) -> pd.DataFrame:
    """report.headline_deltas as shown: one row per row count and metric, test accuracy first; the two
    means are over the paired random seeds only, Δ = ViT − convnet per random seed; the interval is the one the
    verdict reads (words.verdict_interval: the 95% one, or beside "equivalent" the 90% one its equivalence test
    reads), "Interval is" says which."""
    order = {name: at for at, name in enumerate(TABLE)}  # the metric registry's order (test accuracy first)
    part = deltas.assign(_order=deltas["metric"].map(order)).sort_values(["train_rows", "_order"])
    rows = []
    for r in part.to_dict("records"):
        places = fmt.digits(r["metric"])
        rows.append({"Rows": fmt.rows(r["train_rows"]), "Metric": metric_label(r["metric"]),
                     "ViT": fmt.number(r["vit_mean"], places), "convnet": fmt.number(r["convnet_mean"], places),
                     "Δ ViT − convnet": fmt.delta(r["mean_delta"], places),
                     "Interval": verdict_interval(r, places), "Interval is": interval_kind(r),
                     "Pairs": int(r["n_pairs"]), "Verdict": r["verdict"]})
    return pd.DataFrame(rows, columns=["Rows", "Metric", "Verdict", "Δ ViT − convnet", "Interval", "ViT", "convnet",
                                       "Pairs", "Interval is"])  # the key columns first: they show at 400 px


def _where(row) -> str:
    if fmt.missing(row.pi_low):
        return "too few random seeds to tell"
    if row.seed_delta < row.pi_low:
        return "below: smaller than 97.5% of single random seeds would give"
    if row.seed_delta > row.pi_high:
        return "above: larger than 97.5% of single random seeds would give"
    return "inside: an ordinary draw"


def single_seed_table(deltas: pd.DataFrame) -> pd.DataFrame:
    """The source article's one-random-seed differences beside the 95% prediction interval of one
    paired difference (where a single random seed's Δ falls) and our mean Δ with its CI (its verdict's)."""
    part = _single_seeds(deltas)
    rows = [{"Rows": fmt.rows(r.train_rows), "Metric": metric_label(r.metric),
             "Source article Δ (1 random seed)": fmt.delta(r.seed_delta),
             "95% prediction interval (1 random seed)": fmt.ci(r.pi_low, r.pi_high, none="—"),
             "The article's Δ lies": _where(r), "Our mean Δ": fmt.delta(r.mean_delta),
             "95% CI of the mean": fmt.ci(r.chosen_low, r.chosen_high), "Pairs": int(r.n_pairs)}
            for r in part.itertuples()]
    return pd.DataFrame(rows)


def single_seed_sentences(deltas: pd.DataFrame) -> list[str]:
    """Plain words: what one random seed can show, and where the article's single differences fall."""
    sentences = []
    for r in _single_seeds(deltas).itertuples():
        what = "best-val lead" if r.metric == "best_val_accuracy" else "gap difference"
        if fmt.missing(r.pi_low):
            sentences.append(f"At {fmt.rows(r.train_rows)} rows the source article's {what} of "
                             f"{fmt.delta(r.seed_delta)} cannot be placed yet: too few paired random seeds.")
            continue
        verdict = _where(r).split(":")[0]
        meaning = ("so its one run is consistent with ours" if verdict == "inside" else
                   "so its one run was an unusually " + ("large" if verdict == "above" else "small") + " draw")
        sentences.append(
            f"At {fmt.rows(r.train_rows)} rows the source article's {what} was {fmt.delta(r.seed_delta)} from one "
            f"random seed. Over our {int(r.n_pairs)} paired random seeds, a single seed's Δ falls between "
            f"{fmt.delta(r.pi_low)} and {fmt.delta(r.pi_high)} 95% of the time; {fmt.delta(r.seed_delta)} lies "
            f"{verdict}, {meaning}. The mean Δ over those random seeds is {fmt.delta(r.mean_delta)} "
            f"({fmt.ci(r.chosen_low, r.chosen_high)}).")
    return sentences


def _single_seeds(deltas: pd.DataFrame) -> pd.DataFrame:
    """The rows of the metrics the source article gives for one random seed, with the interval each verdict goes
    with (vitcore.study.intervals)."""
    return intervals.with_chosen(deltas[deltas["metric"].isin(SINGLE_SEED_METRICS) & deltas["seed_delta"].notna()])


def curve_frame(curve: pd.DataFrame) -> pd.DataFrame:
    """scaling.curve for the chart: metric title, and the random-seed band mean ± sd (just the mean
    for one random seed)."""
    sd = curve["sd"].fillna(0.0)
    return curve.assign(panel=curve["metric"].map(CURVE_NAMES), low=curve["mean"] - sd, high=curve["mean"] + sd)


def delta_frame(deltas: pd.DataFrame) -> pd.DataFrame:
    """scaling.deltas for the chart and table: metric title; rows without an interval keep NaN; the Δ and its
    interval (the one its verdict goes with: vitcore.study.intervals, its columns the chart's whiskers) as text for
    the tooltip, rounded by the one rule (fmt), so the chart reads as the tables do."""
    chosen = intervals.with_chosen(deltas)
    return chosen.assign(panel=deltas["metric"].map(CURVE_NAMES), delta_text=deltas["mean_delta"].map(fmt.delta),
                         ci_text=[fmt.ci(lo, hi) for lo, hi in zip(chosen[intervals.LOW], chosen[intervals.HIGH])])


def scaling_table(deltas: pd.DataFrame) -> pd.DataFrame:
    """Paired ViT − convnet per row count: Rows, Metric, Verdict, Δ, the interval the verdict reads (as
    headline_table's), Pairs, which interval it is (the key columns first)."""
    rows = deltas.to_dict("records")
    return pd.DataFrame({"Rows": deltas["train_rows"].map(fmt.rows), "Metric": deltas["metric"].map(metric_label),
                         "Verdict": deltas["verdict"], "Δ ViT − convnet": deltas["mean_delta"].map(fmt.delta),
                         "Interval": [verdict_interval(r, fmt.digits(r["metric"])) for r in rows],
                         "Pairs": deltas["n_pairs"].astype(int), "Interval is": [interval_kind(r) for r in rows]})


OURS, ARTICLE = "ours (mean ± sd over random seeds)", "the source article (one random seed)"  # gap_frame's sources


def gap_frame(headline: pd.DataFrame) -> pd.DataFrame:
    """Gap bars of report.headline(): ours (mean ± sd over random seeds) and the source article's one
    random seed, per model and row count (columns: model, rows, source, seeds, mean, low, high). One
    source name per kind, so a chart's legend has one entry (and one colour) per source; how many random
    seeds each of our bars averages is in `seeds`."""
    bars = []
    for _, r in headline.iterrows():
        rows = fmt.rows(r["train_rows"])
        if r["n_seeds"]:
            sd = 0.0 if fmt.missing(r["gap_std"]) else r["gap_std"]
            bars.append({"model": r["model"], "rows": rows, "source": OURS, "seeds": int(r["n_seeds"]),
                         "mean": r["gap_mean"], "low": r["gap_mean"] - sd, "high": r["gap_mean"] + sd})
        if not fmt.missing(r["seed_gap"]):
            bars.append({"model": r["model"], "rows": rows, "source": ARTICLE, "seeds": 1,
                         "mean": r["seed_gap"], "low": r["seed_gap"], "high": r["seed_gap"]})
    return pd.DataFrame(bars, columns=["model", "rows", "source", "seeds", "mean", "low", "high"])


# -- timing --------------------------------------------------------------------------------------
def timing_groups(runs: pd.DataFrame) -> list[str]:
    """The store's timing groups, the one with most runs first (none: the column is absent)."""
    if "timing_group" not in runs.columns or runs.empty:
        return []
    return runs["timing_group"].value_counts().index.tolist()


# -- the attention page --------------------------------------------------------------------------
def map_distance_note(distance: float, heads: int, tokens: int, block: int, seed: int) -> str:
    """What 'trained vs random init' measures, with its number."""
    return (f"How to read **{distance:.3f}**: for each picked row, head and query, compare the trained model's "
            f"{tokens} weights with the untrained model's and ask what share of the attention would have to move to "
            "turn one into the other (total-variation distance: 0 = the same map, 1 = no patch in common). "
            f"{distance:.3f} is the average over the picked rows, the {heads} heads and the {tokens} queries of block "
            f"{block}. The untrained model has the same config, drawn as Keras initialises it (random seed {seed}). "
            "The distances from uniform say how far each model is from spreading its weight evenly over all patches.")


def spread_note(ours, untrained, tokens: int, accuracy: float, scanned: int) -> str:
    """The head spreads of both models, reconciled with the source article's 0.15-0.29 (same measure,
    another model) and with its uniform 0.0625 (a top weight, not a spread)."""
    return (f"Head spreads of the trained model: {ours.min():.3f}–{ours.max():.3f}; of an untrained model of the "
            f"same config: {untrained.min():.3f}–{untrained.max():.3f}. Structure that an untrained network also "
            "shows is not evidence of anything the model learned. The measure is the source article's (max − min of "
            "the most concentrated query's weights: its 0.6459 for head 0 on the pullover); a uniform head scores 0 "
            f"on it, and the dashed 1/N = {1 / tokens:.4f} is the *top weight* of a uniform head, the line the article "
            "draws its spreads against. The article's 0.15–0.29 come from its own single training (test accuracy "
            f"{SEED_VIT_TEST_ACCURACY:.4f} on the full split), ours from this run ({accuracy:.4f} on the first "
            f"{scanned:,} test rows): the same measure on another model, so the ranges need not agree.")
