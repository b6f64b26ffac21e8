"""The Streamlit app around the library: the only package in vitcore that imports Streamlit or Altair.

The shared core (vitcore/app/*.py):
    state              the sidebar's selection and the store's one cached Study (vitcore.study: every analysis)
    selection          the sidebar's choices, URL checks and baseline cells (plain Python)
    sidebar            the shared sidebar (drawn by app.py on every page)
    fmt                how every number is printed (mean ± sd, CI, Δ, seconds, thousands) and the colours
    layout             how a chart fills its place: container width, panels side by side or stacked on a phone
    charts             the Ablations page's Altair charts (and the shared verdict colours), the walkthrough's first
    tables             rows, frames and sentences the pages show, built from library results
    memory             the server's memory: freed memory returned to the system, big results cached once
    runs_view          the Runs page's filters, coverage grid and filtered CSVs
    claims_view        the Claims page's table, CSV, verdict meaning and links to the runs
    noise_view         the Seed noise page's decomposition, its shares chart and tables
    plans_view         the Plans page: every plan on the store, a two-sentence summary, its details and a table each
A folder per page with several parts:
    ablations.cards    the Ablations page's words: metric cards, per-seed tables, header, verdict definitions
    ablations.panels   the Ablations page's sections (landing forest plot, cards, views)
    training.slot      train-on-demand: the deployment switch, time estimates, the one-training slot
    training.child     a training in a child process, so the server never loads TensorFlow
    training.train_panel  "not cached yet": the estimate, "Train now" and live progress
    walkthrough.pictures  NumPy pictures for st.image (patch grids, tiles, attention overlays)
    walkthrough.probes    cached attention passes of stored weights (the NumPy ViT: no TensorFlow)
    walkthrough.walk      frames and sentences of the ViT vs convnet, Token cost and Attention pages
    walkthrough.walk_charts  the ViT vs convnet page's charts (data-size curve, paired Δ, gap bars)

The pages in views/ call these and render; the statistics come from the Study (vitcore.study) and their words
from vitcore.study.words (tests/test_layout.py checks this list against the package's modules).
"""
