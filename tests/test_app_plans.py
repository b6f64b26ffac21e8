"""vitcore.app.plans_view and the Plans page: the blind plans lead (the first plan shown is a blind one), and a
confirmation's table says at which look each discovery stopped."""

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from vitcore.app import fmt, plans_view, state
from vitcore.app.sidebar import PAINTED
from vitcore.stats.estimates import BETTER, EQUIVALENT, INCONCLUSIVE
from vitcore.stats.replication import NOT_CONFIRMED

ROOT = Path(__file__).resolve().parents[1]


def test_the_plans_are_shown_in_their_lead_order():
    """The page's order is Checked.lead()'s (a proven blind plan, the built-in one, then the others), so the first
    plan shown is the one whose verdicts lead; plans the check left out follow; without a check, as found."""
    builtin, confirm, seen, empty = (SimpleNamespace(name=n) for n in ("builtin", "confirm", "late", "fresh"))
    checked = SimpleNamespace(lead=lambda: (confirm, builtin, empty))
    found = SimpleNamespace(plans=(builtin, confirm, seen, empty), checked=checked,
                            blind={"builtin": False, "confirm": True, "late": False, "fresh": None})
    assert [p.name for p in plans_view.ordered(found)] == ["confirm", "builtin", "fresh", "late"]
    assert [p.name for p in plans_view.ordered(SimpleNamespace(**{**vars(found), "checked": None}))] == [
        "builtin", "confirm", "late", "fresh"]


def test_a_plans_summary_is_two_short_sentences_and_its_details_keep_every_fact():
    """Issue 58: the summary was a paragraph a newcomer skips. Now two sentences (registered, random seeds, margin,
    questions decided; blind and the order's proof), and the rest in "Details": the sha256, the registering commit,
    the looks, the order's reason in full (escaped: run ids and underscores are never Markdown), the outcomes."""
    plan = SimpleNamespace(registered_at="2026-12-02T16:10:18Z", seeds_text="1000-1039", margin=0.01,
                           sha256="9b" * 32, looks=(10, 20), confirms="builtin")
    frame = pd.DataFrame({"verdict": [BETTER, INCONCLUSIVE, EQUIVALENT],
                          "needs": ["", "at the plan's cap (look 2 of 2)", ""],
                          "replicated": ["replicated", NOT_CONFIRMED, "replicated"]})
    order = "order not proven (its file my_plan.json is not committed)"
    text = plans_view.summary(plan, frame, True, order)
    assert text == ("Registered 2026-12-02T16:10:18Z, random seeds 1000-1039, margin ±0.01: 3 questions, "
                    "**2 decided**. Blind, order not proven.")
    assert plans_view.summary(plan, frame, None).endswith(". Nothing judged yet: none of its runs is stored.")
    assert plans_view.summary(plan, frame, False, "proven from git (registered in commit d660f2488c)").endswith(
        "**Not blind**: some of its runs were trained before it, order proven from git.")
    more = plans_view.details(plan, frame, True, order, "d660f2488c6f1329f7281ac5fe6a89809ad65922")
    assert f"sha256 `{'9b' * 32}`, registering commit `d660f2488c6f1329f7281ac5fe6a89809ad65922`" in more
    assert "looks at 10, 20 paired random seeds; 1 question at the cap undecided" in more
    assert f"- order: {fmt.plain(order)}" in more and "my\\_plan" in more
    assert "2 replicated, 1 not confirmed" in more and "**Pooled** combines" in more


@pytest.mark.slow  # the committed store's plan report, cold (seconds)
def test_the_plans_page_leads_with_the_blind_confirmation_and_says_where_each_discovery_stopped(monkeypatch):
    monkeypatch.setattr(state, "STORE_PATH", str(ROOT / "cached_runs"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state[PAINTED] = True
    at.switch_page("views/plans.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    report = plans_view.report()
    first = at.subheader[0].value
    name = first.removeprefix("Plan ").split(" — ")[0]
    assert report.blind[name] is True and "confirms" in first  # the committed confirmation, on fresh random seeds
    table = at.dataframe[0].value
    stopped = table["Discovery stopped at"]
    assert stopped.str.match(r"look \d of \d, seen|fixed sample on random seeds").all()
    assert stopped.str.startswith("fixed sample").sum() >= 1  # the questions the built-in plan does not ask
