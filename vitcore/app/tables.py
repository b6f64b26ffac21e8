"""What the pages show, as plain rows, frames and sentences built from library results.

The statistics come from vitcore.stats / vitcore.report / vitcore.cost; this module only picks,
labels and formats them (through vitcore.app.fmt). No Streamlit and no TensorFlow, so the pages
stay a description of the UI and this is unit-tested directly.
"""

from __future__ import annotations

import pandas as pd

from vitcore import stats
from vitcore.app import fmt
from vitcore.app.selection import BASELINE, cell_name
from vitcore.config import RunConfig


def metric_rows(runs: pd.DataFrame, cfg: RunConfig, baseline: RunConfig) -> list[dict]:
    """Per metric: the selection's and baseline's seed mean/std and the seed-paired Δ (a stats.Delta,
    or None when either side has no runs). Runs pair by seed; when the two configs differ in
    training rows (an explicit baseline), they pair by seed alone."""
    selected, base = stats.runs_of(runs, cfg), stats.runs_of(runs, baseline)
    if cfg.train_rows != baseline.train_rows:
        base = base.assign(train_rows=cfg.train_rows)
    rows = []
    for metric in stats.METRICS:
        delta = stats.paired_delta(base, selected, metric) if len(selected) and len(base) else None
        rows.append({"metric": metric, "mean": selected[metric].mean(), "std": selected[metric].std(),
                     "n": len(selected), "baseline_mean": base[metric].mean(), "baseline_std": base[metric].std(),
                     "baseline_n": len(base), "delta": delta,
                     "higher_is_better": stats.HIGHER_IS_BETTER.get(metric, True)})
    return rows


def metric_cards(runs: pd.DataFrame, cfg: RunConfig, baseline: RunConfig) -> list[dict]:
    """One st.metric card per metric: title, value, delta (shown Δ or None), delta_color, delta_arrow
    and the caption under it. The Δ is coloured only when its verdict is decided (the CI excludes 0);
    a config against itself shows no Δ at all (it is 0 by construction)."""
    is_baseline = cfg.config_id == baseline.config_id
    cards = []
    for row in metric_rows(runs, cfg, baseline):
        places, delta = fmt.digits(row["metric"]), row["delta"]
        card = {"metric": row["metric"], "title": fmt.title(row["metric"]), "value": fmt.number(row["mean"], places),
                "delta": None, "delta_color": "off", "delta_arrow": "off"}
        if is_baseline:
            note = "this is the baseline"
        elif delta is None or delta.n_pairs == 0:
            note = "no paired baseline runs"
        else:
            decided = delta.verdict in (stats.BETTER, stats.WORSE)
            interval = "no CI" if fmt.missing(delta.ci_low) else "95% CI " + fmt.ci(delta.ci_low, delta.ci_high, places)
            card.update(delta=fmt.delta(delta.mean_delta, places),
                        delta_color=("normal" if row["higher_is_better"] else "inverse") if decided else "off",
                        delta_arrow="auto" if decided else "off")
            note = f"Δ vs baseline: {interval} · {delta.n_pairs} pairs · **{delta.verdict}**"
        card["caption"] = f"{fmt.spread(row['std'], row['n'], places)}  \n{note}"
        cards.append(card)
    return cards


def curve_roles(selected: pd.DataFrame, base: pd.DataFrame, cfg: RunConfig,
                baseline: RunConfig) -> tuple[dict[str, str], list[str]]:
    """(run_id -> legend name, the legend order: selection first) for the learning curves."""
    roles = {run_id: "baseline: " + cell_name(baseline) for run_id in base["run_id"]}
    roles.update({run_id: "selection: " + cell_name(cfg) for run_id in selected["run_id"]})
    order = list(dict.fromkeys(roles[r] for r in [*selected["run_id"], *base["run_id"]]))
    return roles, order


def flip_table(flips: pd.DataFrame, metric: str) -> pd.DataFrame:
    """stats.flip_effects rows of one metric, readable: Switch, Change, Δ, 95% CI, Pairs, Verdict."""
    part = flips[flips["metric"] == metric]
    return pd.DataFrame({
        "Switch": part["switch"].str.replace("_", " "),
        "Change": [f"{a} → {b}" for a, b in zip(part["from"], part["to"])],
        "Δ": part["mean_delta"].astype(float),
        "95% CI": [fmt.ci(lo, hi, none="n/a (one seed)") for lo, hi in zip(part["ci_low"], part["ci_high"])],
        "Pairs": part["n_pairs"].astype(int),
        "Verdict": part["verdict"],
    }).reset_index(drop=True)


def effect_labels(effects: pd.DataFrame, interaction: bool = False) -> pd.Series:
    """'patch_size 4 (vs 7)' or 'norm batch × patch_size 4' row names for the effect charts."""
    if interaction:
        return effects["factor"] + " " + effects["level"].astype(str) + " × " + effects["factor_b"] + " " + \
            effects["level_b"].astype(str)
    return effects["factor"] + " " + effects["level"].astype(str) + " (vs " + effects["reference"].astype(str) + ")"


