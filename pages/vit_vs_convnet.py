import streamlit as st

st.title("ViT vs ConvNet")
