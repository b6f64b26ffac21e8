"""The claims ledger: the claims of vitcore.article.sources against our runs, one tally.

One ledger row is one distinct comparison (Δ = selection − baseline) at one train_rows on the metric that
decides it, evaluated wherever the store has both configs. The Δ, both tests, the family and the verdict
come from the comparison engine (vitcore.stats.compare): a ledger row is the card the Ablations page shows
for the same two configs, never a second verdict. A mirrored claim is the same row: the `mirror` column
says what it means for the other side. Rows shown beside (best validation accuracy, optimistic) are never
counted, and the `tally` column says so; every other row is counted once, so the cards, the line, the CLI
and claims.csv give one tally (`tally_of`).

Direction and size are judged separately:
    direction   one word of DIRECTIONS, each defined once in REGISTRY (the Claims page's
                legend and cards, the CLI's tally line, docs/methods-and-verdicts.md), every one read off the
                adjusted tests (the family's or the planned look's p_adj and p_tost_adj, as the verdict is),
                never a raw p
    size        the engine's size word (vitcore.stats.readings): beyond (the simultaneous 95% interval
                clears ±margin), inside (the equivalence test resolves), or undetermined

    python -m vitcore claims --out claims.csv
No TensorFlow, no Streamlit: the Claims page and the CLI both call `claims_table` and `tally_of`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vitcore.analysis import noise, scaling, work
from vitcore.article.sources import (  # noqa: F401
    BESIDE,
    BN_PAPERS,
    CLAIMS,
    DECIDES,
    EXPECTED,
    LEE,
    OPPOSITE,
    SEED,
    VIT_PAPER,
    WORK,
    XIONG,
    Claim,
)
from vitcore.config.run import RunConfig
from vitcore.stats import estimates as v
from vitcore.stats import readings
from vitcore.stats.compare import Comparer, or_uncached
from vitcore.stats.plan import LEAD_COLUMNS, alone, own_interval
from vitcore.stats.testset import TEST_COLUMNS

COLUMNS = ["claim", "sources", "setting", "comparison", "train_rows", "metric", "role", "expected", "mean_delta",
           "n_pairs", *v.JUDGEMENT_COLUMNS, "timing_group", *TEST_COLUMNS, "direction", *readings.READING_COLUMNS,
           "mirror", "tally", "crossover_rows", "crossover_low", "crossover_high",
           *LEAD_COLUMNS]  # the verdict's plan and the line that follows it (vitcore.study.lead)
AGREES, SMALLER = "agrees", "agrees in direction, smaller than the margin"
NEGLIGIBLE, REAL_OPEN = "shown negligible", "real, size undetermined"
INCONCLUSIVE, DISAGREES = v.INCONCLUSIVE, "disagrees"  # a claim the verdict leaves open: the verdict's own word


@dataclass(frozen=True)
class Direction:
    """One direction word of the ledger: its `card` title on the Claims page, how the tally line counts it
    (`counted`, with {n}) and its one definition (`meaning`)."""
    word: str
    card: str
    counted: str
    meaning: str


REGISTRY = (
    Direction(AGREES, "Agree", "{n} agree",
              "resolved in the claimed direction (adjusted p < 0.05) and not shown inside ±margin; for a claim of "
              "≈ 0: shown inside ±margin (adjusted p_tost < 0.05)."),
    Direction(SMALLER, "Agree in direction, smaller", "{n} agree in direction (smaller than the margin)",
              "both adjusted tests resolve: the Δ is real and on the claimed side (adjusted p < 0.05) and shown "
              "inside ±margin (adjusted p_tost < 0.05) — "
              f"'{v.SLIGHTLY_BETTER} / {v.SLIGHTLY_WORSE}' as claimed."),
    Direction(NEGLIGIBLE, "Shown negligible", "{n} shown negligible",
              "a claim that expects a direction, where the Δ is shown inside ±margin (adjusted p_tost < 0.05) and "
              "its direction is not resolved (adjusted p ≥ 0.05): whatever effect there is, too small to matter "
              f"at this margin (the verdict '{v.EQUIVALENT}')."),
    Direction(REAL_OPEN, "Real, size undetermined", "{n} real of undetermined size",
              "a claim of ≈ 0 where the Δ is real (adjusted p < 0.05) but shown neither inside nor beyond "
              "±margin: neither confirmed nor refuted."),
    Direction(INCONCLUSIVE, INCONCLUSIVE.capitalize(), "{n} " + INCONCLUSIVE,
              f"the verdict resolves nothing ({v.INCONCLUSIVE}: neither adjusted test resolves; or {v.TOO_FEW}; "
              f"or {v.NOT_COMPARABLE}), whatever the claim."),
    Direction(DISAGREES, "Disagree", "{n} disagree",
              "resolved against the claim only: the adjusted interval excludes zero on the other side; for a "
              "claim of ≈ 0: it lies beyond ±margin."),
)
DIRECTIONS = tuple(d.word for d in REGISTRY)
DEFINITIONS = {d.word: d.meaning for d in REGISTRY}  # the one definition of each direction word
BEYOND_MARGIN, INSIDE_MARGIN, SIZE_OPEN = readings.SIZE_BEYOND, readings.SIZE_INSIDE, readings.SIZE_OPEN
AS_CLAIMED = DECIDES  # the counted role (the name before test accuracy decided every accuracy claim)
COUNTED = "counted"
NOT_COUNTED_BESIDE = ("not counted: best validation accuracy is optimistic (the epoch is picked on the split it "
                      "reports); test accuracy decides this comparison (the row above)")


def judge_claim(expected: str, verdict: str, mean_delta: float, row: dict) -> tuple[str, str]:
    """(direction, size) of one evaluated claim (REGISTRY): from the verdict, i.e. the adjusted tests, never from
    a raw p; `row` carries the judged Δ (its adjusted interval and margin) for the size word."""
    if expected not in EXPECTED:
        raise ValueError(f"expected must be one of {', '.join(EXPECTED)}; got {expected!r}")
    inside = verdict == v.EQUIVALENT or verdict in v.INSIDE
    size = readings.size_word({**row, "verdict": verdict})  # the one size word (the cards', every CSV's)
    if expected == "≈ 0":
        if inside or size == BEYOND_MARGIN:
            return (AGREES if inside else DISAGREES), size
        return (REAL_OPEN if verdict in v.RESOLVED else INCONCLUSIVE), size
    if not np.isfinite(mean_delta):
        return INCONCLUSIVE, size
    if verdict in v.RESOLVED:  # the adjusted difference test resolved the sign
        claimed_side = (mean_delta > 0) == (expected == "> 0")
        return (SMALLER if verdict in v.INSIDE else AGREES) if claimed_side else DISAGREES, size
    return (NEGLIGIBLE if inside else INCONCLUSIVE), size


def mirror_text(claim: Claim, row: dict) -> str:
    """What the row means for the claim made the other way round ('' when nobody claims it)."""
    if not claim.mirror:
        return ""
    direction, _ = judge_claim(OPPOSITE[claim.expected], row["verdict"], row["mean_delta"], row)
    who = "; ".join(source.split(",")[0] for source, _ in claim.mirror_sources)
    return f"{claim.mirror} ({who}, expects {OPPOSITE[claim.expected]}): {direction}"


def _source_columns(claim: Claim) -> dict:
    sources = claim.all_sources()
    return {"claim": claim.claim, "sources": "; ".join(s for s, _ in sources),
            "setting": " | ".join(f"{s}: {how}" for s, how in sources), "comparison": claim.comparison,
            "expected": claim.expected}


def counted_row(claim: Claim) -> dict:
    """A claim decided by counted work: Δ = multiply-adds per image of selection − baseline, exact (no
    random seed, no interval, no margin): one row, whatever the train_rows."""
    selection, baseline = work.macs(claim.selection), work.macs(claim.baseline)
    delta = float(selection - baseline)
    row = {**_source_columns(claim), "train_rows": np.nan, "metric": WORK, "role": DECIDES, "mean_delta": delta,
           "n_pairs": 0, **alone(delta, delta),
           "family": "counted exactly from the configs (no sampling)", "family_size": 1, "margin": 0.0,
           "verdict": v.HIGHER if delta > 0 else v.LOWER if delta < 0 else v.EQUIVALENT, "timing_group": "",
           "verdict_from": COUNTED_FROM}
    row["setting"] += (f" | ours, counted: {selection:,} vs {baseline:,} multiply-adds per image "
                       f"({selection / baseline:.2f}×)")
    row["direction"], row["size"] = judge_claim(claim.expected, row["verdict"], delta, row)
    return {**row, "mirror": "", "tally": COUNTED}


def evaluated(runs: pd.DataFrame, margin: float = v.MARGIN, claims=CLAIMS, test_set=None,
              compare: Comparer | None = None
              ) -> list[tuple[dict, Claim, RunConfig, RunConfig]]:
    """(row, claim, selection, baseline) for every run-decided claim at every train_rows where both configs
    have runs, each of its metrics judged by vitcore.stats.compare (with the store's `test_set`, as the
    comparison's card is). Claims decided by counted work are `counted_row`s, not here. `compare(selection,
    baseline, margin, metrics)`: a cached engine instead (vitcore.study.Study.compare: measured once)."""
    compare = or_uncached(compare, runs, test_set)
    present = set(runs["config_id"].unique()) if len(runs) else set()
    out = []
    for claim in (c for c in claims if not c.counted):
        for train_rows in sorted(int(r) for r in runs["train_rows"].unique()) if len(runs) else []:
            selection, baseline = claim.at(train_rows)
            if selection.config_id not in present or baseline.config_id not in present:
                continue
            metrics = [m for m, _ in claim.metrics()]
            result = compare(selection, baseline, margin, metrics).metrics.set_index("metric")
            for metric, role in claim.metrics():
                row = result.loc[metric].to_dict()
                direction, size = judge_claim(claim.expected, row["verdict"], row["mean_delta"], row)
                out.append(({**_source_columns(claim), "train_rows": train_rows, "metric": metric, "role": role,
                             **{c: row[c] for c in COLUMNS if c in row}, "n_pairs": int(row["n_pairs"]),
                             "direction": direction, "size": size,
                             "mirror": mirror_text(claim, row) if role == DECIDES else "",
                             "tally": COUNTED if role == DECIDES else NOT_COUNTED_BESIDE},
                            claim, selection, baseline))
    return out


# verdict_from of the rows no plan judges and no single comparison decides (every other row's: vitcore.study.lead)
COUNTED_FROM = "counted exactly from the configs (no sample, not in a plan)"
DATA_SIZE_FROM = "fixed sample: the data-size curve's bootstrap over every stored random seed (not in a plan)"
SEED_NOISE_FROM = "fixed sample: the noise grid's crossed runs (not in a plan)"

DATA_SIZE = "ViTs gain more from more data than convnets"
DATA_SIZE_FAMILY = "the data-size curve's slope (one comparison)"


def data_size_row(runs: pd.DataFrame, test_set=None, estimate=None) -> dict:
    """The ledger's data-size row: the ViT paper's data-size claim against our data-size curve. Δ is the change
    of ViT − convnet test accuracy per doubling of the training rows, smallest to largest row count
    (vitcore.analysis.crossover), with its bootstrap interval over random seeds and (with the store's
    `test_set`) test images — one comparison: the interval is the verdict's; the crossover_* columns say where
    the monotone fit crosses zero. train_rows is empty: the row spans the curve. `estimate`: that crossover
    (scaling.crossover_estimate(runs, test_set=test_set)) when the caller holds it already (vitcore.study)."""
    est = scaling.crossover_estimate(runs, test_set=test_set) if estimate is None else estimate
    measured = np.isfinite(est.per_doubling_low)
    resolved = measured and (est.per_doubling_low > 0 or est.per_doubling_high < 0)
    verdict = (v.HIGHER if est.per_doubling > 0 else v.LOWER) if resolved else (v.INCONCLUSIVE if measured
                                                                                  else v.TOO_FEW)
    rows = ", ".join(f"{r:,}" for r in est.row_counts) or "none yet"
    row = {"claim": DATA_SIZE, "sources": f"{VIT_PAPER}, §4.2",
           "setting": "pre-training on ImageNet, ImageNet-21k, JFT-300M: ViTs trail ResNets on the smallest and "
                      f"overtake them on the largest. Ours: Fashion-MNIST at {rows} rows. "
                      + scaling.crossover_sentence(est).replace("**", ""),
           "comparison": "ViT − convnet, change per doubling of the training rows", "train_rows": np.nan,
           "metric": "test_accuracy", "role": DECIDES, "expected": "> 0", "mean_delta": est.per_doubling,
           "n_pairs": int(sum(est.n_pairs)), **alone(est.per_doubling_low, est.per_doubling_high),
           "family": DATA_SIZE_FAMILY,
           "family_size": 1, "margin": np.nan, "verdict": verdict, "timing_group": "",
           "crossover_rows": est.rows, "crossover_low": est.low, "crossover_high": est.high,
           "mirror": "", "tally": COUNTED, "verdict_from": DATA_SIZE_FROM}
    row["direction"], row["size"] = judge_claim("> 0", verdict, est.per_doubling, row)
    return row


SEED_NOISE = "data sampling is the largest source of seed noise"
SEED_NOISE_FAMILY = "the noise grid's sources, one model and train_rows (one comparison)"
SEED_NOISE_METRIC = "test_accuracy_sd"  # Δ is a difference of standard deviations of test accuracy
BOUTHILLIER = "Bouthillier et al. 2021, Accounting for Variance in Machine Learning Benchmarks"


def seed_noise_rows(runs: pd.DataFrame) -> list[dict]:
    """Bouthillier et al.'s finding against the noise grid's crossed runs (vitcore.analysis.noise), one
    row per model and train_rows measured: Δ = sd of test accuracy with only the data sample varying
    − the larger of the sds with only the init or only the batch order varying (each source alone,
    as they measure it), with its 95% generalized interval (the verdict's); n_pairs holds the runs."""
    rows = []
    for cell in noise.data_dominance(runs).itertuples():
        if cell.cell not in (RunConfig().label(), RunConfig(model="convnet").label()):
            continue  # the article's ViT and its convnet (the ViT without position embedding serves the Δ)
        low, high = own_interval(cell)  # its 95% generalized interval: one comparison, the verdict's
        resolved = low > 0 or high < 0
        verdict = (v.HIGHER if cell.contrast > 0 else v.LOWER) if resolved else v.INCONCLUSIVE
        row = {"claim": SEED_NOISE, "sources": f"{BOUTHILLIER}, §3 and Fig. 1",
               "setting": "five case studies (image classification and segmentation, NLP, an MLP), each source "
                          "varied alone: bootstrap data sampling the largest, weight init and data order smaller. "
                          f"Ours: {cell.cell}, Fashion-MNIST, {cell.design} crossed data × init × order seeds; "
                          "the training sample only (the test set is fixed)",
               "comparison": f"{cell.cell}: sd(data sample alone) − max(sd(init alone), sd(order alone))",
               "train_rows": cell.train_rows, "metric": SEED_NOISE_METRIC, "role": DECIDES, "expected": "> 0",
               "mean_delta": cell.contrast, "n_pairs": cell.runs, **alone(low, high), "family": SEED_NOISE_FAMILY,
               "family_size": 1, "margin": np.nan, "verdict": verdict, "timing_group": "", "mirror": "",
               "tally": COUNTED, "verdict_from": SEED_NOISE_FROM}
        row["direction"], row["size"] = judge_claim("> 0", verdict, cell.contrast, row)
        rows.append(row)
    return rows


def fixed_rows(runs: pd.DataFrame, test_set=None, crossover=None) -> list[dict]:
    """The rows that do not depend on the margin: the data-size row (`crossover`: as data_size_row's
    `estimate`) and the seed-noise rows."""
    return [data_size_row(runs, test_set, crossover), *seed_noise_rows(runs)]


def claims_table(runs: pd.DataFrame, margin: float = v.MARGIN, claims=CLAIMS, data_size: bool = True,
                 test_set=None, fixed: list[dict] | None = None, compare: Comparer | None = None) -> pd.DataFrame:
    """Every ledger row (COLUMNS): each run-decided claim at each train_rows and metric, computed with
    vitcore.stats.compare on `runs` (RunStore.table()); each claim decided by counted work (counted_row);
    then (`data_size`) the data-size row and the seed-noise rows (`fixed`, computed once for several margins:
    fixed_rows). The `tally` column says whether a row is counted. `compare`: as evaluated()."""
    rows = [row for row, *_ in evaluated(runs, margin, claims, test_set, compare)]
    rows += [counted_row(claim) for claim in claims if claim.counted]
    if data_size:
        rows += fixed_rows(runs, test_set) if fixed is None else fixed
    return pd.DataFrame(rows, columns=COLUMNS)


def tally_of(table: pd.DataFrame) -> dict:
    """The one tally of a ledger: how many counted rows read each direction word, how many rows are
    counted and how many are shown but not counted (the Claims page's cards and line, the CLI); `exploratory`: how
    many counted rows a plan asks at another margin than this one (an exploratory fixed-sample test, not the plan's)."""
    counted = table["tally"] == COUNTED
    found = table.loc[counted, "direction"].value_counts()
    plans = table["plan"] if "plan" in table.columns else pd.Series("", index=table.index)
    exploratory = counted & plans.astype(object).where(plans.notna(), "").astype(str).str.startswith("exploratory")
    return {**{word: int(found.get(word, 0)) for word in DIRECTIONS}, "counted": int(counted.sum()),
            "not_counted": int((~counted).sum()), "exploratory": int(exploratory.sum())}


def tally(runs: pd.DataFrame, margins=v.TALLY_MARGINS, claims=CLAIMS, test_set=None, compare: Comparer | None = None,
          fixed: list[dict] | None = None) -> pd.DataFrame:
    """`tally_of` the whole ledger (claims_table with its data-size and seed-noise rows) at each margin:
    margin, one column per direction word, counted, not_counted. `compare`, `fixed`: a Study's caches."""
    fixed = fixed_rows(runs, test_set) if fixed is None else fixed
    rows = [{"margin": margin, **tally_of(claims_table(runs, margin, claims, test_set=test_set, fixed=fixed,
                                                       compare=compare))}
            for margin in margins]
    return pd.DataFrame(rows, columns=["margin", *DIRECTIONS, "counted", "not_counted", "exploratory"])


def tally_line(counts: dict, margin: float) -> str:
    """One tally in words: '±0.01: 28 agree, 0 agree in direction (smaller than the margin), 4 shown negligible,
    1 real of undetermined size, 6 inconclusive, 4 disagree — of 43 counted comparisons (…)' (the CLI prints
    it; the page shows the same numbers)."""
    words = ", ".join(d.counted.format(n=counts[d.word]) for d in REGISTRY)
    return (f"±{margin:g}: {words} — of {counts['counted']} counted comparisons ({counts['not_counted']} rows "
            f"shown beside, not counted{exploratory_words(counts)})")


def exploratory_words(counts: dict) -> str:
    """'; 16 counted ones exploratory: their plans registered another margin' ('' for none): a tally that mixes
    exploratory fixed-sample tests in with planned verdicts says so."""
    n = int(counts.get("exploratory", 0) or 0)
    return f"; {n} counted one{'' if n == 1 else 's'} exploratory: {'its plan' if n == 1 else 'their plans'} " \
           "registered another margin" if n else ""
