"""The claims ledger: what the source article and the published papers claim, and what our runs say.

One claim is one distinct comparison (Δ = selection − baseline, the two configs differing as the
claim says) on the metric its source measured, with the direction the claim expects ("> 0", "< 0"
or "≈ 0"); a claim several sources make is one claim listing its sources. It is evaluated at every
train_rows where the store has both configs (for the data-size claim that is the data-size curve),
so the ledger says where it holds. The Δ, both tests, the family and the verdict come from the
comparison engine (vitcore.stats.compare): a ledger row is the card the Ablations page shows for the
same two configs, in the same correction family (vitcore.stats.families), never a second verdict.

Direction and size are judged separately:
    direction   agrees      resolved (adjusted p < 0.05) in the claimed direction; for "≈ 0": shown
                            inside ±margin (equivalent, or a resolved Δ inside ±margin)
                disagrees   resolved the other way, or shown equivalent to zero where a difference
                            is claimed; for "≈ 0": resolved and not shown inside ±margin
                unresolved  inconclusive, too few seeds, not comparable
    size        the engine's size word (vitcore.stats.readings): beyond (the simultaneous 95% interval
                clears ±margin), inside (the equivalence test resolves), or undetermined
The source article's own numbers are best validation accuracy (optimistic: the epoch is selected
on the split it reports); those claims are checked on it, with test accuracy beside (role).

    python -m vitcore claims --out claims.csv
No TensorFlow, no Streamlit: the Claims page and the CLI both call `claims_table`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vitcore.config.run import ARTICLE_MODELS, RunConfig
from vitcore.stats import compare as engine
from vitcore.stats import estimates as v
from vitcore.stats import readings
from vitcore.stats.testset import TEST_COLUMNS

COLUMNS = ["claim", "sources", "setting", "comparison", "train_rows", "metric", "role", "expected", "mean_delta",
           "n_pairs", *v.JUDGEMENT_COLUMNS, "timing_group", *TEST_COLUMNS, "direction", *readings.READING_COLUMNS,
           "crossover_rows", "crossover_low", "crossover_high"]
EXPECTED = ("> 0", "< 0", "≈ 0")
AGREES, DISAGREES, UNRESOLVED = "agrees", "disagrees", "unresolved"
DIRECTIONS = (AGREES, DISAGREES, UNRESOLVED)
BEYOND_MARGIN, INSIDE_MARGIN, SIZE_OPEN = readings.SIZE_BEYOND, readings.SIZE_INSIDE, readings.SIZE_OPEN
AS_CLAIMED, BESIDE = "as claimed", "test accuracy beside"

SEED = "source article (Vision Transformers)"
VIT_PAPER = "Dosovitskiy et al. 2021, An Image is Worth 16x16 Words"
XIONG = "Xiong et al. 2020, On Layer Normalization in the Transformer Architecture"
BN_PAPERS = "Shen et al. 2020, PowerNorm; Yao et al. 2021, Leveraging Batch Normalization for Vision Transformers"
BEYER = "Beyer, Zhai & Kolesnikov 2022, Better plain ViT baselines for ImageNet-1k"
LEE = "Lee, Lee & Song 2021, Vision Transformer for Small-Size Datasets"
# Every small-data paper's setting differs from ours: the ledger row says so in the setting itself.
OURS = " — ours: a 2-block, 64-wide ViT trained from scratch on Fashion-MNIST for 15 epochs, not their setting"
LEE_SETTING = "Tiny-ImageNet, CIFAR-10/100 and SVHN from scratch, 100 epochs with strong augmentation"


@dataclass(frozen=True)
class Claim:
    """One distinct comparison a claim is about. `selection` and `baseline` are templates: the ledger
    evaluates them at every train_rows the store has both at. `metric` is what the sources measured;
    `beside` adds test accuracy next to an optimistic metric."""
    claim: str
    sources: tuple[tuple[str, str], ...]  # (source, where and how it measured it — or that it only stated it)
    selection: RunConfig
    baseline: RunConfig
    metric: str
    expected: str
    beside: bool = False

    def __post_init__(self) -> None:
        if self.expected not in EXPECTED:
            raise ValueError(f"expected must be one of {', '.join(EXPECTED)}; got {self.expected!r}")
        if self.selection.train_rows != self.baseline.train_rows:
            raise ValueError("a claim compares two configs at one train_rows (paired by random seed)")

    @property
    def comparison(self) -> str:
        return f"{self.selection.label()} − {self.baseline.label()}"

    def at(self, train_rows: int) -> tuple[RunConfig, RunConfig]:
        return self.selection.replace(train_rows=train_rows), self.baseline.replace(train_rows=train_rows)

    def metrics(self) -> list[tuple[str, str]]:
        """(metric, role): the sources' metric first, then test accuracy beside an optimistic one."""
        return [(self.metric, AS_CLAIMED)] + ([("test_accuracy", BESIDE)] if self.beside else [])


