"""Keyset pages of the daily leaderboard and the open-races lobby: a walk sees every row once,
while rows are added; a rank is the same on every page, ties across a page's end included, whether
it runs on from the rank a cursor carries or is counted; a cursor of anything else, or one with a
rank the server did not sign, is a 400."""

from __future__ import annotations

import base64
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


def _spread(number: int) -> tuple[int, float, int]:
    """Entry ``number``'s moves, seconds and finishing time (seconds after a fixed instant): ties in
    moves and seconds (and some in finishing time) so the order's last keys matter."""
    return 20 + number % 4, 30.5 + number % 3, number // 2


def _ties(number: int) -> tuple[int, float, int]:
    """Long ties: 17 entries on 20 moves, then 17 on 21, ..., all in the same seconds, and six at a
    time finishing at the same instant, so that only the game id orders those."""
    return 20 + number // 17, 30.5, number // 6


def _add_entries(url: str, first: int, count: int, day: date = DAY, key: Any = _spread) -> None:
    """Entries ``first`` .. of the board of DAY, each its own player and game, its moves, seconds and
    finishing time from ``key(number)``; every third unranked. Each counts in the date's daily
    plays and wins in the same transaction, as a game's start and winning move count it."""
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO daily_stats AS y (day, plays, wins) VALUES (%s, %s, %s)"
                     " ON CONFLICT (day) DO UPDATE SET plays = y.plays + EXCLUDED.plays, wins = y.wins + EXCLUDED.wins",
                     (day, count, count))
        for number in range(first, first + count):
            player, game = uuid.uuid4(), uuid.uuid4()
            moves, seconds, finished = key(number)
            conn.execute("INSERT INTO players (id, name) VALUES (%s, %s)", (player, f"p{number}"))
            conn.execute(
                "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version)"
                " VALUES (%s, %s, 'open-runs', 1, '{\"source\": \"seed\", \"seed\": 1}', 'won', 9)",
                (game, player),
            )
            conn.execute(
                "INSERT INTO daily_leaderboard (game_id, day, player_id, moves, seconds, finished_at, status,"
                " assisted, unranked) VALUES (%s, %s, %s, %s, %s, %s, 'won', false, %s)",
                (game, day, player, moves, seconds, datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=finished),
                 "late" if number % 3 == 0 else None),
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


def _fields(cursor: str) -> list[str]:
    """What an (opaque) leaderboard cursor holds: ``leaderboard``, the date, ``r`` and the key,
    then the rank, the date's daily wins and the signature."""
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().split("|")


def _cursor(fields: list[str]) -> str:
    return base64.urlsafe_b64encode("|".join(fields).encode()).decode().rstrip("=")


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 8])
def test_leaderboard_pages_rank_ties_across_their_ends_as_one_page(
    client: httpx.Client, clean_database: str, limit: int
) -> None:
    _add_entries(clean_database, 0, 40, key=_ties)
    whole = client.get(BOARD, params={"limit": 1000}).json()["entries"]
    ranked = [e for e in whole if e["rank"] is not None]
    assert [e["rank"] for e in ranked] == list(range(1, 27))  # 1, 2, 3, ...: a tie is broken, never shared
    assert len({(e["moves"], e["seconds"], e["finishedAt"]) for e in ranked}) < len(ranked)  # whole keys tie
    first = client.get(BOARD, params={"limit": limit}).json()
    fields = _fields(first["nextAfter"])
    assert (fields[0], fields[2], fields[7]) == ("leaderboard", "r", str(limit))  # a ranked cursor with its rank
    assert _walk(client, BOARD, "after", "nextAfter", "entries", limit) == whole


def test_a_cursor_without_a_rank_still_pages_with_counted_ranks(client: httpx.Client, clean_database: str) -> None:
    """A cursor handed out before cursors carried ranks (the key alone) still works: its ranks are counted."""
    _add_entries(clean_database, 0, 23, key=_ties)
    whole = client.get(BOARD, params={"limit": 1000}).json()["entries"]
    fields = _fields(client.get(BOARD, params={"limit": 4}).json()["nextAfter"])
    response = client.get(BOARD, params={"limit": 5, "after": _cursor(fields[:7])})
    assert response.status_code == 200, response.text
    assert response.json()["entries"] == whole[4:9]


def test_a_tampered_leaderboard_cursor_is_a_400_and_changes_nothing(client: httpx.Client, clean_database: str) -> None:
    _add_entries(clean_database, 0, 23, key=_ties)
    whole = client.get(BOARD, params={"limit": 1000}).json()
    cursor = client.get(BOARD, params={"limit": 4}).json()["nextAfter"]
    fields = _fields(cursor)
    assert fields[7] == "4"
    day, r, _, seconds, finished, game, rank, wins, signature = fields[1:]
    forged = [
        [*fields[:7], "0", wins, signature],  # another rank: the next page would start at 1
        [*fields[:7], "40", wins, signature],  # the next page would start at 41
        ["leaderboard", day, r, "19", seconds, finished, game, rank, wins, signature],  # another key, same signature
        [*fields[:8], str(int(wins) + 1), signature],  # other wins
        [*fields[:9], "A" * len(signature)],  # another signature
        [*fields[:9], ""],
        fields[:9],  # none
        [*fields, "1"],
    ]
    for each in forged:
        response = client.get(BOARD, params={"limit": 5, "after": _cursor(each)})
        assert BOARD_REFUSAL in assert_problem(response, 400, "invalid_request")["detail"], each
    assert client.get(BOARD, params={"limit": 1000}).json() == whole
    response = client.get(BOARD, params={"limit": 5, "after": cursor})  # the cursor as made still works
    assert response.json()["entries"] == whole["entries"][4:9]


def test_a_page_after_a_win_counts_its_ranks_again(client: httpx.Client, clean_database: str) -> None:
    """A cursor's rank stands while the date's daily wins are the same; after a win, as after an
    entry that ranks above the cursor, the next page's ranks are counted on the board as it is."""
    _add_entries(clean_database, 0, 23, key=_ties)
    cursor = client.get(BOARD, params={"limit": 4}).json()["nextAfter"]
    _add_entries(clean_database, 99, 2, key=lambda number: (1, 9.5, 0))  # 99 unranked, 100 ranked: the first now
    whole = client.get(BOARD, params={"limit": 1000}).json()["entries"]
    assert whole[0]["name"] == "p100"
    page = client.get(BOARD, params={"limit": 5, "after": cursor}).json()["entries"]
    assert page == whole[5:10]
    assert [e["rank"] for e in page] == [6, 7, 8, 9, 10]


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


@pytest.mark.smoke
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
