"""Which config a store is centred on: the article's ViT when the store holds it, else your own study's centre.

A store made by `sweep --vary depth=1 --base epochs=2 --rows 300` holds no run of the article's ViT (15 epochs,
4,000 rows); every Δ of that study is measured against its base, ViT p7 pre-LN pos epochs 2 at 300 rows. The app's
sidebar (its default selection and baseline) and `compare` (its default --baseline) ask `store_centre` for it, so
a study of your own is read around its own centre. `summaries.centre` then normalises that config as a centre of
effects (its rows and random seed dropped). No Streamlit, no TensorFlow.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from vitcore.config.run import DEFAULTS, SEED_FIELDS, RunConfig, article_model
from vitcore.stats.families import neighbours, runs_of
from vitcore.stats.summaries import random_seed_runs

ARTICLE = RunConfig()  # the article's ViT at 4,000 rows: a store that holds it is centred on it


def config_of_row(row: Mapping) -> RunConfig:
    """The seed-0 RunConfig of a runs-table row (ViT-only fields are None for the convnet)."""
    fields = {key: row[key] for key in RunConfig.__dataclass_fields__
              if key in row and row[key] is not None and not (isinstance(row[key], float) and pd.isna(row[key]))}
    fields["seed"] = 0
    for key, value in fields.items():  # pandas gives floats for integer columns holding None
        default = DEFAULTS[key]
        if key in SEED_FIELDS:  # optional random seeds: None (left out above) or a whole number
            fields[key] = int(value)
        elif isinstance(default, (int, float)) and not isinstance(default, bool):
            fields[key] = type(default)(value)
    return RunConfig(**fields)


def holds_article(runs: pd.DataFrame) -> bool:
    """Whether the store has runs of the article's ViT at 4,000 rows (the committed store does)."""
    return bool(len(runs)) and not runs_of(runs, ARTICLE).empty


def off_article(cfg: RunConfig) -> dict:
    """The fields in which cfg differs from the article's model at its rows (random seed aside), e.g. {'epochs': 2}."""
    default = article_model("vit", cfg.train_rows)
    return {name: getattr(cfg, name) for name in cfg.identity()
            if name not in ("train_rows", "seed") and getattr(cfg, name) != getattr(default, name)}


def changes_text(cfg: RunConfig) -> str:
    """cfg as `--baseline` / `--base` take it: 'epochs=2' ('' for the article's ViT at any rows)."""
    return ",".join(f"{name}={value}" for name, value in off_article(cfg).items())


def store_centre(runs: pd.DataFrame) -> RunConfig | None:
    """The config a store is read around, at its training rows: the article's ViT when the store holds it; else
    the stored config (but `sweep noise`'s crossed cells) with the most stored single-switch neighbours at its rows
    (a one-at-a-time study's base: every other config differs from it in one field), then the most random seeds,
    then the fewest fields off the article's; None for a store without runs."""
    if holds_article(runs):
        return ARTICLE
    table = random_seed_runs(runs)
    if not len(table):
        return None
    seeds = table.groupby("config_id")["seed"].nunique()
    best, best_key = None, None
    for _, row in table.drop_duplicates("config_id").iterrows():
        try:
            cfg = config_of_row(row)
        except ValueError:  # a row the registry no longer allows: not a centre
            continue
        key = (len(neighbours(table, cfg)), int(seeds[row["config_id"]]), -len(off_article(cfg)),
               cfg.model == "vit", cfg.train_rows)
        if best_key is None or key > best_key:
            best, best_key = cfg, key
    return best


def default_baseline(runs: pd.DataFrame, selection: RunConfig) -> RunConfig:
    """What `selection` is compared with unless told otherwise: the article's ViT at the selection's rows
    (config.run.default_baseline) when the store holds the article's ViT, else the store's centre at those rows."""
    centre = None if holds_article(runs) else store_centre(runs)
    return article_model("vit", selection.train_rows) if centre is None else centre.replace(
        train_rows=selection.train_rows)


def _stored_configs(runs: pd.DataFrame, model: str) -> list[RunConfig]:
    """The distinct configs of the store's runs of `model` (random seed 0), skipping a row the registry refuses."""
    if not len(runs) or "model" not in runs.columns:
        return []
    configs = []
    for _, row in runs[runs["model"] == model].drop_duplicates("config_id").iterrows():
        try:
            configs.append(config_of_row(row))
        except ValueError:
            continue
    return configs


def _varying_fields(cfg: RunConfig) -> list[str]:
    """The fields of cfg a store may hold at one value or several (not the model, nor any random seed)."""
    return [name for name in cfg.identity() if name not in ("model", "seed", *SEED_FIELDS)]


def held(runs: pd.DataFrame, cfg: RunConfig, given=()) -> dict:
    """The fields every stored run of cfg's model holds at one value that cfg does not have, but those in `given`
    (fields a user named): {'epochs': 2, 'train_rows': 300} for RunConfig(depth=1) in a store trained with
    `sweep --vary depth=1 --base epochs=2 --rows 300`. Such a cfg can have no run here; cfg.replace(**held) may."""
    configs = _stored_configs(runs, cfg.model)
    found = {}
    for name in _varying_fields(cfg):
        values = {getattr(stored, name) for stored in configs}
        if name not in given and len(values) == 1 and (value := values.pop()) != getattr(cfg, name):
            found[name] = value
    return found


def filled(runs: pd.DataFrame, cfg: RunConfig, given=()) -> tuple[RunConfig, dict]:
    """(cfg with the fields the store holds at one value taken from it (`held`), those fields): what `compare`
    selects when a store of your own study was trained with `--base` and the command names only what it varies."""
    found = held(runs, cfg, given)
    return (cfg.replace(**found) if found else cfg), found


def spelled(fields: dict, spell=None) -> str:
    """{'epochs': 2, 'train_rows': 300} as 'epochs=2, train_rows=300', or as `spell(name, value)` says each one."""
    spell = spell or (lambda name, value: f"{name}={value}")
    return ", ".join(spell(name, value) for name, value in fields.items())


def missing_hint(runs: pd.DataFrame, cfg: RunConfig, spell=None) -> str:
    """What to ask instead when cfg has no runs in a store of your own study (one without the article's ViT):
    the fields every run here holds at one value (`held`, as `spell` writes them: 'epochs=2' or '--epochs 2'), and
    the values of the fields it varies. Never the built-in grids: this store was not trained from them."""
    configs = _stored_configs(runs, cfg.model)
    if not configs:
        models = sorted(set(runs["model"])) if len(runs) and "model" in runs.columns else []
        return (f"this store holds no {cfg.model} run" + (f" (only {', '.join(models)})" if models else "")
                + "; train one with `python -m vitcore sweep --vary FIELD=V1,V2 --store ...`")
    found = held(runs, cfg)
    varied = {name: sorted({getattr(stored, name) for stored in configs}) for name in _varying_fields(cfg)}
    varied = {name: values for name, values in varied.items() if len(values) > 1}
    parts = []
    if found:
        add = (f"give {spelled(found, spell)}" if spell else
               f"set {'it' if len(found) == 1 else 'them'} in the RunConfig")
        if not runs_of(runs, cfg.replace(**found)).empty:
            return f"every run here has {spelled(found)}: {add}"
        parts.append(f"every run here has {spelled(found)} ({add})")
    if varied:
        parts.append("it varies " + "; ".join(f"{name} over {', '.join(map(str, values))}"
                                              for name, values in varied.items()))
    return "; ".join(parts) or "its configs: `python -m vitcore export` lists them"
