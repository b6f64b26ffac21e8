import streamlit as st

st.title("Parameter anatomy")
