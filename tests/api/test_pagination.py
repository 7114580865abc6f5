"""Keyset pages of the daily leaderboard and the open-races lobby: a walk sees every row once,
while rows are added; a rank is the same on every page; a cursor of anything else is a 400."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest

from tests.support import assert_problem

from .conftest import Player

DAY = (datetime.now(UTC) - timedelta(days=2)).date()
BOARD = f"/deals/daily/{DAY.isoformat()}/leaderboard"
BOARD_REFUSAL = "'after' is not a cursor of this list: pass the 'nextAfter' of this leaderboard's previous page"
LOBBY_REFUSAL = "'before' is not a cursor of this list: pass the 'nextBefore' of the open races' previous page"


def _add_entries(url: str, first: int, count: int, day: date = DAY) -> None:
    """Entries ``first`` .. of the board of DAY, each its own player and game: ties in moves and
    seconds (and some in finishing time) so the order's last keys matter; every third unranked."""
    with psycopg.connect(url) as conn:
        for number in range(first, first + count):
            player, game = uuid.uuid4(), uuid.uuid4()
            conn.execute("INSERT INTO players (id, name) VALUES (%s, %s)", (player, f"p{number}"))
            conn.execute(
                "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version)"
                " VALUES (%s, %s, 'open-runs', 1, '{\"source\": \"seed\", \"seed\": 1}', 'won', 9)",
                (game, player),
            )
            conn.execute(
                "INSERT INTO daily_leaderboard (game_id, day, player_id, moves, seconds, finished_at, status,"
                " assisted, unranked) VALUES (%s, %s, %s, %s, %s, %s, 'won', false, %s)",
                (game, day, player, 20 + number % 4, 30.5 + number % 3, datetime(2026, 1, 1, tzinfo=UTC)
                 + timedelta(seconds=number // 2), "late" if number % 3 == 0 else None),
            )


def _walk(client: httpx.Client, path: str, cursor_name: str, next_name: str, items: str, limit: int,
          between: Any = None) -> list[dict[str, Any]]:
    """Every page from the first, ``between`` run after each; every item in page order."""
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": limit} | ({cursor_name: cursor} if cursor else {})
        response = client.get(path, params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        assert len(body[items]) <= limit
        seen += body[items]
        cursor = body[next_name]
        if cursor is None:
            return seen
        if between is not None:
            between()


def test_leaderboard_pages_carry_the_ranks_of_the_whole_board(client: httpx.Client, clean_database: str) -> None:
    _add_entries(clean_database, 0, 23)
    whole = client.get(BOARD, params={"limit": 1000}).json()
    assert whole["nextAfter"] is None
    assert len(whole["entries"]) == 23
    ranked = [e for e in whole["entries"] if e["rank"] is not None]
    assert [e["rank"] for e in ranked] == list(range(1, len(ranked) + 1))
    assert ranked == whole["entries"][: len(ranked)]  # the ranked first, then the unranked
    paged = _walk(client, BOARD, "after", "nextAfter", "entries", 4)
    assert paged == whole["entries"]


def test_a_leaderboard_walk_sees_every_entry_once_while_entries_are_added(
    client: httpx.Client, clean_database: str
) -> None:
    _add_entries(clean_database, 0, 20)
    board = client.get(BOARD, params={"limit": 1000}).json()["entries"]
    before, before_ranks = [e["game"] for e in board], [e["rank"] for e in board]
    added = iter(range(100, 200, 3))
    seen = _walk(client, BOARD, "after", "nextAfter", "entries", 3,
                 between=lambda: _add_entries(clean_database, next(added), 3))
    games = [e["game"] for e in seen]
    assert len(games) == len(set(games))  # no entry twice
    assert set(before) <= set(games)  # none of those there at the start is skipped
    # a rank counts the entries better than it when its page is read: entries are only added, so
    # it lies between the entry's rank on the board before the walk and on the board after it
    final = {e["game"]: e["rank"] for e in client.get(BOARD, params={"limit": 1000}).json()["entries"]}
    first_ranks = dict(zip(before, before_ranks, strict=True))
    for entry in seen:
        if entry["game"] in first_ranks and entry["rank"] is not None:
            assert first_ranks[entry["game"]] <= entry["rank"] <= final[entry["game"]]


def test_lobby_pages_see_every_open_race_once_while_races_are_opened(client: httpx.Client, ann: Player) -> None:
    def open_race(seed: int) -> str:
        response = client.post("/races", json={"ruleset": "classic", "maxEntrants": 2, "deal": {"seed": seed}},
                               headers=ann.auth)
        assert response.status_code == 201, response.text
        race_id: str = response.json()["id"]
        return race_id

    made = [open_race(seed) for seed in range(7)]
    extra = iter(range(100, 120))
    seen = [r["id"] for r in _walk(client, "/races/open", "before", "nextBefore", "races", 3,
                                   between=lambda: open_race(next(extra)))]
    assert len(seen) == len(set(seen))
    assert seen == made[::-1]  # newest first; those opened during the walk are newer than every page after it
    first = client.get("/races/open", params={"limit": 3}).json()
    assert len(first["races"]) == 3
    assert first["nextBefore"] is not None


def _cursors(client: httpx.Client, clean_database: str, ann: Player) -> dict[str, str]:
    """A real cursor of each list."""
    _add_entries(clean_database, 0, 4)
    board = client.get(BOARD, params={"limit": 1}).json()["nextAfter"]
    other_day = (DAY - timedelta(days=1)).isoformat()
    _add_entries(clean_database, 10, 3, DAY - timedelta(days=1))
    other = client.get(f"/deals/daily/{other_day}/leaderboard", params={"limit": 1}).json()["nextAfter"]
    for seed in range(2):
        client.post("/races", json={"ruleset": "classic", "maxEntrants": 2, "deal": {"seed": seed}}, headers=ann.auth)
    lobby = client.get("/races/open", params={"limit": 1}).json()["nextBefore"]
    for seed in range(2):
        ann.new_game(ruleset="classic", deal={"seed": seed})
    games = client.get(f"/players/{ann.id}/games", params={"limit": 1}).json()["nextBefore"]
    assert all((board, other, lobby, games))
    return {"board": board, "other day": other, "lobby": lobby, "games": games}


@pytest.mark.parametrize(
    ("path", "parameter", "given", "detail"),
    [
        (BOARD, "after", "lobby", BOARD_REFUSAL),
        (BOARD, "after", "games", BOARD_REFUSAL),
        (BOARD, "after", "other day", "but of another date's leaderboard"),
        (BOARD, "after", "bm9uc2Vuc2U", BOARD_REFUSAL),
        ("/races/open", "before", "board", LOBBY_REFUSAL),
        ("/races/open", "before", "games", LOBBY_REFUSAL),
        ("/races/open", "before", "AAAA", LOBBY_REFUSAL),
        ("/players/{ann}/games", "before", "lobby", "'before' is not a cursor of this list"),
    ],
)
def test_a_cursor_of_anything_else_is_a_400_in_our_words(
    client: httpx.Client, clean_database: str, ann: Player, path: str, parameter: str, given: str, detail: str
) -> None:
    cursors = _cursors(client, clean_database, ann)
    response = client.get(path.format(ann=ann.id), params={parameter: cursors.get(given, given)})
    assert detail in assert_problem(response, 400, "invalid_request")["detail"]


def test_a_malformed_cursor_is_refused_before_it_is_read(client: httpx.Client) -> None:
    for path, parameter in ((BOARD, "after"), ("/races/open", "before")):
        response = client.get(path, params={parameter: "not a cursor!"})
        assert parameter in assert_problem(response, 400, "invalid_request")["detail"]
