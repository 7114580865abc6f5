"""Leaving and cancelling an open race over HTTP: ``DELETE /races/{id}/entries/me`` and
``POST /races/{id}/cancel``. A creator who leaves cancels the race; every entrant's race stream
ends with the cancelled view; the refusals change nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from tests.support import assert_problem

from .conftest import Player
from .race_support import create_race, join, race, start, started_race
from .test_races import next_message
from .test_streams import EventStream

NEWEST = {"Api-Version": "2026-12-05"}


def _leave(player: Player, race_id: str, **headers: str) -> httpx.Response:
    return player.client.delete(f"/races/{race_id}/entries/me", headers={**player.auth, **headers})


def _cancel(player: Player, race_id: str, **headers: str) -> httpx.Response:
    return player.client.post(f"/races/{race_id}/cancel", headers={**player.auth, **headers})


def _newest(client: httpx.Client, race_id: str) -> dict[str, Any]:
    response = client.get(f"/races/{race_id}", headers=NEWEST)
    assert response.status_code == 200, response.text
    view: dict[str, Any] = response.json()
    return view


def _stream_ended_by(server_url: str, race_id: str, change: Callable[[], httpx.Response], reason: str) -> None:
    """Watch the race's stream (an entrant's view), make ``change``, and see the stream end cancelled."""
    with httpx.Client(base_url=server_url, timeout=10) as watcher, watcher.stream(
        "GET", f"/races/{race_id}/stream", headers=NEWEST, timeout=httpx.Timeout(10)
    ) as response:
        stream = EventStream(response)
        assert next_message(stream)["view"]["status"] == "open"
        changed = change()
        assert changed.status_code == 200, changed.text
        assert changed.json()["status"] == "cancelled"
        message = next_message(stream)
        assert message["event"] == "end"
        assert message["view"]["status"] == "cancelled"
        assert message["view"]["cancelledReason"] == reason
        stream.assert_closed()


def _entrant_ids(view: dict[str, Any]) -> list[str]:
    return [e["player"]["id"] for e in view["entrants"]]


def test_an_entrant_leaves_an_open_race_and_may_join_again(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 3})
    assert join(bob, view["id"]).status_code == 201
    left = _leave(bob, view["id"], **NEWEST)
    assert left.status_code == 200, left.text
    assert left.json()["status"] == "open"
    assert _entrant_ids(left.json()) == [ann.id]
    assert join(bob, view["id"]).status_code == 201  # a seat again
    assert _entrant_ids(_newest(client, view["id"])) == [ann.id, bob.id]


def test_the_creator_cancels_an_open_race_and_every_stream_ends(
    client: httpx.Client, server_url: str, ann: Player, bob: Player
) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 4})
    assert join(bob, view["id"]).status_code == 201
    _stream_ended_by(server_url, view["id"], lambda: _cancel(ann, view["id"], **NEWEST),
                     "its creator cancelled it before the start")
    after = _newest(client, view["id"])
    assert (after["status"], after["startedAt"]) == ("cancelled", None)
    assert _entrant_ids(after) == [ann.id, bob.id]  # who was in it stays shown
    assert race(client, view["id"])["status"] == "finished"  # the oldest version's word for it
    assert view["id"] not in [r["id"] for r in client.get("/races/open").json()["races"]]
    assert_problem(join(Player(client, "Carol"), view["id"]), 409, "race_not_open")
    assert_problem(start(ann, view["id"]), 409, "race_not_open")


def test_a_creator_who_leaves_cancels_the_race(
    client: httpx.Client, server_url: str, ann: Player, bob: Player
) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 5})
    assert join(bob, view["id"]).status_code == 201
    _stream_ended_by(server_url, view["id"], lambda: _leave(ann, view["id"], **NEWEST),
                     "its creator left before the start")
    after = _newest(client, view["id"])
    assert _entrant_ids(after) == [bob.id]
    assert after["creator"]["id"] == ann.id


def test_leaving_a_race_one_is_not_in_is_refused(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 6})
    before = _newest(client, view["id"])
    assert_problem(_leave(bob, view["id"]), 409, "not_in_race")
    assert _newest(client, view["id"]) == before


def test_cancelling_a_race_one_did_not_create_is_refused(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 7})
    assert join(bob, view["id"]).status_code == 201
    before = _newest(client, view["id"])
    assert_problem(_cancel(bob, view["id"]), 403, "not_race_creator")
    assert _newest(client, view["id"]) == before


def test_neither_once_the_race_has_started(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = started_race(ann, [bob], ruleset="classic", deal={"seed": 8})
    before = _newest(client, view["id"])
    assert_problem(_leave(bob, view["id"]), 409, "race_not_open")
    assert_problem(_leave(ann, view["id"]), 409, "race_not_open")
    assert_problem(_cancel(ann, view["id"]), 409, "race_not_open")
    assert _newest(client, view["id"]) == before


def test_leaving_and_cancelling_need_a_token_and_a_race(client: httpx.Client, ann: Player) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 9})
    assert_problem(client.delete(f"/races/{view['id']}/entries/me"), 401, "unauthorized")
    assert_problem(client.post(f"/races/{view['id']}/cancel"), 401, "unauthorized")
    missing = "00000000-0000-4000-8000-000000000000"
    assert_problem(_leave(ann, missing), 404, "not_found")
    assert_problem(_cancel(ann, missing), 404, "not_found")
    assert _newest(client, view["id"])["status"] == "open"
