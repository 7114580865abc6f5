"""Deleting an account and exporting event logs: a deleted player's tokens are refused at once and
their name is gone from every view, while their games stay as anonymous history that still replays
and adds up; an ndjson event export is complete, or says exactly where it stopped."""

from __future__ import annotations

import json
from typing import Any

import httpx
import psycopg

from tests.support import assert_problem

from .conftest import Clock, Player
from .race_support import create_race, join, race, start


def _lines(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()]


def _long_game(player: Player, pairs: int) -> dict[str, Any]:
    """A game of more than 2 * ``pairs`` events: draws, each taken back."""
    game = player.new_game(deal={"seed": 11})
    for _ in range(pairs):
        assert player.move(game["id"], {"type": "draw"}).status_code == 200
        assert player.move(game["id"], {"type": "undo"}).status_code == 200
    view = player.client.get(f"/games/{game['id']}").json()
    assert view["version"] > 2 * pairs
    return dict(view)


def test_deleting_an_account_erases_the_person_and_keeps_anonymous_history(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    spare = clocked.post("/players/me/tokens", json={"name": "phone", "scopes": ["play"]}, headers=ann.auth).json()
    daily = ann.new_game(deal={"daily": "today"})
    assert ann.move(daily["id"], {"type": "resign"}).status_code == 200
    seeded = ann.new_game(deal={"seed": 5})
    assert ann.move(seeded["id"], {"type": "draw"}).status_code == 200
    race_id = create_race(ann, deal={"seed": 9}, maxEntrants=2)["id"]
    assert join(bob, race_id).status_code in (200, 201)
    assert start(ann, race_id).status_code == 200
    day = clock().date().isoformat()
    stats_before = clocked.get("/stats").json()
    events_before = clocked.get(f"/games/{seeded['id']}/events").json()["events"]
    assert [entry["name"] for entry in clocked.get(f"/deals/daily/{day}/leaderboard").json()["entries"]] == ["Ann"]

    assert_problem(clocked.delete("/players/me", headers={"Authorization": f"Bearer {spare['token']}"}), 403,
                   "forbidden")  # a play-only token may not delete the account
    assert_problem(clocked.delete("/players/me"), 401, "unauthorized")
    assert clocked.get(f"/players/{ann.id}").json()["name"] == "Ann"  # nothing changed

    deleted = clocked.delete("/players/me", headers=ann.auth)
    assert deleted.status_code == 204, deleted.text
    for token in (ann.token, spare["token"]):
        assert_problem(clocked.get("/players/me", headers={"Authorization": f"Bearer {token}"}), 401, "unauthorized")
    assert_problem(ann.move(seeded["id"], {"type": "draw"}), 401, "unauthorized")
    assert_problem(clocked.delete("/players/me", headers=ann.auth), 401, "unauthorized")
    assert_problem(clocked.get(f"/players/{ann.id}"), 404, "not_found")
    with psycopg.connect(clean_database) as conn:
        assert conn.execute("SELECT count(*) FROM tokens WHERE player_id = %s", (ann.id,)).fetchone() == (0,)
        assert conn.execute("SELECT name FROM players WHERE id = %s", (ann.id,)).fetchone() == ("deleted player",)

    board = clocked.get(f"/deals/daily/{day}/leaderboard").json()
    assert [entry["name"] for entry in board["entries"]] == ["deleted player"]
    view = race(clocked, race_id)
    assert sorted(entrant["name"] for entrant in view["entrants"]) == ["Bob", "deleted player"]
    assert "Ann" not in json.dumps(board) + json.dumps(view)
    # her game in the running race ended as resigned (service.races.leaving): one race game played, not won
    stats_after = clocked.get("/stats").json()
    races_before = next(s for s in stats_before["sources"] if s["source"] == "race")
    assert next(s for s in stats_after["sources"] if s["source"] == "race") == {
        **races_before, "played": races_before["played"] + 1, "winRate": 0.0}
    assert [s for s in stats_after["sources"] if s["source"] != "race"] == [
        s for s in stats_before["sources"] if s["source"] != "race"]
    assert next(e for e in view["entrants"] if e["name"] == "deleted player")["gameStatus"] == "resigned"
    assert clocked.get(f"/games/{seeded['id']}/events").json()["events"] == events_before
    replayed = clocked.get(f"/games/{seeded['id']}/states/{len(events_before)}")
    assert replayed.status_code == 200
    assert replayed.json()["table"] == clocked.get(f"/games/{seeded['id']}").json()["table"]
    assert clocked.get(f"/players/{ann.id}/games").json()["games"]  # anonymous history, under the id


def test_a_deleted_name_cannot_be_registered(client: httpx.Client) -> None:
    assert_problem(client.post("/players", json={"name": "Deleted  Player"}), 400, "name_reserved")


def test_an_ndjson_event_export_is_complete_by_default(client: httpx.Client, ann: Player) -> None:
    game = _long_game(ann, 60)
    for response in (
        client.get(f"/games/{game['id']}/events.ndjson"),
        client.get(f"/games/{game['id']}/events", headers={"Accept": "application/x-ndjson"}),
    ):
        assert "link" not in response.headers
        assert response.headers["content-type"].startswith("application/x-ndjson")
        assert [event["version"] for event in _lines(response)] == list(range(1, game["version"] + 1))
    assert len(client.get(f"/games/{game['id']}/events").json()["events"]) == 100  # a JSON page still pages


def test_a_limited_export_says_where_it_stopped_and_the_next_request_continues_there(
    client: httpx.Client, ann: Player
) -> None:
    game = _long_game(ann, 30)
    seen: list[int] = []
    url = f"/games/{game['id']}/events.ndjson?limit=25"
    while True:
        response = client.get(url)
        seen += [event["version"] for event in _lines(response)]
        link = response.headers.get("link")
        if link is None:
            break
        assert link == f'</games/{game["id"]}/events.ndjson?after={seen[-1]}>; rel="next"'
        url = link[1:link.index(">")] + "&limit=25"
    assert seen == list(range(1, game["version"] + 1))
    accept = client.get(f"/games/{game['id']}/events?limit=7&after=3", headers={"Accept": "application/x-ndjson"})
    assert [event["version"] for event in _lines(accept)] == list(range(4, 11))
    assert accept.headers["link"] == f'</games/{game["id"]}/events?after=10>; rel="next"'


def test_bad_export_input_is_a_problem(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 2})
    for query in ("limit=0", "limit=x", "after=-1", "limit=100000"):
        assert_problem(client.get(f"/games/{game['id']}/events.ndjson?{query}"), 400, "invalid_request")


