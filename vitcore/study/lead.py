"""Which verdict leads a comparison, and the one line that follows it: the columns every CSV and view carries beside
a judged Δ (LEAD_COLUMNS), from the store's plans (vitcore.stats.plan_report).

    verdict_from       where the verdict comes from: "plan confirm, blind, look 4 of 4", "plan builtin, seen, look 2
                       of 4", "fixed sample (not in a plan)", or an exploratory margin's words
    discovery          the secondary line: for a confirmation's verdict, its discovery (which plan, seen or blind,
                       the look it stopped at, its Δ) and the replication outcome with the z between them; for any
                       other plan asking the comparison, that plan's state
    discovery_verdict  the discovery's verdict, read the way this comparison is taken ('' without one)
    replication        one of vitcore.stats.replication.OUTCOMES (replicated, replicated (direction), contradicted, not
                       confirmed, ...; '' without one)

The leading plan is the first of plan_report.Checked.lead() that asks the comparison (blind registered plans whose
order git proves, then the built-in one, then every other registered plan: unproven, then seen): the Study's
families are formed with that order, so the verdict itself is already that plan's; this module only words it and
what stands beside it. Plain strings.
"""

from __future__ import annotations

import numpy as np

from vitcore.config.run import RunConfig
from vitcore.stats import plan as sequential
from vitcore.stats import plan_store
from vitcore.stats.families import family_of, runs_of
from vitcore.stats.plan import LEAD_COLUMNS
from vitcore.stats.replication import NOTHING, mirrored

NOT_PLANNED = "fixed sample (not in a plan)"
EMPTY = dict.fromkeys(LEAD_COLUMNS, "")


def started(checked, runs, a, b) -> tuple:
    """checked.lead() for the comparison of a and b: a blind registered plan leads it from its first look on (every
    one of its first n random seeds paired), before which the plan's pairs can decide nothing and the discovery
    leads, its confirmation said beside it as pending. Whether a look is complete never depends on a result."""
    order = []
    for owner in checked.lead():
        if owner.name != plan_store.BUILTIN and checked.blind[owner.name] is not False:
            family = family_of(None, a, b, (owner,))
            if family.plan is not owner or not family.looks:
                continue
            seeds = set(runs_of(runs, a)["seed"]) & set(runs_of(runs, b)["seed"])
            if not all(owner.first_seed + k in seeds for k in range(family.looks[0])):
                continue
        order.append(owner)
    return tuple(order)


def _state(row, owner, checked) -> str:
    """'seen', 'blind' or 'blind (order not proven: …)' for the plan that judged a row (git's proof: plan_history)."""
    if bool(row.get("seen_before_plan")) is True:
        return "seen"
    if owner.name == plan_store.BUILTIN or checked is None or checked.proven(owner.name):
        return "blind"
    return "blind (order not proven: the Plans page says why)"


def verdict_from(row, owner, checked) -> str:
    """The `verdict_from` words of a judged row; `owner`: the plan of its family (None for a fixed sample)."""
    if not sequential.planned(row) or owner is None:
        text = str(row.get("plan", ""))
        if text.startswith("exploratory"):
            return text
        if owner is not None and row.get("metric") != owner.metric:  # its plan asks another metric of it
            return f"fixed sample (plan {owner.name} judges {owner.metric.replace('_', ' ')} only)"
        return NOT_PLANNED
    look, looks = int(row["look"]), int(row["looks_planned"])
    where = f"look {look} of {looks}" if look else f"before its first look ({looks} planned)"
    return f"plan {owner.name}, {_state(row, owner, checked)}, {where}"


def _number(value: float, places: int = 4) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:+.{places}f}"


def columns(report, checked, selection, baseline, row, owner) -> dict:
    """LEAD_COLUMNS of one judged row of selection − baseline (`owner`: its family's plan when planned)."""
    out = {**EMPTY, "verdict_from": verdict_from(row, owner, checked)}
    if not sequential.planned(row) or owner is None or report is None:
        return out
    lines = []
    for status, flip in report.beside(baseline.config_id, selection.config_id):
        sign = -1.0 if flip else 1.0
        if status.plan == owner.name:
            if status.replicated:  # a confirmation leads: its discovery follows
                said = mirrored(status.discovery_verdict) if flip else status.discovery_verdict
                source = (f"plan {status.discovery_plan}, {status.discovery_look}" if status.discovery_plan !=
                          "fixed sample" else status.discovery_look)
                line = f"discovery: {said or 'none'} ({source}, Δ {_number(sign * status.discovery_delta)})"
                if status.replicated != NOTHING:
                    line += f" · {status.replicated} (z {_number(sign * status.z, 2)})"
                else:
                    line += f" · {status.replicated}"
                lines.insert(0, line)
                out.update(discovery_verdict=said, replication=status.replicated)
            continue
        if status.plan == owner.confirms:
            continue  # the discovery: said on the confirmation's line
        verdict = mirrored(status.verdict) if flip else status.verdict
        state = f"{verdict} at look {status.look} of {status.looks_planned}" if status.decided else status.needs
        seen = "seen" if status.seen_before_plan else "blind" if status.plan == plan_store.BUILTIN or checked is None \
            or checked.proven(status.plan) else "blind, order not proven"
        line = f"plan {status.plan} ({seen}, Δ {_number(sign * status.mean_delta)}): {state}"
        if status.replicated and status.discovery_plan == owner.name:  # its confirmation, not leading yet
            line = f"confirmation: {line} · {status.replicated}"
            out.update(discovery_verdict=row["verdict"], replication=status.replicated)
        lines.append(line)
    out["discovery"] = " · ".join(lines)
    return out


FACTORIAL = "fixed sample (the factorial's family, not in a plan)"


def effect_columns(study, frame, base, main: bool):
    """A main-effects (or interactions) frame with LEAD_COLUMNS: a one-cell effect is the single-switch change it is
    (its plan's words, as on its card); an effect over several cells, and every interaction, a fixed sample."""
    rows = []
    for row in frame.to_dict("records"):
        said = {**EMPTY, "verdict_from": FACTORIAL}
        if main and row.get("cells") == 1:
            ref = (base or RunConfig()).replace(train_rows=int(row["train_rows"]), seed=0)
            try:
                said = study._lead_columns(ref.replace(**{row["factor"]: row["level"]}), ref, row)
            except ValueError:  # a level the config refuses around this base: no comparison to word
                pass
        rows.append(said)
    out = frame.copy()
    for name in LEAD_COLUMNS:
        out[name] = [said[name] for said in rows]
    return out
