"""The source article's headline (ViT vs convnet at 1,000 and 4,000 rows) re-measured over seeds: what
`python -m vitcore report` writes (the CLI is vitcore.cli.results).

    python -m vitcore effects --store cached_runs --out effects.csv
    python -m vitcore report --store cached_runs --out report/     # headline.csv, headline.md

Every sentence is generated from the runs and the paired intervals of vitcore.stats.summaries; the seed
page's numbers (vitcore.article.sources) appear only as the labelled single-seed reference.
No TensorFlow here.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from vitcore.analysis import scaling
from vitcore.article import sources as seed
from vitcore.config.environment import missing_store
from vitcore.config.metrics import known
from vitcore.config.metrics import metric as entry
from vitcore.config.numbers import digits, missing, number, p_value
from vitcore.config.run import ARTICLE_MODELS
from vitcore.stats import estimates as v
from vitcore.stats import readings
from vitcore.stats.compare import Comparer, or_uncached
from vitcore.stats.estimates import MARGIN, paired_estimate, prediction_interval
from vitcore.stats.plan import chosen
from vitcore.stats.seconds import NOTE_COLUMNS, reference_group, with_timing_set
from vitcore.stats.summaries import runs_of, summarize
from vitcore.stats.testset import TEST_COLUMNS
from vitcore.store.runs import RunStore

MODELS = ARTICLE_MODELS  # the article's two models: "vit", "convnet"
# Which metrics the source article's table prints (its columns, in its order: seed_reference.SEED_TABLE), the
# headline's (those and test accuracy) and the paired Δs'; each name checked against the metric registry.
SEED_METRICS = known(*next(iter(seed.SEED_TABLE.values())))
HEADLINE_METRICS = (*SEED_METRICS, *known("test_accuracy"))
DELTA_METRICS = known("test_accuracy", "best_val_accuracy", "final_val_accuracy", "gap", "seconds")


def headline(runs: pd.DataFrame, timing: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (model, train_rows): n_seeds, {m}_mean / {m}_std of HEADLINE_METRICS over seeds,
    and seed_{m}: the source article's single-seed number (NaN where it gives none). A cell without runs
    stays in the table with n_seeds 0, so a missing measurement is visible, not dropped."""
    rows = []
    for train_rows in seed.TRAIN_ROWS:
        for model, base in MODELS.items():
            cfg = base.replace(train_rows=train_rows)
            row = {"model": model, "label": cfg.label(), "train_rows": train_rows, "config_id": cfg.config_id}
            own = runs_of(runs, cfg)
            summary = summarize(own, HEADLINE_METRICS)
            row["n_seeds"] = int(summary["n"].iloc[0]) if len(summary) else 0
            for metric in HEADLINE_METRICS:
                for stat in ("mean", "std"):
                    row[f"{metric}_{stat}"] = summary[f"{metric}_{stat}"].iloc[0] if len(summary) else np.nan
            row.update(_seconds_in_one_group(with_timing_set(own, timing)))  # the timing set's seconds if trained
            for metric in SEED_METRICS:
                row[f"seed_{metric}"] = seed.seed_value(model, train_rows, metric)
            rows.append(row)
    return pd.DataFrame(rows)


def _seconds_in_one_group(own: pd.DataFrame) -> dict:
    """seconds_mean / _std over the runs of one timing group (the reference group, vitcore.stats.seconds:
    the largest clean one), never pooled across groups, with the group and its run count
    (seconds_timing_group, seconds_n)."""
    if own.empty or "timing_group" not in own.columns:
        return {"seconds_timing_group": "", "seconds_n": 0}
    group = reference_group(own)
    seconds = own.loc[own["timing_group"] == group, "seconds"]
    return {"seconds_mean": seconds.mean(), "seconds_std": seconds.std() if len(seconds) > 1 else np.nan,
            "seconds_timing_group": group, "seconds_n": len(seconds)}


