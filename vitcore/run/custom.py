"""Your own grid, from the command line: which fields to vary, at which levels, rows and random seeds.

    python -m vitcore sweep --vary depth=1,2,4 --vary width=32,64,128 --seeds 0-9 --rows 1000,4000

By default each field is varied one at a time around the article's ViT (its other fields at their
defaults), which is what the Ablations page's single-switch comparisons and forest plot read:
depth 1,2,4 and width 32,64,128 give 1 + 2 + 2 = 5 configs per row count. `--cross` crosses the
fields instead (3 x 3 = 9 configs), every combination of the levels. The article's ViT is always in
the grid: every Δ is paired against it. `--base epochs=5` moves that centre (every config trains 5
epochs). Trained by the same resumable worker as the named grids.
"""

from __future__ import annotations

import itertools

from vitcore.config import switches
from vitcore.config.run import DEFAULTS, RunConfig

# The fields a grid may vary: every switch of the registry (the sizes and recipe included); the rows
# and random seeds have their own flags, and `model` is the base (--model).
VARIABLE = switches.NAMES


def parse_vary(text: str, flag: str = "--vary") -> tuple[str, tuple]:
    """'depth=1,2,4' -> ('depth', (1, 2, 4)), each value converted to the field's type; ValueError
    naming what is allowed otherwise (range and divisibility are RunConfig's own checks, later)."""
    name, sep, values = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or name not in VARIABLE:
        raise ValueError(f"{flag} takes FIELD=V1,V2,... with FIELD one of {', '.join(VARIABLE)}; got {text!r}")
    kind = type(DEFAULTS[name])
    try:
        levels = tuple(kind(part.strip().replace("_", "")) if kind is not str else part.strip()
                       for part in values.split(","))
    except ValueError:
        raise ValueError(f"{flag} {name} takes {kind.__name__} values separated by commas; got {values!r}") from None
    if not levels or any(level in ("", None) for level in levels):
        raise ValueError(f"--vary {name} has an empty value; got {values!r}")
    if len(set(levels)) != len(levels):
        raise ValueError(f"--vary {name} lists a value twice; got {values!r}")
    return name, levels


def parse_base(text: str) -> dict:
    """'epochs=5,batch_size=32' -> {'epochs': 5, 'batch_size': 32}: what every config of a grid changes
    from the article's model; ValueError naming the allowed fields otherwise."""
    changes = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, levels = parse_vary(item, "--base")
        if name in changes:
            raise ValueError(f"--base gives {name} more than once ({text!r}); give each field once")
        changes[name] = levels[0]
    return changes


def custom_grid(vary: list[tuple[str, tuple]], seeds: tuple[int, ...], rows: tuple[int, ...], cross: bool = False,
                model: str = "vit", base: dict | None = None) -> list[RunConfig]:
    """The configs of one custom study, the base first (the article's `model` with `base`'s changes):
    each field's levels one at a time (default) or crossed, at every row count and random seed;
    ValueError for a field given twice, a field the model has not, or a level RunConfig refuses (e.g. a
    width the heads do not divide)."""
    names = [name for name, _ in vary]
    if len(set(names)) != len(names):
        raise ValueError(f"--vary gives a field more than once ({', '.join(names)}); list its levels in one --vary")
    for name in names:
        if not switches.SWITCH[name].applies(model):
            raise ValueError(f"{name} does not apply to the {model}; vary it on the ViT (--model vit)")
    base = RunConfig(model=model, **(base or {}))
    if cross:
        changes = [dict(zip(names, levels)) for levels in itertools.product(*(levels for _, levels in vary))]
    else:
        changes = [{}] + [{name: level} for name, levels in vary for level in levels if level != getattr(base, name)]
    cells = []
    for change in changes:
        try:
            cells.append(base.replace(**change))
        except ValueError as error:
            raise ValueError(f"{', '.join(f'{k}={v}' for k, v in change.items())}: {error}") from None
    cells = list({cell.config_id: cell for cell in [base, *cells]}.values())  # the article's model first, once
    return [cell.replace(train_rows=count, seed=seed) for count in rows for cell in cells for seed in seeds]
