"""Counted work as tables: one model's multiply-adds part by part, and the article's ViT at each patch size.

The count itself (multiply-adds of one image's forward pass, exact from the config, no TensorFlow; what is
counted and what is not) is vitcore.model.work's, re-exported here: the deterministic measure of compute the
compute claims and the cost pages use instead of wall seconds, which depend on the machine's load.
"""

from __future__ import annotations

import pandas as pd

from vitcore.config import switches
from vitcore.config.run import RunConfig
from vitcore.model.work import convnet_macs, macs, training_macs, vit_macs  # noqa: F401 (the count, re-exported)

COLUMNS = ["part", "formula", "macs"]
BASE = RunConfig()  # the article's ViT: patch_work's reference and training size


def work_table(cfg: RunConfig) -> pd.DataFrame:
    """The counted work of cfg's model, part by part (COLUMNS), the page's table beside the parameter anatomy."""
    parts = vit_macs(cfg) if cfg.model == "vit" else convnet_macs()
    return pd.DataFrame([(name, formula, value) for name, (formula, value) in parts.items()], columns=COLUMNS)


def patch_work(patches=switches.LEVELS["patch_size"], base: RunConfig | None = None) -> pd.DataFrame:
    """The article's ViT at each patch size: patch_size, tokens, macs per image, relative to patch 7 (or to
    `base`'s patch size), and per training run (× 3 for the backward pass × rows × epochs, of `base`)."""
    base = base or BASE
    reference = macs(base)
    rows = []
    for patch in patches:
        cfg = base.replace(patch_size=patch)
        rows.append({"patch_size": patch, "tokens": cfg.tokens, "macs": macs(cfg), "relative": macs(cfg) / reference,
                     "training_macs": training_macs(cfg)})
    return pd.DataFrame(rows)