VIT, CONVNET = ARTICLE_MODELS["vit"], ARTICLE_MODELS["convnet"]  # the article's two models (config.run)
ONE_SEED = "Fashion-MNIST, 15 epochs, 1 random seed: "

CLAIMS: tuple[Claim, ...] = (
    Claim("the ViT beats the convnet", ((SEED, ONE_SEED + "best val 0.7160 vs 0.6790 at 1,000 rows, 0.7970 vs "
                                               "0.7620 at 4,000 rows"),), VIT, CONVNET, "best_val_accuracy", "> 0",
          beside=True),
    Claim("CNNs beat ViTs on small data", ((VIT_PAPER, "§1: ImageNet-1k without strong regularisation, ViTs a few "
                                                       "points below ResNets of comparable size"),),
          VIT, CONVNET, "test_accuracy", "< 0"),
    Claim("the ViT overfits more than the convnet", ((SEED, ONE_SEED + "final train 0.8850 vs 0.7060 at 1,000 rows; "
                                                            "train − val gap +0.1545 vs +0.0040 at 4,000 rows"),),
          VIT, CONVNET, "gap", "> 0"),
    Claim("post-norm needs learning-rate warm-up",
          ((SEED, "stated, not measured (\"post-norm transformers need learning-rate warmup to train at all\")"),
           (XIONG, "§3.2: Post-LN Transformer, machine translation: without warm-up it trains far worse")),
          VIT.replace(norm_placement="post", warmup_epochs=2), VIT.replace(norm_placement="post"), "test_accuracy",
          "> 0"),
    Claim("pre-norm does not need warm-up", ((XIONG, "§4.2: Pre-LN Transformer, translation and BERT pre-training: "
                                                     "trains as well without warm-up"),),
          VIT.replace(warmup_epochs=2), VIT, "test_accuracy", "≈ 0"),
    Claim("BatchNorm in place of LayerNorm hurts a transformer",
          ((SEED, "stated, citing a BatchNorm moving-average lag measured at short training runs"),
           (BN_PAPERS, "NLP transformers (Shen); ViT on ImageNet-1k with every LayerNorm replaced by BatchNorm: "
                       "frequent crashes (Yao)")),
          VIT.replace(norm="batch"), VIT, "test_accuracy", "< 0"),
    Claim("removing the position embedding hurts",
          ((SEED, "stated, not measured (attention is permutation-equivariant)"),
           (VIT_PAPER, "Table 8: ImageNet 5-shot linear, ViT-B/16: no position embedding 0.614 vs 1-D learned 0.642")),
          VIT.replace(pos_embedding="none"), VIT, "test_accuracy", "< 0"),
    Claim("smaller patches are more accurate (4 vs 7)", ((VIT_PAPER, "Tables 5–6: ImageNet-1k, ViT-B/16 77.9 vs "
                                                                      "ViT-B/32 73.4 top-1"),),
          VIT.replace(patch_size=4), VIT, "test_accuracy", "> 0"),
    Claim("smaller patches are more accurate (7 vs 14)", ((VIT_PAPER, "Tables 5–6, as above"),),
          VIT, VIT.replace(patch_size=14), "test_accuracy", "> 0"),
    Claim("smaller patches cost more compute (4 vs 7)", ((VIT_PAPER, "Tables 5–6: ImageNet-1k, ViT-B/16 needs about "
                                                                      "4x the compute of ViT-B/32"),),
          VIT.replace(patch_size=4), VIT, "seconds", "> 0"),
    # What the ViT papers tried on small data (issue 21; vitcore.config.papers).
    Claim("a fixed 2-D sine-cosine position embedding does as well as a learned one",
          ((BEYER, "ImageNet-1k, ViT-S/16, 90 epochs: fixed 2-D sin-cos is one of the changes of their plain baseline"
                   + OURS),
           (VIT_PAPER, "Table 8: ImageNet, ViT-B/16: 1-D, 2-D and relative embeddings about equal" + OURS)),
          VIT.replace(pos_embedding="sincos"), VIT, "test_accuracy", "≈ 0"),
    Claim("a class token and global average pooling work equally well",
          ((VIT_PAPER, "Appendix D.3: ImageNet, ViT-B/16, each with its own tuned learning rate (ours: lr 1e-3 for "
                       "both, tuned for neither)" + OURS),),
          VIT.replace(pooling="cls"), VIT, "test_accuracy", "≈ 0"),
    Claim("Shifted Patch Tokenization lifts a ViT on small data", ((LEE, LEE_SETTING + OURS),),
          VIT.replace(tokenizer="shifted"), VIT, "test_accuracy", "> 0"),
    Claim("Locality Self-Attention lifts a ViT on small data", ((LEE, LEE_SETTING + OURS),),
          VIT.replace(self_attention="lsa"), VIT, "test_accuracy", "> 0"),
    Claim("SPT and LSA together lift a ViT on small data",
          ((LEE, LEE_SETTING + ": +2.96 points on Tiny-ImageNet on average over their ViTs" + OURS),),
          VIT.replace(tokenizer="shifted", self_attention="lsa"), VIT, "test_accuracy", "> 0"),
)


