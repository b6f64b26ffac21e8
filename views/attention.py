"""What the heads did — for the sidebar's ViT, from its stored random-seed-0 weights — with the two
controls the source article only asserts (a random-init model, and shuffled patches) and its temperature
sketch. The weights run through vitcore.model.numpy_vit (NumPy + h5py): this page never imports TensorFlow."""

import streamlit as st

from vitcore.analysis import attention as A  # the probes' readings of one model's attention scores, not the store's
from vitcore.app import layout, state
from vitcore.app.walkthrough import probes, walk
from vitcore.app.walkthrough.pictures import attention_picture, colour_key
from vitcore.app.walkthrough.probes import render_sketch
from vitcore.app.walkthrough.walk_charts import spread_bars
from vitcore.config.run import POS_EMBEDDINGS, RunConfig
from vitcore.data.fashion import CLASS_NAMES
from vitcore.data.samples import SEED_ROWS

st.title("What the attention heads did")
st.caption("The source article claims: heads are mostly diffuse (spreads 0.15–0.29 against a uniform 0.0625) "
           "with one sharp head (0.648); a confidently wrong prediction can have normal-looking attention; without "
           "a position embedding the model cannot tell a shuffled image from the original.")
images = state.load_gallery()
cfg, note = state.selection()
if note:
    st.warning(note)
if cfg.model != "vit":
    st.info("The convnet has no attention: pick model = vit in the sidebar to see its heads.")
    render_sketch(images, RunConfig())
    st.stop()

found = probes.stored_weights(cfg)
if found is None:
    st.info(f"No stored weights for {cfg.label()} at {cfg.train_rows:,} rows (random seed 0) yet. Train them with "
            f"`{A.train_command(cfg)}`, or wait for the sweep. The sketch below needs no model.")
    render_sketch(images, cfg)
    st.stop()
run_cfg, weights = found
N, skip = run_cfg.sequence, A.class_tokens(run_cfg)  # attention sees N tokens; the first `skip` are class tokens
st.caption(f"Weights: run {run_cfg.run_id} ({run_cfg.label()}, {run_cfg.train_rows:,} rows, {run_cfg.epochs} epochs, "
           f"random seed 0), run forward in NumPy. Images: {images.source}.")

scan = tuple(int(r) for r in images.indices[:probes.SCAN_ROWS])
scanned = probes.predictions(run_cfg, weights, scan)
labels = images.labels[:probes.SCAN_ROWS]
picked = tuple(scan[i] for i in A.pick_examples(scanned.probs, labels))
defaults = [r for r in SEED_ROWS if r in images.indices]
controls = st.columns([3, 1])
rows = probes.pick_rows(controls[0], scan, defaults or list(scan[:4]))
block = controls[1].radio("Block", range(run_cfg.depth), format_func=lambda b: f"block {b}", horizontal=True,
                          key="attention_block")
if not rows:
    st.info("Pick at least one test row.")
    st.stop()
rows = tuple(rows)
trained, control = probes.forward(run_cfg, weights, rows, block), probes.forward(run_cfg, None, rows, block)
scores, control_scores = trained.scores, control.scores
row_labels = images.labels_of(rows)

st.subheader(f"Attention scores: (rows, heads, queries, keys) = {scores.shape}")
st.markdown(f"Accuracy of this run on the first {len(scan):,} test rows: "
            f"**{(scanned.predicted == labels).mean():.4f}**. Each query's {N} weights sum to 1; a head that ignored "
            f"content and position would put **{1 / N:.4f}** on every patch.")
table = A.prediction_table(trained.probs, row_labels, rows, scores)
st.dataframe(table, hide_index=True, width="stretch", column_config={
    c: st.column_config.NumberColumn(format="%.4f") for c in table.columns if "spread" in c or c == "confidence"})

st.subheader("Control (a): the same maps from a randomly initialised model")
m = st.columns(3)
distance = A.map_distance(scores, control_scores)
m[0].metric("trained vs random init", f"{distance:.3f}", help="Mean total-variation distance between matching "
            "queries' weight vectors: 0 = identical maps, 1 = no overlap.")
m[1].metric("trained vs uniform", f"{A.distance_from_uniform(scores):.3f}")
m[2].metric("random init vs uniform", f"{A.distance_from_uniform(control_scores):.3f}")
st.markdown(walk.map_distance_note(distance, scores.shape[1], N, block, probes.CONTROL_SEED))
spread_labels = [f"row {r}: {CLASS_NAMES[t]}" for r, t in zip(rows, row_labels)]
layout.side_by_side(spread_bars(A.spread_frame(spread_labels, scores, control_scores), 1 / N))
ours, theirs = A.head_spread(scores), A.head_spread(control_scores)
st.markdown(walk.spread_note(ours, theirs, N, float((scanned.predicted == labels).mean()), len(scan)))

st.subheader("Per-head heat maps over the image")
pick = st.columns(2)
row = pick[0].selectbox("Row", rows, format_func=lambda r: f"row {r}", key="attention_heat_row")
query = pick[1].selectbox("Query", [None, *range(N)], key="attention_query",
                          format_func=lambda q: A.query_name(run_cfg, q))
position = rows.index(row)
models = {"trained": trained, "random init": control}
grids = {name: [A.key_map(m.scores[position, head], query, skip) for head in range(m.scores.shape[1])]
         for name, m in models.items()}
vmax = max(max(float(grid.max()) for grid in maps) for maps in grids.values())  # one scale for every map
st.image(colour_key(vmax, 1 / N), width=360, caption=f"Colour key, shared by all {sum(map(len, grids.values()))} maps: "
         f"white = weight 0, full red = {vmax:.3f} (the largest weight in any); black tick: the uniform 1/N = "
         f"{1 / N:.4f}.")
outline = None if query is None or query < skip else query - skip
for name, model in models.items():
    st.caption(f"{name}: {CLASS_NAMES[row_labels[position]]} → {CLASS_NAMES[model.predicted[position]]}")
    for head, (col, grid) in enumerate(zip(st.columns(len(grids[name])), grids[name])):
        col.image(attention_picture(images.image(row), grid, vmax, outline),
                  caption=f"head {head}: max {grid.max():.3f}",
                  clamp=True)

st.subheader("Right and confidently wrong")
examples = probes.forward(run_cfg, weights, picked, block)
st.dataframe(A.prediction_table(examples.probs, images.labels_of(picked), picked, examples.scores),
             hide_index=True, width="stretch")
st.markdown("The two most confident correct and the two most confidently wrong predictions among the scanned "
            "rows. Compare the spreads of the wrong rows with the right ones: if they look alike, the map does "
            "not show the failure — the source article's point that attention is not an explanation.")

st.subheader("Control (b): shuffle the patches")
rows_used = min(probes.PERMUTED_ROWS, len(images.indices))
st.markdown(f"The first {rows_used} test images, patch tokens fed in one random order. Attention is "
            "permutation-equivariant and the pooling is a mean: only the position embedding can notice.")
for pos in sorted(POS_EMBEDDINGS, key=lambda p: p != "none"):  # none first: it cannot notice
    other = probes.stored_weights(cfg.replace(pos_embedding=pos))
    if other is None:
        st.info(f"pos_embedding={pos!r}: no stored weights; train with "
                f"`{A.train_command(cfg.replace(pos_embedding=pos))}`.")
        continue
    st.markdown(f"- {probes.permutation(other[0], other[1], rows_used).sentence(pos)} (run {other[0].run_id})")

render_sketch(images, run_cfg)
