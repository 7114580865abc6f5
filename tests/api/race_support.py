"""Helpers for the race tests: making races, playing known lines, and looking for cards in answers."""

from __future__ import annotations

import re
from typing import Any

import httpx
import psycopg

from domain import apply, command_to_api, initial_state, shuffled_deck
from domain.rules import deal
from domain.rulesets import get_ruleset
from service.deals.deal_pools import decode_line, load_deal_pool

from .conftest import Player

CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")
POOL_DEAL = 25  # classic pool deal 25: a stored winning line of 131 moves
CLASSIC_POOL = load_deal_pool("classic")
assert CLASSIC_POOL is not None


def winning_line(number: int = POOL_DEAL) -> list[dict[str, Any]]:
    """The stored winning line of a classic pool deal, as API moves."""
    return [command_to_api(c) for c in decode_line(CLASSIC_POOL.deal(number).line)]


def prefix_with_cards(cards: int, number: int = POOL_DEAL) -> int:
    """How many moves of the winning line first put ``cards`` cards on the foundations."""
    state = initial_state(deal(get_ruleset("classic"), shuffled_deck(CLASSIC_POOL.deal(number).seed), {}))
    for index, command in enumerate(decode_line(CLASSIC_POOL.deal(number).line)):
        state, _ = apply(state, command)
        if state.cards_on_foundations == cards:
            return index + 1
    raise AssertionError(f"the line never has {cards} cards on the foundations")


def create_race(player: Player, **body: Any) -> dict[str, Any]:
    body.setdefault("maxEntrants", 4)
    response = player.client.post("/races", json=body, headers=player.auth)
    assert response.status_code == 201, response.text
    race: dict[str, Any] = response.json()
    assert response.headers["location"] == f"/races/{race['id']}"
    return race


def join(player: Player, race_id: str) -> httpx.Response:
    """Join with no body at all, as most clients will (``{}`` as JSON is taken too)."""
    return player.client.post(f"/races/{race_id}/entries", headers=player.auth)


def start(player: Player, race_id: str) -> httpx.Response:
    return player.client.post(f"/races/{race_id}/start", headers=player.auth)


def started_race(creator: Player, others: list[Player], **body: Any) -> dict[str, Any]:
    """A race of ``creator`` and ``others``, started: the running view."""
    race = create_race(creator, **body)
    for other in others:
        assert join(other, race["id"]).status_code == 201
    response = start(creator, race["id"])
    assert response.status_code == 200, response.text
    view: dict[str, Any] = response.json()
    return view


def game_of(view: dict[str, Any], player: Player) -> str:
    game: str = next(e["game"] for e in view["entrants"] if e["player"] == player.id)
    return game


def entrant(view: dict[str, Any], player: Player) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in view["entrants"] if e["player"] == player.id)
    return found


def race(client: httpx.Client, race_id: str) -> dict[str, Any]:
    response = client.get(f"/races/{race_id}")
    assert response.status_code == 200, response.text
    assert not CARD.search(response.text), "a race view never shows a card"
    view: dict[str, Any] = response.json()
    return view


def tamper_with_a_draw(database_url: str, game_id: str) -> None:
    """Edit the game's first stored draw of several cards by hand (their order reversed), so its
    log no longer replays through the rules."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        changed = conn.execute(
            "UPDATE events SET data = jsonb_set(data, '{cards}', (SELECT jsonb_agg(c ORDER BY n DESC) "
            "FROM jsonb_array_elements(data->'cards') WITH ORDINALITY AS x(c, n))) "
            "WHERE game_id = %s AND version = (SELECT min(version) FROM events WHERE game_id = %s "
            "AND type = 'StockDrawn' AND jsonb_array_length(data->'cards') > 1)",
            (game_id, game_id),
        ).rowcount
    assert changed == 1
