"""The switch registry: every ablation switch described once.

A switch is a RunConfig field with a few named levels (`pos_embedding`: learned | none). The fields
themselves are written in the RunConfig class (vitcore/config/run.py), which checks at import that they
follow this registry; everything else that lists switches reads it: the value checks, run labels, the
sidebar (label, help, options), the URL check, the Runs page's filters, effect names, the default
sweep's factorial, the parameter anatomy's flips, the Attention page's run matching, the cost
filter and the tests' grids.

How to add a switch (e.g. dropout 0.0 / 0.1):
  1. Append one `Switch(...)` to REGISTRY below, and write its RunConfig field in vitcore/config/run.py
     (after the other switches, before `width`) with `default` as the field's default: the class checks at
     import that its fields follow the registry, and each value is checked against `levels` at construction. Leave
     `grid` empty unless the default factorial sweep should cross it (that would make every stored cell of `sweep
     default` incomplete).
  2. Add its branch to the model builder (vitcore/model/build.py) and, if inference changes,
     to the NumPy forward pass (vitcore/model/numpy_vit.py); anatomy's formulas if it changes
     the parameter count.
  Run ids: a field added after the original 15 (config.run.V1_FIELDS) enters the run id only when
  its value differs from its default, so every stored run keeps its id and the new level's runs
  get new ids. A switch's levels appear in this file only.

A "free" entry (width, depth, heads, mlp_dim, epochs, batch_size, lr, warmup_epochs) describes a
numeric RunConfig field declared in config/run.py and checked against its range there; its `levels`
are the values the dashboard and the plans offer, and any other value a store holds is selectable too.
The sidebar shows a free field only when the store holds more than one value of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MODELS = ("vit", "convnet")
MODEL_NAMES = {"vit": "ViT", "convnet": "convnet"}  # as run labels and charts name them


@dataclass(frozen=True)
class Switch:
    name: str                           # the RunConfig field (also the sidebar's widget key and URL key)
    levels: tuple                       # allowed values, in the order the dashboard offers them
    default: Any                        # the article's ViT's value
    label: str                          # the sidebar's and the Runs page's label: "Position embedding"
    help: str                           # the sidebar's help text (Markdown)
    tag: Callable[[Any], str]           # the run label's text for a value: " p7", "-LN", "" for none
    why: str = ""                       # why one would change it (the RunConfig field's comment)
    models: tuple = ("vit",)            # the models it means something for; it does not split the others
    grid: tuple = ()                    # its levels crossed in the default factorial sweep (): not crossed
    free: bool = False                  # a numeric field declared in config/run.py; levels are offered values
    words: tuple = ()                   # (level, word) pairs: a change label's word for a level whose bare value
                                        # reads as something else (pooling "gap" beside the gap metric)

    def __post_init__(self) -> None:
        if self.default not in self.levels:
            raise ValueError(f"switch {self.name}: default {self.default!r} is not one of its levels {self.levels}")
        if not set(self.grid) <= set(self.levels):
            raise ValueError(f"switch {self.name}: grid levels {self.grid} are not all among its levels {self.levels}")

    @property
    def noun(self) -> str:
        """The lower-case name effect labels use: 'position embedding'."""
        return self.label[0].lower() + self.label[1:]

    def applies(self, model: str) -> bool:
        return model in self.models

    def word(self, level: Any) -> str:
        """A level as every view names it: its word where the registry gives one ('class token' for pooling "cls"),
        else the level itself ('learned', '4')."""
        return dict(self.words).get(level, str(level))


def _off_default(word: str, default: Any) -> Callable[[Any], str]:
    """The run label's tag of a free field: ' width 32' off its default, '' at it."""
    return lambda value: "" if value == default else f" {word} {value:g}"