def headline_deltas(runs: pd.DataFrame, margin: float = MARGIN, test_set=None,
                    compare: Comparer | None = None) -> pd.DataFrame:
    """Paired ViT - convnet per train_rows and metric (DELTA_METRICS), from the comparison engine:
    the two means over the paired random seeds, Δ, 95% CI, n_pairs, verdict ("better" = the ViT
    is better; for gap and seconds lower is better), the 95% prediction interval of one paired
    difference (pi_low, pi_high: where a single random seed's Δ should fall) and seed_delta, the
    source article's single-seed difference. `compare(selection, baseline, margin, metrics)`: a cached
    engine instead of stats.compare.compare (vitcore.study.Study.compare)."""
    compare = or_uncached(compare, runs, test_set)
    rows = []
    for train_rows in seed.TRAIN_ROWS:
        vit, convnet = (MODELS[m].replace(train_rows=train_rows) for m in ("vit", "convnet"))
        result = compare(vit, convnet, margin, DELTA_METRICS)
        for _, row in result.metrics.iterrows():
            deltas = result.pairs[result.pairs["metric"] == row["metric"]]["delta"]
            low, high = prediction_interval(paired_estimate(deltas))
            rows.append({"train_rows": train_rows, **row.to_dict(), "vit_mean": row["selection_mean"],
                         "convnet_mean": row["baseline_mean"], "pi_low": low, "pi_high": high,
                         "seed_delta": seed.seed_value("vit", train_rows, row["metric"])
                         - seed.seed_value("convnet", train_rows, row["metric"])})
    columns = ["train_rows", "metric", "vit_mean", "convnet_mean", "mean_delta", "n_pairs", *v.JUDGEMENT_COLUMNS,
               "timing_group", *NOTE_COLUMNS, *TEST_COLUMNS, "pi_low", "pi_high", "seed_delta"]
    return pd.DataFrame(rows, columns=columns)




def _ci(row, places: int = 4) -> str:
    """The interval that goes with the row's verdict (vitcore.stats.plan.chosen), named: '95% CI over random seeds
    and test images +0.0194 to +0.0348'."""
    said = chosen(row)
    low, high = said.interval
    if math.isnan(low):
        return "no interval"
    return f"{said.kind} {number(low, places, True)} to {number(high, places, True)}"


def _seeds(n: int) -> str:
    return f"{n} paired random seed{'s' if n != 1 else ''}"


def _words(better: str, worse: str, same: str) -> dict:
    """Verdict -> words from the ViT's side ({m}: the margin, {k}: the seeds needed)."""
    return {v.BETTER: better, v.WORSE: worse,
            v.SLIGHTLY_BETTER: f"{better}, slightly (a real difference inside ±{{m}})",
            v.SLIGHTLY_WORSE: f"{worse}, slightly (a real difference inside ±{{m}})",
            v.EQUIVALENT: f"{same} (within ±{{m}})", v.INCONCLUSIVE: f"{v.INCONCLUSIVE}: {{k}}",
            v.TOO_FEW: "too few random seeds to tell",
            v.NOT_COMPARABLE: f"{v.NOT_COMPARABLE}: not timed as a design"}  # _say gives the row's own reason


LEAD = _words("the ViT is better", "the convnet is better", "the two are equivalent")
OVERFIT = _words("the ViT overfits less", "the ViT overfits more", "the gaps are equivalent")
SPEED = _words("the ViT is faster", "the ViT is slower", "the times are equivalent")


def _say(words: dict, row, margin: float) -> str:
    if row["verdict"] == v.NOT_COMPARABLE and isinstance(row.get("timing_note"), str) and row["timing_note"]:
        return f"{v.NOT_COMPARABLE}: {row['timing_note']}"  # vitcore.stats.seconds.timing_note
    text = words.get(row["verdict"], row["verdict"])
    needs = v.needs_text(row.get("seeds_needed", np.nan), int(row["n_pairs"]))
    return text.format(m=f"{row['margin']:g}", k=needs)


