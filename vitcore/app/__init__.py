"""The Streamlit app around the library: the only package in vitcore that imports Streamlit or Altair.

    state        the sidebar's selection and the store's one cached Study (vitcore.study: every analysis)
    probes       cached attention passes of stored weights (the NumPy ViT: no TensorFlow)
    results      the ViT vs convnet and Claims pages' library results, from the Study
    selection    the sidebar's choices, URL checks and baseline cells (plain Python)
    training     train-on-demand: the deployment switch, time estimates, the one-training slot
    tables       rows, frames and sentences the pages show, built from library results
    fmt          how every number is printed (mean ± sd, CI, Δ, seconds, thousands) and the colours
    sidebar      the shared sidebar (drawn by app.py on every page)
    train_panel  "not cached yet": the estimate, "Train now" and live progress
    charts       the Ablations page's Altair charts (and the shared verdict colours), the walkthrough's first ones
    cards        the Ablations page's words: metric cards, per-seed tables, header, verdict definitions
    panels       the Ablations page's sections drawn with Streamlit (landing forest plot, cards, views)
    pictures     NumPy pictures for st.image (patch grids, tiles, attention overlays)
    walk         frames and sentences of the ViT vs convnet, Token cost and Attention pages
    walk_charts  the ViT vs convnet page's charts (data-size curve, paired Δ, gap bars)
    runs_view    the Runs page's filters, coverage grid and filtered CSVs
    claims_view  the Claims page's table, CSV, verdict meaning and links to the runs

The pages in views/ call these and render; statistics live in the library (vitcore.stats.summaries & co.).
"""
