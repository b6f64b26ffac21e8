"""What the heads did — for the sidebar's ViT, from its stored seed-0 weights — with the two controls
the seed only asserts (a random-init model, and shuffled patches) and the seed's temperature sketch.
TensorFlow is imported only once a stored model is loaded."""

import numpy as np
import streamlit as st

from vitcore import attention as A
from vitcore.app_data import config_from_state, load_runs, store
from vitcore.config import RunConfig
from vitcore.data import CLASS_NAMES
from vitcore.store import BadRun
from vitcore.samples import SEED_ROWS, gallery
from vitcore.walkthrough_views import attention_picture, spread_bars, weight_bars

SCAN_ROWS = 1_000      # test rows scanned for the most confident right and wrong predictions
PERMUTED_ROWS = 200    # images fed shuffled in the permutation test


@st.cache_data(show_spinner="Loading test images…")
def load_gallery():
    return gallery()


@st.cache_resource(show_spinner="Loading the model (TensorFlow)…", max_entries=6)
def load_model(cfg: RunConfig, weights: str | None, init_seed: int = 0):
    return A.build_attention_model(cfg, weights, init_seed)


@st.cache_data(show_spinner="Running the model…", max_entries=32)
def run_forward(cfg: RunConfig, weights: str | None, rows: tuple[int, ...]) -> A.Forward:
    images = load_gallery()
    return A.forward(load_model(cfg, weights), cfg, np.stack([images.image(r) for r in rows]))


@st.cache_data(show_spinner="Shuffling patches…", max_entries=16)
def run_permutation(cfg: RunConfig, weights: str, rows: int) -> A.PermutationResult:
    return A.permutation_test(load_model(cfg, weights), cfg, load_gallery().images[:rows], seed=1)


def stored_weights(cfg: RunConfig) -> tuple[RunConfig, str] | None:
    """(the stored run's config, its weights path) for the sidebar's cfg, or None."""
    run_id = A.find_weighted_run(load_runs(), cfg)
    try:
        run = store().load(run_id) if run_id else None
    except BadRun:
        return None
    return (run.config, str(run.weights_path)) if run and run.weights_path else None


def sketch(images, cfg: RunConfig) -> None:
    st.subheader("The sketch: softmax over content similarity, with a temperature")
    st.caption("No model here: the seed's interactive sketch, computed in NumPy.")
    image = images.image(SEED_ROWS[1]) if SEED_ROWS[1] in images.indices else images.images[0]
    grid = 28 // cfg.patch_size
    left, right = st.columns([1, 2])
    query = left.number_input("Query patch", 0, grid * grid - 1, value=min(5, grid * grid - 1), key="sketch_query")
    temperature = left.slider("Temperature", 0.05, 5.0, 1.0, 0.05, key="sketch_temperature")
    weights = A.sketch_weights(image, int(query), temperature, cfg.patch_size)
    uniform = 1 / len(weights)
    left.image(attention_picture(image, weights.reshape(grid, grid), float(weights.max()), int(query)),
               caption="query patch outlined in blue; red = weight", clamp=True)
    right.altair_chart(weight_bars(weights, uniform, f"patch {query}'s weights, temperature {temperature:.2f}",
                                   int(query)), width="stretch")
    st.markdown(f"Top weight **{weights.max():.4f}** against the uniform **{uniform:.4f}** (1/{len(weights)}). "
                "Weights are softmax(cosine similarity / T) between the mean-centred patches of the seed's pullover: "
                "heat it up and every patch gets 1/N; cool it down and one patch takes almost everything.")


st.title("What the attention heads did")
st.caption("Seed claims: heads are mostly diffuse (spreads 0.15–0.29 against a uniform 0.0625) with one sharp "
           "head (0.648); a confidently wrong prediction can have normal-looking attention; without a position "
           "embedding the model cannot tell a shuffled image from the original.")
images = load_gallery()
try:
    cfg = config_from_state(st.session_state)
except ValueError as error:
    st.warning(f"The sidebar selection is not a valid config ({error}); showing the seed's ViT.")
    cfg = RunConfig()
if cfg.model != "vit":
    st.info("The convnet has no attention: pick model = vit in the sidebar to see its heads.")
    sketch(images, RunConfig())
    st.stop()

found = stored_weights(cfg)
if found is None:
    st.info(f"No stored weights for {cfg.label()} at {cfg.train_rows:,} rows (seed 0) yet. Train them with "
            f"`{A.train_command(cfg)}`, or wait for the sweep. The sketch below needs no model.")
    sketch(images, cfg)
    st.stop()
run_cfg, weights = found
N = run_cfg.tokens
st.caption(f"Weights: run {run_cfg.run_id} ({run_cfg.label()}, {run_cfg.train_rows:,} rows, {run_cfg.epochs} epochs, "
           f"seed 0). Images: {images.source}.")