def _single_seed(row) -> str:
    """The source article's one-seed Δ against the prediction interval of one paired difference."""
    if math.isnan(row["seed_delta"]):
        return ""
    if math.isnan(row["pi_low"]):
        return (f" The source article's Δ from one random seed was {number(row['seed_delta'], signed=True)}; too few "
                "random seeds to place it.")
    inside = row["pi_low"] <= row["seed_delta"] <= row["pi_high"]
    return (f" The source article's Δ from one random seed of {number(row['seed_delta'], signed=True)} is a single "
            f"draw, so its yardstick is where one paired random seed's Δ falls 95% of the time, "
            f"{number(row['pi_low'], signed=True)} to {number(row['pi_high'], signed=True)}: it lies "
            f"{'inside, an ordinary draw' if inside else 'outside, an unusual draw for this setup'}.")


def headline_sentences(runs: pd.DataFrame, margin: float = MARGIN, test_set=None,
                       compare: Comparer | None = None) -> list[str]:
    """The conclusions, written from headline_deltas: per size, test accuracy (the headline), best
    validation accuracy (selected on the validation split, so optimistic), the gaps and time."""
    deltas = headline_deltas(runs, margin, test_set, compare).set_index(["train_rows", "metric"])
    sentences = []
    for train_rows in seed.TRAIN_ROWS:
        test = deltas.loc[(train_rows, "test_accuracy")]
        if test["n_pairs"] == 0:
            quoted = deltas.loc[(train_rows, "best_val_accuracy"), "seed_delta"]
            sentences.append(f"At {train_rows:,} rows there are no paired runs of the article's ViT and convnet, so "
                             f"the source article's single-seed lead of {number(quoted, 4, True)} (best validation "
                             "accuracy) is not re-measured.")
            continue
        sentences.append(f"At {train_rows:,} rows, test accuracy over {_seeds(test['n_pairs'])}: ViT "
                         f"{number(test['vit_mean'])}, convnet {number(test['convnet_mean'])}, Δ "
                         f"{number(test['mean_delta'], 4, True)} ({_ci(test)}): {_say(LEAD, test, margin)}.")
        val = deltas.loc[(train_rows, "best_val_accuracy")]
        sentences.append(f"Best validation accuracy (the maximum over 15 epochs on the split it reports: optimistic): "
                         f"Δ {number(val['mean_delta'], 4, True)} ({_ci(val)}), "
                         f"{_say(LEAD, val, margin)}.{_single_seed(val)}")
        gap = deltas.loc[(train_rows, "gap")]
        sentences.append(f"The train-val gap: ViT {number(gap['vit_mean'], 4, True)}, convnet "
                         f"{number(gap['convnet_mean'], 4, True)}, Δ {number(gap['mean_delta'], 4, True)} "
                         f"({_ci(gap)}): {_say(OVERFIT, gap, margin)}.")
        secs = deltas.loc[(train_rows, "seconds")]
        unit = "" if missing(secs["mean_delta"]) else " s"
        sentences.append(f"Wall time, within one timing group ({secs['timing_group'] or 'none'}, {secs['n_pairs']} "
                         f"pairs): Δ {number(secs['mean_delta'], 1, True)}{unit} "
                         f"({_ci(secs, 1)}): {_say(SPEED, secs, margin)}; times depend on the machine and its load.")
    return sentences


# -- reading and writing -----------------------------------------------------------------------
def load_runs(path) -> pd.DataFrame:
    """The store's table of valid runs; ValueError when the store is missing or holds none."""
    store = RunStore(path)
    if not store.root.is_dir():
        raise ValueError(missing_store(store.root))
    runs = store.table()
    if runs.empty:
        raise ValueError(f"the store at {store.root} holds no valid runs")
    return runs


def _cell(mean: float, std: float, n: int, places: int) -> str:
    if n == 0 or math.isnan(mean):
        return "not run"
    if n < 2:
        return f"{number(mean, places)} (1 seed)"
    if std == 0:  # a count no seed changes (params)
        return number(mean, places)
    return f"{number(mean, places)} ± {number(std, places)}"