def judge_claim(expected: str, verdict: str, mean_delta: float, row: dict) -> tuple[str, str]:
    """(direction, size) of one evaluated claim: `row` carries the judged Δ (ci_adj_*, margin)."""
    if expected not in EXPECTED:
        raise ValueError(f"expected must be one of {', '.join(EXPECTED)}; got {expected!r}")
    inside = verdict == v.EQUIVALENT or verdict in v.INSIDE
    size = readings.size_word({**row, "verdict": verdict})
    if expected == "≈ 0":
        direction = AGREES if inside else (DISAGREES if verdict in v.RESOLVED else UNRESOLVED)
    elif verdict in v.RESOLVED and np.isfinite(mean_delta):
        direction = AGREES if (mean_delta > 0) == (expected == "> 0") else DISAGREES
    else:
        direction = DISAGREES if verdict == v.EQUIVALENT else UNRESOLVED
    return direction, size


def evaluated(runs: pd.DataFrame, margin: float = v.MARGIN, claims=CLAIMS, test_set=None, compare=None
              ) -> list[tuple[dict, Claim, RunConfig, RunConfig]]:
    """(row, claim, selection, baseline) for every claim at every train_rows where both configs have
    runs, each of its metrics judged by vitcore.stats.compare (with the store's `test_set`, as the
    comparison's card is). `compare(selection, baseline, margin, metrics)`: a cached engine instead
    (vitcore.study.Study.compare: measured once, judged at each margin)."""
    compare = compare or _engine(runs, test_set)
    present = set(runs["config_id"]) if len(runs) else set()
    out = []
    for claim in claims:
        for train_rows in sorted(int(r) for r in runs["train_rows"].unique()) if len(runs) else []:
            selection, baseline = claim.at(train_rows)
            if selection.config_id not in present or baseline.config_id not in present:
                continue
            metrics = [m for m, _ in claim.metrics()]
            result = compare(selection, baseline, margin, metrics).metrics.set_index("metric")
            for metric, role in claim.metrics():
                row = result.loc[metric].to_dict()
                direction, size = judge_claim(claim.expected, row["verdict"], row["mean_delta"], row)
                out.append(({"claim": claim.claim, "sources": "; ".join(s for s, _ in claim.sources),
                             "setting": " | ".join(f"{s}: {how}" for s, how in claim.sources),
                             "comparison": claim.comparison, "train_rows": train_rows, "metric": metric,
                             "role": role, "expected": claim.expected, **{c: row[c] for c in COLUMNS if c in row},
                             "n_pairs": int(row["n_pairs"]), "direction": direction, "size": size},
                            claim, selection, baseline))
    return out


def _engine(runs: pd.DataFrame, test_set):
    """stats.compare.compare over `runs` as evaluated() calls it: (selection, baseline, margin, metrics)."""
    return lambda selection, baseline, margin, metrics: engine.compare(runs, selection, baseline, margin,
                                                                       metrics=metrics, test_set=test_set)


DATA_SIZE = "ViTs gain more from more data than convnets"
DATA_SIZE_FAMILY = "the data-size curve's slope (one comparison)"


def data_size_row(runs: pd.DataFrame) -> dict:
    """The ledger's data-size row: the ViT paper's data-size claim against our data-size curve. Δ is the change
    of ViT − convnet test accuracy per doubling of the training rows (a weighted line in log(rows),
    vitcore.analysis.scaling.crossover_estimate) with its bootstrap interval over random seeds (one
    comparison: the interval is the verdict's); the crossover_* columns say where that line crosses zero.
    train_rows is empty: the row spans the curve."""
    from vitcore.analysis import scaling

    est = scaling.crossover_estimate(runs)
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
           "metric": "test_accuracy", "role": AS_CLAIMED, "expected": "> 0", "mean_delta": est.per_doubling,
           "n_pairs": int(sum(est.n_pairs)), "ci_low": est.per_doubling_low, "ci_high": est.per_doubling_high,
           "ci_adj_low": est.per_doubling_low, "ci_adj_high": est.per_doubling_high, "family": DATA_SIZE_FAMILY,
           "family_size": 1, "margin": np.nan, "verdict": verdict, "timing_group": "",
           "crossover_rows": est.rows, "crossover_low": est.low, "crossover_high": est.high}
    row["direction"], row["size"] = judge_claim("> 0", verdict, est.per_doubling, row)
    return row


