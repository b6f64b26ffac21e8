"""ViT vs convnet, re-measured: the seed's single-seed table beside mean ± std over our seeds, the
seed-paired ViT − convnet differences, and the sentences written from them (vitcore.report).
Reads the store only (no TensorFlow)."""

import math

import pandas as pd
import streamlit as st

from vitcore import report, seed_reference
from vitcore.app_data import load_runs
from vitcore.walkthrough_views import gap_chart

METRICS = {"params": ("Parameters", 0), "best_val_accuracy": ("Best val accuracy", 4),
           "final_train_accuracy": ("Final train accuracy", 4), "gap": ("Gap (train − val)", 4),
           "seconds": ("Seconds", 1), "test_accuracy": ("Test accuracy", 4)}


def cell(mean: float, std: float, n: int, digits: int, signed: bool = False) -> str:
    if n == 0 or math.isnan(mean):
        return "not run"
    text = f"{mean:{'+' if signed else ''},.{digits}f}"
    return text + (" (1 seed)" if n == 1 else "" if std == 0 else f" ± {std:,.{digits}f}")


def quoted(value: float, digits: int, signed: bool = False) -> str:
    return "—" if math.isnan(value) else f"{value:{'+' if signed else ''},.{digits}f}"


st.title("ViT vs convnet, re-measured")
st.caption("Seed claim (one seed): ViT 0.7160 / 0.7970 against convnet 0.6790 / 0.7620 best val accuracy at "
           "1,000 / 4,000 rows — with a train-val gap of +0.1545 against +0.0040.")

runs = load_runs()
table = report.headline(runs)
deltas = report.headline_deltas(runs)
if table["n_seeds"].sum() == 0:
    st.info("No runs of the seed's ViT or convnet (15 epochs, 1,000 or 4,000 rows) are stored yet. "
            "`python -m vitcore sweep default` trains them; until then only the seed page's numbers exist.")

st.subheader("The measurement table: ours (mean ± std over seeds) beside the seed page (one seed)")
shown = pd.DataFrame({"model": table["model"], "rows": table["train_rows"].map("{:,}".format),
                      "seeds": table["n_seeds"]})
for metric, (title, digits) in METRICS.items():
    signed = metric == "gap"
    shown[title] = [cell(r[f"{metric}_mean"], r[f"{metric}_std"], r["n_seeds"], digits, signed)
                    for _, r in table.iterrows()]
    if f"seed_{metric}" in table:
        shown[f"{title} (seed page)"] = table[f"seed_{metric}"].map(lambda v, d=digits, s=signed: quoted(v, d, s))
st.dataframe(shown, hide_index=True, width="stretch")
st.caption(f"The seed page prints {seed_reference.VIT_PARAMS_QUOTED:,} ViT parameters: its total without the "
           f"{seed_reference.POSITION_EMBEDDING_PARAMS:,}-parameter position embedding; the ViT it describes (and "
           f"ours) has {seed_reference.VIT_PARAMS_WITH_POSITION:,}. It states the gap only at 4,000 rows.")

st.subheader("Paired ViT − convnet (same rows, same seed)")
delta_shown = pd.DataFrame({
    "rows": deltas["train_rows"].map("{:,}".format),
    "metric": deltas["metric"].map(lambda m: METRICS.get(m, (m, 4))[0]),
    "ViT": [quoted(r["vit_mean"], METRICS[r["metric"]][1]) for _, r in deltas.iterrows()],
    "convnet": [quoted(r["convnet_mean"], METRICS[r["metric"]][1]) for _, r in deltas.iterrows()],
    "Δ ViT − convnet": [quoted(r["mean_delta"], METRICS[r["metric"]][1], True) for _, r in deltas.iterrows()],
    "95% CI": ["—" if math.isnan(r["ci_low"]) else
               f"{r['ci_low']:+.{METRICS[r['metric']][1]}f} to {r['ci_high']:+.{METRICS[r['metric']][1]}f}"
               for _, r in deltas.iterrows()],
    "pairs": deltas["n_pairs"], "verdict": deltas["verdict"],
    "seed page Δ": [quoted(r["seed_delta"], METRICS[r["metric"]][1], True) for _, r in deltas.iterrows()]})
st.dataframe(delta_shown, hide_index=True, width="stretch")
st.caption("Verdict “better” means the ViT is better (for gap and seconds, lower is better), only when the 95% "
           "interval over paired seeds excludes 0.")

st.subheader("What the numbers say")
for sentence in report.headline_sentences(runs):
    st.markdown(f"- {sentence}")

st.subheader("The overfitting gap")
frames = []
for _, r in table.iterrows():
    if r["n_seeds"]:
        std = 0 if math.isnan(r["gap_std"]) else r["gap_std"]
        frames.append({"model": r["model"], "rows": f"{r['train_rows']:,}", "source": "ours (mean ± std)",
                       "mean": r["gap_mean"], "low": r["gap_mean"] - std, "high": r["gap_mean"] + std})
    if not math.isnan(r["seed_gap"]):
        frames.append({"model": r["model"], "rows": f"{r['train_rows']:,}", "source": "seed page (one seed)",
                       "mean": r["seed_gap"], "low": r["seed_gap"], "high": r["seed_gap"]})
if frames:
    st.altair_chart(gap_chart(pd.DataFrame(frames)), width="content")
    st.caption("Gap = final train accuracy − final validation accuracy. A large gap means the model is "
               "memorising its training rows.")
