"""A plan file's JSON read as hostile input (vitcore.stats.plans reads every plan file through it): bounded, checked
and named before a field of it is used. No pandas, no TensorFlow."""

from __future__ import annotations

import json
import math

# A plan file's JSON read as hostile input, with the store's discipline: anyone who can write the store can
# write a plan file and its SHA256SUMS line, so its text is bounded and checked before a field of it is used.
#
# `read_json(text)` returns the file's top-level object, or raises PlanError saying what was wrong and what
# is allowed:
# - at most MAX_BYTES characters, ASCII only (`Plan.text` escapes every other character; a byte-order mark
#   is refused with it);
# - nested at most MAX_DEPTH deep (a plan file's own format nests 4: plan, questions, a question, its base);
#   deeper is refused, 200,000 deep included, never a RecursionError;
# - a key at most once in each object, at any depth (json keeps the last, a reader sees the first: a
#   plan file must not say two things);
# - numbers finite (no NaN, Infinity or 1e999) and integers of at most MAX_DIGITS digits (10**400 written
#   out is refused before Python converts it).
# The fields' own kinds and ranges are the plan's (`whole`, `number`, `words` here; `vitcore.stats.plans.check`).

MAX_BYTES = 1 << 20   # a plan file is a few KB (the built-in one 40 KB with its on-disk run ids)
MAX_DEPTH = 8         # the format nests 4; room for a field that nests a little more, nothing like 200,000
MAX_DIGITS = 18       # every whole number of a plan (seeds < 2**31, looks, caps) has at most 10 digits


class PlanError(ValueError):
    """A plan file or a registration that is not what it must be: says what, and what is allowed."""


def read_json(text: str) -> dict:
    """The top-level object of a plan file's text (see the module docstring); PlanError otherwise."""
    if not isinstance(text, str):
        raise PlanError(f"a plan file is text; got {type(text).__name__}")
    if len(text) > MAX_BYTES:
        raise PlanError(f"a plan file is at most {MAX_BYTES:,} characters; this one has {len(text):,}")
    if text.startswith("\ufeff"):
        raise PlanError("starts with a byte-order mark: a plan file is ASCII JSON, as `plan register` writes it")
    if not text.isascii():
        raise PlanError("is not ASCII text: a plan file escapes every other character, as `plan register` writes it")
    try:
        data = json.loads(text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_float,
                          parse_int=_int)
    except PlanError:
        raise
    except RecursionError:
        raise PlanError(f"nested deeper than {MAX_DEPTH} (arrays or objects inside each other)") from None
    except ValueError as error:
        raise PlanError(f"not JSON ({str(error)[:200]})") from None
    if not isinstance(data, dict):
        raise PlanError(f"a plan file holds one JSON object; got {type(data).__name__}")
    _nesting(data, 1)
    return data


def _object(pairs: list[tuple[str, object]]) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            raise PlanError(f"the key {key[:80]!r} appears twice in one object (json keeps the last, a reader sees "
                            "the first): each key is allowed once")
        out[key] = value
    return out


def _constant(word: str):
    raise PlanError(f"{word} is not a number a plan holds: numbers are finite")


def _float(word: str) -> float:
    value = float(word)
    if not math.isfinite(value):
        raise PlanError(f"{word[:40]} is not a finite number: numbers are finite")
    return value


def _int(word: str) -> int:
    if len(word.lstrip("-")) > MAX_DIGITS:
        raise PlanError(f"a whole number of {len(word):,} digits: at most {MAX_DIGITS} are allowed")
    return int(word)


def _nesting(value, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise PlanError(f"nested deeper than {MAX_DEPTH} (arrays or objects inside each other)")
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        if isinstance(child, (dict, list)):
            _nesting(child, depth + 1)


def whole(value, what: str) -> int:
    """`value` when it is a JSON whole number (not 10.0, not true); PlanError naming `what` otherwise."""
    if type(value) is not int:
        raise PlanError(f"{what} is a whole number; got {shown(value)}")
    return value


def number(value, what: str) -> float:
    """`value` as a float when it is a JSON number (not true, not "0.01"); PlanError naming `what` otherwise."""
    if type(value) not in (int, float):
        raise PlanError(f"{what} is a number; got {shown(value)}")
    return float(value)


def words(value, what: str, none: bool = False) -> str | None:
    """`value` when it is a JSON string (or null, with `none`); PlanError naming `what` otherwise."""
    if not (isinstance(value, str) or (none and value is None)):
        raise PlanError(f"{what} is text{' or null' if none else ''}; got {shown(value)}")
    return value


def items(value, what: str) -> list:
    """`value` when it is a JSON array; PlanError naming `what` otherwise."""
    if not isinstance(value, list):
        raise PlanError(f"{what} is an array; got {shown(value)}")
    return value


def shown(value) -> str:
    return f"{type(value).__name__} {json.dumps(value)[:60]}" if isinstance(value, (dict, list)) else repr(value)[:60]


def same_kind(value, default, what: str) -> None:
    """PlanError unless a RunConfig field's value from a file is of its default's JSON kind (2.0 is not patch
    size 2, true is not 1; a float field takes a whole number too)."""
    if default is None or type(default) is int:
        ok = type(value) is int
    else:
        ok = type(value) in ((int, float) if type(default) is float else (type(default),))
    if not ok:
        raise PlanError(f"{what} is {'int' if default is None else type(default).__name__}; got {shown(value)}")


def fields(data: dict, want: set, optional: set) -> None:
    """PlanError naming the missing and the unknown top-level fields of a plan file, if any."""
    missing, unknown = sorted(want - set(data)), sorted(set(data) - want - optional)
    if missing or unknown:
        said = [f"missing: {', '.join(missing)}"] * bool(missing)
        said += [f"unknown: {', '.join(repr(key[:40]) for key in unknown[:5])}"] * bool(unknown)
        raise PlanError(f"a plan file holds exactly {', '.join(sorted(want))} (and {', '.join(sorted(optional))}): "
                        + "; ".join(said))
