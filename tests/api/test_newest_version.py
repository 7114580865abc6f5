"""The newest API version's shapes, as a client that pins it sees them (docs/versions.md, "2026-12-05"):
one list style, a player as ``{"id", "name", "bot"}``, one name per thing, tagged deal requests,
one idempotency code and the ``cancelled`` status; and the same things through the first version,
which still sees its own shapes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from service.http.versions import NEWEST, OLDEST

from ..support import assert_problem
from .conftest import Player
from .race_support import create_race, started_race
from .test_pagination import BOARD
from .test_pagination import _add_entries as add_board_entries

V2 = {"Api-Version": NEWEST.name}
V1 = {"Api-Version": OLDEST.name}


def newest(player: Player, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {**player.auth, **V2, **kwargs.pop("headers", {})}
    return player.client.request(method, path, headers=headers, **kwargs)


def deal(player: Player, body: dict[str, Any]) -> dict[str, Any]:
    response = newest(player, "POST", "/games", json=body)
    assert response.status_code == 201, response.text
    game: dict[str, Any] = response.json()
    return game


def test_a_game_names_its_player_and_takes_a_tagged_deal(client: httpx.Client, ann: Player) -> None:
    game = deal(ann, {"deal": {"source": "seed", "seed": 100}})
    assert game["player"] == {"id": ann.id, "name": "Ann", "bot": False}
    assert game["deal"] == {"source": "seed", "seed": 100}
    same = client.get(f"/games/{game['id']}", headers=V2).json()
    assert same["player"] == game["player"]
    first = client.get(f"/games/{game['id']}", headers=V1).json()
    assert first["player"] == ann.id  # the first version's shape
    assert first["table"] == same["table"]
    moved = newest(ann, "POST", f"/games/{game['id']}/moves", json={"type": "draw"})
    assert moved.json()["game"]["player"] == game["player"]
    assert ann.move(game["id"], {"type": "draw"}).json()["game"]["player"] == ann.id  # the move's own route, v1


@pytest.mark.parametrize(("body", "code", "words"), [
    ({"deal": {"seed": 7}}, "invalid_request", "'deal' needs its 'source'"),
    ({"deal": {"source": "dice", "seed": 7}}, "invalid_request", ("'deal.source' must be seed, pool, daily, deck or "
                                                                 "lesson, not 'dice'")),
    ({"deal": {"source": "seed", "pool": 7}}, "invalid_request", "'deal'"),
    ({"deal": {"source": "daily", "date": 20261130}}, "invalid_request", "'deal.date' must be 'today' or a UTC date"),
])
def test_an_untagged_or_wrongly_tagged_deal_is_refused(
    client: httpx.Client, ann: Player, body: dict[str, Any], code: str, words: str
) -> None:
    before = client.get(f"/players/{ann.id}/games", headers=V2).json()["items"]
    refused = newest(ann, "POST", "/games", json=body)
    assert words in assert_problem(refused, 400, code)["detail"]
    assert client.get(f"/players/{ann.id}/games", headers=V2).json()["items"] == before


def test_the_event_log_pages_in_the_one_list_style(client: httpx.Client, ann: Player) -> None:
    game = deal(ann, {"deal": {"source": "seed", "seed": 100}})
    for _ in range(4):
        assert ann.move(game["id"], {"type": "draw"}).status_code == 200
    page = client.get(f"/games/{game['id']}/events", params={"limit": 2}, headers=V2)
    body = page.json()
    assert [e["version"] for e in body["items"]] == [1, 2]
    assert body["next"] == "2"
    assert page.headers["link"] == f'</games/{game["id"]}/events?cursor=2&limit=2>; rel="next"'
    rest = client.get(f"/games/{game['id']}/events", params={"cursor": body["next"], "limit": 50}, headers=V2).json()
    assert [e["version"] for e in rest["items"]] == [3, 4, 5]
    assert rest["next"] is None
    lines = client.get(f"/games/{game['id']}/events.ndjson", params={"cursor": "1", "limit": 2}, headers=V2)
    assert [line.count('"version"') for line in lines.text.splitlines()] == [1, 1]
    assert lines.headers["link"] == f'</games/{game["id"]}/events.ndjson?cursor=3&limit=2>; rel="next"'
    first = client.get(f"/games/{game['id']}/events", params={"after": 2}, headers=V1).json()  # the first version
    assert ([e["version"] for e in first["events"]], first["nextAfter"]) == ([3, 4, 5], None)
    old_lines = client.get(f"/games/{game['id']}/events.ndjson", params={"after": 1, "limit": 2}, headers=V1)
    assert old_lines.headers["link"] == f'</games/{game["id"]}/events.ndjson?after=3>; rel="next"'


def test_every_list_takes_limit_and_cursor_and_answers_items_and_next(
    client: httpx.Client, clean_database: str, ann: Player, bob: Player
) -> None:
    for seed in (1, 2, 3):
        deal(ann, {"deal": {"source": "seed", "seed": seed}})
    for _ in range(3):
        create_race(bob, maxEntrants=2, deal={"seed": 4})
    add_board_entries(clean_database, 0, 3)
    for path in (f"/players/{ann.id}/games", "/races/open", BOARD):
        first = client.get(path, params={"limit": 2}, headers=V2)
        assert first.status_code == 200, first.text
        assert len(first.json()["items"]) == 2
        following = first.json()["next"]
        assert first.headers["link"].endswith(f'cursor={following}&limit=2>; rel="next"')
        rest = client.get(path, params={"limit": 2, "cursor": following}, headers=V2).json()
        assert len(rest["items"]) == 1
        assert rest["next"] is None
        assert "link" not in client.get(path, params={"limit": 2}, headers=V1).headers  # the first version's pages
    lobby = client.get("/races/open", headers=V2).json()["items"]
    assert lobby[0]["creator"] == {"id": bob.id, "name": "Bob", "bot": False}
    old = client.get("/races/open", headers=V1).json()["races"]
    assert (old[0]["creator"], old[0]["creatorName"]) == (bob.id, "Bob")


@pytest.mark.parametrize(("path", "query", "code"), [
    ("/races/open", {"limit": 201}, "limit_out_of_range"),
    ("/races/open", {"limit": 0}, "limit_out_of_range"),
    ("/races/open", {"cursor": "bm9uc2Vuc2U"}, "cursor_invalid"),
    ("/players/{ann}/games", {"limit": 1001}, "limit_out_of_range"),
    ("/games/{game}/events", {"cursor": "x1"}, "cursor_invalid"),
    ("/deals/daily/2026-12-01/leaderboard", {"cursor": "bm9uc2Vuc2U"}, "cursor_invalid"),
])
def test_a_bad_limit_or_cursor_is_a_400_with_its_own_code(
    client: httpx.Client, ann: Player, path: str, query: dict[str, Any], code: str
) -> None:
    game = deal(ann, {"deal": {"source": "seed", "seed": 100}})
    where = path.format(ann=ann.id, game=game["id"])
    assert_problem(client.get(where, params=query, headers=V2), 400, code)
    assert_problem(client.get(where, params=query, headers=V1), 400, "invalid_request")  # the first version's code


def test_a_cursor_of_another_list_is_refused(client: httpx.Client, ann: Player, bob: Player) -> None:
    for seed in (1, 2):
        deal(ann, {"deal": {"source": "seed", "seed": seed}})
        create_race(bob, maxEntrants=2)
    games_cursor = client.get(f"/players/{ann.id}/games", params={"limit": 1}, headers=V2).json()["next"]
    lobby_cursor = client.get("/races/open", params={"limit": 1}, headers=V2).json()["next"]
    assert_problem(client.get("/races/open", params={"cursor": games_cursor}, headers=V2), 400, "cursor_invalid")
    assert_problem(client.get(f"/players/{ann.id}/games", params={"cursor": lobby_cursor}, headers=V2), 400,
                   "cursor_invalid")


def test_a_race_names_its_players_and_its_entrants_game_status(client: httpx.Client, ann: Player, bob: Player) -> None:
    created = newest(ann, "POST", "/races", json={"maxEntrants": 2, "deal": {"source": "seed", "seed": 5}})
    assert created.status_code == 201, created.text
    race = created.json()
    assert race["creator"] == {"id": ann.id, "name": "Ann", "bot": False}
    assert race["entrants"][0]["player"] == race["creator"]
    started = started_race(ann, [bob], deal={"seed": 6})
    view = client.get(f"/races/{started['id']}", headers=V2).json()
    assert {e["player"]["name"] for e in view["entrants"]} == {"Ann", "Bob"}
    assert {e["status"] for e in view["entrants"]} == {"playing"}
    assert all("gameStatus" not in e and "name" not in e for e in view["entrants"])
    old = client.get(f"/races/{started['id']}", headers=V1).json()
    assert {(e["name"], e["gameStatus"]) for e in old["entrants"]} == {("Ann", "playing"), ("Bob", "playing")}


def test_a_race_may_ask_for_a_secret_deal_by_name(client: httpx.Client, ann: Player) -> None:
    created = newest(ann, "POST", "/races", json={"maxEntrants": 2, "deal": {"source": "secret"}})
    assert created.status_code == 201, created.text
    assert created.json()["deal"] == {"source": "secret"}


def test_a_race_cancelled_before_its_start_says_cancelled(client: httpx.Client, ann: Player) -> None:
    race = create_race(ann, maxEntrants=2, deal={"seed": 5})
    assert client.delete("/players/me", headers=ann.auth).status_code == 204
    assert client.get(f"/races/{race['id']}", headers=V2).json()["status"] == "cancelled"
    assert client.get(f"/races/{race['id']}", headers=V1).json()["status"] == "finished"


def test_a_daily_names_its_ruleset_and_date_once(client: httpx.Client, ann: Player) -> None:
    daily = client.get("/deals/daily", headers=V2).json()
    assert daily["ruleset"] == {"id": "open-runs", "version": 1}
    game = deal(ann, {"deal": {"source": "daily", "date": "today"}})
    assert game["deal"] == {"source": "daily", "date": daily["date"], "practice": False}
    events = client.get(f"/games/{game['id']}/events", headers={**ann.auth, **V2}).json()["items"]
    assert events[0]["data"]["deal"] == game["deal"]
    old = client.get(f"/games/{game['id']}", headers={**ann.auth, **V1}).json()
    assert old["deal"] == {"source": "daily", "daily": daily["date"], "practice": False}
    moved_v1 = ann.move(game["id"], {"type": "draw"}).json()["game"]  # the move's own route, in place
    assert (moved_v1["deal"], moved_v1["player"]) == (old["deal"], ann.id)
    moved_v2 = newest(ann, "POST", f"/games/{game['id']}/moves", json={"type": "draw"}).json()["game"]
    assert (moved_v2["deal"], moved_v2["player"]["id"]) == (game["deal"], ann.id)
    board = client.get(f"/deals/daily/{daily['date']}/leaderboard", headers=V2).json()
    assert (board["ruleset"], board["items"], board["next"]) == ({"id": "open-runs", "version": 1}, [], None)


def test_a_lesson_names_its_ruleset_as_a_game_does(client: httpx.Client) -> None:
    newest_lessons = client.get("/lessons", headers=V2).json()["lessons"]
    assert {lesson["ruleset"]["id"] for lesson in newest_lessons} == {"classic"}
    assert all("rulesetVersion" not in lesson for lesson in newest_lessons)
    first = client.get("/lessons/wrapping", headers=V1).json()
    assert (first["ruleset"], first["rulesetVersion"]) == ("classic", newest_lessons[0]["ruleset"]["version"])


def test_a_reused_move_key_is_idempotency_key_reused(client: httpx.Client, ann: Player) -> None:
    game = deal(ann, {"deal": {"source": "seed", "seed": 100}})
    key = {"Idempotency-Key": "draw-once"}
    assert newest(ann, "POST", f"/games/{game['id']}/moves", json={"type": "draw"}, headers=key).status_code == 200
    reused = newest(ann, "POST", f"/games/{game['id']}/moves", json={"type": "recycle"}, headers=key)
    assert_problem(reused, 400, "idempotency_key_reused")
    assert_problem(ann.move(game["id"], {"type": "recycle"}, **key), 400, "invalid_request")  # the first version
    assert client.get(f"/games/{game['id']}").json()["version"] == 2


def test_a_replay_answers_in_the_version_of_the_request_that_replays(client: httpx.Client, ann: Player) -> None:
    key = {"Idempotency-Key": "a-game-in-two-versions"}
    first = client.post("/games", json={"deal": {"seed": 9}}, headers={**ann.auth, **V1, **key})
    assert first.json()["player"] == ann.id
    again = client.post("/games", json={"deal": {"source": "seed", "seed": 9}}, headers={**ann.auth, **V2, **key})
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.json()["player"] == {"id": ann.id, "name": "Ann", "bot": False}
    assert again.json()["id"] == first.json()["id"]


def test_each_version_has_its_own_etags(client: httpx.Client, ann: Player) -> None:
    game = deal(ann, {"deal": {"source": "seed", "seed": 100}})
    old = client.get(f"/games/{game['id']}", headers=V1)
    new = client.get(f"/games/{game['id']}", headers=V2)
    assert old.headers["etag"] == '"1"'
    assert new.headers["etag"] == f'"1;{NEWEST.name}"'
    assert client.get(f"/games/{game['id']}", headers={**V2, "If-None-Match": new.headers["etag"]}).status_code == 304
    assert client.get(f"/games/{game['id']}", headers={**V2, "If-None-Match": old.headers["etag"]}).status_code == 200


def test_another_versions_tag_never_matches(client: httpx.Client, ann: Player) -> None:
    game = deal(ann, {"deal": {"source": "seed", "seed": 100}})
    stale = newest(ann, "POST", f"/games/{game['id']}/moves", json={"type": "draw"}, headers={"If-Match": '"1"'})
    assert_problem(stale, 412, "version_conflict")  # "1" is 2026-12-04's tag of version 1, never this version's
    fresh = newest(ann, "POST", f"/games/{game['id']}/moves", json={"type": "draw"},
                   headers={"If-Match": f'"1;{NEWEST.name}"'})
    assert fresh.status_code == 200, fresh.text

