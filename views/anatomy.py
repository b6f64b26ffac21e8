"""Parameter anatomy: what a ViT buys with parameters that a convnet gets free, for the sidebar's
config. Counted from the layer shapes (vitcore.model.anatomy) — no model is built and TensorFlow is never
imported; tests/test_anatomy.py checks every count against the Keras builder for every switch."""

import streamlit as st

from vitcore.app import fmt, state
from vitcore.article.sources import POSITION_EMBEDDING_PARAMS, VIT_PARAMS_QUOTED  # the source article's
from vitcore.config.run import RunConfig
from vitcore.config.switches import SWITCH
from vitcore.model import anatomy  # the parameter count of a config: the model's, not a statistic
from vitcore.model.work import macs as counted_macs  # the multiply-adds of a config: the model's, not a statistic

CONVNET = RunConfig(model="convnet")

st.title("Parameter anatomy")
st.caption("The source article: a convolution buys its spatial prior for 640 parameters; the ViT spends 3,200 "
           "on projection and another 1,024 purely to reintroduce the notion of “where”.")

cfg, note = state.selection()
if note:
    st.warning(note)
if cfg.model == "convnet":
    st.info("The sidebar selects the convnet, which has no patches or attention: this page shows the ViT "
            "with the sidebar's ViT switches, and the convnet's layers below.")
    cfg = cfg.replace(model="vit")

table = anatomy.anatomy_table(cfg)
sums = anatomy.totals(anatomy.breakdown(cfg))
convnet_total = anatomy.total(CONVNET)

st.subheader(cfg.label())
a, b, c = st.columns(3)
a.metric("ViT total", fmt.rows(sums["total"]))
b.metric("without position embedding", fmt.rows(sums["without position"]),
         help=f"The article's “ViT {fmt.rows(VIT_PARAMS_QUOTED)}” is this number: its total leaves out the "
              f"{fmt.rows(POSITION_EMBEDDING_PARAMS)}-parameter embedding.")
c.metric("convnet (the article's)", fmt.rows(convnet_total))

scale_row = table["component"] == anatomy.SCALE_ROW  # the article's yardstick, not a part of the ViT
st.dataframe(table[~scale_row], hide_index=True, width="stretch", column_config={
    "component": st.column_config.TextColumn(width="medium"),
    "parameters": st.column_config.NumberColumn(format="localized", width="small"),
    "formula": st.column_config.TextColumn(width="large"),
    "in the article's table": st.column_config.CheckboxColumn(width="small")})
conv = table[scale_row].iloc[0]
st.caption("Counted from the layer shapes, as Keras' count_params() counts the built model (a test checks the two "
           "agree for every switch combination). Total = " + table.set_index("component").loc["total", "formula"] +
           f". Not in the ViT, for scale (the article's table lists it): {anatomy.SCALE} on the same "
           f"one-channel image, {conv['formula']} = **{fmt.rows(conv['parameters'])}** parameters.")

position = sums["position embedding"]
projection = dict(anatomy.breakdown(cfg))["patch projection"]
where = (f"plus **{fmt.rows(position)}** of position embedding ({cfg.tokens} tokens × {cfg.width})" if position
         else "and nothing for position (the embedding is switched off: the model sees a bag of patches)")
st.markdown(
    f"The input stage costs the ViT **{fmt.rows(projection)}** parameters of patch projection {where}; "
    f"a {anatomy.SCALE} on the same image costs **{fmt.rows(conv['parameters'])}**. "
    f"Total **{fmt.rows(sums['total'])}**, or **{fmt.rows(sums['without position'])}** without the position "
    f"embedding — the source article quotes {fmt.rows(VIT_PARAMS_QUOTED)} for the article's ViT, which is the total "
    f"*excluding* the embedding (its model, like ours, has {fmt.rows(VIT_PARAMS_QUOTED + POSITION_EMBEDDING_PARAMS)}). "
    f"The article's convnet: **{fmt.rows(convnet_total)}**.")
if cfg.batch_norm:
    st.caption("BatchNormalization rows include its moving mean and variance (2 × width non-trainable each).")

st.subheader("What each switch adds or removes")
effects = anatomy.toggle_effects(cfg)
st.dataframe(effects.assign(**{"switch": effects["switch"].map(lambda name: SWITCH[name].label),
                               "Δ parameters": effects["Δ parameters"].map(lambda d: fmt.number(d, 0, signed=d != 0)),
                               "total": effects["total"].map(fmt.rows)}),
             hide_index=True, width="stretch")
st.markdown(
    "Norm placement moves layers, it never adds any. The position embedding scales with the token count, "
    "and the patch projection with the patch area — which is why patch 2 (196 tokens) and patch 14 "
    "(4 tokens) both cost more than patch 7: one pays in positions, the other in projection weights.")

st.subheader("Counted work: multiply-adds per image")
macs = state.study().work_table(cfg)
st.dataframe(macs[["part", "macs", "formula"]], hide_index=True, width="stretch", row_height=66,
             column_config={  # the count
    "part": st.column_config.TextColumn(width=170),  # beside its part, inside a 400-px screen; 66 px: two lines wrap
    "macs": st.column_config.NumberColumn("multiply-adds", format="localized", width=110),
    "formula": st.column_config.TextColumn(width=420)})
st.caption(f"One image's forward pass, exact from the config (vitcore.analysis.work): every multiply-add of a matrix "
           f"product; norms, softmax and GELU not counted. The convnet: **{fmt.rows(counted_macs(CONVNET))}**. This, "
           "not wall seconds, decides the compute claims (the Claims page) — seconds depend on the machine's load.")

with st.expander("The convnet's layers"):
    st.dataframe(anatomy.convnet_table(), hide_index=True, width="stretch",
                 column_config={"parameters": st.column_config.NumberColumn(format="localized")})
