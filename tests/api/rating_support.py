"""Helpers for the rating tests: rated races on secret deals, and scripted entrants of set strength.

A rated race has a secret deal nobody can look up, but the test reads the deck and the solver's
winning line from the race's stored proof (``races.deal_proof``), so its scripted entrants can
play to a chosen strength: the strongest wins the deal, the others put a set number of cards on
the foundations along the line and resign, the weakest resigns at once."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from domain import apply, command_to_api, initial_state, parse_deck
from domain.rules import deal
from domain.rulesets import get_ruleset
from service.deals.deal_pools import decode_line
from service.races.races import race_source

from .conftest import Player, play
from .race_support import game_of, started_race


def rated_race(creator: Player, others: list[Player], **body: Any) -> dict[str, Any]:
    """A rated race of ``creator`` and ``others`` (classic, a secret deal), started: the running view."""
    view = started_race(creator, others, rated=True, ruleset="classic", maxEntrants=len(others) + 1, **body)
    assert view["rated"] is True
    return view


def race_line(database_url: str, race_id: str) -> list[dict[str, Any]]:
    """The winning line the server proved for the race's secret deal, as API moves."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT deal_proof->>'line' FROM races WHERE id = %s", (race_id,)).fetchone()
    assert row is not None
    assert row[0]
    return [command_to_api(command) for command in decode_line(row[0])]


def cards_after(database_url: str, race_id: str) -> list[int]:
    """The cards on the foundations as dealt, then after each move of the race's winning line."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT deck FROM races WHERE id = %s", (race_id,)).fetchone()
        line = conn.execute("SELECT deal_proof->>'line' FROM races WHERE id = %s", (race_id,)).fetchone()
    assert row is not None
    assert line is not None
    state = initial_state(deal(get_ruleset("classic"), parse_deck(row[0]), race_source(uuid.UUID(race_id))))
    counts = [state.cards_on_foundations]
    for command in decode_line(line[0]):
        state, _ = apply(state, command)
        counts.append(state.cards_on_foundations)
    return counts


def play_to_strength(database_url: str, view: dict[str, Any], ranked: list[Player]) -> None:
    """Play the race so that ``ranked`` finish in that order: the first wins the deal, each next one
    stops with fewer cards on the foundations and resigns (the last at once)."""
    line = race_line(database_url, view["id"])
    dealt, *counts = cards_after(database_url, view["id"])
    targets = sorted({c for c in counts if dealt < c < 52}, reverse=True)  # more than resigning at once has
    # distinct card counts, spread out: each weaker entrant stops at fewer cards
    step = max(1, len(targets) // len(ranked))
    stops = [targets[i * step] for i in range(len(ranked) - 2)] + [0]
    for player, stop in zip(ranked[1:], stops, strict=True):
        moves = [] if stop == 0 else line[: counts.index(stop) + 1]
        play(player, game_of(view, player), [*moves, {"type": "resign"}])
    play(ranked[0], game_of(view, ranked[0]), line)
