"""Helpers for the tournament tests: making tournaments, waiting for their deals, and scripted
entrants that play the secret deals along the lines the server proved (read from its table, as a
test may: a player never sees them)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import psycopg

from domain import command_to_api
from service.deals.deal_pools import decode_line

from .conftest import Clock, Player

NEWEST = {"Api-Version": "2026-12-05"}


def create_tournament(player: Player, clock: Clock, **body: Any) -> dict[str, Any]:
    body = {"deals": 3, "startsAt": clock.now.isoformat(), "minutes": 60, "ruleset": "classic", **body}
    response = player.client.post("/tournaments", json=body, headers=player.auth)
    assert response.status_code == 201, response.text
    view: dict[str, Any] = response.json()
    assert response.headers["location"] == f"/tournaments/{view['id']}"
    return view


def tournament(client: httpx.Client, tournament_id: str) -> dict[str, Any]:
    response = client.get(f"/tournaments/{tournament_id}")
    assert response.status_code == 200, response.text
    view: dict[str, Any] = response.json()
    return view


def ready(client: httpx.Client, tournament_id: str, within: float = 120) -> dict[str, Any]:
    """The tournament once its deals are proven (the solver's worker proves them after the creation)."""
    deadline = time.monotonic() + within
    while True:
        view = tournament(client, tournament_id)
        if view["status"] != "preparing":
            return view
        assert time.monotonic() < deadline, "the tournament's deals were not proven in time"
        time.sleep(0.2)


def enter(player: Player, tournament_id: str) -> httpx.Response:
    return player.client.post(f"/tournaments/{tournament_id}/entries", headers=player.auth)


def next_game(player: Player, tournament_id: str) -> httpx.Response:
    return player.client.post(f"/tournaments/{tournament_id}/games", headers=player.auth)


def dealt(player: Player, tournament_id: str) -> dict[str, Any]:
    response = next_game(player, tournament_id)
    assert response.status_code == 201, response.text
    game: dict[str, Any] = response.json()
    assert response.headers["location"] == f"/games/{game['id']}"
    return game


def lines(database_url: str, tournament_id: str) -> dict[int, list[dict[str, Any]]]:
    """The winning line the server proved for each deal, as API moves, by deal number."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT number, proof->>'line' FROM tournament_deals WHERE tournament_id = %s",
                            (tournament_id,)).fetchall()
    return {number: [command_to_api(command) for command in decode_line(line)] for number, line in rows}


def decks(database_url: str, tournament_id: str) -> dict[int, list[str]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT number, deck FROM tournament_deals WHERE tournament_id = %s",
                            (tournament_id,)).fetchall()
    return dict(rows)


def bot(client: httpx.Client, name: str) -> Player:
    player = Player.__new__(Player)
    response = client.post("/players", json={"name": name, "bot": True})
    assert response.status_code == 201, response.text
    player.id, player.token, player.client = response.json()["id"], response.json()["token"], client
    return player
