"""The claims ledger: what the source article and the published papers claim, and what our runs say.

Each claim is one comparison of two configs on one metric at one train_rows, with the direction the
source expects for Δ = selection − baseline ("> 0", "< 0" or "≈ 0"). The Δ, its interval and its
verdict come from the comparison engine (vitcore.stats.compare), so a row here is the number the
Ablations page shows for the same pair of configs. `agrees`:
    yes          the verdict is resolved in the expected direction, or "equivalent" where ≈ 0 is expected
    no           resolved the other way, resolved where ≈ 0 is expected, or equivalent where a
                 difference is expected
    unresolved   inconclusive, too few seeds, not comparable (the data cannot tell yet)

    python -m vitcore claims --out claims.csv
No TensorFlow, no Streamlit: the Claims page and the CLI both call `claims_table`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vitcore.config.run import RunConfig
from vitcore.stats.compare import compare
from vitcore.stats.estimates import EQUIVALENT, HIGHER, INCONCLUSIVE, LOWER, MARGIN, RESOLVED, TOO_FEW

COLUMNS = ["claim", "source", "setting", "comparison", "train_rows", "metric", "expected", "mean_delta", "ci_low",
           "ci_high", "n_pairs", "verdict", "agrees", "crossover_rows", "crossover_low", "crossover_high"]
EXPECTED = ("> 0", "< 0", "≈ 0")
AGREES = ("yes", "no", "unresolved")

SEED = "source article (Vision Transformers)"
VIT_PAPER = "Dosovitskiy et al. 2021, An Image is Worth 16x16 Words"
XIONG = "Xiong et al. 2020, On Layer Normalization in the Transformer Architecture"
BN_PAPERS = "Shen et al. 2020, PowerNorm; Yao et al. 2021, Leveraging Batch Normalization for Vision Transformers"


@dataclass(frozen=True)
class Claim:
    claim: str
    source: str
    setting: str            # where and how the source measured it (or that it only stated it)
    selection: RunConfig    # Δ = selection − baseline, paired by random seed at train_rows
    baseline: RunConfig
    metric: str
    expected: str           # one of EXPECTED

    def __post_init__(self) -> None:
        if self.expected not in EXPECTED:
            raise ValueError(f"expected must be one of {', '.join(EXPECTED)}; got {self.expected!r}")
        if self.selection.train_rows != self.baseline.train_rows:
            raise ValueError("a claim compares two configs at one train_rows (paired by random seed)")

    @property
    def comparison(self) -> str:
        return f"{self.selection.label()} − {self.baseline.label()}"


def _vit(rows: int, **changes) -> RunConfig:
    return RunConfig(train_rows=rows, **changes)  # the source article's ViT: patch 7, pre-LN, learned positions


def _convnet(rows: int) -> RunConfig:
    return RunConfig(model="convnet", train_rows=rows)


def _seed_claims() -> list[Claim]:
    setting = "Fashion-MNIST {rows:,} rows, 15 epochs, 1 random seed: {detail}"
    claims = []
    for rows, detail in ((1_000, "best val 0.7160 vs 0.6790"), (4_000, "best val 0.7970 vs 0.7620")):
        claims.append(Claim("ViT beats the convnet", SEED, setting.format(rows=rows, detail=detail),
                            _vit(rows), _convnet(rows), "test_accuracy", "> 0"))
    for rows, detail in ((1_000, "final train 0.8850 vs 0.7060 (gap not printed)"),
                         (4_000, "train − val gap +0.1545 vs +0.0040")):
        claims.append(Claim("the ViT overfits more than the convnet", SEED, setting.format(rows=rows, detail=detail),
                            _vit(rows), _convnet(rows), "gap", "> 0"))
    claims.append(Claim("post-norm needs learning-rate warm-up", SEED,
                        "stated, not measured (\"post-norm transformers need learning-rate warmup to train at all\")",
                        _vit(4_000, norm_placement="post", warmup_epochs=2), _vit(4_000, norm_placement="post"),
                        "test_accuracy", "> 0"))
    claims += [Claim("LayerNorm, not BatchNorm, in a transformer block", SEED,
                     "stated, citing a BatchNorm moving-average lag measured at short training runs",
                     _vit(rows, norm="batch"), _vit(rows), "test_accuracy", "< 0") for rows in (1_000, 4_000)]
    claims += [Claim("forgetting the position embedding hurts", SEED,
                     "stated, not measured (attention is permutation-equivariant)",
                     _vit(rows, pos_embedding="none"), _vit(rows), "test_accuracy", "< 0") for rows in (1_000, 4_000)]
    return claims


def _published_claims() -> list[Claim]:
    return [
        Claim("position embeddings help", f"{VIT_PAPER}, Table 8",
              "ImageNet 5-shot linear, ViT-B/16: no position embedding 0.614 vs 1-D learned 0.642",
              _vit(4_000), _vit(4_000, pos_embedding="none"), "test_accuracy", "> 0"),
        Claim("post-norm needs learning-rate warm-up", f"{XIONG}, §3.2",
              "Post-LN Transformer, machine translation: without warm-up it trains far worse",
              _vit(4_000, norm_placement="post", warmup_epochs=2), _vit(4_000, norm_placement="post"),
              "test_accuracy", "> 0"),
        Claim("pre-norm does not need warm-up", f"{XIONG}, §4.2",
              "Pre-LN Transformer, translation and BERT pre-training: trains as well without warm-up",
              _vit(4_000, warmup_epochs=2), _vit(4_000), "test_accuracy", "≈ 0"),
        Claim("naive BatchNorm degrades transformers", BN_PAPERS,
              "NLP transformers (Shen); ViT on ImageNet-1k with every LayerNorm replaced by BatchNorm: "
              "frequent crashes (Yao)",
              _vit(4_000, norm="batch"), _vit(4_000), "test_accuracy", "< 0"),
        Claim("smaller patches are more accurate", f"{VIT_PAPER}, Tables 5–6",
              "ImageNet-1k, ViT-B/16 77.9 vs ViT-B/32 73.4 top-1",
              _vit(4_000, patch_size=4), _vit(4_000), "test_accuracy", "> 0"),
        Claim("smaller patches cost more compute", f"{VIT_PAPER}, Tables 5–6",
              "ImageNet-1k, ViT-B/16 needs about 4x the compute of ViT-B/32",
              _vit(4_000, patch_size=4), _vit(4_000), "seconds", "> 0"),
        Claim("CNNs beat ViTs on small data", f"{VIT_PAPER}, §1",
              "ImageNet-1k without strong regularisation: ViTs a few points below ResNets of comparable size",
              _convnet(1_000), _vit(1_000), "test_accuracy", "> 0"),
    ]


CLAIMS: tuple[Claim, ...] = (*_seed_claims(), *_published_claims())


def agrees(expected: str, verdict: str, mean_delta: float) -> str:
    """yes / no / unresolved: does a verdict on Δ bear out the expected direction?"""
    if expected not in EXPECTED:
        raise ValueError(f"expected must be one of {', '.join(EXPECTED)}; got {expected!r}")
    if verdict == EQUIVALENT:
        return "yes" if expected == "≈ 0" else "no"
    if verdict not in RESOLVED or not np.isfinite(mean_delta):
        return "unresolved"
    if expected == "≈ 0":
        return "no"
    return "yes" if (mean_delta > 0) == (expected == "> 0") else "no"


DATA_SIZE = "ViTs gain more from more data than convnets"


def data_size_row(runs: pd.DataFrame) -> dict:
    """The ledger's last row: the ViT paper's data-size claim against our data-size curve. Δ is the change of
    ViT − convnet test accuracy per doubling of the training rows (a weighted line in log(rows),
    vitcore.analysis.scaling.crossover_estimate) with its bootstrap interval over random seeds; the
    crossover_* columns say where that line crosses zero. train_rows is empty: the row spans the curve."""
    from vitcore.analysis import scaling

    est = scaling.crossover_estimate(runs)
    measured = np.isfinite(est.per_doubling_low)
    resolved = measured and (est.per_doubling_low > 0 or est.per_doubling_high < 0)
    verdict = (HIGHER if est.per_doubling > 0 else LOWER) if resolved else (INCONCLUSIVE if measured else TOO_FEW)
    rows = ", ".join(f"{r:,}" for r in est.row_counts) or "none yet"
    return {"claim": DATA_SIZE, "source": f"{VIT_PAPER}, §4.2",
            "setting": "pre-training on ImageNet, ImageNet-21k, JFT-300M: ViTs trail ResNets on the smallest and "
                       f"overtake them on the largest. Ours: Fashion-MNIST at {rows} rows. "
                       + scaling.crossover_sentence(est).replace("**", ""),
            "comparison": "ViT − convnet, change per doubling of the training rows", "train_rows": np.nan,
            "metric": "test_accuracy", "expected": "> 0", "mean_delta": est.per_doubling,
            "ci_low": est.per_doubling_low, "ci_high": est.per_doubling_high, "n_pairs": int(sum(est.n_pairs)),
            "verdict": verdict, "agrees": agrees("> 0", verdict, est.per_doubling), "crossover_rows": est.rows,
            "crossover_low": est.low, "crossover_high": est.high}


def claims_table(runs: pd.DataFrame, margin: float = MARGIN, claims=CLAIMS, data_size: bool = True) -> pd.DataFrame:
    """One row per claim (COLUMNS), computed with vitcore.stats.compare on `runs` (RunStore.table()), then
    (`data_size`) the data-size row (data_size_row)."""
    rows = []
    for claim in claims:
        result = compare(runs, claim.selection, claim.baseline, margin=margin, metrics=(claim.metric,)).metrics
        row = result[result["metric"] == claim.metric].iloc[0]
        rows.append({"claim": claim.claim, "source": claim.source, "setting": claim.setting,
                     "comparison": claim.comparison, "train_rows": claim.selection.train_rows, "metric": claim.metric,
                     "expected": claim.expected, "mean_delta": row["mean_delta"], "ci_low": row["ci_low"],
                     "ci_high": row["ci_high"], "n_pairs": int(row["n_pairs"]), "verdict": row["verdict"],
                     "agrees": agrees(claim.expected, row["verdict"], row["mean_delta"])})
    if data_size:
        rows.append(data_size_row(runs))
    return pd.DataFrame(rows, columns=COLUMNS)
