"""AppTest of the Claims and Runs pages, and the ViT vs convnet page's data-size curve, on synthetic
stores (tests/fakes.py): what each renders, and that every download is the CLI's bytes (the full set)
or those bytes restricted to the runs shown (the filtered set).

Downloads are read where the page hands them to Streamlit: `MediaFileManager.add` (bytes) and
`add_deferred` (a callable run on click), recorded by file name.
"""

from pathlib import Path

import pandas as pd
import pytest
from fakes import write_run
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from vitcore import cli
from vitcore.app import claims_view, state
from vitcore.article import claims
from vitcore.article.claims import AGREES
from vitcore.config.run import RunConfig
from vitcore.config.switches import REGISTRY
from vitcore.stats.estimates import BETTER
from vitcore.store.runs import WHOLE_FIELDS, RunStore

ROOT = Path(__file__).resolve().parents[1]
NOISE = (0.0, 0.004, -0.003)  # three random seeds


def page(name: str, **session) -> AppTest:
    at = AppTest.from_file(str(ROOT / "views" / f"{name}.py"), default_timeout=120)
    for key, value in session.items():
        at.session_state[key] = value
    return at.run()


@pytest.fixture
def store(tmp_path, monkeypatch) -> RunStore:
    monkeypatch.setattr(state, "STORE_PATH", str(tmp_path / "store"))
    return RunStore(tmp_path / "store")


@pytest.fixture
def downloads(monkeypatch) -> dict:
    """file name -> bytes of every download button drawn (deferred ones produced by calling them)."""
    seen = {}
    add, add_deferred = MediaFileManager.add, MediaFileManager.add_deferred

    def record(self, data, mimetype, coordinates, file_name=None, **options):
        seen[file_name] = data
        return add(self, data, mimetype, coordinates, file_name=file_name, **options)

    def record_deferred(self, produce, mimetype, coordinates, file_name=None, **options):
        seen[file_name] = produce
        return add_deferred(self, produce, mimetype, coordinates, file_name=file_name, **options)

    monkeypatch.setattr(MediaFileManager, "add", record)
    monkeypatch.setattr(MediaFileManager, "add_deferred", record_deferred)

    class Bytes(dict):
        def __getitem__(self, name):
            value = seen[name]
            return value() if callable(value) else value

        def __contains__(self, name):
            return name in seen
    return Bytes()


def headline_runs(store: RunStore, rows=(1_000, 4_000)) -> None:
    """The article's ViT ahead of its convnet by 0.05 at every row count, three random seeds."""
    for seed, noise in enumerate(NOISE):
        for train_rows in rows:
            write_run(store, RunConfig(train_rows=train_rows, seed=seed), 0.79 + noise, val=0.80 + noise, train=0.95)
            write_run(store, RunConfig(model="convnet", train_rows=train_rows, seed=seed), 0.74 + noise / 2,
                      val=0.75 + noise / 2, train=0.76)


# -- Claims ---------------------------------------------------------------------------------------
def test_claims_page_renders_every_claim_its_download_and_the_runs_behind_one(store, downloads, tmp_path):
    headline_runs(store)
    at = page("claims")
    assert not at.exception, at.exception
    shown = at.dataframe[0].value
    table = claims.claims_table(store.table())
    assert len(shown) == len(table) and set(shown["Claim"]) == set(table["claim"])
    first = shown.iloc[0]
    assert (first["Claim"], first["Rows"], first["Verdict"], first["Direction"]) == \
        ("the ViT beats the convnet", "1,000", BETTER, AGREES)
    assert first["Metric"] == "Test accuracy" and shown.iloc[1]["Metric"] == \
        "Best val accuracy (optimistic) · not counted"  # test accuracy decides; best val is never counted
    assert first["Mirrored claim"].startswith("CNNs beat ViTs on small data") and first["Tally"] == "counted"
    assert shown.iloc[1]["Tally"].startswith("not counted")
    assert first["Sources"] == "source article; Dosovitskiy et al. 2021"  # who; titles and settings: the table below
    assert first["Source"] == "fixed sample" and shown["Source"].str.len().gt(0).all()  # where each verdict comes from
    assert list(shown.columns[:8]) == ["Claim", "Verdict", "Interval", "Direction", "Δ = selection − baseline", "Rows",
                                       "Metric", "Δ"]  # read first: the claim, its verdict and interval at 400 px
    origins = at.table[0].value  # each claim's setting once, in full
    assert set(origins["Setting"]) == set(table["setting"]) and not origins.duplicated(["Claim", "Setting"]).any()
    ran = shown["Rows"] != "any (counted)"
    assert (shown.loc[ran, "Runs"].iloc[:-1].str.startswith("./?")).all()  # each row links to its runs
    assert (shown.loc[~ran, "Runs"] == "./token_cost").all() and (~ran).sum() == 3  # counted work, every patch step
    last = shown.iloc[-1]  # the data-size row (the crossover estimate) links to the curve
    assert (last["Claim"], last["Rows"], last["Runs"]) == (claims.DATA_SIZE, "the curve", "./vit_vs_convnet")
    assert "baseline=convnet" in first["Runs"]
    counts = claims.tally_of(table)  # one tally: the cards, the line and the CLI
    assert [m.value for m in at.metric] == [f"{counts[word]} of {counts['counted']}" for word in claims.DIRECTIONS]
    line = claims.tally(store.table()).set_index("margin").loc[0.01]
    assert all(line[word] == counts[word] for word in claims.DIRECTIONS)
    text = " ".join(m.value for m in at.markdown)
    assert "Correction" in text and "Tally by margin" in text and "±0.005" in text and "±0.02" in text

    assert cli.main(["claims", "--store", str(store.root), "--out", str(tmp_path / "claims.csv")]) == 0
    assert downloads["claims.csv"] == (tmp_path / "claims.csv").read_bytes()  # the CLI's bytes

    behind = at.dataframe[1].value  # the first row's pairs, seed by seed (test accuracy)
    assert behind["random seed"].tolist() == [0, 1, 2]


