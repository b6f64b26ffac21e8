"""The Claims page's frames: vitcore.article.claims.claims_table as shown, its CSV (the CLI's bytes), the tally
at three margins, what a verdict, direction and size mean, and the runs behind each claim (a link to the Ablations page
with both configs set, and the seed-by-seed pairs).

No Streamlit: tests/test_app_claims.py checks these directly.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pandas as pd

from vitcore.app import fmt
from vitcore.app.selection import BASELINE_KEY, DEFAULTS, FREE_KEYS, SIDEBAR_KEYS, cell_name
from vitcore.app.tables import reading_columns, with_readings
from vitcore.article.claims import CLAIMS, DECIDES, REGISTRY, SEED_NOISE, WORK, exploratory_words, tally_of
from vitcore.article.claims import DEFINITIONS as DIRECTION_DEFINITIONS
from vitcore.config.metrics import metric as entry
from vitcore.config.numbers import whole_counts
from vitcore.config.run import RunConfig, default_baseline
from vitcore.study import Study
from vitcore.study.words import (
    DEFINITIONS,
    INTERVAL_HELP,
    MARGIN,
    MARGIN_REASON,
    READING_DEFINITIONS,
    chosen,
    interval_text,
    marked,
    source_text,
    verdict_interval,
)

BY_NAME = {claim.claim: claim for claim in CLAIMS}


def csv_bytes(table: pd.DataFrame) -> bytes:
    """claims.csv exactly as `python -m vitcore claims --out claims.csv` writes it (to_csv, UTF-8)."""
    return whole_counts(table).to_csv(index=False).encode("utf-8")


DATA_SIZE_LINK = "./vit_vs_convnet"  # the data-size row's runs: the ViT vs convnet page's curve
SEED_NOISE_LINK = "./noise"  # the seed-noise rows' runs: the Seed noise page's crossed design
WORK_LINK = "./token_cost"  # the counted-work rows: the Token cost page counts the multiply-adds


def configs(table: pd.DataFrame) -> list[tuple[RunConfig, RunConfig] | None]:
    """(selection, baseline) of every ledger row: its claim's configs at the row's train_rows (None for the
    data-size row, which spans the curve)."""
    return [BY_NAME[name].at(int(rows)) if name in BY_NAME and not fmt.missing(rows) else None
            for name, rows in zip(table["claim"], table["train_rows"])]


def links(table: pd.DataFrame) -> list[str]:
    """The Runs column: the Ablations page with both configs per row, the ViT vs convnet page for the
    data-size row, the Seed noise page for the seed-noise rows, the Token cost page for counted work."""
    return [ablations_link(*pair) if pair else SEED_NOISE_LINK if claim == SEED_NOISE else
            WORK_LINK if metric == WORK else DATA_SIZE_LINK
            for pair, claim, metric in zip(configs(table), table["claim"], table["metric"], strict=True)]


def who(sources: str) -> str:
    """The authors and year of each source, without its title: 'source article (Vision Transformers);
    Xiong et al. 2020, On Layer Normalization …' -> 'source article; Xiong et al. 2020' (the titles and
    settings are in `origins`)."""
    return "; ".join(re.match(r"(.*?\b(?:19|20)\d\d\b|[^(,]*)", part).group(1).strip() for part in sources.split("; "))


def display(table: pd.DataFrame, links: list[str]) -> pd.DataFrame:
    """One row per claim, train_rows and metric, what it says and what we found first — Claim, Verdict, the
    Interval it is read from and Direction (WIDTHS: the first three inside a 400-px screen), then the comparison,
    Rows, Metric (optimistic ones say so), Δ, Runs (a link to the Ablations page with both configs), Sources
    (who), the mirror, the tally, Expected Δ, which interval it is and the 90% one, both adjusted tests, Pairs,
    where the verdict comes from (Source: blind / seen / fixed sample, a confirmed question's outcome), the
    readings (Size, Δ / run sd, Wins, Borderline) and Family. Verdicts carry the borderline marker (cards.marked).
    Each source's setting, too long for a table cell, is in `origins`."""
    places = table["metric"].map(fmt.digits)
    metric = [fmt.title(m) + (" (optimistic)" if entry(m).optimistic else "") + ("" if role == DECIDES else
                                                                             " · not counted")
              for m, role in zip(table["metric"], table["role"])]
    rows = table.to_dict("records")
    paired = [row["n_pairs"] >= 2 and not fmt.missing(row["train_rows"]) for row in rows]
    return pd.DataFrame({
        "Claim": table["claim"], "Verdict": [marked(row) for row in rows],
        "Interval": [verdict_interval(row, p) if ok else "exact (counted)" if row["metric"] == WORK else
                     fmt.ci(*chosen(row).interval, p) for row, p, ok in zip(rows, places, paired)],
        "Direction": table["direction"], "Δ = selection − baseline": table["comparison"],
        "Rows": [("any (counted)" if m == WORK else "the curve") if fmt.missing(r) else fmt.rows(r)
                 for r, m in zip(table["train_rows"], table["metric"])], "Metric": metric,
        "Δ": [fmt.delta(d, p) for d, p in zip(table["mean_delta"], places)],
        "Runs": links, "Sources": table["sources"].map(who),
        "Mirrored claim": table["mirror"].fillna(""), "Tally": table["tally"], "Expected Δ": table["expected"],
        "Interval in full": [interval_text(row, p) if ok else "exact (counted)" if row["metric"] == WORK else
                             f"95% bootstrap {fmt.ci(*chosen(row).interval, p)}"
                             for row, p, ok in zip(rows, places, paired)],
        "p_adj": table["p_adj"].map(fmt.p_value), "p_tost_adj": table["p_tost_adj"].map(fmt.p_value),  # never '0'
        "Pairs": table["n_pairs"].astype(int), "Source": [source_text(row) for row in rows],
        **reading_columns(with_readings(table)),
        "Family": [f"{name} (m = {int(m)})" for name, m in zip(table["family"], table["family_size"])]})


# px per column of `display` (views/claims.py); a row ROW px tall wraps four lines, so the claim, its verdict and
# the interval it is read from fit a 400-px screen's 366-px frame, and at any width none of them is cut
WIDTHS = {"Claim": 150, "Verdict": 96, "Interval": 80, "Direction": 104, "Δ = selection − baseline": 160, "Rows": 64,
          "Metric": 140, "Δ": 80, "Runs": 55, "Sources": 180, "Mirrored claim": 220, "Tally": 220, "Expected Δ": 160,
          "Interval in full": 300, "p_adj": 70, "p_tost_adj": 80, "Pairs": 50, "Source": 180, "Size": 100,
          "Δ / run sd": 80, "Wins": 220, "Borderline": 220, "Family": 320}
HELP = {"Interval": INTERVAL_HELP}  # the Claims table's column help (views/claims.py)
ROW = 88  # px: Streamlit wraps a cell's text only in rows taller than 4rem; four lines fit


def origins(table: pd.DataFrame) -> pd.DataFrame:
    """Where each claim comes from, once per claim and setting: Claim, Sources (in full, with titles) and
    Setting (where and how each source measured it, or that it only stated it; and ours where it differs)."""
    part = table.drop_duplicates(["claim", "setting"])
    return pd.DataFrame({"Claim": part["claim"], "Sources": part["sources"], "Setting": part["setting"]})


def counts(table: pd.DataFrame) -> dict[str, int]:
    """The ledger's one tally (vitcore.article.claims.tally_of): each direction word, counted, not_counted."""
    return tally_of(table)


def tally_text(tally: pd.DataFrame) -> str:
    """The tally at the three margins side by side, what is not counted, and the margin's reason."""
    parts = [f"±{r['margin']:g}: " + ", ".join(d.counted.format(n=f"**{r[d.word]}**") for d in REGISTRY)
             + (f" ({exploratory_words(r)[2:]})" if exploratory_words(r) else "") for r in tally.to_dict("records")]
    first = tally.iloc[0]
    return (f"**Tally by margin** (of {int(first['counted'])} distinct comparisons, each counted once; "
            f"{int(first['not_counted'])} rows shown beside are not counted — the Tally column says why): "
            + " · ".join(parts) + f". Why ±{MARGIN:g}: {MARGIN_REASON}")


def meaning(table: pd.DataFrame, margin: float) -> str:
    """What a verdict, direction and size mean here, and which correction applies."""
    words = " ".join(f"*{word}*: {text}" for word, text in DEFINITIONS.items())  # each ends in its own full stop
    directions = " ".join(f"*{word}*: {text}" for word, text in DIRECTION_DEFINITIONS.items())
    readings_text = " ".join(f"**{word.capitalize()}**: {text}" for word, text in READING_DEFINITIONS.items())
    return (
        "Each row is one paired comparison at one training size: the two configs' runs matched by random seed, "
        "Δ = selection − baseline per random seed, averaged (vitcore.stats.compare, the Ablations page's engine). "
        f"**Verdicts** (margin ±{margin:g}, ±1 s for seconds): {words} **Direction**: {directions} Judged apart "
        "from the direction: "
        f"{readings_text} **Correction**: each "
        "row is judged in its comparison's family — the same family, interval and verdict the Ablations page "
        "gives those two configs (a single-switch change: Bonferroni over the base config's single-switch "
        "changes at that size; the ViT against its convnet: one comparison), so a claim never reads differently "
        "here than there. Best validation accuracy, the source article's own measure, is optimistic (the epoch is "
        "selected on the split it reports): it is shown beside test accuracy, which decides, and is never counted. A "
        "comparison two sources claim in opposite directions is one row (the Mirrored claim column reads it for the "
        "other side); compute claims are decided by counted multiply-adds per image, exact from the config.")


def ablations_link(selection: RunConfig, baseline: RunConfig) -> str:
    """A relative URL of the Ablations page with the sidebar set to `selection` and, unless it is the
    default (the article's ViT at the same rows), the baseline cell set to `baseline`."""
    params = {key: getattr(selection, key) for key in SIDEBAR_KEYS  # a free field (width, ...) only off its default
              if key not in FREE_KEYS or getattr(selection, key) != DEFAULTS[key]}
    if baseline != default_baseline(selection):
        params[BASELINE_KEY] = cell_name(baseline)
    return "./?" + urlencode(params)


def runs_behind(study: Study, selection: RunConfig, baseline: RunConfig, metric: str,
                margin: float) -> pd.DataFrame:
    """The seed-by-seed pairs behind one claim's Δ (the Study's comparison, as the ledger's): random seed, both run
    ids, both values, Δ."""
    pairs = study.compare(selection, baseline, margin, metrics=(metric,), missing_ok=True).pairs
    if pairs.empty or "selection_run_id" not in pairs.columns:
        return pd.DataFrame(columns=["random seed", "selection run", "baseline run", "selection", "baseline", "Δ"])
    return pd.DataFrame({"random seed": pairs["seed"].astype(int), "selection run": pairs["selection_run_id"],
                         "baseline run": pairs["baseline_run_id"], "selection": pairs["selection"],
                         "baseline": pairs["baseline"], "Δ": pairs["delta"]})
