"""Patching is a reshape: one test image in the source article's three views, and the round trip
checked live."""

import inspect

import numpy as np
import streamlit as st

from vitcore.app import fmt, state
from vitcore.app.walkthrough.pictures import framed, grid_picture, matrix_picture, tiles_picture, token_numbers
from vitcore.data import patches  # the patch split the page shows and prints: data, not a statistic
from vitcore.data.fashion import CLASS_NAMES

st.title("Patching is a reshape")
st.caption("The source article: 28×28 → 16 tokens of 49 values, lossless (max |rebuilt − original| = "
           "0.00e+00). What is lost is adjacency.")

images = state.load_gallery()
selected, note = state.selection()
if note:
    st.warning(note)
patch = selected.patch_size  # the sidebar's patch size: one control for every page
left, right = st.columns(2)
label = left.selectbox("Class", range(len(CLASS_NAMES)), format_func=lambda i: f"{i} · {CLASS_NAMES[i]}",
                       index=9, key="patching_class")
rows = images.rows_of_class(label)
index = right.selectbox("Test row", rows.tolist(), key=f"patching_row_{label}",
                        help="Row number in the official 10,000-image test split.")
st.caption(f"Patch size {patch} (the sidebar's Patch size: change it there). Images from the {images.source}: "
           f"{fmt.rows(len(images.indices))} rows.")

image = images.image(index)
tokens = patches.patchify(image[None], patch)            # (1, N, patch²)
rebuilt = patches.unpatchify(tokens, patch)[0]            # (28, 28)
error = float(np.abs(rebuilt - image).max())
grid = patches.SIDE // patch

a, b, c = st.columns(3)
a.metric("Tokens × values", f"{tokens.shape[1]} × {tokens.shape[2]}",
         help=f"{grid}×{grid} patches of {patch}×{patch} pixels")
b.metric("Values kept", f"{fmt.rows(tokens.size)} of {fmt.rows(image.size)}")
c.metric("max |rebuilt − original|", f"{error:.2e}")

st.subheader("One image, three views")
one, two, three = st.columns([1.1, 1.1, 1])
one.image(framed(token_numbers(grid_picture(image, patch), patch)),
          caption=f"Pixels, with the {grid}×{grid} patch grid (tokens numbered "
          "row by row from the top left)", clamp=True)
two.image(framed(tiles_picture(tokens[0], patch)), caption="The patches, as separate tiles", clamp=True)
three.image(framed(matrix_picture(tokens[0])),
            caption=f"What the transformer receives: {tokens.shape[1]} tokens (rows) × "
            f"{tokens.shape[2]} values", clamp=True)

st.markdown(
    f"{CLASS_NAMES[label]} (test row {index}) becomes a **{tokens.shape[1]} × {tokens.shape[2]}** matrix: "
    f"{grid}² patches of {patch}² values, and {grid ** 2} × {patch ** 2} = {fmt.rows(tokens.size)} = "
    f"{patches.SIDE} × {patches.SIDE}, so nothing is lost — reversing the transpose rebuilds the image with max "
    f"error **{error:.2e}**. The right panel is all the transformer gets: token 0 and token 1 are just two rows "
    "of a matrix, and nothing says they were neighbours. That is what the position embedding has to buy back.")
if error != 0:
    st.error(f"The round trip is not exact (max error {error:.2e}): vitcore.data.patches is broken.")

with st.expander(f"The code ({patches.__name__.replace('.', '/')}.py)"):  # named by the module shown: no drift
    st.code(inspect.getsource(patches.patchify), language="python")
