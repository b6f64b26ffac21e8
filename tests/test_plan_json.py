"""A plan file read as hostile input (vitcore.stats.plans, through vitcore.stats.plans.parse): every way a
hand-made file (with its SHA256SUMS line, as anyone who can write the store can make) could crash a reader or
say two things is one PlanError saying what was wrong and what is allowed."""

import json

import pytest

from vitcore.stats import hostile_json, plans

VARY = [("norm_placement", ("post",))]


def text(**changes) -> str:
    """A registered plan's text (as `plan register` writes it) with top-level fields replaced."""
    plan = plans.make("p1", VARY, (1000,), (500, 503), (2, 4), caps=[("norm_placement", "post", 2)])
    return json.dumps({**plan.to_json(), **changes}, indent=1)


def with_raw(field: str, raw: str) -> str:
    """The plan's text with `field`'s value written as `raw` JSON text, exactly as given."""
    marker = "__RAW__"
    return text(**{field: marker}).replace(f'"{marker}"', raw)


def test_the_written_text_is_read_back():
    plan = plans.make("p1", VARY, (1000,), (500, 503), (2, 4), caps=[("norm_placement", "post", 2)])
    assert plans.parse(plan.text()) == plan


CASES = {  # name: (the file's text, words the one-line refusal must hold)
    "1e999 in looks": (with_raw("looks", "[2, 1e999]"), "1e999 is not a finite number"),
    "-1e999 as margin": (with_raw("margin", "-1e999"), "-1e999 is not a finite number"),
    "NaN margin": (with_raw("margin", "NaN"), "NaN is not a number a plan holds"),
    "Infinity alpha": (with_raw("alpha", "Infinity"), "Infinity is not a number a plan holds"),
    "-Infinity look": (with_raw("looks", "[2, -Infinity]"), "-Infinity is not a number a plan holds"),
    "10**400 as digits": (with_raw("looks", f"[2, {10**400}]"), "401 digits: at most 18"),
    "10**19 seed": (with_raw("seeds", f'{{"first": {10**19}, "last": 3}}'), "20 digits: at most 18"),
    "10.0 as a look": (with_raw("looks", "[2, 4.0]"), "a look is a whole number; got 4.0"),
    "true as a look": (with_raw("looks", "[2, true]"), "a look is a whole number; got True"),
    "text as a look": (with_raw("looks", '[2, "4"]'), "a look is a whole number; got '4'"),
    "true as format": (with_raw("format", "true"), "format is a whole number"),
    "text margin": (with_raw("margin", '"0.01"'), "margin is a number; got '0.01'"),
    "a note 200,000 deep": (with_raw("note", "[" * 200_000 + "]" * 200_000), "nested deeper than 8"),
    "a note 9 deep": (with_raw("note", "[" * 8 + "]" * 8), "nested deeper than 8"),
    "an object as note": (with_raw("note", '{"a": [1]}'), "note is text; got dict"),
    "a duplicate top-level key": (text().replace('"margin": 0.01,', '"margin": 0.01,\n "margin": 0.2,'),
                                  "the key 'margin' appears twice"),
    "a duplicate key in a question": (text().replace('"field": "norm_placement",', '"field": "norm_placement",\n'
                                                     '"field": "pos_embedding",'), "the key 'field' appears twice"),
    "a byte-order mark": ("\ufeff" + text(), "byte-order mark"),
    "not ASCII": (text(note="caf\u00e9").replace("\\u00e9", "\u00e9"), "not ASCII"),
    "over the size limit": (text(note="x" * hostile_json.MAX_BYTES), "at most 1,048,576 characters"),
    "an unknown field": (text(blind=True), "unknown: 'blind'"),
    "a missing field": (json.dumps({k: v for k, v in json.loads(text()).items() if k != "caps"}), "missing: caps"),
    "an array": ("[1, 2]", "holds one JSON object; got list"),
    "not JSON": ("{", "not JSON"),
    "patch size 2.0": (text(questions=[{"base": {}, "train_rows": 1000, "field": "patch_size", "level": 2.0}]),
                       "patch_size is int; got 2.0"),
    "a seed in a base": (text(questions=[{"base": {"seed": 3}, "train_rows": 1000, "field": "depth", "level": 1}]),
                         "but seed and train_rows"),
    "a cap of 10**15": (text(caps=[{"field": "norm_placement", "level": "post", "cap": 10**15}]),
                        "a cap is one of the plan's questions"),
    "a cap on no question": (text(caps=[{"field": "depth", "level": 1, "cap": 2}]), "got depth=1:2"),
    "a last look of 2,000,000": (text(looks=[2, 2_000_000], seeds={"first": 0, "last": 1_999_999}),
                                 "at most 1,000 paired random seeds"),
    "a first seed past 2**31": (text(seeds={"first": 2**31, "last": 2**31 + 3}), "from 0 to 2**31 - 1"),
    "registered_at not a time": (text(registered_at="yesterday"), "registered_at: trained_at 'yesterday'"),
    "spending with a third key": (text(spending={"function": plans.SPENDING, "rho": 1.0, "x": 1}), "spending is"),
    "run ids that are not text": (text(on_disk_at_registration=[1, 2]), "a run id is text; got 1"),
}


@pytest.mark.parametrize("name", CASES)
def test_a_hostile_plan_file_is_one_plan_error_saying_what_is_allowed(name):
    hostile, says = CASES[name]
    with pytest.raises(plans.PlanError) as caught:
        plans.parse(hostile)
    message = str(caught.value)
    assert says in message and "\n" not in message and len(message) < 600, message


def test_plans_bigger_than_can_be_trained_are_refused_at_make():
    """`plan register` calls plans.make: the bounds are the library's (PlanError, exit 2 in the CLI)."""
    with pytest.raises(plans.PlanError, match="at most 1,000 paired random seeds"):
        plans.make("huge", [("pos_embedding", ("none",))], (1000,), (0, 1_999_999), (2, 2_000_000))
    with pytest.raises(plans.PlanError, match="at most 20 looks"):
        plans.make("many", VARY, (1000,), (0, 41), tuple(range(2, 44, 2)))
    many_rows = tuple(range(100, 10_100, 100))  # 100 questions, 200 configs x 200 seeds = 40,000 runs
    with pytest.raises(plans.PlanError, match="40,000 runs; at most 20,000"):
        plans.make("wide", VARY, many_rows, (0, 199), (100, 200))
    assert plans.make("edge", VARY, (1000,), (0, 999), (500, 1000)).looks == (500, 1000)