def test_the_claims_definitions_read_as_sentences():
    """Each verdict definition ends in its own full stop; before, they were joined with '; ' into '.;'."""
    text = claims_view.meaning(pd.DataFrame(), 0.01)
    assert ".;" not in text and "*not comparable*: seconds not timed as a design" in text


def test_a_claims_sources_are_named_by_who_without_their_titles():
    assert claims_view.who("source article (Vision Transformers); Xiong et al. 2020, On Layer Normalization in "
                           "the Transformer Architecture") == "source article; Xiong et al. 2020"
    assert claims_view.who("Beyer, Zhai & Kolesnikov 2022, Better plain ViT baselines for ImageNet-1k") == \
        "Beyer, Zhai & Kolesnikov 2022"
    every = {claims_view.who(source) for claim in claims.CLAIMS for source, _ in claim.sources}
    assert all(len(name) <= 40 for name in every), every  # fits the table's Sources column


def test_claims_page_on_an_empty_store_says_how(store):
    at = page("claims")
    assert not at.exception and "sweep default" in at.info[0].value


# -- Runs -----------------------------------------------------------------------------------------
@pytest.fixture
def grid(store) -> RunStore:
    headline_runs(store, rows=(1_000,))
    for seed in range(2):
        write_run(store, RunConfig(train_rows=1_000, patch_size=4, seed=seed), 0.7)
        write_run(store, RunConfig(train_rows=1_000, norm="batch", seed=seed), 0.1, train=0.9)  # collapsed
    return store


def test_runs_page_follows_the_sidebar_and_says_so(grid):
    at = page("runs", patch_size=4, train_rows=1_000)
    assert not at.exception
    assert "**2 of 10 runs**" in at.markdown[0].value and "sidebar's selection" in at.markdown[0].value
    assert at.dataframe[0].value["patch_size"].tolist() == [4, 4]


def test_runs_page_filters_every_switch_with_integer_patch_sizes(grid, downloads, tmp_path):
    at = page("runs")
    at.radio(key="runs_scope").set_value("All runs, filtered here").run()
    assert "**10 of 10 runs**" in at.markdown[0].value and "no filter set" in at.markdown[0].value
    labels = {m.label for m in at.multiselect}
    assert labels == {"Model", "Training rows", "Random seed", *(switch.label for switch in REGISTRY)}
    assert at.multiselect(key="runs_filter_patch_size").options == ["4", "7", "n/a"]  # ints, not 4.0 / 7.0
    at.multiselect(key="runs_filter_norm").select("batch").run()
    assert "**2 of 10 runs**" in at.markdown[0].value and "2 of them collapsed" in at.markdown[0].value
    table = at.dataframe[0].value
    assert set(table["norm"]) == {"batch"} and {"timing_group", "collapsed"} <= set(table.columns)
    assert table["collapsed"].all()

    assert cli.main(["export", "--store", str(grid.root), "--out", str(tmp_path)]) == 0
    for name in ("runs.csv", "histories.csv", "confusions.csv"):
        assert downloads[name] == (tmp_path / name).read_bytes(), name  # the full set: the CLI's bytes
        full = pd.read_csv(tmp_path / name, dtype={c: "Int64" for c in WHOLE_FIELDS})  # '4' stays '4', not '4.0'
        filtered = downloads[name.replace(".csv", "_shown.csv")]
        expected = full[full["run_id"].isin(set(table["run_id"]))].to_csv(index=False).encode()
        assert filtered == expected and filtered.count(b"\n") < (tmp_path / name).read_bytes().count(b"\n"), name
    assert "effects.csv" in downloads and "effects_shown.csv" in downloads


def test_runs_page_coverage_grid_counts_random_seeds(grid):
    at = page("runs")
    coverage = at.dataframe[1].value.set_index("cell")
    assert coverage.loc["ViT p7 pre-LN pos", "1,000 rows"] == 3
    assert coverage.loc["ViT p4 pre-LN pos", "1,000 rows"] == 2
    assert coverage.loc["convnet", "1,000 rows"] == 3


# -- ViT vs convnet: the data-size curve ----------------------------------------------------------
def test_vit_vs_convnet_data_size_curve(store):
    headline_runs(store, rows=(1_000, 2_000, 4_000))
    at = page("vit_vs_convnet")
    assert not at.exception, at.exception
    assert "How small can the data be before the convnet wins?" in [s.value for s in at.subheader]
    charts = [chart.proto.spec for chart in at.get("vega_lite_chart")]
    assert any('"type": "log"' in spec or '"type":"log"' in spec for spec in charts)  # log x axis
    crossover = next(m.value for m in at.markdown if m.value.startswith("**Where the lead changes sides.**"))
    assert "No resolved change of sign from 1,000 to 4,000 rows" in crossover and "2,000 rows: Δ +0.0502" in crossover
    from vitcore.analysis import scaling

    estimate = scaling.crossover_estimate(store.table())  # the fitted crossing and its bootstrap interval
    assert scaling.crossover_sentence(estimate) in crossover
    sizes = at.dataframe[0].value  # the paired Δ per row count, in its expander (the page leads with the data size)
    assert sizes["Rows"].tolist()[:3] == ["1,000", "1,000", "2,000"] and set(sizes["Pairs"]) == {3}
