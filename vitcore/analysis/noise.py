"""Where the seed noise comes from: test accuracy's variance split into data sample, initial weights,
batch order and their interactions, from the runs of a crossed design (`python -m vitcore sweep noise`).

The model: a run's accuracy y[d, i, o] = mu + D[d] + I[i] + O[o] + DI[d, i] + DO[d, o] + IO[i, o]
+ DIO[d, i, o], every term an independent zero-mean normal with its own variance (a crossed
random-effects model). Training is deterministic, so the three-way term is the whole residual: one
run per (data, init, order). Each variance is estimated by the method of moments from the balanced
ANOVA's mean squares (Searle, Casella & McCulloch 1992, ch. 4); a negative estimate shows as 0.
Intervals (95%): for the components and shares of one table (a cell, or a paired Δ's differences),
generalized confidence intervals — with 2-4 levels a source's estimate is a difference of mean
squares, for which Satterthwaite's interval is poor and a percentile bootstrap undercovers (0.85
measured). For what pairing by one source alone removes from a Δ's variance, which needs both arms'
covariances, a parametric bootstrap: both arms simulated jointly from the fitted model (each term a
2x2 covariance), estimated again, the 2.5 and 97.5 percentiles (coverage: tests/test_noise.py). numpy, scipy, pandas.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
from scipy import stats

from vitcore.config.numbers import number, percent
from vitcore.config.run import SEED_FIELDS
from vitcore.stats.estimates import MARGIN

SOURCES = ("data", "init", "order")
COMPONENTS = ("data", "init", "order", "data×init", "data×order", "init×order", "data×init×order")
INTERACTIONS, TOTAL = "interactions", "total"
ALONE = ("data alone", "init alone", "order alone")  # the variance when only that source varies
ROWS = (*COMPONENTS, INTERACTIONS, *ALONE, TOTAL)  # a decomposition's rows
DRAWS, CONFIDENCE = 2_000, 0.95  # bootstrap tables per estimate; the intervals' level
# The cells of the noise grid; a cell's runs share every config field but the four seeds.
CELL_FIELDS = ("model", "pos_embedding", "norm_placement", "norm", "patch_size", "width", "depth", "heads",
               "mlp_dim", "train_rows", "epochs", "batch_size", "lr", "warmup_epochs")
DELTA_SWITCH = ("pos_embedding", "none", "learned")  # the paired Δ: position embedding none − learned
TABLE_COLUMNS = ["cell", "model", "train_rows", "design", "runs", "component", "variance", "variance_low",
                 "variance_high", "share", "share_low", "share_high"]
PAIRING_COLUMNS = ["cell", "train_rows", "design", "paired_by", "variance", "removed", "removed_low",
                   "removed_high", "seeds_for_margin"]


def mean_squares(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The balanced ANOVA of tables y (..., data, init, order), one run per cell: mean squares
    (..., 7) and their degrees of freedom (7,), in COMPONENTS order. Needs 2+ levels per source."""
    a, b, c = y.shape[-3:]
    if min(a, b, c) < 2:
        raise ValueError(f"a crossed design needs 2 or more levels of each source; got {a} x {b} x {c}")
    m = y.mean(axis=(-3, -2, -1), keepdims=True)
    md, mi, mo = (y.mean(axis=axes, keepdims=True) for axes in ((-2, -1), (-3, -1), (-3, -2)))
    mdi, mdo, mio = (y.mean(axis=axis, keepdims=True) for axis in (-1, -2, -3))
    effects = (md - m, mi - m, mo - m, mdi - md - mi + m, mdo - md - mo + m, mio - mi - mo + m,
               y - mdi - mdo - mio + md + mi + mo - m)  # each broadcast over the full table: SS weights b*c etc.
    df = np.array([a - 1, b - 1, c - 1, (a - 1) * (b - 1), (a - 1) * (c - 1), (b - 1) * (c - 1),
                   (a - 1) * (b - 1) * (c - 1)])
    squares = np.stack([(np.broadcast_to(e, y.shape) ** 2).sum(axis=(-3, -2, -1)) for e in effects], axis=-1)
    return squares / df, df


