"""Entry point: `streamlit run streamlit_app.py`. (Minimal until the dashboard lands: lists the store.)"""

import streamlit as st

from vitcore.store import RunStore

st.set_page_config(page_title="vitcore", layout="wide")
st.title("vitcore: what is each part of a ViT worth?")
table = RunStore("cached_runs").table()
st.write(f"{len(table)} runs in cached_runs/")
st.dataframe(table)
