"""The variance decomposition (vitcore.analysis.noise) on synthetic tables and a synthetic store whose
variance components are known: estimates unbiased, intervals that cover, the paired Δ's pairing."""

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli
from fakes import write_run
from scipy import stats

from vitcore.analysis import noise
from vitcore.config.run import RunConfig

# Known components (accuracy² units): a data-dominated design like Bouthillier et al.'s, and one
# where the interactions dominate.
TRUE = {"data-heavy": np.array([4.0, 1.0, 0.5, 2.0, 0.0, 1.0, 3.0]) * 1e-5,
        "interaction-heavy": np.array([0.5, 0.5, 0.0, 1.0, 1.0, 1.0, 8.0]) * 1e-5}


def simulate(true: np.ndarray, levels: tuple[int, int, int], tables: int, seed: int) -> np.ndarray:
    """`tables` draws (tables, a, b, c) of the crossed model with these component variances."""
    return noise._effects(np.random.default_rng(seed), tables, levels, true[:, None, None])[..., 0]


@pytest.mark.parametrize("name", TRUE)
def test_components_are_unbiased(name):
    true = TRUE[name]
    estimates = noise.components(simulate(true, (4, 4, 2), 4_000, seed=1))
    np.testing.assert_allclose(estimates.mean(axis=0), true, atol=0.05 * true.sum())


@pytest.mark.parametrize("name", TRUE)
def test_intervals_cover_the_known_components(name):
    """On 60 synthetic tables of the noise grid's design (4 x 4 x 2), each component's and each
    share's 95% interval holds the true value in at least 85% of them (measured on 300 tables:
    0.91-1.0)."""
    true = TRUE[name]
    tables = simulate(true, (4, 4, 2), 60, seed=2)
    hits, share_hits = np.zeros(7), np.zeros(7)
    for k, y in enumerate(tables):
        found = noise.decompose(y, draws=500, seed=k)
        found = found.set_index("component").loc[list(noise.COMPONENTS)]
        hits += (found["variance_low"] <= true) & (true <= found["variance_high"])
        share = true / true.sum()
        share_hits += (found["share_low"] <= share) & (share <= found["share_high"])
    assert (hits / len(tables) >= 0.85).all(), hits / len(tables)
    assert (share_hits / len(tables) >= 0.85).all(), share_hits / len(tables)


def test_a_design_needs_two_levels_of_each_source():
    with pytest.raises(ValueError, match="2 or more levels of each source; got 4 x 1 x 2"):
        noise.components(np.zeros((4, 1, 2)))


def test_balanced_drops_the_level_that_misses_most():
    runs = pd.DataFrame([{"data": d, "init": i, "order": o, "test_accuracy": d + i / 10 + o / 100}
                         for d in range(4) for i in range(3) for o in range(2) if not (d == 3 and i > 0)])
    [table] = noise.balanced(runs)
    assert table.shape == (3, 3, 2) and table[2, 1, 1] == pytest.approx(2.11)


def test_pairing_by_a_shared_source_removes_its_covariance():
    """Arm B = arm A + independent noise of the same size: each shared term's covariance is its
    variance in A, so pairing by the data sample alone removes 2 var_D / (var_A + var_B)."""
    true = TRUE["data-heavy"]
    rng = np.random.default_rng(3)
    a = simulate(true, (6, 6, 4), 1, seed=4)[0]
    b = a + rng.normal(0, np.sqrt(true.sum()), a.shape) + 0.02
    table = noise.pairing(a, b, draws=1_000).set_index("paired_by")
    expected_data = 2 * true[0] / (true.sum() + 2 * true.sum())
    low, high = table.loc["data", ["removed_low", "removed_high"]]
    assert low <= expected_data <= high
    everything = table.loc["random seed (all three)"]
    assert everything["removed_low"] <= 2 / 3 <= everything["removed_high"]  # 2 Var A / (Var A + 2 Var A)
    sd, n = np.sqrt(everything["variance"]), int(everything["seeds_for_margin"])  # n seeds: ±t·sd/√n
    half = [stats.t.ppf(0.975, k - 1) * sd / np.sqrt(k) for k in (n, n - 1)]
    assert n > 2 and half[0] <= 0.01 < half[1]


def write_crossed(store, learned: np.ndarray, none: np.ndarray) -> None:
    """Both arms of the paired Δ (pos learned, none) at every (data, init, order) of the tables."""
    for d, i, o in np.ndindex(*learned.shape):
        for pos, table in (("learned", learned), ("none", none)):
            cfg = RunConfig(pos_embedding=pos, train_rows=1000, epochs=2, seed=d, init_seed=i, order_seed=o)
            write_run(store, cfg, 0.8 + table[d, i, o])


