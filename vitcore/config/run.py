"""RunConfig: the one frozen description of a training run, and its stable id.

Every field that changes a result is here; the run id is a hash of all of them (plus the
schema/training versions and the data split), so a cached run can never be served for a
config it was not trained with. No TensorFlow import: the dashboard reads configs too.

    python -m vitcore run                      # the article's ViT: patch 7, 4,000 rows, 15 epochs
    python -m vitcore run --model convnet      # the article's convnet, 60,554 parameters
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from vitcore.config import switches
from vitcore.config.switches import MODELS  # noqa: F401 - re-exported: the model choice

# Bump SCHEMA_VERSION when the on-disk run format changes, TRAINING_VERSION when the code
# would compute a different result for the same config (model graph, data split, optimiser,
# metric definitions). Both enter the run id, so old runs simply stop matching.
SCHEMA_VERSION = 1
TRAINING_VERSION = 1
# The data split is fixed for every run: 5,000 stratified validation rows held out of the
# official 60k train split with a fixed seed; train rows are drawn from the other 55,000.
VAL_ROWS = 5_000
SPLIT_SEED = 20_240_601
SPLIT = f"val{VAL_ROWS}-stratified-seed{SPLIT_SEED}"
MAX_TRAIN_ROWS = 60_000 - VAL_ROWS
IMAGE_SIDE = 28  # Fashion-MNIST images are 28 x 28 pixels (data.patches.SIDE)

# The switches (pos_embedding, norm_placement, norm, patch_size, ...) and their levels live in
# vitcore.config.switches, the one registry; these names are kept for the layers that import them.
PATCH_SIZES = switches.LEVELS["patch_size"]   # 196 / 49 / 16 / 4 tokens on 28x28
POS_EMBEDDINGS, NORM_PLACEMENTS, NORMS = (switches.LEVELS[n] for n in ("pos_embedding", "norm_placement", "norm"))
# The allowed whole-number range of each numeric field (the CLI's --help shows them). train_rows
# below batch_size train one smaller batch per epoch.
RANGES = {"width": (4, 4096), "depth": (1, 64), "heads": (1, 64), "mlp_dim": (1, 65536),
          "train_rows": (10, MAX_TRAIN_ROWS), "epochs": (1, 1000), "batch_size": (1, 65536),
          "warmup_epochs": (0, 1000), "seed": (0, 2**31 - 1)}
# Fields that only mean something for the ViT; they do not split convnet runs.
VIT_FIELDS = tuple(dict.fromkeys((*switches.VIT_ONLY, "width", "depth", "heads", "mlp_dim")))
SWITCHES = switches.FACTORS  # the default factorial's switches (the statistics' factors)
LEVELS = {name: switches.LEVELS[name] for name in SWITCHES}
# The 15 fields of the first schema: they always enter the run id. A field added later enters it
# only when it differs from its default, so adding a switch (or an optional field) keeps every
# stored run's id.
V1_FIELDS = ("model", "pos_embedding", "norm_placement", "norm", "patch_size", "width", "depth", "heads",
             "mlp_dim", "train_rows", "epochs", "batch_size", "lr", "warmup_epochs", "seed")


def _matches_registry(cls: type) -> type:
    """RunConfig's fields are written in the class (editors and type checkers see them); this checks, once at
    import, that right after `model` come the registry's switches in its order, each with the registry's
    default (a free switch, e.g. warmup_epochs, sits among the training fields), so a switch added to
    vitcore.config.switches without its field (or the reverse) fails loudly here."""
    written = list(cls.__annotations__)
    expected = [s.name for s in switches.REGISTRY if not s.free]
    at = written.index("model") + 1
    if written[at:at + len(expected)] != expected or any(name not in written for name in switches.NAMES):
        raise ValueError(f"RunConfig's switch fields must follow `model` in the registry's order: {', '.join(expected)}"
                         f" (and every free switch must be a field); the class has {', '.join(written)}")
    for switch in switches.REGISTRY:
        if getattr(cls, switch.name) != switch.default:
            raise ValueError(f"RunConfig.{switch.name} must default to the registry's {switch.default!r}")
    return cls


SEED_FIELDS = ("data_seed", "init_seed", "order_seed")  # each defaults to (None:) the random seed


class Seeds(NamedTuple):
    """The random seed each source of seed noise uses in one run."""
    data: int   # the stratified sample of train_rows
    init: int   # the initial weights
    order: int  # the per-epoch batch order


@dataclass(frozen=True)
@_matches_registry
class RunConfig:
    model: str = "vit"               # "convnet": the source article's plain three-block Conv2D stack
    # One field per switch of vitcore.config.switches.REGISTRY, in its order and at its default (its levels,
    # label and help live there; _matches_registry checks the two agree):
    pos_embedding: str = "learned"   # "none" | "sincos" (fixed 2-D sine-cosine)
    norm_placement: str = "pre"      # "post": the norm after each residual sum (the original Transformer)
    norm: str = "layer"              # "batch": BatchNorm in place of every LayerNorm
    patch_size: int = 7              # 2 | 4 | 14: (28 / patch)^2 tokens
    pooling: str = "gap"             # "cls": a class token instead of global average pooling
    tokenizer: str = "patch"         # "shifted": Shifted Patch Tokenization (Lee et al. 2021)
    self_attention: str = "standard"  # "lsa": Locality Self-Attention (Lee et al. 2021)
    width: int = 64                  # token width (Dense projection size)
    depth: int = 2                   # transformer blocks
    heads: int = 4                   # attention heads; key_dim = width // heads
    mlp_dim: int = 128               # hidden size of the block MLP (the seed: 2 * width)
    train_rows: int = 4_000          # stratified sample of the 55,000 non-validation rows (< batch_size: one batch)
    epochs: int = 15
    batch_size: int = 64
    lr: float = 1e-3                 # Adam
    warmup_epochs: int = 0           # linear LR warm-up over this many epochs (0: none)
    seed: int = 0                    # the random seed: data sample, initial weights and batch order
    # Each source of seed noise on its own: None takes the random seed, so a run that sets
    # none of them is the run of `seed` (and keeps its id). Set one to hold that source fixed (or vary
    # it alone) across random seeds, e.g. data_seed=0: one data sample, a new init and order per seed.
    data_seed: int | None = None     # which train_rows are sampled (stratified) from the 55,000
    init_seed: int | None = None     # the initial weights (Keras seeding before the model is built)
    order_seed: int | None = None    # the batch order: the per-epoch permutations of the training rows

    def __post_init__(self) -> None:
        _check_choice("model", self.model, MODELS)
        for switch in switches.REGISTRY:
            if not switch.free:
                switches.check(switch.name, getattr(self, switch.name))
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}, got {value!r}")
        if self.pos_embedding == "sincos" and (self.width % 4 or self.width < 8):
            raise ValueError(f"pos_embedding 'sincos' needs a width divisible by 4 and at least 8; got {self.width}")
        for name in SEED_FIELDS:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or not RANGES["seed"][0] <= value <= RANGES["seed"][1]):
                raise ValueError(f"{name} must be empty (the random seed) or a whole number from "
                                 f"{RANGES['seed'][0]:,} to {RANGES['seed'][1]:,}, got {value!r}")
        if self.width % self.heads:
            raise ValueError(f"width ({self.width}) must be divisible by heads ({self.heads})")
        if self.warmup_epochs > self.epochs:
            raise ValueError(f"warmup_epochs ({self.warmup_epochs}) must not exceed epochs ({self.epochs})")
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)) or not 0 < self.lr < 1:
            raise ValueError(f"lr must be a number between 0 and 1 (exclusive), got {self.lr!r}")
        object.__setattr__(self, "lr", float(self.lr))

    @property
    def batch_norm(self) -> bool:
        """Whether the norms are BatchNormalization (moving statistics; the collapse diagnosis). Outside
        the builder's name -> layer table (model.build.make_norm), the norm value is read only here."""
        return self.norm == "batch"

    @property
    def tokens(self) -> int:
        """Patch tokens per image (a class token is not one of them)."""
        return (IMAGE_SIDE // self.patch_size) ** 2

    @property
    def sequence(self) -> int:
        """Tokens the attention sees: the patch tokens, plus the class token when pooling is "cls"."""
        return self.tokens + (self.pooling == "cls")

    def identity(self) -> dict[str, Any]:
        """The fields that define the result; ViT-only fields are dropped for the convnet, and the
        data/init/order seeds when unset (they are the random seed: config.json stays as before)."""
        fields = {name: getattr(self, name) for name in FIELD_NAMES}  # asdict() deep-copies: 5x slower
        if self.model == "convnet":
            for name in VIT_FIELDS:
                fields.pop(name)
        for name in SEED_FIELDS:
            if fields[name] is None:
                del fields[name]
        return fields

    @functools.cached_property  # frozen dataclass: cached_property writes __dict__ directly
    def run_id(self) -> str:
        """12 hex digits of sha256 over the canonical JSON of identity + versions + split."""
        return _digest(self.identity())

    @property
    def seeds(self) -> Seeds:
        """The random seed of each source of seed noise: its own field, else the random seed."""
        return Seeds(*(self.seed if value is None else value for value in (getattr(self, n) for n in SEED_FIELDS)))

    @functools.cached_property
    def config_id(self) -> str:
        """Like run_id but without the seed: the id of a cell whose seeds are replicates. A set
        data/init/order seed stays in it, so a cell never holds two runs of one random seed."""
        fields = self.identity()
        fields.pop("seed")
        return _digest(fields)

    @functools.cached_property
    def graph_id(self) -> str:
        """Like config_id but without the data, init and order seeds either: the runs that share one
        compiled graph (same model, same batch shapes), which the sweep worker compiles once."""
        fields = self.identity()
        for name in ("seed", *SEED_FIELDS):
            fields.pop(name, None)
        return _digest(fields)

    def replace(self, **changes: Any) -> "RunConfig":
        return dataclasses.replace(self, **changes)

    def label(self) -> str:
        """A short human name, e.g. 'ViT p7 pre-LN pos' or 'convnet'."""
        text = switches.run_label(self.model, {name: getattr(self, name) for name in switches.NAMES})
        return text + "".join(f" {name.removesuffix('_seed')} {getattr(self, name)}" for name in SEED_FIELDS
                              if getattr(self, name) is not None)  # e.g. 'ViT p7 pre-LN pos init 1 order 0'

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        """Inverse of identity(); unknown keys raise, missing ViT fields take the defaults."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown config fields {unknown}; allowed: {sorted(names)}")
        return cls(**data)


FIELD_NAMES = tuple(field.name for field in dataclasses.fields(RunConfig))
DEFAULTS = {field.name: field.default for field in dataclasses.fields(RunConfig)}


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed or isinstance(value, bool):
        raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}")


def _digest(fields: dict[str, Any]) -> str:
    """A later field (not in V1_FIELDS) at its default stays out of the hash: stored ids survive it."""
    fields = {name: value for name, value in fields.items() if name in V1_FIELDS or value != DEFAULTS[name]}
    payload = {"schema": SCHEMA_VERSION, "training": TRAINING_VERSION, "split": SPLIT, **fields}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def article_model(model: str = "vit", train_rows: int = DEFAULTS["train_rows"], **changes: Any) -> RunConfig:
    """The source article's ViT or convnet (every other field at its default) at train_rows: the
    one definition of "the article's two models" (report, scaling, claims, the sidebar's baseline)."""
    return RunConfig(model=model, train_rows=train_rows, **changes)


ARTICLE_MODELS = {model: article_model(model) for model in MODELS}  # at the default 4,000 rows


def default_baseline(selection: RunConfig) -> RunConfig:
    """What a selection is compared with unless told otherwise: the article's ViT at the selection's
    training rows, so a switch is compared like for like (the sidebar, `compare --baseline`)."""
    return article_model("vit", selection.train_rows)


def full_batches(rows: int, batch_size: int) -> tuple[int, int]:
    """(steps, batch) of one training epoch over `rows` rows: full batches only, the last partial
    batch dropped (one batch shape, one XLA compile); fewer rows than one batch train as one smaller
    batch. The trainer and the BatchNorm diagnosis (its moving-average updates) both count this way."""
    batch = min(batch_size, rows)
    return rows // batch, batch

