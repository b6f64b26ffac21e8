"""A model's initial weights for another init seed, drawn without building the model again.

A fresh `build_model(cfg)` after `keras.utils.set_random_seed(s)` draws each random initializer's seed from
Python's generator as the layer is made (`make_default_seed`), in build order, then fills each variable with
that initializer's stateless draw. `record` watches one build do it (which variable each initializer filled,
which of the build's seed draws it holds); `Recipe.draw` replays it for any seed: the same draws from the same
generator, the same initializers with those seeds, so bit for bit the fresh build's weights without its Keras
graph-making (a fraction of a second a run). A recipe is only kept once a replay matched its own build
(`Recipe.matches`).
"""

from __future__ import annotations

import contextlib
import copy
import random

import keras
import numpy as np
from keras.src.backend import Variable as BackendVariable
from keras.src.backend import random as backend_random
from keras.src.random import seed_generator


class Unsupported(Exception):
    """The build drew its weights in a way a replay cannot repeat (an initializer seeded otherwise)."""


class Recipe:
    """How one build drew its weights: `draws` seed draws, then per weight (in model.weights order) its
    initializer and shape, and the index of the draw its seed came from (None: not random)."""

    def __init__(self, draws: int, parts: list[tuple[object, tuple, str, int | None]]):
        self.draws, self.parts = draws, parts

    def draw(self, seed: int) -> list[np.ndarray]:
        """The initial weights a fresh build would have after keras.utils.set_random_seed(seed), which this
        calls too (leaving Python's, NumPy's and TensorFlow's generators where a build leaves them)."""
        keras.utils.set_random_seed(seed)
        seeds = [seed_generator.make_default_seed() for _ in range(self.draws)]
        values = []
        for initializer, shape, dtype, index in self.parts:
            if index is not None:
                initializer = copy.copy(initializer)
                initializer.seed = seeds[index]
            values.append(keras.ops.convert_to_numpy(initializer(shape, dtype=dtype)))
        return values

    def matches(self, model: keras.Model, seed: int) -> bool:
        """Whether a replay for `seed` gives `model`'s weights bit for bit (a build just made after
        set_random_seed(seed)) and leaves Python's and NumPy's generators as that build left them."""
        states = random.getstate(), np.random.get_state()
        values = self.draw(seed)
        same_state = random.getstate() == states[0] and all(
            np.array_equal(a, b) for a, b in zip(np.random.get_state(), states[1]))
        return same_state and len(values) == len(model.weights) and all(
            value.dtype == weight.dtype and np.array_equal(value, keras.ops.convert_to_numpy(weight), equal_nan=True)
            for value, weight in zip(values, model.weights))


@contextlib.contextmanager
def record():
    """Watch the build run inside: yields a list that holds, afterwards, a function of the built model
    returning its Recipe (Unsupported when a weight was drawn in a way a replay cannot repeat)."""
    drawn: list[int] = []
    filled: dict[int, object] = {}
    make_default_seed = seed_generator.make_default_seed
    initialize = BackendVariable._initialize_with_initializer

    def counted() -> int:
        value = make_default_seed()
        drawn.append(value)
        return value

    def watched(variable, initializer):
        filled[id(variable)] = initializer
        return initialize(variable, initializer)

    result: list = []
    homes = (seed_generator, backend_random)  # SeedGenerator's and the initializers' (the backend's) name for it
    for home in homes:
        home.make_default_seed = counted
    BackendVariable._initialize_with_initializer = watched
    try:
        yield result
    finally:
        for home in homes:
            home.make_default_seed = make_default_seed
        BackendVariable._initialize_with_initializer = initialize

    def recipe(model: keras.Model) -> Recipe:
        parts = []
        for weight in model.weights:
            initializer = filled.get(id(weight))
            if initializer is None:
                raise Unsupported(f"{weight.path}: not filled by an initializer")
            seed = getattr(initializer, "seed", None)
            if seed is None:
                parts.append((initializer, tuple(weight.shape), weight.dtype, None))
            elif isinstance(seed, int) and drawn.count(seed) == 1:
                parts.append((initializer, tuple(weight.shape), weight.dtype, drawn.index(seed)))
            else:
                raise Unsupported(f"{weight.path}: its initializer's seed is not one of the build's draws")
        return Recipe(len(drawn), parts)

    result.append(recipe)


def recipe_of(recorded: list, model: keras.Model) -> tuple[Recipe, bool] | None:
    """The recipe `record` watched `model`'s build follow, not checked yet (False); None if unsupported."""
    try:
        return recorded[0](model), False
    except Unsupported:
        return None