def from_mean_squares(ms: np.ndarray, levels: tuple[int, ...]) -> np.ndarray:
    """Method-of-moments components (..., 7) from the mean squares' expectations (unbiased; may be
    negative): E[MS_data] = e + c·DI + b·DO + bc·D, E[MS_data×init] = e + c·DI, and so on."""
    a, b, c = levels
    d, i, o, di, do, io, e = np.moveaxis(ms, -1, 0)
    return np.stack([(d - di - do + e) / (b * c), (i - di - io + e) / (a * c), (o - do - io + e) / (a * b),
                     (di - e) / c, (do - e) / b, (io - e) / a, e], axis=-1)


def components(y: np.ndarray) -> np.ndarray:
    """Method-of-moments variance components of balanced tables y (..., data, init, order): (..., 7)."""
    return from_mean_squares(mean_squares(y)[0], y.shape[-3:])


def shares(variances: np.ndarray) -> np.ndarray:
    """Each of _grouped's rows over the total (the 7 terms' sum: the unbiased variance of one run),
    within [0, 1]: a negative estimate shows as 0 (so the shown shares may add up to a little
    over 1). Measured on synthetic tables of our design, the intervals of this form cover better
    than shares of components truncated first (three-way share: 0.92 vs 0.78)."""
    total = variances[..., -1:]  # _grouped's total
    ratio = np.divide(variances, total, out=np.full_like(variances, np.nan), where=total > 0)
    return np.clip(ratio, 0, 1)


def _effects(rng, draws: int, levels: tuple[int, int, int], scales: np.ndarray) -> np.ndarray:
    """Simulated tables (draws, a, b, c, k) of the model whose terms have covariance `scales`
    (7, k, k): each term drawn over its own sources' levels and broadcast over the others."""
    a, b, c = levels
    k = scales.shape[-1]
    shapes = ((a, 1, 1), (1, b, 1), (1, 1, c), (a, b, 1), (a, 1, c), (1, b, c), (a, b, c))
    total = np.zeros((draws, a, b, c, k))
    for shape, cov in zip(shapes, scales, strict=True):
        values, vectors = np.linalg.eigh(cov)
        root = vectors * np.sqrt(np.clip(values, 0, None))  # a PSD square root: negative estimates -> 0
        total += rng.standard_normal((draws, *shape, k)) @ root.T
    return total