def _export(client: httpx.Client, url: str) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The game lines of a player's games export, and its 'next' line if it has one (always last)."""
    lines = _lines(client.get(url))
    games = [line for line in lines if line["type"] == "game"]
    rest = [line for line in lines if line["type"] != "game"]
    assert len(rest) <= 1
    assert (not rest or lines[-1] is rest[0])
    return games, rest[0] if rest else None


def test_a_players_public_games_export_is_complete_and_hides_what_public_reads_hide(
    clocked: httpx.Client, clock: Clock
) -> None:
    ann = Player(clocked, "Ann")
    played = ann.new_game(deal={"seed": 4})
    assert ann.move(played["id"], {"type": "draw"}).status_code == 200
    clock.advance(minutes=1)
    daily = ann.new_game(deal={"daily": "today"})
    assert ann.move(daily["id"], {"type": "resign"}).status_code == 200
    clock.advance(minutes=1)
    ended = ann.new_game(deal={"seed": 6})
    assert ann.move(ended["id"], {"type": "resign"}).status_code == 200

    games, more = _export(clocked, f"/players/{ann.id}/games/export")
    assert more is None
    assert [line["game"]["id"] for line in games] == [played["id"], ended["id"]]  # today's daily: absent
    assert daily["id"] not in clocked.get(f"/players/{ann.id}/games/export").text
    by_id = {line["game"]["id"]: line for line in games}
    assert [event["version"] for event in by_id[played["id"]]["events"]] == list(range(1, 3))
    assert "deck" not in by_id[played["id"]]["events"][0]["data"]  # in progress: face-down cards hidden
    assert by_id[played["id"]]["game"] == clocked.get(f"/games/{played['id']}").json()
    assert len(by_id[ended["id"]]["events"][0]["data"]["deck"]) == 52  # ended and public: replayable

    first, more = _export(clocked, f"/players/{ann.id}/games/export?max=1")
    assert [line["game"]["id"] for line in first] == [played["id"]]
    assert more is not None
    assert more["href"].startswith(f"/players/{ann.id}/games/export?max=1&after=")
    rest, last = _export(clocked, more["href"])
    assert ([line["game"]["id"] for line in rest], last) == ([ended["id"]], None)

    since = by_id[ended["id"]]["game"]["startedAt"]
    assert [line["game"]["id"] for line in _export(clocked, f"/players/{ann.id}/games/export?since={since}")[0]] == [
        ended["id"]
    ]
    until = httpx.QueryParams({"until": since})
    assert [line["game"]["id"] for line in _export(clocked, f"/players/{ann.id}/games/export?{until}")[0]] == [
        played["id"]
    ]

    clock.advance(days=1)  # the date is over: the daily game is public, its deck with it
    games, _ = _export(clocked, f"/players/{ann.id}/games/export")
    assert [line["game"]["id"] for line in games] == [played["id"], daily["id"], ended["id"]]


