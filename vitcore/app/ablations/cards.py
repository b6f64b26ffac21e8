"""The Ablations page's words: metric cards, their per-seed tables, the header and the verdict definitions.

Everything comes from one `vitcore.stats.compare.Comparison` (the engine the CLI's `compare` writes), so a
card says what `metrics.csv` says: means over the paired random seeds only, the paired Δ with its
95% CI and the verdict, in the card's own text. No Streamlit and no TensorFlow (tests/test_app_cards.py).
"""

from __future__ import annotations

import pandas as pd

from vitcore.app import fmt, tables
from vitcore.app.selection import cell_name
from vitcore.config.metrics import metric as entry
from vitcore.config.run import RunConfig
from vitcore.study import words as w
from vitcore.study.intervals import beside_test_set
from vitcore.study.words import (  # noqa: F401 (the shared words, used here and re-exported)
    BORDERLINE,
    borderline,
    flips_text,
    interval_text,
    marked,
    needs,
    readings_text,
    seed_list,
    tests_text,
    unbounded,
    verdict_text,
)

HELP = {m: entry(m).help for m in w.METRICS}  # the cards' metrics' help (the metric registry's)
TITLES = {m: entry(m).short for m in w.METRICS if entry(m).short}  # short: five cards share a row


def title(metric: str) -> str:
    """A card's title: the registry's short title, else its title (ValueError for an unknown metric)."""
    return entry(metric).short or fmt.title(metric)


def badge(verdict: str, text: str) -> str:
    """Markdown badge in the verdict's colour (fmt.VERDICT_COLOURS, the charts' rule), brackets escaped (a badge ends
    at the first ']')."""
    colour = fmt.VERDICT_COLOURS[verdict].badge if verdict in fmt.VERDICT_COLOURS else "gray"
    return f":{colour}-badge[{text.replace('[', '(').replace(']', ')')}]"


def collapsed_note(runs: pd.DataFrame) -> str | None:
    """'3 of 10 random seeds collapsed' (RunStore.table's `collapsed`), or None when none did."""
    if "collapsed" not in runs.columns or not runs["collapsed"].fillna(False).astype(bool).any():
        return None
    return f"{int(runs['collapsed'].fillna(False).astype(bool).sum())} of {len(runs)} random seeds collapsed"


def metric_cards(comparison, selected: pd.DataFrame, base: pd.DataFrame, margin: float = w.MARGIN,
                 is_baseline: bool = False, *, timed: tuple[pd.DataFrame, str]) -> list[dict]:
    """One card per metric: metric, title, value, delta, delta_color, delta_arrow, help, lines (markdown,
    the card's own text). Paired: the selection's mean over the paired random seeds and the paired Δ;
    a config against itself (comparison None) shows its own seed mean and no Δ; no pairs: the mean over
    its runs. `timed`: the selection's runs of one timing group and that group (the app's Study.timed), what a seconds
    mean is taken over, never a mean pooled across groups."""
    cards = []
    rows = comparison.metrics.to_dict("records") if comparison is not None else [{"metric": m} for m in w.METRICS]
    for row in rows:
        metric, places = row["metric"], fmt.digits(row["metric"])
        card = {"metric": metric, "title": title(metric), "help": entry(metric).help, "delta": None,
                "delta_color": "off", "delta_arrow": "off"}
        values, group = timed if metric == "seconds" else (selected, "")
        values = values[metric]  # seconds: one timing group's runs, never a mean pooled across groups
        if metric == "seconds" and (basis := row.get("timing_group") or group):
            card["help"] += f"\n\nTimed as: {tables.timing_basis(basis)}."  # the details the card's line leaves out
        # seconds not timed as a design show the config's own time and why there is no Δ: a Δ between runs timed one
        # after another is the machine's as much as the model's (vitcore.stats.seconds.timing_note)
        untimed = comparison is not None and metric == "seconds" and row.get("verdict") == w.NOT_COMPARABLE
        if is_baseline or comparison is None or (row["paired"] and row["n_pairs"] == 0) or untimed:
            card["value"] = fmt.number(values.mean(), places)
            lines = [fmt.spread(values.std(), len(values), places).replace("seed", "random seed")
                     + (f", {tables.timed_as(group)}" if group else "")]
            word, _, why = verdict_text(row, margin).partition(" — ") if untimed else ("", "", "")
            lines.append("this is the baseline: flip a switch to see a Δ" if is_baseline else
                         f"{badge(word, word)} {why}".strip() if untimed else
                         f"{badge(w.TOO_FEW, w.TOO_FEW)} no baseline run shares a random seed")
        else:
            resolved = row["verdict"] in w.RESOLVED
            card.update(value=fmt.number(row["selection_mean"], places),
                        delta=fmt.delta(row["mean_delta"], places),  # st.metric reads the direction off its sign
                        delta_color=("normal" if entry(metric).higher_is_better else "inverse") if resolved
                        else "off", delta_arrow="auto" if resolved else "off")
            pairs = f"{int(row['n_pairs'])} pairs" if row["paired"] else "unpaired"
            if metric == "seconds" and row.get("timing_group"):
                pairs += f" {tables.timed_as(row['timing_group'])}"
            word, _, detail = verdict_text(row, margin).partition(" — ")
            optimistic = " · optimistic (selected on this split)" if entry(metric).optimistic else ""
            # the verdict first, whatever the rows: behind the interval line and the test-set line (~230 characters,
            # shown only at rows whose pairs kept their predictions) it sank below the fold at 1,400 px
            lines = [f"{badge(row['verdict'], word)} {detail}".strip() + optimistic
                     + f" · from: {source_words(row, detail)}", f"{interval_text(row, places)} · {pairs}",
                     tests_text(row), f"baseline {fmt.number(row['baseline_mean'], places)}"
                     + (" (same random seeds)" if row["paired"] else " (its own runs)")]
            if (test_line := test_set_line(row, places)) is not None:
                lines.insert(2, test_line)  # beside the interval it widens
            lines += [f"{line}" for line in (readings_text(row, places),) if line]
            lines += [f":orange[{line}]" for line in (flips_text(row),) if line]
        if comparison is not None and not is_baseline and row.get("verdict_from"):  # the tooltip says it in full
            card["help"] += f"\n\nThis verdict: {row['verdict_from']}." + (
                f" Beside it: {row['discovery']}." if row.get("discovery") else "")
        note = collapsed_note(selected)
        if note and metric == "test_accuracy":
            lines.append(f":red[{note}]")
        card["lines"] = lines
        cards.append(card)
    return cards


