"""Plans: every registered plan's questions with their look, verdict and what they still need; a confirmation
on fresh random seeds beside its discovery. vitcore.stats.plan_report computes; this page shows."""

import streamlit as st

from vitcore.app import fmt, plans_view
from vitcore.study.words import REWRITE

st.title("Plans")
st.caption("A plan is written down, with its sha256, before the runs it judges: its questions, margin, looks, caps, "
           "spending and random seeds. Each question is decided at the first look whose tests resolve (or stays "
           "undecided at its cap); later runs never change it. A confirmation plan asks the same questions on random "
           "seeds nobody had seen: its verdict leads every view, and each discovery is replicated, contradicted or "
           "not confirmed. In git, a plan proves its order: its file is the one its registering commit added, that "
           "commit came before every commit adding its runs, is dated within minutes of the plan's registered_at and "
           "before every one of its runs was trained. Only such a plan leads over the built-in one; any other plan "
           "follows it, said as unproven or seen. What git cannot show: " + REWRITE + ".")

report = plans_view.report()
for problem in report.problems:
    st.warning(f"Left out: {fmt.plain(problem)}")
for plan in report.plans:
    frame = report.questions_frame()
    frame = frame[frame["plan"] == plan.name].reset_index(drop=True)
    st.subheader(f"Plan {plan.name}" + (f" — confirms {plan.confirms}" if plan.confirms else ""))
    order = report.checked.order(plan.name) if report.checked is not None else ""
    st.markdown(plans_view.summary(plan, frame, report.blind[plan.name], order, report.commit(plan.name)))
    if plan.note:
        st.text(plan.note)  # the plan's words as written: never Markdown (a note must not look like a verdict)
    st.dataframe(plans_view.display(plan, frame), hide_index=True, width="stretch")
st.caption("Register your own: `python -m vitcore plan register NAME --vary FIELD=L1,L2 --rows N --seeds A-B "
           "--looks 10,20`, commit the file, then `python -m vitcore sweep plan NAME --workers 2` trains it until "
           "every question is decided or at its cap. The same tables: `python -m vitcore plans --out DIR`.")