REGISTRY: tuple[Switch, ...] = (
    Switch("pos_embedding", ("learned", "none", "sincos"), "learned", "Position embedding",
           "`learned`: a trainable 16×64 (for patch 7) table added to the tokens. "
           "`none`: the model sees an unordered bag of patches. "
           "`sincos`: a fixed 2-D sine-cosine table, no parameters (Beyer, Zhai & Kolesnikov 2022).",
           tag=lambda v: {"learned": " pos", "none": " no-pos", "sincos": " sincos"}[v],
           why="none: the model sees a bag of patches; sincos: fixed 2-D sine-cosine (big_vision)",
           grid=("learned", "none")),  # sincos is not crossed: the `papers` grid has it
    Switch("norm_placement", ("pre", "post"), "pre", "Norm placement",
           "`pre`: norm → sublayer → add (residual path stays clean). "
           "`post`: sublayer → add → norm, the original Transformer.",
           tag=lambda v: f" {v}", why="pre: norm -> sublayer -> add; post: sublayer -> add -> norm (needs warm-up?)",
           grid=("pre", "post")),
    Switch("norm", ("layer", "batch"), "layer", "Norm",
           "`layer`: LayerNormalization per token. `batch`: BatchNormalization over the batch.",
           tag=lambda v: "-LN" if v == "layer" else "-BN",
           why="LayerNormalization(eps=1e-6) or BatchNormalization: batch statistics inside a block",
           grid=("layer", "batch")),
    Switch("patch_size", (2, 4, 7, 14), 7, "Patch size",
           "Side of a square patch: 2/4/7/14 → 196/49/16/4 tokens. Attention cost grows with tokens².",
           tag=lambda v: f" p{v}", why="smaller patch -> more tokens -> attention cost ~ tokens^2",
           grid=(7, 4, 14)),  # patch 2 (196 tokens, ~10 min a run) has its own grid: sweep tokens
    # What the ViT papers tried on small data: not in the factorial.
    Switch("pooling", ("gap", "cls"), "gap", "Pooling",
           "**token mean** (`gap`): the classifier reads the mean of the tokens. **class token** (`cls`): a learned "
           "class token is prepended and read out instead (the ViT paper; 64 parameters, one more token).",
           tag=lambda v: " cls" if v == "cls" else "", why="cls: a class token, as the ViT paper",
           words=(("gap", "token mean"), ("cls", "class token"))),
    Switch("tokenizer", ("patch", "shifted"), "patch", "Tokenizer",
           "`patch`: each token is one patch. `shifted`: Shifted Patch Tokenization — each token also carries "
           "its patch of four diagonally shifted copies of the image, then LayerNorm (Lee, Lee & Song 2021).",
           tag=lambda v: " SPT" if v == "shifted" else "", why="shifted: SPT, each token sees its neighbourhood"),
    Switch("self_attention", ("standard", "lsa"), "standard", "Self-attention",
           "`standard`: softmax(q·kᵀ/√d). `lsa`: Locality Self-Attention — a learned temperature per head and "
           "no attention of a token to itself (Lee, Lee & Song 2021).",
           tag=lambda v: " LSA" if v == "lsa" else "", why="lsa: learned temperature, masked diagonal"),
    # The sizes and the training recipe: free fields, so a store's own values are selectable
    # too; a label names each one off its default ('ViT p7 pre-LN pos width 32').
    Switch("width", (32, 64, 128), 64, "Width",
           "Token width: each patch is projected to this many numbers (the article's ViT: 64). Must be "
           "divisible by the heads.", tag=_off_default("width", 64), free=True),
    Switch("depth", (1, 2, 4), 2, "Depth", "Transformer blocks (the article's ViT: 2).",
           tag=_off_default("depth", 2), free=True),
    Switch("heads", (2, 4, 8), 4, "Heads",
           "Attention heads per block; each head attends with width ÷ heads numbers (the article's ViT: 4).",
           tag=_off_default("heads", 4), free=True),
    Switch("mlp_dim", (64, 128, 256), 128, "MLP size",
           "Hidden size of each block's MLP (the article's ViT: 128, twice its width).",
           tag=_off_default("MLP", 128), free=True),
    Switch("epochs", (5, 15, 30), 15, "Epochs", "Passes over the training rows (the article's models: 15).",
           tag=_off_default("epochs", 15), models=MODELS, free=True),
    Switch("batch_size", (32, 64, 128), 64, "Batch size", "Rows per Adam step (the article's models: 64).",
           tag=_off_default("batch", 64), models=MODELS, free=True),
    Switch("lr", (3e-4, 1e-3, 3e-3), 1e-3, "Learning rate", "Adam's learning rate (the article's models: 0.001).",
           tag=_off_default("lr", 1e-3), models=MODELS, free=True),
    Switch("warmup_epochs", (0, 2, 5), 0, "Warm-up epochs",
           "Linear learning-rate warm-up over this many epochs (0: none).",
           tag=lambda v: f" warm-up {v}" if v else "", models=MODELS, free=True),
)
# The order of the tags in a run label ('ViT p7 pre-LN pos'); switches not named here follow in
# registry order.
LABEL_ORDER = ("patch_size", "norm_placement", "norm", "pos_embedding")