scan = tuple(int(r) for r in images.indices[:SCAN_ROWS])
scanned = run_forward(run_cfg, weights, scan)
labels = images.labels[:SCAN_ROWS]
picked = [scan[i] for i in A.pick_examples(scanned.probs, labels)]
defaults = [r for r in SEED_ROWS if r in images.indices]
controls = st.columns([3, 1])
rows = controls[0].multiselect("Test rows", scan, default=defaults or scan[:4], max_selections=8, key="attention_rows",
                               help="Defaults: the seed's rows 0, 1, 11, 12. Confidently right/wrong rows are below.")
block = controls[1].radio("Block", range(run_cfg.depth), format_func=lambda b: f"block {b}", horizontal=True,
                          key="attention_block")
if not rows:
    st.info("Pick at least one test row.")
    st.stop()
rows = tuple(rows)
trained = run_forward(run_cfg, weights, rows)
control = A.forward(load_model(run_cfg, None, 0), run_cfg, np.stack([images.image(r) for r in rows]))
scores, control_scores = trained.scores[block], control.scores[block]
row_labels = images.labels[np.searchsorted(images.indices, rows)]

st.subheader(f"Attention scores: (rows, heads, queries, keys) = {scores.shape}")
st.markdown(f"Accuracy of this run on the first {len(scan):,} test rows: **{(scanned.predicted == labels).mean():.4f}**. "
            f"Each query's {N} weights sum to 1; a head that ignored content and position would put "
            f"**{1 / N:.4f}** on every patch.")
table = A.prediction_table(trained.probs, row_labels, np.array(rows), scores)
st.dataframe(table, hide_index=True, width="stretch", column_config={
    c: st.column_config.NumberColumn(format="%.4f") for c in table.columns if "spread" in c or c == "confidence"})

st.subheader("Control (a): the same maps from a randomly initialised model")
distance = A.map_distance(scores, control_scores)
m = st.columns(3)
m[0].metric("trained vs random init", f"{distance:.3f}", help="Mean total-variation distance between matching "
            "queries' weight vectors: 0 = identical maps, 1 = no overlap.")
m[1].metric("trained vs uniform", f"{A.distance_from_uniform(scores):.3f}")
m[2].metric("random init vs uniform", f"{A.distance_from_uniform(control_scores):.3f}")
spread_labels = [f"row {r}: {CLASS_NAMES[t]}" for r, t in zip(rows, row_labels)]
st.altair_chart(spread_bars(A.spread_frame(spread_labels, scores, control_scores), 1 / N), width="content")
st.markdown(f"Head spreads of the trained model: {A.head_spread(scores).min():.3f}–{A.head_spread(scores).max():.3f}; "
            f"of an untrained model of the same config: {A.head_spread(control_scores).min():.3f}–"
            f"{A.head_spread(control_scores).max():.3f}. Structure that an untrained network also shows is "
            "not evidence of anything the model learned.")

st.subheader("Per-head heat maps over the image")
pick = st.columns(2)
row = pick[0].selectbox("Row", rows, format_func=lambda r: f"row {r}", key="attention_heat_row")
query = pick[1].selectbox("Query patch", [None, *range(N)], key="attention_query",
                          format_func=lambda q: "mean over all queries" if q is None else f"patch {q}")
position = rows.index(row)
image = images.image(row)
for name, maps in (("trained", scores), ("random init", control_scores)):
    grids = [A.key_map(maps[position, head], query) for head in range(maps.shape[1])]
    vmax = max(float(np.max(grids)), 1e-9)
    st.caption(f"{name}: {CLASS_NAMES[row_labels[position]]} → "
               f"{CLASS_NAMES[(trained if name == 'trained' else control).predicted[position]]}")
    cols = st.columns(len(grids))
    for head, (col, grid) in enumerate(zip(cols, grids)):
        col.image(attention_picture(image, grid, vmax, query), caption=f"head {head}: max {grid.max():.3f}", clamp=True)

st.subheader("Right and confidently wrong")
examples = run_forward(run_cfg, weights, tuple(picked))
st.dataframe(A.prediction_table(examples.probs, images.labels[np.searchsorted(images.indices, picked)],
                                np.array(picked), examples.scores[block]), hide_index=True, width="stretch")
st.markdown("The two most confident correct and the two most confidently wrong predictions among the scanned "
            "rows. Compare the spreads of the wrong rows with the right ones: if they look alike, the map does "
            "not show the failure — the seed's point that attention is not an explanation.")

st.subheader("Control (b): shuffle the patches")
rows_used = min(PERMUTED_ROWS, len(images.indices))
st.markdown(f"The first {rows_used} test images, patch tokens fed in one random order. Attention is "
            "permutation-equivariant and the pooling is a mean: only the position embedding can notice.")
for pos in ("none", "learned"):
    other = stored_weights(cfg.replace(pos_embedding=pos))
    if other is None:
        st.info(f"pos_embedding={pos!r}: no stored weights; train with "
                f"`{A.train_command(cfg.replace(pos_embedding=pos))}`.")
        continue
    result = run_permutation(other[0], other[1], rows_used)
    st.markdown(f"- {result.sentence(pos)} (run {other[0].run_id})")

sketch(images, run_cfg)