def source_words(row, detail: str = "") -> str:
    """Where a card's verdict comes from (blind / seen / fixed sample, words.source) and a confirmed question's
    outcome, unless the verdict's words (`detail`) already carry its discovery line with that outcome."""
    said = row.get("replication")
    return w.source(row) if isinstance(said, str) and said and said in detail else w.source_text(row)


def test_set_line(row, places: int) -> str | None:
    """What the test set's sampling did to test accuracy's interval when every pair kept its predictions
    (vitcore.stats.testset), else None: the verdict uses the interval over random seeds and test images,
    the same on every view; the seed-only interval is shown beside it."""
    pair = beside_test_set(row)  # like for like: both unadjusted 95% intervals
    if not row.get("n_pairs_with_test") or pair is None or unbounded(row):
        return None
    (low, high), (seeds_low, seeds_high) = pair
    seeds = fmt.ci(seeds_low, seeds_high, places)
    if row.get("interval") != w.WITH_TEST:
        return f"the test images add no measurable variance: the interval is over random seeds alone {seeds}"
    ratio = (high - low) / (seeds_high - seeds_low)
    both = fmt.ci(low, high, places)
    return (f"unadjusted 95% intervals: {both} over random seeds and test images, {fmt.times(ratio)} as wide as "
            f"{seeds} over random seeds alone (another 10,000 test images would move the Δ by about "
            f"±{fmt.number(row['test_se'], places)}, however many random seeds)")


def seed_table(comparison, metric: str) -> pd.DataFrame:
    """The runs behind one card: per pair (random seed, both values, Δ, both run ids), or per run
    when unpaired (side, random seed, value, run id). Numbers as the card prints them."""
    part = comparison.pairs[comparison.pairs["metric"] == metric] if len(comparison.pairs) else comparison.pairs
    places = fmt.digits(metric)
    if not comparison.paired:
        return pd.DataFrame({"Side": part["side"], "Rows": part["train_rows"].map(fmt.rows),
                             "Random seed": part["seed"].astype(int),
                             "Value": part["value"].map(lambda x: fmt.number(x, places)), "Run": part["run_id"]})
    table = pd.DataFrame({"Random seed": part["seed"].astype(int),
                          "Selection": part["selection"].map(lambda x: fmt.number(x, places)),
                          "Baseline": part["baseline"].map(lambda x: fmt.number(x, places)),
                          "Δ": part["delta"].map(lambda x: fmt.delta(x, places)),
                          "Selection run": part["selection_run_id"], "Baseline run": part["baseline_run_id"]})
    if metric == "seconds" and "timing_group_variant" in part.columns:
        table["Timed as"] = part["timing_group_variant"]
    return table.reset_index(drop=True)