SEED_NOISE = "data sampling is the largest source of seed noise"
SEED_NOISE_FAMILY = "the noise grid's sources, one model and train_rows (one comparison)"
BOUTHILLIER = "Bouthillier et al. 2021, Accounting for Variance in Machine Learning Benchmarks"


def seed_noise_rows(runs: pd.DataFrame) -> list[dict]:
    """Bouthillier et al.'s finding against the noise grid's crossed runs (vitcore.analysis.noise), one
    row per model and train_rows measured: Δ = sd of test accuracy with only the data sample varying
    − the larger of the sds with only the init or only the batch order varying (each source alone,
    as they measure it), with its 95% generalized interval (the verdict's); n_pairs holds the runs."""
    from vitcore.analysis import noise

    rows = []
    for cell in noise.data_dominance(runs).itertuples():
        if cell.cell not in (RunConfig().label(), RunConfig(model="convnet").label()):
            continue  # the article's ViT and its convnet (the ViT without position embedding serves the Δ)
        resolved = cell.ci_low > 0 or cell.ci_high < 0
        verdict = (v.HIGHER if cell.contrast > 0 else v.LOWER) if resolved else v.INCONCLUSIVE
        row = {"claim": SEED_NOISE, "sources": f"{BOUTHILLIER}, §3 and Fig. 1",
               "setting": "five case studies (image classification and segmentation, NLP, an MLP), each source "
                          "varied alone: bootstrap data sampling the largest, weight init and data order smaller. "
                          f"Ours: {cell.cell}, Fashion-MNIST, {cell.design} crossed data × init × order seeds; "
                          "the training sample only (the test set is fixed)",
               "comparison": f"{cell.cell}: sd(data sample alone) − max(sd(init alone), sd(order alone))",
               "train_rows": cell.train_rows, "metric": "test_accuracy", "role": AS_CLAIMED, "expected": "> 0",
               "mean_delta": cell.contrast, "n_pairs": cell.runs, "ci_low": cell.ci_low, "ci_high": cell.ci_high,
               "ci_adj_low": cell.ci_low, "ci_adj_high": cell.ci_high, "family": SEED_NOISE_FAMILY,
               "family_size": 1, "margin": np.nan, "verdict": verdict, "timing_group": ""}
        row["direction"], row["size"] = judge_claim("> 0", verdict, cell.contrast, row)
        rows.append(row)
    return rows


def claims_table(runs: pd.DataFrame, margin: float = v.MARGIN, claims=CLAIMS, data_size: bool = True,
                 test_set=None, compare=None) -> pd.DataFrame:
    """One row per claim, train_rows and metric (COLUMNS), computed with vitcore.stats.compare on
    `runs` (RunStore.table()), then (`data_size`) the data-size row (data_size_row) and the seed-noise
    rows (seed_noise_rows; like the data-size row, they do not depend on the margin). `compare`: as evaluated()."""
    rows = [row for row, *_ in evaluated(runs, margin, claims, test_set, compare)]
    if data_size:
        rows.append(data_size_row(runs))
        rows += seed_noise_rows(runs)
    return pd.DataFrame(rows, columns=COLUMNS)


def tally(runs: pd.DataFrame, margins=v.TALLY_MARGINS, claims=CLAIMS, test_set=None, compare=None) -> pd.DataFrame:
    """How many evaluated claims (rows as claimed, one per claim and train_rows) agree, disagree and are
    unresolved at each margin: margin, agrees, disagrees, unresolved, rows. The data-size row does not
    depend on the margin and is left out."""
    rows = []
    for margin in margins:
        table = claims_table(runs, margin, claims, data_size=False, test_set=test_set, compare=compare)
        found = table.loc[table["role"] == AS_CLAIMED, "direction"].value_counts()
        rows.append({"margin": margin, **{word: int(found.get(word, 0)) for word in DIRECTIONS},
                     "rows": int(found.sum())})
    return pd.DataFrame(rows, columns=["margin", *DIRECTIONS, "rows"])