def test_a_synthetic_store_gives_back_its_components(store):
    """Runs written to a real store (test accuracy = 0.8 + the crossed model's draw, to the 1/10,000
    the test split gives) come back through RunStore.table() with each true component inside its
    interval, for a cell and for the paired Δ (pos none − learned)."""
    true = np.array([6.0, 2.0, 0.0, 0.0, 0.0, 1.0, 2.0]) * 1e-5
    levels = (5, 5, 3)
    learned = simulate(true, levels, 1, seed=7)[0]
    none = learned + simulate(true * 0.5, levels, 1, seed=8)[0] - 0.01
    write_crossed(store, learned, none)
    write_run(store, RunConfig(train_rows=1000, epochs=2, seed=9), 0.5)  # a plain run: not part of the design
    components, pairing = noise.noise_tables(store.table(), draws=1_000)
    # the runs train 2 epochs: their label says so (a label names every field off its default)
    cell = components[components["cell"] == "ViT p7 pre-LN pos epochs 2"].set_index("component")
    assert list(cell.index) == [*noise.COMPONENTS, "interactions", "data alone", "init alone", "order alone", "total"]
    # a source alone: its term and its three interactions (what varies when the other two are fixed)
    alone = true[[0, 3, 4, 6]].sum()
    assert cell.loc["data alone", "variance_low"] <= alone <= cell.loc["data alone", "variance_high"]
    # the four interactions' share: their estimates' sum (one may be negative) over the total
    assert cell.loc["total", "share"] == 1
    assert 0 < cell.loc["interactions", "share"] <= cell.loc[list(noise.COMPONENTS[3:]), "share"].sum() + 1e-12
    assert cell.loc["total", "variance_low"] <= true.sum() <= cell.loc["total", "variance_high"]
    cell = cell.loc[list(noise.COMPONENTS)]
    assert list(cell["runs"].unique()) == [75] and cell["design"].iloc[0] == "5 × 5 × 3"
    assert ((cell["variance_low"] <= true) & (true <= cell["variance_high"])).all()
    delta = components[components["cell"].str.startswith("Δ")].set_index("component").loc[list(noise.COMPONENTS)]
    assert set(delta["cell"]) == {"Δ ViT p7 pre-LN no-pos epochs 2 − ViT p7 pre-LN pos epochs 2"}
    assert ((delta["variance_low"] <= true * 0.5) & (true * 0.5 <= delta["variance_high"])).all()
    assert list(pairing["paired_by"]) == ["data", "init", "order", "random seed (all three)"]


@pytest.mark.slow  # spawns the CLI
def test_noise_command_writes_both_tables_and_the_advice(store, tmp_path, capsys):
    true = TRUE["data-heavy"]
    learned = simulate(true, (3, 3, 2), 1, seed=9)[0]
    write_crossed(store, learned, learned + simulate(true, (3, 3, 2), 1, seed=10)[0])
    done = run_cli("noise", "--store", str(store.root), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    components, pairing = (pd.read_csv(tmp_path / "out" / name) for name in ("noise.csv", "pairing.csv"))
    assert set(components["cell"]) == {"ViT p7 pre-LN pos epochs 2", "ViT p7 pre-LN no-pos epochs 2",
                                       "Δ ViT p7 pre-LN no-pos epochs 2 − ViT p7 pre-LN pos epochs 2"}
    assert len(pairing) == 4 and "pairing by the data sample alone removes" in done.stdout
    (tmp_path / "file").write_text("x")
    from vitcore import cli  # bad inputs in this process (tests/test_cli.py runs some in a fresh one)

    for bad in (["--out", str(tmp_path / "file")], ["--out", str(tmp_path / "o2"), "--store", str(tmp_path / "none")],
                ["--out", str(tmp_path / "o3"), "--margin", "2"]):
        assert cli.main(["noise", *([] if "--store" in bad else ["--store", str(store.root)]), *bad]) == 2, bad
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_crossed_runs_stay_out_of_every_table_keyed_by_config_and_random_seed(store):
    """A crossed run shares the config fields and the random seed of a plain run; main effects, the
    token-cost table and the cell of the plain config must not average it in."""
    from vitcore.analysis import cost
    from vitcore.stats import summaries

    plain = RunConfig(train_rows=1000)
    for seed in range(2):
        write_run(store, plain.replace(seed=seed), 0.8)
        write_run(store, plain.replace(seed=seed, init_seed=5), 0.1)
    table = store.table()
    assert len(table) == 4 and len(summaries.runs_of(table, plain)) == 2
    assert set(summaries.factorial_runs(table)["test_accuracy"]) == {0.8}
    assert list(cost.tokens_grid_seconds(table)["mean_test_accuracy"]) == [0.8]


def test_largest_source_is_the_data_alone_sd_minus_the_larger_other():
    y = simulate(TRUE["data-heavy"], (6, 6, 4), 1, seed=14)[0]
    contrast, low, high = noise.largest_source(y, draws=1_000)
    variance = noise.components(y)
    sd = [np.sqrt(max(variance[list(terms)].sum(), 0)) for terms in ((0, 3, 4, 6), (1, 3, 5, 6), (2, 4, 5, 6))]
    assert contrast == pytest.approx(sd[0] - max(sd[1:])) and low < contrast < high
    true = TRUE["data-heavy"]
    true_sd = [np.sqrt(true[list(terms)].sum()) for terms in ((0, 3, 4, 6), (1, 3, 5, 6), (2, 4, 5, 6))]
    assert low <= true_sd[0] - max(true_sd[1:]) <= high


@pytest.mark.parametrize("seed, noted", [(0, True), (11, False)])  # pure three-way noise: a source estimated
def test_advice_says_when_shares_shown_at_zero_add_up_past_100_percent(seed, noted):  # below 0 (seed 0) or not (11)
    y = np.random.default_rng(seed).normal(size=(4, 4, 2)) * 0.01
    assert (noise.components(y)[:3] < 0).any() == noted
    table = noise.decompose(y, draws=50).assign(cell="c", model="vit", train_rows=1000, design="4 × 4 × 2", runs=32)
    shown = table.set_index("component").loc[[*noise.SOURCES, noise.INTERACTIONS], "share"].sum()
    [line] = noise.advice(table, pd.DataFrame(columns=noise.PAIRING_COLUMNS))
    assert (f"a negative estimate shows as 0%, so these four add up to {shown:.0%})" in line) == noted
    assert noted == (shown > 1.005)
