"""The attention page's closing section: the source article's interactive sketch, softmax over the
content similarity of one image's patches with a temperature. NumPy only, no model.

Its own module because the page draws it on every path (no model, the convnet, a trained ViT).
"""

from __future__ import annotations

import streamlit as st

from vitcore.analysis import attention as A
from vitcore.app import layout
from vitcore.app.charts import weight_bars
from vitcore.app.walkthrough.pictures import attention_picture
from vitcore.config.run import RunConfig
from vitcore.data.patches import SIDE
from vitcore.data.samples import SEED_ROWS, Gallery

PULLOVER = SEED_ROWS[1]  # the article's sketch image: test row 1


def render_sketch(images: Gallery, cfg: RunConfig) -> None:
    st.subheader("The sketch: softmax over content similarity, with a temperature")
    st.caption("No model here: the source article's interactive sketch, computed in NumPy.")
    image = images.image(PULLOVER) if PULLOVER in images.indices else images.head(1)[0]
    grid = SIDE // cfg.patch_size
    left, right = st.columns([1, 2])
    query = left.number_input("Query patch", 0, grid * grid - 1, value=min(5, grid * grid - 1), key="sketch_query")
    temperature = left.slider("Temperature", 0.05, 5.0, 1.0, 0.05, key="sketch_temperature")
    weights = A.sketch_weights(image, int(query), temperature, cfg.patch_size)
    uniform = 1 / len(weights)
    left.image(attention_picture(image, weights.reshape(grid, grid), float(weights.max()), int(query)),
               caption="query patch outlined in blue; red = weight", clamp=True)
    with right:
        layout.chart(weight_bars(weights, uniform, f"patch {query}'s weights, temperature {temperature:.2f}",
                                 int(query)))
    st.markdown(f"Top weight **{weights.max():.4f}** against the uniform **{uniform:.4f}** (1/{len(weights)}). "
                "Weights are softmax(cosine similarity / T) between the mean-centred patches of the article's "
                "pullover: heat it up and every patch gets 1/N; cool it down and one patch takes almost everything.")