SWITCH = {switch.name: switch for switch in REGISTRY}
NAMES = tuple(SWITCH)
FACTORS = tuple(s.name for s in REGISTRY if s.grid)  # the default factorial's switches
# The fields the dashboard selects runs by, in the sidebar's order: the model, the switches with
# levels, the training rows, then the free switches (warm-up).
SELECTED = ("model", *(s.name for s in REGISTRY if not s.free), "train_rows", *(s.name for s in REGISTRY if s.free))
LEVELS = {s.name: s.levels for s in REGISTRY}
DEFAULTS = {s.name: s.default for s in REGISTRY}
VIT_ONLY = tuple(s.name for s in REGISTRY if s.models == ("vit",))
LABEL_SWITCHES = (*LABEL_ORDER, *(name for name in NAMES if name not in LABEL_ORDER))


def run_label(model: str, values: dict[str, Any]) -> str:
    """'ViT p7 pre-LN pos', 'convnet', 'ViT p7 post-LN pos warm-up 2': the model and each switch's tag."""
    tags = (SWITCH[name].tag(values[name]) for name in LABEL_SWITCHES if SWITCH[name].applies(model))
    return MODEL_NAMES[model] + "".join(tags)


def change(name: str, before: Any, after: Any) -> str:
    """An effect's label, 'patch size 7 → 4', 'pooling token mean → class token': a switch's noun and its levels, in
    their words where the registry gives some (Switch.words); a name it does not know as it is."""
    switch = SWITCH.get(name)
    if switch is None:
        return f"{name} {before} → {after}"
    return f"{switch.noun} {switch.word(before)} → {switch.word(after)}"


def setting(name: str, level: Any) -> str:
    """One switch at one level in the same words as `change`: 'pooling class token', 'patch size 4', 'depth 1' (a plan's
    question `pooling=cls` as the Plans page shows it); a name the registry does not know as `name=level`."""
    switch = SWITCH.get(name)
    return f"{name}={level}" if switch is None else f"{switch.noun} {switch.word(level)}"


def check(name: str, value: Any) -> None:
    """ValueError naming the allowed levels when value is not one of switch `name`'s."""
    allowed = SWITCH[name].levels
    if value not in allowed or isinstance(value, bool):
        raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}")


# What the ViT papers tried on small data: each a change to the article's ViT, as RunConfig values.
#
#     sincos   pos_embedding "sincos"   Beyer, Zhai & Kolesnikov 2022, "Better plain ViT baselines for ImageNet-1k"
#     cls      pooling "cls"            Dosovitskiy et al. 2021, the ViT paper (class token vs global average pooling)
#     SPT      tokenizer "shifted"      Lee, Lee & Song 2021, "Vision Transformer for Small-Size Datasets"
#     LSA      self_attention "lsa"     same paper
#     SPT+LSA  both                     same paper, its full recipe
#
# The `papers` grid trains each at 1,000 and 4,000 rows; `papers-scaling` trains SMALL_DATA_VARIANT at the
# data-size grid's other sizes.

PAPER_VARIANTS: dict[str, dict] = {
    "sincos": {"pos_embedding": "sincos"},
    "cls": {"pooling": "cls"},
    "SPT": {"tokenizer": "shifted"},
    "LSA": {"self_attention": "lsa"},
    "SPT+LSA": {"tokenizer": "shifted", "self_attention": "lsa"},
}
SMALL_DATA_VARIANT = "SPT+LSA"  # the best small-data variant by the paper; the data-size grid trains it
