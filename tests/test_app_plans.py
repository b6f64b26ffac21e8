"""vitcore.app.plans_view and the Plans page: the blind plans lead (the first plan shown is a blind one), and a
confirmation's table says at which look each discovery stopped."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from vitcore.app import plans_view, state
from vitcore.app.sidebar import PAINTED

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
