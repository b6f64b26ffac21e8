"""Parameter anatomy: what a ViT buys with parameters that a convnet gets free, counted from the
built model of the sidebar's config (TensorFlow is loaded lazily, on first use)."""

import streamlit as st

from vitcore import anatomy
from vitcore.app_data import config_from_state
from vitcore.config import RunConfig


@st.cache_data(show_spinner="Building the model to count its parameters…")
def counted(cfg: RunConfig) -> list[tuple[str, int]]:
    return anatomy.breakdown(cfg)


def total_of(cfg: RunConfig) -> int:
    return dict(counted(cfg))["total"]


st.title("Parameter anatomy")
st.caption("Seed claim: a convolution buys its spatial prior for 640 parameters; the ViT spends 3,200 on "
           "projection and another 1,024 purely to reintroduce the notion of “where”.")

try:
    cfg = config_from_state(st.session_state)
except ValueError as error:
    st.warning(f"The sidebar selection is not a valid config ({error}); showing the seed's ViT.")
    cfg = RunConfig()
if cfg.model == "convnet":
    st.info("The sidebar selects the convnet, which has no patches or attention: this page shows the ViT "
            "with the sidebar's ViT switches, and the convnet's layers below.")
    cfg = cfg.replace(model="vit")

rows = counted(cfg)
table = anatomy.anatomy_table(cfg, rows)
sums = anatomy.totals(rows)
convnet_total = total_of(RunConfig(model="convnet"))

st.subheader(cfg.label())
a, b, c = st.columns(3)
a.metric("ViT total", f"{sums['total']:,}")
b.metric("without position embedding", f"{sums['without position']:,}",
         help="The seed's “ViT 70,922” is this number: its total leaves out the 1,024-parameter embedding.")
c.metric("convnet (the seed's)", f"{convnet_total:,}")

st.dataframe(table, hide_index=True, width="stretch", column_config={
    "parameters": st.column_config.NumberColumn(format="localized"),
    "matches formula": st.column_config.CheckboxColumn(help="Keras' count equals the formula"),
    "in the seed's table": st.column_config.CheckboxColumn()})
if not table["matches formula"].all():
    st.warning("A counted row differs from its formula: the model builder and this table disagree.")

position = sums["position embedding"]
projection = dict(rows)["patch projection"]
where = (f"plus **{position:,}** of position embedding ({cfg.tokens} tokens × {cfg.width})" if position
         else "and nothing for position (the embedding is switched off: the model sees a bag of patches)")
st.markdown(
    f"The input stage costs the ViT **{projection:,}** parameters of patch projection {where}; "
    "a Conv2D(64, 3) on the same image costs **640**. "
    f"Total **{sums['total']:,}**, or **{sums['without position']:,}** without the position embedding — "
    f"the seed quotes {anatomy.SEED_VIT_QUOTED:,} for its ViT, which is the total *excluding* the embedding "
    f"(its model, like ours, has {anatomy.SEED_VIT_QUOTED + 1_024:,}). The seed's convnet: "
    f"**{convnet_total:,}**.")
if cfg.norm == "batch":
    st.caption("BatchNormalization rows include its moving mean and variance (2 × width non-trainable each).")

st.subheader("What each switch adds or removes")
effects = anatomy.toggle_effects(cfg, total_of)
st.dataframe(effects, hide_index=True, width="stretch", column_config={
    "total": st.column_config.NumberColumn(format="localized"),
    "Δ parameters": st.column_config.NumberColumn(format="%+d")})
st.markdown(
    "Norm placement moves layers, it never adds any. The position embedding scales with the token count, "
    "and the patch projection with the patch area — which is why patch 2 (196 tokens) and patch 14 "
    "(4 tokens) both cost more than patch 7: one pays in positions, the other in projection weights.")

with st.expander("The convnet's layers"):
    st.dataframe([{"layer": name, "parameters": count} for name, count in counted(RunConfig(model="convnet"))],
                 hide_index=True)