def _percentiles(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    tail = (1 - CONFIDENCE) / 2 * 100
    return np.nanpercentile(values, tail, axis=0), np.nanpercentile(values, 100 - tail, axis=0)


def decompose(y: np.ndarray, draws: int = DRAWS, seed: int = 0) -> pd.DataFrame:
    """One balanced table (data, init, order) -> per component: variance (negative estimates as 0)
    and share, each with a 95% generalized confidence interval: every mean square's expectation
    replaced by its generalized pivot MS·df/χ²(df) (Weerahandi 1993; Burdick, Borror & Montgomery
    2005, ch. 5), the components recomputed; percentiles of 2,000 draws. Measured on 300 synthetic
    tables of the 4 x 4 x 2 design: components covered 0.94-1.0, shares 0.92-1.0."""
    est, pivots = _pivots(y, draws, seed)
    (var_low, var_high), (share_low, share_high) = _percentiles(np.clip(pivots, 0, None)), _percentiles(shares(pivots))
    return pd.DataFrame({"component": ROWS, "variance": np.clip(est, 0, None), "variance_low": var_low,
                         "variance_high": var_high, "share": shares(est), "share_low": share_low,
                         "share_high": share_high})


def _pivots(y: np.ndarray, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(estimates (12,), generalized pivots (draws, 12)) of _grouped's rows."""
    ms, df = mean_squares(y)
    pivots = from_mean_squares(ms * df / np.random.default_rng(seed).chisquare(df, (draws, 7)), y.shape)
    return _grouped(from_mean_squares(ms, y.shape)), _grouped(pivots)


def _grouped(variances: np.ndarray) -> np.ndarray:
    """(..., 7) components -> (..., 12): + the four interactions together, + each source "alone" (the
    variance when only it varies, the other two fixed: its term and every interaction with it, as
    Bouthillier et al. 2021 measure a source), + the total."""
    v = variances
    alone = [v[..., terms].sum(-1, keepdims=True) for terms in ([0, 3, 4, 6], [1, 3, 5, 6], [2, 4, 5, 6])]
    return np.concatenate([v, v[..., 3:].sum(-1, keepdims=True), *alone, v.sum(-1, keepdims=True)], axis=-1)


def largest_source(y: np.ndarray, draws: int = DRAWS, seed: int = 0) -> tuple[float, float, float]:
    """Is the data sample the largest source, measured as Bouthillier et al. do (each source alone)?
    sd(data alone) − max(sd(init alone), sd(order alone)) in accuracy units, with its 95%
    generalized interval (the same pivots): > 0 where the data sample dominates."""
    est, pivots = _pivots(y, draws, seed)
    sd = np.sqrt(np.clip(np.vstack([est, pivots])[:, [8, 9, 10]], 0, None))  # data, init, order alone
    contrast = sd[:, 0] - sd[:, 1:].max(axis=1)
    low, high = _percentiles(contrast[1:])
    return float(contrast[0]), float(low), float(high)


def pairing(base: np.ndarray, other: np.ndarray, draws: int = DRAWS, seed: int = 0,
            margin: float = MARGIN) -> pd.DataFrame:
    """Two arms on the same balanced (data, init, order) grid: how much of the unpaired Δ's variance
    (Var A + Var B) pairing by each source alone removes (2 Cov of that source's terms), and pairing
    by all three (the random seed, as the app pairs). With the Δ's variance and the random seeds a
    ±margin 95% interval would take at it."""
    def measures(a, b):
        va, vb, vd = components(a), components(b), components(b - a)
        cov = (va + vb - vd) / 2  # per term: Cov(A, B) of that term
        unpaired = va.sum(-1) + vb.sum(-1)
        removed = [2 * cov[..., k] / unpaired for k in range(3)] + [1 - vd.sum(-1) / unpaired]
        return np.stack(removed, -1), np.stack([unpaired - 2 * cov[..., k] for k in range(3)] + [vd.sum(-1)], -1)

    va, vb, vd = components(base), components(other), components(other - base)
    cov = (va + vb - vd) / 2
    scales = np.array([[[va[k], cov[k]], [cov[k], vb[k]]] for k in range(7)])
    sim = _effects(np.random.default_rng(seed), draws, base.shape, scales)
    removed, variance = measures(base, other)
    low, high = _percentiles(measures(sim[..., 0], sim[..., 1])[0])
    needed = [seeds_for_half_width(float(np.sqrt(max(v, 0))), margin) for v in variance]
    return pd.DataFrame({"paired_by": [*SOURCES, "random seed (all three)"], "variance": variance, "removed": removed,
                         "removed_low": low, "removed_high": high, "seeds_for_margin": needed})


def seeds_for_half_width(sd: float, margin: float, most: int = 100_000) -> float:
    """The fewest random seeds whose 95% t-interval of a mean Δ is at most ±margin at this sd
    (NaN without a spread, inf beyond `most`)."""
    if not np.isfinite(sd) or sd <= 0:
        return np.nan
    n = max(2, int(np.ceil((stats.norm.ppf(0.975) * sd / margin) ** 2)))  # t > z: never below this
    while n <= most:
        if stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n) <= margin:
            return float(n)
        n += 1
    return np.inf


def crossed_runs(runs: pd.DataFrame, metric: str = "test_accuracy") -> pd.DataFrame:
    """The runs that set a data, init or order seed, with each source's seed (data, init, order)
    and a `cell` key (every other config field; ViT-only fields are empty for the convnet)."""
    seeded = set(SEED_FIELDS) <= set(runs.columns)
    crossed = runs[runs[list(SEED_FIELDS)].notna().any(axis=1)].copy() if seeded else runs.iloc[:0]
    if crossed.empty:
        return pd.DataFrame(columns=["cell", "model", "train_rows", *SOURCES, metric])
    for source, name in zip(SOURCES, SEED_FIELDS, strict=True):
        crossed[source] = crossed[name].fillna(crossed["seed"]).astype(int)
    crossed["cell"] = crossed[list(CELL_FIELDS)].map(str).agg("|".join, axis=1)  # NaN: "nan" (convnet)
    return crossed.drop_duplicates(["cell", *SOURCES])


def balanced(part: pd.DataFrame, columns: tuple[str, ...] = ("test_accuracy",)) -> list[np.ndarray]:
    """The largest complete (data x init x order) table in one cell's runs, for each value column:
    while a level of some source misses runs, drop the level missing the largest fraction."""
    part = part.set_index(list(SOURCES))[list(columns)]
    part = part[~part.index.duplicated()]
    while len(part):
        levels = [part.index.unique(level=s).sort_values() for s in SOURCES]
        shape = [len(values) for values in levels]
        if len(part) == np.prod(shape):
            full = part.reindex(pd.MultiIndex.from_tuples(itertools.product(*levels)))
            return [full[column].to_numpy(float).reshape(shape) for column in columns]
        fill = {s: part.groupby(level=s).size() / (np.prod(shape) // n) for s, n in zip(SOURCES, shape, strict=True)}
        source = min(fill, key=lambda s: fill[s].min())
        part = part[part.index.get_level_values(source) != fill[source].idxmin()]
    return [np.empty((0, 0, 0)) for _ in columns]


def base_label(label: str) -> str:
    """'ViT p7 pre-LN pos init 1 order 0' -> 'ViT p7 pre-LN pos': the cell's name."""
    return re.sub(r"( (data|init|order) \d+)+$", "", label)


def noise_tables(runs: pd.DataFrame, metric: str = "test_accuracy", draws: int = DRAWS,
                 margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(components, pairing) over every cell of crossed runs with 2+ levels of each source: the
    shares for each cell, then for the paired Δ (DELTA_SWITCH) each source's share of the Δ's
    variance (cell 'Δ …') and what pairing by each source removes (pairing)."""
    crossed = crossed_runs(runs, metric)
    tables, pairs, cells = [], [], {}
    for key, part in crossed.groupby("cell", sort=False):
        [y] = balanced(part, (metric,))
        if min(y.shape) < 2:
            continue
        first = part.iloc[0]
        cells[key] = (part, first)
        tables.append(decompose(y, draws).assign(cell=base_label(first["label"]), model=first["model"],
                                                 train_rows=int(first["train_rows"]), design=_design(y), runs=y.size))
    switch, level, reference = DELTA_SWITCH
    for part, first in cells.values():
        if first["model"] != "vit" or first[switch] != level:
            continue
        base = [p for p, f in cells.values() if f[switch] == reference and f["model"] == "vit"
                and all(str(f[name]) == str(first[name]) for name in CELL_FIELDS if name != switch)]
        if not base:
            continue
        both = base[0].merge(part, on=list(SOURCES), suffixes=("_a", "_b"))
        a, b = balanced(both, (f"{metric}_a", f"{metric}_b"))
        if min(a.shape) < 2:
            continue
        label, rows = f"Δ {base_label(first['label'])} − {base_label(base[0].iloc[0]['label'])}", int(first.train_rows)
        tables.append(decompose(b - a, draws).assign(cell=label, model="vit", train_rows=rows, design=_design(a),
                                                     runs=2 * a.size))
        pairs.append(pairing(a, b, draws, margin=margin).assign(cell=label, train_rows=rows, design=_design(a)))
    return (pd.concat(tables, ignore_index=True)[TABLE_COLUMNS] if tables else pd.DataFrame(columns=TABLE_COLUMNS),
            pd.concat(pairs, ignore_index=True)[PAIRING_COLUMNS] if pairs else pd.DataFrame(columns=PAIRING_COLUMNS))


def _design(y: np.ndarray) -> str:
    return " × ".join(map(str, y.shape))


def data_dominance(runs: pd.DataFrame, metric: str = "test_accuracy", draws: int = DRAWS) -> pd.DataFrame:
    """Per crossed cell (no Δ): largest_source — is the data sample the largest source when each is
    varied alone? cell, model, train_rows, design, runs, contrast, ci_low, ci_high."""
    rows, columns = [], ["cell", "model", "train_rows", "design", "runs", "contrast", "ci_low", "ci_high"]
    for _, part in crossed_runs(runs, metric).groupby("cell", sort=False):
        [y] = balanced(part, (metric,))
        if min(y.shape) < 2:
            continue
        first = part.iloc[0]
        contrast, low, high = largest_source(y, draws)
        rows.append({"cell": base_label(first["label"]), "model": first["model"], "train_rows": int(first.train_rows),
                     "design": _design(y), "runs": y.size, "contrast": contrast, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=columns)


def _pct(row, name: str = "share") -> str:  # '24% [-16%, 47%]' (numbers.percent: never '-0%')
    return "{} [{}, {}]".format(*(percent(x) for x in row[[name, f"{name}_low", f"{name}_high"]]))


def advice(components: pd.DataFrame, pairing_: pd.DataFrame, margin: float = MARGIN) -> list[str]:
    """The tables in words: per cell where the variance comes from, per paired Δ what pairing by
    each source removes and how many random seeds a ±margin 95% interval takes."""
    lines = []
    for (cell, rows), part in components.groupby(["cell", "train_rows"], sort=False):
        part = part.set_index("component")
        what = "the Δ's variance" if cell.startswith("Δ") else "the test-accuracy variance"
        alone = ", ".join(number(np.sqrt(part.loc[name, "variance"])) for name in ALONE)  # the one rounding
        shown = part.loc[[*SOURCES, INTERACTIONS], "share"].sum()  # each shown share is clipped at 0
        over = f"; a negative estimate shows as 0%, so these four add up to {shown:.0%}" if shown > 1.005 else ""
        lines.append(f"{cell} at {rows:,} rows ({part['design'].iloc[0]}): the data sample gives "
                     f"{_pct(part.loc['data'])} of {what}, the initialisation {_pct(part.loc['init'])}, the batch "
                     f"order {_pct(part.loc['order'])}, their interactions {_pct(part.loc[INTERACTIONS])} "
                     f"(sd {number(np.sqrt(part.loc[TOTAL, 'variance']))}{over}); each varied alone, the other two "
                     f"fixed, they give an sd of {alone}.")
    for (cell, rows), part in pairing_.groupby(["cell", "train_rows"], sort=False):
        part = part.set_index("paired_by")
        seed = part.iloc[-1]
        needed, removed = seed["seeds_for_margin"], {source: _pct(part.loc[source], "removed") for source in SOURCES}
        seeds = f"{needed:.0f} random seeds give" if np.isfinite(needed) else "no number of random seeds gives"
        lines.append(f"{cell} at {rows:,} rows: pairing by the data sample alone removes {removed['data']} of the "
                     f"unpaired Δ's variance, by the initialisation alone {removed['init']}, by the batch order alone "
                     f"{removed['order']}; pairing by the random seed (all three, as this app pairs) removes "
                     f"{_pct(seed, 'removed')}, and then {seeds} a 95% interval of ±{margin:g}.")
    return lines