def test_bad_games_export_input_is_a_problem(client: httpx.Client, ann: Player) -> None:
    base = f"/players/{ann.id}/games/export"
    for query in ("since=yesterday", "since=2026-11-30", "until=2026-11-30T00:00:00", "max=0", "max=x",
                  "after=!!", "after=abc", "since=2026-12-01T00:00:00Z&until=2026-11-30T00:00:00Z"):
        assert_problem(client.get(f"{base}?{query}"), 400, "invalid_request")
    assert_problem(client.get("/players/00000000-0000-0000-0000-000000000000/games/export"), 404, "not_found")


def test_the_account_export_holds_everything_stored_and_no_secret(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    phone = clocked.post("/players/me/tokens", json={"name": "phone", "scopes": ["play"]}, headers=ann.auth).json()
    assert clocked.delete(f"/players/me/tokens/{phone['id']}", headers=ann.auth).status_code == 204
    long = _long_game(ann, 55)
    daily = ann.new_game(deal={"daily": "today"})
    assert ann.move(daily["id"], {"type": "resign"}).status_code == 200
    race_id = create_race(ann, deal={"seed": 9}, maxEntrants=2)["id"]
    assert join(bob, race_id).status_code == 201
    assert start(ann, race_id).status_code == 200
    bob.new_game(deal={"seed": 1})

    response = clocked.get("/players/me/export", headers=ann.auth)
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = _lines(response)
    assert lines[0] == {"type": "player", "id": ann.id, "name": "Ann", "createdAt": lines[0]["createdAt"], "bot": False,
                        "acceptChallengesFrom": "everyone"}
    assert [(line["name"], line["revokedAt"] is None) for line in lines if line["type"] == "token"] == [
        ("first token", True), ("phone", False)
    ]
    for secret in (ann.token, phone["token"], bob.token):
        assert secret not in response.text
    with psycopg.connect(clean_database) as conn:
        hashes = [row[0].hex() for row in conn.execute("SELECT token_hash FROM tokens")]
    assert not any(digest in response.text for digest in hashes)
    games = {line["game"]["id"]: line for line in lines if line["type"] == "game"}
    race_game = race(clocked, race_id)
    ann_race_game = next(entrant["game"] for entrant in race_game["entrants"] if entrant["player"] == ann.id)
    assert set(games) == {long["id"], daily["id"], ann_race_game}  # hers only, private ones included
    assert [event["version"] for event in games[long["id"]]["events"]] == list(range(1, long["version"] + 1))
    assert "deck" not in games[daily["id"]]["events"][0]["data"]  # today's daily: deck withheld
    assert "deck" not in games[ann_race_game]["events"][0]["data"]  # the race runs
    kinds = [line["type"] for line in lines]
    assert {"stats", "race-entry", "daily-entry"} <= set(kinds)
    assert kinds.index("daily-entry") > kinds.index("game")

    clock.advance(days=1)
    later = {line["game"]["id"]: line for line in _lines(clocked.get("/players/me/export", headers=ann.auth))
             if line["type"] == "game"}
    assert len(later[daily["id"]]["events"][0]["data"]["deck"]) == 52  # the date is over


def test_the_account_operations_need_an_account_token(client: httpx.Client, ann: Player) -> None:
    reader = client.post("/players/me/tokens", json={"name": "bot", "scopes": ["play", "read-private"]},
                         headers=ann.auth).json()
    for method, path in (("GET", "/players/me/export"), ("DELETE", "/players/me")):
        assert_problem(client.request(method, path), 401, "unauthorized")
        assert_problem(client.request(method, path, headers={"Authorization": "Bearer nope"}), 401, "unauthorized")
        assert_problem(client.request(method, path, headers={"Authorization": f"Bearer {reader['token']}"}), 403,
                       "forbidden")
    assert client.get(f"/players/{ann.id}").json()["name"] == "Ann"
    assert client.get("/players/me", headers=ann.auth).status_code == 200


def test_deleting_an_account_drops_the_replies_its_keys_kept(client: httpx.Client, clean_database: str) -> None:
    ann = Player(client, "Ann")
    made = client.post("/players/me/tokens", json={"name": "bot", "scopes": ["play"]},
                       headers={**ann.auth, "Idempotency-Key": "bot-1"})
    assert made.status_code == 201
    kept = "SELECT count(*) FROM request_keys WHERE scope = %s"
    with psycopg.connect(clean_database) as conn:
        assert conn.execute(kept, (f"player:{ann.id}",)).fetchone() == (1,)
    assert client.delete("/players/me", headers=ann.auth).status_code == 204
    with psycopg.connect(clean_database) as conn:
        assert conn.execute(kept, (f"player:{ann.id}",)).fetchone() == (0,)
