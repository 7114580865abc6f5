"""A player who deletes their account leaves their races, over HTTP: out of open races (one they
created passes to the next entrant, or is cancelled with its stream told when nobody is left), and
their games in running races end as resigned, an event in the game's log, so the race finishes
without waiting on them and its places stay verified from the logs."""

from __future__ import annotations

from typing import Any

import httpx

from domain import replay
from domain.codec import event_from_data
from tests.support import assert_problem

from .conftest import Player
from .race_support import create_race, entrant, game_of, join, race, started_race, winning_line
from .test_races import next_message
from .test_streams import EventStream


def _delete(player: Player) -> None:
    response = player.client.delete("/players/me", headers=player.auth)
    assert response.status_code == 204, response.text


def _log(client: httpx.Client, game: str) -> list[dict[str, Any]]:
    response = client.get(f"/games/{game}/events", params={"limit": 1000})
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["events"]
    return events


def test_an_entrant_who_leaves_an_open_race_is_taken_out(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 3})
    assert join(bob, view["id"]).status_code == 201
    _delete(bob)
    after = race(client, view["id"])
    assert after["status"] == "open"
    assert after["creator"] == ann.id
    assert [e["player"] for e in after["entrants"]] == [ann.id]
    assert after["cancelledReason"] is None


def test_an_open_race_whose_creator_leaves_passes_to_the_next_entrant(
    client: httpx.Client, ann: Player, bob: Player
) -> None:
    carol = Player(client, "Carol")
    view = create_race(ann, ruleset="classic", deal={"seed": 4})
    assert join(bob, view["id"]).status_code == 201
    assert join(carol, view["id"]).status_code == 201
    _delete(ann)
    after = race(client, view["id"])
    assert after["status"] == "open"
    assert after["creator"] == bob.id  # joined first after the creator
    assert [e["player"] for e in after["entrants"]] == [bob.id, carol.id]
    refused = carol.client.post(f"/races/{view['id']}/start", headers=carol.auth)
    assert_problem(refused, 403, "forbidden")  # only the creator starts it: now Bob
    started = bob.client.post(f"/races/{view['id']}/start", headers=bob.auth)
    assert started.status_code == 200, started.text
    assert started.json()["status"] == "running"


def test_an_open_race_left_empty_is_cancelled_and_its_stream_told(
    client: httpx.Client, server_url: str, ann: Player
) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 5})
    with httpx.Client(base_url=server_url, timeout=10) as watcher, watcher.stream(
        "GET", f"/races/{view['id']}/stream", timeout=httpx.Timeout(10)
    ) as response:
        stream = EventStream(response)
        assert next_message(stream)["view"]["status"] == "open"
        _delete(ann)
        message = next_message(stream)
        assert message["event"] == "end"
        assert message["view"]["status"] == "finished"  # cancelled: not a status of its own (docs/versions.md)
        assert message["view"]["startedAt"] is None
        assert message["view"]["cancelledReason"] == "its creator deleted their account before anyone else entered"
        stream.assert_closed()
    after = race(client, view["id"])
    assert (after["status"], after["startedAt"]) == ("finished", None)
    assert after["finishedAt"] is not None
    assert after["entrants"] == []
    assert view["id"] not in [r["id"] for r in client.get("/races/open").json()["races"]]
    bob = Player(client, "Bob")
    assert_problem(join(bob, view["id"]), 409, "race_not_open")


def test_a_running_race_game_ends_as_resigned_and_the_race_finishes_verified(
    client: httpx.Client, ann: Player, bob: Player
) -> None:
    view = started_race(ann, [bob], ruleset="classic", deal={"pool": 25})
    bobs_game = game_of(view, bob)
    for move in winning_line()[:5]:
        assert bob.move(bobs_game, move).status_code == 200
    anns_game = game_of(view, ann)
    for move in winning_line():
        assert ann.move(anns_game, move).status_code == 200
    assert race(client, view["id"])["status"] == "running"  # waiting on Bob's game
    _delete(bob)
    events = _log(client, bobs_game)
    assert events[-1]["type"] == "GameResigned"
    state = replay([event_from_data(e["type"], e["data"]) for e in events])  # the log replays to its end
    assert state.status.value == "resigned"
    assert client.get(f"/games/{bobs_game}").json()["status"] == "resigned"
    after = race(client, view["id"])
    assert after["status"] == "finished"
    assert entrant(after, ann)["place"] == 1
    assert entrant(after, ann)["verified"] is True
    assert entrant(after, bob)["gameStatus"] == "resigned"
    assert entrant(after, bob)["verified"] is True
    assert entrant(after, bob)["moveCount"] == 5
    assert entrant(after, bob)["name"] == "deleted player"


def test_a_game_already_over_is_left_as_it_is(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = started_race(ann, [bob], ruleset="classic", deal={"seed": 8})
    bobs_game = game_of(view, bob)
    assert bob.move(bobs_game, {"type": "draw"}).status_code == 200
    assert bob.move(bobs_game, {"type": "resign"}).status_code == 200
    before = entrant(race(client, view["id"]), bob)
    _delete(bob)
    after = race(client, view["id"])
    assert after["status"] == "running"  # Ann still plays
    assert {k: v for k, v in entrant(after, bob).items() if k != "name"} == {
        k: v for k, v in before.items() if k != "name"}  # nothing added to the game
    anns = ann.client.get(f"/games/{game_of(view, ann)}", headers=ann.auth)
    assert anns.json()["status"] == "playing"
