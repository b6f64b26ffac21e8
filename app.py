"""The dashboard's frame (served by `streamlit run streamlit_app.py`): pages, the shared sidebar, run.

The sidebar lives here so its switches persist across pages; every page reads them through
`vitcore.app.state.selection()`.
"""

from pathlib import Path

import streamlit as st

from vitcore.app import state
from vitcore.app.sidebar import render_sidebar
from vitcore.app.training import slot

# The tab icon is a file served by this server: a Material icon or emoji would be fetched from an outside
# font server (a console error offline, a request to a third party online).
ICON = Path(__file__).parent / "vitcore" / "app" / "icon.png"
st.set_page_config(page_title="vitcore: ViT ablations", page_icon=str(ICON), layout="wide")

page = st.navigation({
    "Ablations": [
        st.Page("views/ablations.py", title="Ablations", icon=":material/tune:", default=True),
        st.Page("views/claims.py", title="Claims", icon=":material/fact_check:"),
        st.Page("views/plans.py", title="Plans", icon=":material/assignment_turned_in:"),
        st.Page("views/noise.py", title="Seed noise", icon=":material/scatter_plot:"),
        st.Page("views/runs.py", title="Runs & downloads", icon=":material/table_view:"),
    ],
    "Walkthrough": [
        st.Page("views/patching.py", title="Patching", icon=":material/grid_on:"),
        st.Page("views/anatomy.py", title="Parameter anatomy", icon=":material/account_tree:"),
        st.Page("views/token_cost.py", title="Token cost", icon=":material/speed:"),
        st.Page("views/attention.py", title="Attention", icon=":material/visibility:"),
        st.Page("views/vit_vs_convnet.py", title="ViT vs convnet", icon=":material/compare:"),
    ],
})
render_sidebar()
slot.environment_note()  # a wrong VITCORE_* value: one note, training off
state.skipped_note()  # damaged runs are left out of every page: say how many
page.run()
