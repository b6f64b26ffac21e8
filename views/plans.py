"""Plans: every registered plan's questions with their look, verdict and what they still need; a confirmation
on fresh random seeds beside its discovery. vitcore.stats.plan_report computes; this page shows."""

import streamlit as st

from vitcore.app import fmt, plans_view

st.title("Plans")
st.caption("A plan is written down, with its sha256, before the runs it judges. Each question is decided at the "
           "first look whose tests resolve, and later runs never change it.",
           help=plans_view.ABOUT + " " + plans_view.PROOF)

report = plans_view.report()
for problem in report.problems:
    st.warning(f"Left out: {fmt.plain(problem)}")
judging, idle = plans_view.judging(report)
if not judging:
    st.info("No plan judges a run of this store yet: register one for your own study (below).")
if idle:  # plans none of whose runs is stored here (the built-in ones, in a store of your own study): one line
    folded = st.expander(plans_view.idle_line(idle))
for plan in [*judging, *idle]:  # in lead order: the plan whose verdicts lead comes first
    where = folded if plan in idle else st  # a plan that judges nothing here draws inside the folded line
    frame = report.questions_frame()
    frame = frame[frame["plan"] == plan.name].reset_index(drop=True)
    where.subheader(f"Plan {plan.name}" + (f" — confirms {plan.confirms}" if plan.confirms else ""))
    order = report.checked.order(plan.name) if report.checked is not None else ""
    where.markdown(plans_view.summary(plan, frame, report.blind[plan.name], order))
    with where.expander("Details"):  # the hash, commit, looks, the order's reason in full, outcomes: one click away
        st.markdown(plans_view.details(plan, frame, report.blind[plan.name], order, report.commit(plan.name)))
    if plan.note:
        where.text(plan.note)  # the plan's words as written: never Markdown (a note must not look like a verdict)
    where.dataframe(plans_view.display(plan, frame), hide_index=True, width="stretch")
st.caption("Register your own: `python -m vitcore plan register NAME --vary FIELD=L1,L2 --rows N --seeds A-B "
           "--looks 10,20`, commit the file, then `python -m vitcore sweep plan NAME --workers 2` trains it until "
           "every question is decided or at its cap. The same tables: `python -m vitcore plans --out DIR`.")
