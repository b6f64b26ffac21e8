"""A reused cell's initial weights drawn by replaying its first build (vitcore.model.initial): bit for bit a fresh
build's, generators left where a build leaves them, and a replay that does not match is caught."""

import random

import numpy as np
import pytest

from vitcore.config.run import RunConfig

# Keras builds: the slow tier (TensorFlow's import alone is seconds, over the fast tier's ~1 s a test), on the one
# pytest-xdist worker that imports TensorFlow anyway.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("tensorflow")]


@pytest.fixture(autouse=True, scope="module")
def _keras_models():
    """Keras, the builder and the recorder, imported when this file's tests run, not when it is collected."""
    global keras, build_model, initial
    keras = pytest.importorskip("keras")
    from vitcore.model import initial
    from vitcore.model.build import build_model


def recorded(cfg: RunConfig, seed: int):
    keras.utils.set_random_seed(seed)
    with initial.record() as watched:
        model = build_model(cfg)
    return model, initial.recipe_of(watched, model)


def fresh(cfg: RunConfig, seed: int):
    """A fresh build after set_random_seed(seed): its weights and the generators' states after it."""
    keras.utils.set_random_seed(seed)
    model = build_model(cfg)
    return [keras.ops.convert_to_numpy(w) for w in model.weights], random.getstate(), np.random.get_state()


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
@pytest.mark.parametrize("changes", [{}, {"pooling": "cls"}, {"norm": "batch", "norm_placement": "post"},
                                     {"tokenizer": "shifted", "self_attention": "lsa"}, {"pos_embedding": "sincos"},
                                     {"model": "convnet"}], ids=lambda c: "-".join(map(str, c.values())) or "vit")
def test_a_replay_draws_a_fresh_builds_weights_bit_for_bit(changes):
    cfg = RunConfig(**changes)
    model, (recipe, checked) = recorded(cfg, 3)
    assert not checked and recipe.matches(model, 3)
    for seed in (4, 1_000_003):
        weights, python_state, numpy_state = fresh(cfg, seed)
        replayed = recipe.draw(seed)
        assert random.getstate() == python_state  # the Python generator where the build leaves it
        assert all(np.array_equal(a, b) for a, b in zip(np.random.get_state(), numpy_state))
        assert len(replayed) == len(weights) == len(model.weights)
        for ours, theirs in zip(replayed, weights):
            assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
    assert not all(np.array_equal(a, b) for a, b in zip(recipe.draw(4), recipe.draw(5)))  # seeds differ


def test_a_replay_that_differs_from_its_build_does_not_match():
    model, (recipe, _) = recorded(RunConfig(), 3)
    assert recipe.matches(model, 3) and not recipe.matches(model, 4)  # another seed's weights
    extra = initial.Recipe(recipe.draws + 1, recipe.parts)  # a build that drew once more: same weights, other state
    assert not extra.matches(model, 3)
    other, _ = recorded(RunConfig(width=32, mlp_dim=64), 3)
    assert not recipe.matches(other, 3)  # another graph's weights


def test_an_initializer_seeded_otherwise_is_not_replayed():
    """A weight whose initializer holds a SeedGenerator (not one of the build's seed draws) leaves no recipe:
    the trainer then builds every run's model fresh."""
    keras.utils.set_random_seed(0)
    with initial.record() as watched:
        layer = keras.layers.Dense(4, kernel_initializer=keras.initializers.GlorotUniform(
            seed=keras.random.SeedGenerator(7)))
        model = keras.Sequential([keras.Input((3,)), layer])
    assert initial.recipe_of(watched, model) is None


def test_the_timing_version_keeps_the_replays_seconds_apart():
    """Runs timed by this code (initial weights replayed) never pool with version 5's (fresh builds)."""
    from vitcore.run.train import TIMING_VERSION
    from vitcore.store.timing import timing_group

    timing = {"threads": 1, "workers": 2, "compile": "reused"}
    assert TIMING_VERSION >= 6  # bumped by the replay
    ours, before = ({"timing": {"code": code, **timing}} for code in (TIMING_VERSION, 5))
    assert timing_group(ours) != timing_group(before)