def _markdown(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def headline_markdown(runs: pd.DataFrame, test_set=None, compare: Comparer | None = None, timing=None) -> str:
    """headline.md: the sentences, the table (ours: mean ± std over random seeds | source article: one seed), the Δs."""
    table, deltas = headline(runs, timing), headline_deltas(runs, test_set=test_set, compare=compare)
    shown = pd.DataFrame({"model": table["model"], "rows": table["train_rows"].map("{:,}".format),
                          "seeds": table["n_seeds"]})
    for metric in ("test_accuracy", *SEED_METRICS):  # test accuracy leads: the honest figure
        count = "seconds_n" if metric == "seconds" else "n_seeds"
        shown[metric] = [_cell(r[f"{metric}_mean"], r[f"{metric}_std"], r[count], digits(metric))
                         + (f" (timed as {r['seconds_timing_group']}, {r['seconds_n']} runs)"
                            if metric == "seconds" and r["seconds_n"] else "")
                         for _, r in table.iterrows()]
        if metric not in SEED_METRICS:
            continue
        if entry(metric).optimistic:
            shown = shown.rename(columns={metric: f"{metric} (optimistic)"})
        quoted = table[f"seed_{metric}"]
        shown[f"{metric} (source article)"] = quoted.map(lambda v: "—" if math.isnan(v) else number(v, digits(metric)))
    delta_shown = deltas.assign(
        rows=deltas["train_rows"].map("{:,}".format),
        delta=[number(r['mean_delta'], digits(r['metric']), True) for _, r in deltas.iterrows()],
        ci=[_ci(r, digits(r["metric"])).replace("95% CI ", "") for _, r in deltas.iterrows()],
        p=[p_value(r["p_value"]) for _, r in deltas.iterrows()],
        p_tost=[p_value(r["p_tost"]) for _, r in deltas.iterrows()],
        source_article=[number(r['seed_delta'], digits(r['metric']), True) if not math.isnan(r["seed_delta"]) else "—"
                   for _, r in deltas.iterrows()],
    )[["rows", "metric", "delta", "ci", "p", "p_tost", "n_pairs", "verdict", "timing_group", "source_article"]]
    parts = ["# The source article's headline, re-measured", "",
             *[f"- {sentence}" for sentence in headline_sentences(runs, test_set=test_set, compare=compare)], "",
             "## ViT vs convnet (ours: mean ± std over random seeds; source article: one seed)", "", _markdown(shown),
             "",
             "## Paired ViT − convnet (pairs share train_rows and random seed; 95% t-interval over random seeds)", "",
             _markdown(delta_shown), "",
             "Verdicts, from the ViT's side (the ViT vs its convnet at one size is one comparison: no correction; "
             "for gap and seconds lower is better; seconds within one timing group, named; best validation "
             "accuracy is optimistic, selected on the split it reports):", "",
             v.definitions_text(MARGIN), readings.definitions_text(), "",
             "Gap = final train accuracy − final validation accuracy.",
             f"The source article's {seed.VIT_PARAMS_QUOTED:,} ViT parameters exclude the "
             f"{seed.POSITION_EMBEDDING_PARAMS:,}-parameter position embedding "
             f"({seed.VIT_PARAMS_WITH_POSITION:,} with it). It states the gap only at 4,000 rows.", ""]
    return "\n".join(parts)


def data_size_sentence(runs: pd.DataFrame, test_set=None) -> str:
    """Where the ViT's lead over the convnet crosses zero on the data-size curve, with its bootstrap interval
    (vitcore.analysis.scaling.crossover_estimate, over random seeds and — with `test_set` — test images)."""
    return scaling.crossover_sentence(scaling.crossover_estimate(runs, test_set=test_set)).replace("**", "")


def write_report(runs: pd.DataFrame, out: Path, test_set=None, compare: Comparer | None = None,
                 timing=None) -> list[str]:
    """Write headline.csv, headline_deltas.csv and headline.md into the folder `out`; returns the sentences
    (the headline's, then the data-size curve's crossover estimate)."""
    crossing = data_size_sentence(runs, test_set)
    headline(runs, timing).to_csv(out / "headline.csv", index=False)
    headline_deltas(runs, test_set=test_set, compare=compare).to_csv(out / "headline_deltas.csv", index=False)
    (out / "headline.md").write_text(headline_markdown(runs, test_set, compare, timing)
                                     + f"\n## Where the ViT's lead changes sides (the data-size curve)\n\n{crossing}\n")
    return [*headline_sentences(runs, test_set=test_set, compare=compare), crossing]
