import streamlit as st

st.title("Patching")
