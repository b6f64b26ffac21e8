import streamlit as st

st.title("Token cost")
