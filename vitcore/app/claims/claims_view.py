"""The Claims page's frames: vitcore.article.claims.claims_table as shown, its CSV (the CLI's bytes), what a
verdict means, and the runs behind each claim (a link to the Ablations page with both configs set,
and the seed-by-seed pairs).

No Streamlit: tests/test_app_claims.py checks these directly.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd

from vitcore.app import fmt
from vitcore.app.selection import BASELINE_KEY, SIDEBAR_KEYS, cell_name
from vitcore.config.run import RunConfig
from vitcore.stats.compare import compare, default_baseline

AGREES_WORDS = {"yes": "yes", "no": "no", "unresolved": "unresolved"}


def csv_bytes(table: pd.DataFrame) -> bytes:
    """claims.csv exactly as `python -m vitcore claims --out claims.csv` writes it (to_csv, UTF-8)."""
    return table.to_csv(index=False).encode("utf-8")


def display(table: pd.DataFrame, links: list[str]) -> pd.DataFrame:
    """One row per claim, what it says and what we found first: Claim, Rows, Metric, Expected Δ, Δ, 95% CI,
    Pairs, Verdict, Agrees, Runs (a link to the Ablations page with both configs selected), then the
    comparison, Source and Setting."""
    places = table["metric"].map(fmt.digits)
    return pd.DataFrame({
        "Claim": table["claim"], "Rows": table["train_rows"].map(lambda r: "the curve" if fmt.missing(r) else fmt.rows(r)), "Metric": table["metric"].map(fmt.title),
        "Expected Δ": table["expected"], "Δ": [fmt.delta(d, p) for d, p in zip(table["mean_delta"], places)],
        "95% CI": [fmt.ci(lo, hi, p) for lo, hi, p in zip(table["ci_low"], table["ci_high"], places)],
        "Pairs": table["n_pairs"].astype(int), "Verdict": table["verdict"], "Agrees": table["agrees"],
        "Runs": links, "Δ = selection − baseline": table["comparison"], "Source": table["source"],
        "Setting": table["setting"]})


DATA_SIZE_LINK = "./vit_vs_convnet"  # the data-size row's runs: the ViT vs convnet page's curve


def links(table: pd.DataFrame, claims) -> list[str]:
    """The Runs column: the Ablations page with both configs per claim, the ViT vs convnet page for the
    data-size row."""
    return [ablations_link(c.selection, c.baseline) for c in claims] + [DATA_SIZE_LINK] * (len(table) - len(claims))


def counts(table: pd.DataFrame) -> dict[str, int]:
    """How many claims agree (yes), disagree (no) and cannot be told yet (unresolved)."""
    found = table["agrees"].value_counts()
    return {word: int(found.get(word, 0)) for word in AGREES_WORDS}


def meaning(table: pd.DataFrame, margin: float) -> str:
    """What a verdict and 'agrees' mean here, and which correction applies."""
    chance = 0.05 * len(table)
    return (
        "Each row is one paired comparison: the two configs' runs are matched by random seed at the same training "
        "rows, Δ = selection − baseline per random seed, averaged, with a 95% t-interval over the pairs "
        "(vitcore.stats.compare, the Ablations page's engine). **Verdicts**: *better*/*worse* when p < 0.05 (the 95% CI "
        f"excludes 0); *equivalent* when the 90% CI lies inside ±{margin:g} (±1 s for seconds); *inconclusive* "
        "when neither — more random seeds would settle it; *too few seeds* below 2 pairs. **Agrees**: *yes* when "
        "the verdict goes the way the source expects (or *equivalent* where it expects no difference), *no* when "
        "it is resolved the other way or equivalent where a difference is expected, *unresolved* when the data "
        "cannot tell. **Correction**: none across claims — each row tests one claim stated in advance at 5%, "
        f"so with {len(table)} claims about {chance:.1f} resolved verdict could arise by chance if no effect were "
        "real (the Ablations page's main effects and interactions, by contrast, are Holm-corrected per family).")


def ablations_link(selection: RunConfig, baseline: RunConfig) -> str:
    """A relative URL of the Ablations page with the sidebar set to `selection` and, unless it is the
    default (the article's ViT at the same rows), the baseline cell set to `baseline`."""
    params = {key: getattr(selection, key) for key in SIDEBAR_KEYS}
    if baseline != default_baseline(selection):
        params[BASELINE_KEY] = cell_name(baseline)
    return "./?" + urlencode(params)


def runs_behind(runs: pd.DataFrame, selection: RunConfig, baseline: RunConfig, metric: str,
                margin: float) -> pd.DataFrame:
    """The seed-by-seed pairs behind one claim's Δ: random seed, both run ids, both values, Δ."""
    pairs = compare(runs, selection, baseline, margin, metrics=(metric,)).pairs
    if pairs.empty or "selection_run_id" not in pairs.columns:
        return pd.DataFrame(columns=["random seed", "selection run", "baseline run", "selection", "baseline", "Δ"])
    return pd.DataFrame({"random seed": pairs["seed"].astype(int), "selection run": pairs["selection_run_id"],
                         "baseline run": pairs["baseline_run_id"], "selection": pairs["selection"],
                         "baseline": pairs["baseline"], "Δ": pairs["delta"]})
