"""What pairing by the random seed removes, over every committed paired comparison — not one cell.

A comparison here is what the app judges: a single-switch change of a ViT config (vitcore.stats.families)
or the article's ViT against its convnet, at one train_rows, over the random seeds both configs have (runs
of the plain random seed: the noise grid's crossed runs, with data/init/order seeds of their own, are left
to vitcore.analysis.noise). For each, over its n paired random seeds,

    removed = 1 − var(Δ per seed) / (var(selection) + var(baseline))

is the share of an unpaired Δ's variance (two independent sets of runs) that pairing takes away:
2·cov / (var + var). Negative when the two configs' seed effects happen to anti-correlate. `survey`
lists every comparison; `advice` states the distribution (the Seed noise page and docs/what-varies.md).
No TensorFlow.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from vitcore.config.numbers import percent
from vitcore.config.run import SEED_FIELDS, RunConfig
from vitcore.stats.families import FLIP_FIELDS

MIN_PAIRS = 5  # fewer paired random seeds give a variance ratio too noisy to count
COLUMNS = ["comparison", "train_rows", "n_pairs", "sd_delta", "sd_unpaired", "removed"]


def _configs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per config of plain random-seed runs: config_id, train_rows, model and FLIP_FIELDS, label."""
    plain = runs[runs.reindex(columns=list(SEED_FIELDS)).isna().all(axis=1)]
    fields = [f for f in ("model", *FLIP_FIELDS) if f in plain.columns]
    return plain.drop_duplicates("config_id")[["config_id", "label", "train_rows", *fields]]


def _comparisons(configs: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(selection id, baseline id, 'selection − baseline') for every single-switch change between two ViT
    configs at one train_rows, and the article's ViT against its convnet at each train_rows."""
    out = []
    fields = [f for f in FLIP_FIELDS if f in configs.columns]
    for rows, part in configs.groupby("train_rows"):
        vits = part[part["model"] == "vit"]
        values = vits[fields].astype(object).where(vits[fields].notna(), None).to_numpy()
        for i, j in itertools.combinations(range(len(vits)), 2):
            differ = [k for k, (a, b) in enumerate(zip(values[i], values[j])) if a != b]
            if len(differ) == 1:  # the baseline is the side at the article's ViT's value, as the app orients it
                default = getattr(RunConfig(), fields[differ[0]])
                a, b = (vits.iloc[j], vits.iloc[i]) if values[i][differ[0]] == default else (vits.iloc[i], vits.iloc[j])
                out.append((a["config_id"], b["config_id"], f"{a['label']} − {b['label']}"))
        vit, convnet = (RunConfig(model=m, train_rows=int(rows)).config_id for m in ("vit", "convnet"))
        if {vit, convnet} <= set(part["config_id"]):
            out.append((vit, convnet, "ViT − convnet (the article's)"))
    return out


def survey(runs: pd.DataFrame, metric: str = "test_accuracy", min_pairs: int = MIN_PAIRS) -> pd.DataFrame:
    """Every committed paired comparison with at least `min_pairs` paired random seeds (COLUMNS)."""
    if runs is None or runs.empty:
        return pd.DataFrame(columns=COLUMNS)
    configs = _configs(runs)
    plain = runs[runs["config_id"].isin(configs["config_id"])]
    by_seed = {cid: part.set_index("seed")[metric] for cid, part in plain.groupby("config_id")}
    rows = []
    for sel, base, name in _comparisons(configs):
        both = pd.concat([by_seed[sel], by_seed[base]], axis=1, join="inner").dropna().to_numpy()
        if len(both) < min_pairs:
            continue
        unpaired = both[:, 0].var(ddof=1) + both[:, 1].var(ddof=1)
        paired = (both[:, 0] - both[:, 1]).var(ddof=1)
        rows.append({"comparison": name, "train_rows": int(configs.set_index("config_id").loc[sel, "train_rows"]),
                     "n_pairs": len(both), "sd_delta": np.sqrt(paired), "sd_unpaired": np.sqrt(unpaired),
                     "removed": 1 - paired / unpaired if unpaired > 0 else np.nan})
    return pd.DataFrame(rows, columns=COLUMNS).sort_values("removed", ascending=False, ignore_index=True)


def advice(table: pd.DataFrame) -> str:
    """The distribution of what pairing removes, in one paragraph."""
    removed = table["removed"].dropna()
    if removed.empty:
        return ("No committed comparison has 5 or more paired random seeds yet: pairing by the random seed costs "
                "nothing, so pair anyway.")
    q1, median, q3 = (percent(x) for x in np.percentile(removed, [25, 50, 75]))
    top, kept = table.iloc[0], table.dropna(subset=["removed"])
    pooled = 1 - (kept["sd_delta"] ** 2).sum() / (kept["sd_unpaired"] ** 2).sum()
    return (f"Over all {len(removed)} committed paired comparisons (single-switch changes and the ViT against its "
            f"convnet, each at one training size, {MIN_PAIRS}+ paired random seeds), pairing by the random seed "
            f"removes a median **{median}** of an unpaired Δ's variance (quartiles {q1}–{q3}, range "
            f"{percent(removed.min())} to {percent(removed.max())}); it removes more than half in "
            f"{(removed > 0.5).sum()} of {len(removed)} and nothing or less in {(removed <= 0).sum()}. The most: "
            f"{top['comparison']} at {top['train_rows']:,} rows, {percent(top['removed'])} over {top['n_pairs']} "
            f"pairs; pooled over all of them (summed variances) {percent(pooled)}. One comparison's share is itself "
            "noisy (a ratio of two variances over about 10 random seeds; a negative one is that noise), so read the "
            "spread, not one cell. Pairing costs nothing — the same random seeds on both sides — so pair, and for a "
            "narrower interval add random seeds.")
