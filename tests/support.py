"""Helpers every part of the suite shares: cards and moves written as codes, the lessons' scripted
lines, the check of a refusal (problem+json in our own words), today's date as the server sees it
and a game that throws a win away (for the analysis)."""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime
from typing import Any

import httpx

from domain import Command, Draw, GameState, MoveCard, Recycle, Resign, Undo, get_ruleset, initial_state, parse_card
from domain.analysis import LOST
from domain.deal import shuffled_deck
from domain.rules import apply, deal, legal_moves
from domain.solver import Budget, solve


def move(card: str, to: str) -> MoveCard:
    """A move command written as codes: ``move("8H", "tableau-1")``."""
    return MoveCard(parse_card(card), to)


def cards(*codes: str) -> tuple[int, ...]:
    return tuple(parse_card(c) for c in codes)


# Seed 000's lessons: a line that reaches each lesson's goal on its last move, and only there.
LESSON_SCRIPTS: dict[str, list[Command]] = {
    "base-rank": [move("KS", "foundation"), move("AS", "foundation")],
    "wrapping": [move("KD", "tableau-1"), move("AH", "foundation")],
    "reserve-refill": [move("6S", "foundation"), move("7S", "foundation")],
    "draw-three-stock": [Draw(), move("5C", "foundation"), *[Draw()] * 11, Recycle()],
}

# What a refusal must never show: a trace, the libraries behind the service, SQL, our module paths.
LEAKS = ("Traceback", "psycopg", "sqlalchemy", "litestar", "msgspec.", "SELECT", "service.", "domain.")


def assert_problem(response: httpx.Response, status: int | None = None, code: str | None = None) -> dict[str, Any]:
    """``response`` is a refusal as the API makes every one (with ``status`` and ``code`` if given):
    problem+json, the HTTP status repeated in the body, a stable code, a title, a type and a detail,
    and nothing of what is behind the service. Returns the body."""
    if status is not None:
        assert response.status_code == status, response.text
    assert response.headers.get("content-type", "").startswith("application/problem+json"), response.text[:300]
    body = response.json()
    assert isinstance(body, dict), body
    assert body.get("status") == response.status_code, body
    assert isinstance(body.get("code"), str), body
    assert body["code"], body
    if code is not None:
        assert body["code"] == code, body
    assert body.get("title"), body
    assert body.get("type"), body
    assert body.get("detail"), body
    for leak in LEAKS:
        assert leak not in response.text, (leak, response.text[:300])
    return body


def today() -> date:
    """Today in UTC: the date the server's own clock (``service.games.games.utc_now``) is at."""
    return datetime.now(UTC).date()


WON_DEAL = 2  # open-runs seed 2: won; a move off its line is proven lost within a second (``thrown_away``)


def open_runs_deal(seed: int) -> GameState:
    """The open-runs deal of ``seed``, as ``POST /games`` with ``{"seed": seed}`` deals it."""
    return initial_state(deal(get_ruleset("open-runs"), shuffled_deck(seed), {"source": "seed", "seed": seed}))


@functools.cache
def thrown_away(seed: int = WON_DEAL) -> tuple[tuple[Command, ...], Command]:
    """Moves along a winning line of ``seed`` (open-runs), then one off it after which the solver
    proves the game lost: the earliest such pair along the line."""
    state = open_runs_deal(seed)
    line = solve(state, Budget(max_states=100_000)).moves
    for index, on_line in enumerate(line):
        for move in legal_moves(state):
            if move == on_line or isinstance(move, (Undo, Resign)):
                continue
            if solve(apply(state, move)[0], Budget(max_states=20_000)).result == LOST:
                return line[:index], move
        state, _ = apply(state, on_line)
    raise AssertionError(f"no move off the line of seed {seed} is proven lost within the budget")