def headline_claim() -> str:
    """The source article's headline, written from vitcore.seed_reference (never typed twice)."""
    from vitcore import seed_reference as article

    def quoted(model: str, metric: str, rows: tuple[int, ...], signed: bool = False) -> str:
        return " / ".join(fmt.number(article.seed_value(model, r, metric), signed=signed) for r in rows)

    sizes = article.TRAIN_ROWS
    with_gap = tuple(r for r in sizes if not fmt.missing(article.seed_value("vit", r, "gap")))
    return (f"The source article (one random seed): ViT {quoted('vit', 'best_val_accuracy', sizes)} against convnet "
            f"{quoted('convnet', 'best_val_accuracy', sizes)} best val accuracy at "
            f"{' / '.join(map(fmt.rows, sizes))} rows — with a train-val gap of "
            f"{quoted('vit', 'gap', with_gap, True)} against {quoted('convnet', 'gap', with_gap, True)} at "
            f"{' / '.join(map(fmt.rows, with_gap))} rows.")


def gap_frame(headline: pd.DataFrame) -> pd.DataFrame:
    """The gap bars of report.headline(): ours (mean ± std over random seeds) and the source article's
    single-seed gap, per model and training size (columns: model, rows, source, mean, low, high)."""
    bars = []
    for _, r in headline.iterrows():
        rows = fmt.rows(r["train_rows"])
        if r["n_seeds"]:
            std = 0.0 if fmt.missing(r["gap_std"]) else r["gap_std"]
            bars.append({"model": r["model"], "rows": rows, "source": "ours (mean ± std)",
                         "mean": r["gap_mean"], "low": r["gap_mean"] - std, "high": r["gap_mean"] + std})
        if not fmt.missing(r["seed_gap"]):
            bars.append({"model": r["model"], "rows": rows, "source": "the source article (one seed)",
                         "mean": r["seed_gap"], "low": r["seed_gap"], "high": r["seed_gap"]})
    return pd.DataFrame(bars, columns=["model", "rows", "source", "mean", "low", "high"])


def cost_table(table: pd.DataFrame) -> pd.DataFrame:
    """cost.token_cost_table() as the source article prints it: 2,401 and 9.4×, 2,401.0×."""
    return pd.DataFrame({
        "Image": table["image"], "Patch": table["patch"], "Tokens": table["tokens"].map(fmt.rows),
        "Attention entries": table["attention_entries"].map(fmt.rows),
        "Relative to 16 tokens": table["relative"].map(fmt.times)})


def bench_sentences(bench: pd.DataFrame) -> list[str]:
    """What bench/attention_cost.csv says: the setup, the 16 -> 196 token ratio, the N² fit and slope."""
    from vitcore import cost

    a, b, r2 = cost.quadratic_fit(bench["tokens"], bench["median_ms"])
    slope = cost.loglog_slope(bench["tokens"], bench["median_ms"])
    by_tokens = bench.set_index("tokens")["median_ms"]
    first = bench.iloc[0]
    sentences = [f"One MultiHeadAttention layer (width {int(first['width'])}, {int(first['heads'])} heads, batch "
                 f"{int(first['batch'])}), median of {int(first['repeats'])} timed calls on {first['machine']}."]
    if 16 in by_tokens and 196 in by_tokens:
        sentences.append(f"16 → 196 tokens: entries × {196 ** 2 / 16 ** 2:.1f}, measured time "
                         f"× **{by_tokens[196] / by_tokens[16]:.1f}**.")
    sentences.append(f"The fit time ≈ {a:.2f} ms + {b:.2e} ms × N² explains R² = {r2:.3f} of the variance; the "
                     f"log-log slope over N ≥ 100 is **{slope:.2f}** (2 = pure N², 1 = linear). At small N the "
                     "fixed cost of the projections and the call dominates, so 4 and 16 tokens cost about the "
                     "same — the source article's “negligible at 16 tokens”.")
    return sentences


def relative_seconds(grid: pd.DataFrame, reference: int = BASELINE.patch_size) -> list[str]:
    """Per (train_rows, epochs) of cost.tokens_grid_seconds: each patch size's training time relative
    to the article's patch 7, as one sentence."""
    sentences = []
    for (train_rows, epochs), part in grid.groupby(["train_rows", "epochs"]):
        part = part.set_index("patch_size")
        if reference not in part.index or len(part) < 2:
            continue
        ratios = ", ".join(f"patch {p} ({int(part.loc[p, 'tokens'])} tokens) "
                           f"{fmt.times(part.loc[p, 'mean_seconds'] / part.loc[reference, 'mean_seconds'])}"
                           for p in part.index if p != reference)
        sentences.append(f"At {fmt.rows(train_rows)} rows, {int(epochs)} epochs, training time relative to patch "
                         f"{reference}: {ratios}. Whole-model training also pays for the MLP and projections, which "
                         "grow linearly in N, so it grows more slowly than the attention layer alone.")
    return sentences
