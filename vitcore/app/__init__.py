"""The Streamlit app around the library: the only package in vitcore that imports Streamlit or Altair.

    state        the sidebar's selection and every cached store read (st.cache_data)
    probes       cached Keras probes for the walkthrough: parameter counts, attention passes
    selection    the sidebar's choices, URL checks and baseline cells (plain Python)
    training     train-on-demand: the deployment switch, time estimates, the one-training slot
    tables       rows, frames and sentences the pages show, built from library results
    fmt          how every number is printed (mean ± sd, CI, Δ, seconds, thousands) and the colours
    sidebar      the shared sidebar (drawn by app.py on every page)
    train_panel  "not cached yet": the estimate, "Train now" and live progress
    charts       every Altair chart
    pictures     NumPy pictures for st.image (patch grids, tiles, attention overlays)

The pages in pages/ call these and render; statistics live in the library (vitcore.stats & co.).
"""