def runs_table(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One config's runs behind a card: random seed, value, run id (and whether it collapsed)."""
    runs = runs.sort_values("seed")
    table = pd.DataFrame({"Random seed": runs["seed"].astype(int),
                          "Value": runs[metric].map(lambda x: fmt.number(x, fmt.digits(metric))),
                          "Run": runs["run_id"]})
    if "collapsed" in runs.columns and runs["collapsed"].fillna(False).astype(bool).any():
        table["Collapsed"] = runs["collapsed"].map(lambda c: "yes" if c else "")
    return table.reset_index(drop=True)


def header(comparison, cfg: RunConfig, baseline: RunConfig) -> str:
    """Who is compared with whom, and over which random seeds (those actually paired)."""
    who = f"**{cell_name(cfg)}** against the baseline **{cell_name(baseline)}**"
    if not comparison.paired:
        return (f"{who}: **unpaired** — the two sides differ in training rows ({fmt.rows(cfg.train_rows)} vs "
                f"{fmt.rows(baseline.train_rows)}), so no run shares a data sample; each Δ is a difference of the "
                "two sides' means over all their runs (Welch's interval).")
    seeds = comparison.seeds
    if not seeds:
        return f"{who}: no random seed has runs on both sides yet, so there is no paired Δ."
    rows = comparison.metrics.set_index("metric")
    extra = ""
    if "seconds" in rows.index:
        secs = rows.loc["seconds"]
        if secs["verdict"] == w.NOT_COMPARABLE:
            extra = f" Seconds get no Δ: {secs['timing_note'] or 'not timed as a design'}."
        elif secs["n_pairs"] != len(seeds):
            extra = f" Seconds use {int(secs['n_pairs'])} pairs {tables.timed_as(secs['timing_group'])} (never mixed)."
    uses = "every mean and Δ below uses those seeds only"
    if "test_accuracy" in rows.index:
        test = rows.loc["test_accuracy"]
        if w.planned(test) or str(test["plan"]).startswith("exploratory"):  # a look uses its own seeds only
            extra += f" Test accuracy is {test['plan']}."
        if (w.planned(test) or str(test["plan"]).startswith("exploratory")) and int(test["n_pairs"]) != len(seeds):
            which = "look" if w.planned(test) else "random seeds"  # another margin: the plan's seeds, fixed sample
            uses = (f"test accuracy's verdict uses the {int(test['n_pairs'])} pairs of its plan's {which}, every "
                    "other mean and Δ below all of them")
        if test.get("verdict_from") and test["verdict_from"] != test["plan"]:  # an exploratory one: said just above
            extra += f" Test accuracy's verdict: {test['verdict_from']}."
        if test.get("discovery"):  # the line that follows a blind verdict: its discovery and the replication
            extra += f" Beside it: {test['discovery']}."
    return (f"{who}, paired by random seed at {fmt.rows(cfg.train_rows)} rows over random seeds "
            f"{seed_list(seeds)} ({len(seeds)} pairs): {uses}.{extra} "
            f"Verdicts: {comparison.family.caption()}.")


CORRECTION = ("**Multiplicity.** Every comparison belongs to one correction family, the same on every view "
              "(the card, the forest plot, the flip table, the claims, `compare`): a single-switch change belongs to "
              "that switch's other levels against the config nearer the article's ViT (from the registry, never from "
              "what is stored); main effects and interactions are one family per metric and training size (the default "
              "grid's); anything else is one comparison. Both tests are **Bonferroni-adjusted** within the family "
              "(p_adj, p_tost_adj) and the intervals shown are the matching simultaneous ones, so an interval excludes "
              "0 exactly when the verdict is resolved. The single-switch test-accuracy questions of the article's ViT "
              "at 1,000 and 4,000 rows are **planned**: judged at looks of 10, 20, 30, 40 paired random seeds with "
              "alpha spent over the looks (the card says which look and what the next one needs). Where a **blind** "
              "plan registered before its runs (the confirmation on fresh random seeds) asks a question, its verdict "
              "is the answer on every view from its first look on; the discovery follows in one line, with whether the "
              "confirmation replicated it, contradicted it or did not confirm it.")
DELTA = ("**Δ**: selection − baseline per random seed (the same seed means the same training sample and "
         "initialisation), then averaged; the **95% CI** is a t-interval over those paired differences. Sides at "
         "different training rows share no seed: that comparison is **unpaired** (Welch's interval). The 10,000 "
         "test images are a sample too, and their error does not shrink with more random seeds: for test accuracy, "
         "when every pair kept its per-image predictions, the interval and both tests count the test images' "
         "sampling as well (a random seeds × test images random-effects model), on every view; the seed-only "
         "interval is shown beside it, and when the images add nothing measurable the verdict keeps it.")
SPLITS = ("Splits: 5,000 stratified validation rows held out of the 60k training split (fixed for every run); "
          "training rows drawn from the other 55,000; the test split is the official 10,000.")


def definitions(margin: float = w.MARGIN) -> str:
    """The definitions expander: metrics, Δ and interval, one paragraph per verdict (README-ready), the
    correction, the splits."""
    metrics = "\n".join(f"- **{title(m)}**: {text}" for m, text in HELP.items())
    verdict_lines = "\n".join(f"- **{word}**: {text}" for word, text in
                              [*w.DEFINITIONS.items(), *w.READING_DEFINITIONS.items()])
    return (f"{metrics}\n- {DELTA}\n\n**Verdicts** (margin now ±{margin:g}; "
            f"{w.MARGIN_REASON}):\n{verdict_lines}\n\n{CORRECTION}\n\n{SPLITS}")
