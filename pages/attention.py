import streamlit as st

st.title("Attention")
