"""Refusals in the project's own words.

msgspec and Litestar explain a bad value in their terms (``Expected `str | null`, got `int` - at
`$.to```, ``ParamType.QUERY parameter 'limit'``). A client should read what it sent and what would
have been right: ``'to' must be 'foundation' or 'tableau-1' .. 'tableau-4', not 1``. ``explain``
turns a msgspec validation message into that, from the field's rule in ``RULES`` (or, for a field
without one, from the constraint msgspec names).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Literal, get_args, get_origin

from domain.lessons import BY_ID as LESSONS

CARD_RULE = "a card code: a rank (A 2-9 T J Q K) then a suit (S H D C), e.g. '7H'"
MOVE_TYPES = ("draw", "recycle", "move", "undo", "resign")

# The rule of each request field, by its name (or name[] for the items of a list).
RULES: dict[str, str] = {
    "name": "1 to 40 characters",
    "ruleset": "one of classic, draw-one, open-runs",
    "deal": "an object with exactly one of seed, pool, daily, deck or lesson (a race's: seed, pool or deck)",
    "seed": "an integer from 0 to 2^53 - 1 (9007199254740991)",
    "pool": "a pool deal number, 1 or more",
    "daily": "'today' or a UTC date written YYYY-MM-DD",
    "date": "'today' or a UTC date written YYYY-MM-DD",
    "deck": "a list of the 52 card codes in deal order, each card once",
    "deck[]": CARD_RULE,
    "lesson": f"one of {', '.join(LESSONS)} (GET /lessons)",
    "maxEntrants": "an integer from 2 to 8 (the creator included)",
    "timeLimitSeconds": "whole seconds from 1 to 86400 (a day), or null for no limit",
    "type": "one of " + ", ".join(MOVE_TYPES),
    "card": CARD_RULE,
    "to": "'foundation' or 'tableau-1' .. 'tableau-4'",
}

_TYPES = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "null": "null",
    "object": "an object",
    "array": "a list",
}
_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]*)`$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<field>[^`]*)`$")
_BOUND = re.compile(r"^Expected `(?P<type>\w+)` (?:of length )?(?P<op>>=|<=|>|<) (?P<limit>-?\d+)$")
_TYPE = re.compile(r"^Expected `(?P<expected>[^`]*)`, got `(?P<got>[^`]*)`$")


_ECHO = re.compile(r"[A-Za-z0-9_.:@+\-]{1,40}")


def echo(text: str) -> str:
    """Client text, quoted, when it is a short plain word; else only its length. A detail is read by
    people and logs: it repeats no control or format characters, markup or sentences."""
    if _ECHO.fullmatch(text):
        return f"'{text}'"
    return "an empty string" if not text else f"a text of {len(text)} characters"


def shown(value: object) -> str:
    """A value as a client wrote it, short: 'abc', 12, null, true, an object, a list of 3."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        text = json.dumps(value)
        return text if len(text) <= 24 else text[:20] + "..."
    if isinstance(value, str):
        return echo(value)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "that"


def either(names: Iterable[str]) -> str:
    """Our own names as alternatives: 'seed, pool or deck'."""
    listed = list(names)
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " or " + listed[-1]


def quoted_list(names: Iterable[str]) -> str:
    listed = [echo(name) for name in names]
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]


def choices(annotation: Any) -> list[str]:
    """The values of a ``Literal`` annotation (through ``| None``), for "one of ..." wording."""
    if get_origin(annotation) is Literal:
        return [str(value) for value in get_args(annotation)]
    return [value for inner in get_args(annotation) for value in choices(inner)]


def explain(
    message: str, data: object, subject: str, fields: Iterable[str] = (), prefix: str = "", rule: str | None = None
) -> str:
    """Our words for msgspec's ``message`` about ``data`` (the value converted).

    ``subject`` names the object at the top ("the request body", "a move of type 'draw'"),
    ``fields`` the names it takes, ``prefix`` the path of ``data`` in the body ("deal").
    """
    found = _PATH.search(message)
    steps = _steps(found.group("path")) if found else []
    message = message[: found.start()] if found else message
    where = _where(prefix, steps)
    if missing := _MISSING.match(message):
        field = missing.group("field")
        owner = f"'{where}'" if where else subject
        return f"{owner} needs '{field}': {RULES.get(field, 'see the API document')}"
    if unknown := _UNKNOWN.match(message):
        field = unknown.group("field")
        owner = f"'{where}'" if where else subject
        takes = f"; it takes only {quoted_list(fields)}" if fields and not steps else ""
        return f"{owner} has no field {echo(field)}{takes}"
    value = _value_at(data, steps)
    rule = rule or _rule(where, message)
    if rule == CARD_RULE and isinstance(value, str):
        at = "" if where in ("card", "") else f"{where}: "
        return (f"{at}{shown(value)} is not a card code: write the rank (A 2-9 T J Q K) then the suit (S H D C), "
                "e.g. 'TD'")
    if not where:
        return f"{subject} must be {rule}, not {shown(value)}"
    return f"'{where}' must be {rule}, not {shown(value)}"


def _steps(path: str) -> list[str | int]:
    return [int(index) if index else name for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path)]


def _where(prefix: str, steps: list[str | int]) -> str:
    text = prefix
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def _value_at(data: object, steps: list[str | int]) -> object:
    for step in steps:
        if isinstance(step, int) and isinstance(data, list) and step < len(data):
            data = data[step]
        elif isinstance(step, str) and isinstance(data, dict):
            data = data.get(step)
        else:
            return None
    return data


def _rule(where: str, message: str) -> str:
    """The field's rule, or the constraint msgspec names in our words."""
    name = re.sub(r"\[\d+\]$", "[]", where.rsplit(".", 1)[-1])
    if name in RULES:
        return RULES[name]
    if bound := _BOUND.match(message):
        kind, op, limit = bound.group("type"), bound.group("op"), bound.group("limit")
        words = {">=": "at least", "<=": "at most", ">": "more than", "<": "less than"}[op]
        if kind == "str":
            return f"{words} {limit} characters long"
        if kind == "array":
            return f"a list of {words} {limit} items"
        return f"{_TYPES.get(kind, 'a number')} of {words} {limit}"
    if expected := _TYPE.match(message):
        return " or ".join(_TYPES.get(kind.strip(), kind.strip()) for kind in expected.group("expected").split("|"))
    if pattern := re.match(r"^Expected `str` matching regex '(?P<pattern>.*)'$", message):
        return f"text matching {pattern.group('pattern')}"
    return "a valid value (see the API document)"


_JSON_PROBLEMS = [
    (re.compile(r"truncated"), "it ends before the JSON value does"),
    (re.compile(r"trailing characters \(byte (\d+)\)"), "there is more after the JSON value (at byte {0})"),
    (re.compile(r"expected '(.)' \(byte (\d+)\)"), "'{0}' is missing at byte {1}"),
    (re.compile(r"invalid character \(byte (\d+)\)"), "an unexpected character at byte {0}"),
    (re.compile(r"UTF-8", re.IGNORECASE), "it is not UTF-8 text"),
    (re.compile(r"out of range"), "a number in it is too large for any field here"),
]


def json_problem(message: str) -> str:
    """Why a body is not JSON, from the parser's message, in our words."""
    for pattern, words in _JSON_PROBLEMS:
        found = pattern.search(message)
        if found:
            return "the request body is not valid JSON: " + words.format(*found.groups())
    return "the request body is not valid JSON"
