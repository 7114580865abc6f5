"""Challenges over HTTP as players and bots would try them: make, list, accept (a race of two,
started at once), decline, cancel, expiry, whom a player accepts challenges from, and two server
processes accepting one challenge at once."""

from __future__ import annotations

from functools import partial
from typing import Any

import httpx
import psycopg

from tests.support import assert_problem

from .conftest import Clock, Player
from .test_races_processes import Site, at_once, two_servers  # noqa: F401 (a fixture)
from .test_ratings import bot


def challenge(sender: Player, to: Player, **body: Any) -> dict[str, Any]:
    response = sender.client.post("/challenges", json={"to": to.id, **body}, headers=sender.auth)
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    assert response.headers["location"] == f"/challenges/{made['id']}"
    return made


def pending(player: Player, **params: Any) -> httpx.Response:
    response = player.client.get("/challenges", params=params, headers=player.auth)
    assert response.status_code == 200, response.text
    return response


def test_an_accepted_challenge_starts_a_race_of_the_two(client: httpx.Client, ann: Player, bob: Player) -> None:
    made = challenge(ann, bob, ruleset="classic", rated=True, timeLimitSeconds=600)
    assert made["status"] == "pending"
    assert (made["from"], made["to"]) == ({"id": ann.id, "name": "Ann", "bot": False},
                                          {"id": bob.id, "name": "Bob", "bot": False})
    assert (made["ruleset"], made["rated"], made["timeLimitSeconds"], made["race"]) == ("classic", True, 600, None)
    assert [c["id"] for c in pending(ann).json()["items"]] == [made["id"]]  # both ways
    assert [c["id"] for c in pending(bob).json()["items"]] == [made["id"]]

    accepted = client.post(f"/challenges/{made['id']}/accept", headers=bob.auth)
    assert accepted.status_code == 201, accepted.text
    race = accepted.json()
    assert accepted.headers["location"] == f"/races/{race['id']}"
    assert (race["status"], race["rated"], race["timeLimitSeconds"], race["deal"]) == (
        "running", True, 600, {"source": "secret"})
    assert race["creator"] == ann.id
    assert sorted(e["player"] for e in race["entrants"]) == sorted([ann.id, bob.id])
    assert all(e["game"] is not None for e in race["entrants"])
    assert pending(ann).json()["items"] == [] and pending(bob).json()["items"] == []  # noqa: PT018

    again = client.post(f"/challenges/{made['id']}/accept", headers=bob.auth)
    assert (again.status_code, again.json()["id"]) == (200, race["id"]), "the same race, not a second one"
    assert_problem(client.post(f"/challenges/{made['id']}/decline", headers=bob.auth), 409, "challenge_not_pending")
    assert_problem(client.post(f"/challenges/{made['id']}/cancel", headers=ann.auth), 409, "challenge_not_pending")


def test_only_the_recipient_accepts_or_declines_and_only_the_sender_cancels(
    client: httpx.Client, ann: Player, bob: Player
) -> None:
    cid = Player(client, "Cid")
    made = challenge(ann, bob)
    assert_problem(client.post(f"/challenges/{made['id']}/accept", headers=ann.auth), 403, "forbidden")
    assert_problem(client.post(f"/challenges/{made['id']}/decline", headers=ann.auth), 403, "forbidden")
    assert_problem(client.post(f"/challenges/{made['id']}/cancel", headers=bob.auth), 403, "forbidden")
    assert_problem(client.post(f"/challenges/{made['id']}/accept", headers=cid.auth), 404, "not_found")
    assert_problem(client.post(f"/challenges/{made['id']}/accept"), 401, "unauthorized")
    declined = client.post(f"/challenges/{made['id']}/decline", headers=bob.auth)
    assert (declined.status_code, declined.json()["status"]) == (200, "declined")
    assert_problem(client.post(f"/challenges/{made['id']}/accept", headers=bob.auth), 409, "challenge_not_pending")

    other = challenge(ann, bob)
    cancelled = client.post(f"/challenges/{other['id']}/cancel", headers=ann.auth)
    assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled")
    assert pending(bob).json()["items"] == []
    assert client.get("/races/open").json()["races"] == [], "no race was made"


def test_bad_challenges_are_refused_with_their_own_codes(client: httpx.Client, ann: Player) -> None:
    assert_problem(client.post("/challenges", json={"to": ann.id}, headers=ann.auth), 400, "challenge_to_self")
    unknown = {"to": "00000000-0000-4000-8000-000000000000"}
    assert_problem(client.post("/challenges", json=unknown, headers=ann.auth), 404, "not_found")
    bob = Player(client, "Bob")
    for body in ({"to": bob.id, "timeLimitSeconds": 0}, {"to": bob.id, "ruleset": "bridge"}, {"to": "nope"},
                 {"to": bob.id, "rated": "yes"}, {"to": bob.id, "deal": {"seed": 7}}, {}):
        assert_problem(client.post("/challenges", json=body, headers=ann.auth), 400, "invalid_request")
    assert pending(ann).json()["items"] == []


def test_a_player_chooses_whom_they_accept_challenges_from(client: httpx.Client, ann: Player, bob: Player) -> None:
    robot = bot(client, "Robo")
    settings = client.patch("/players/me", json={"acceptChallengesFrom": "humans"}, headers=ann.auth)
    assert (settings.status_code, settings.json()["acceptChallengesFrom"]) == (200, "humans")
    assert client.get("/players/me", headers=ann.auth).json()["acceptChallengesFrom"] == "humans"
    refused = client.post("/challenges", json={"to": ann.id}, headers=robot.auth)
    assert_problem(refused, 403, "challenge_refused")
    assert "bot" in refused.json()["detail"]
    challenge(bob, ann)  # a person may
    assert client.patch("/players/me", json={"acceptChallengesFrom": "nobody"}, headers=ann.auth).status_code == 200
    assert_problem(client.post("/challenges", json={"to": ann.id}, headers=bob.auth), 403, "challenge_refused")
    assert_problem(client.patch("/players/me", json={"acceptChallengesFrom": "robots"}, headers=ann.auth), 400,
                   "invalid_request")
    assert len(pending(ann).json()["items"]) == 1, "only the one made before"


def test_a_challenge_expires(clocked: httpx.Client, clock: Clock) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    made = challenge(ann, bob)
    assert made["expiresAt"] == "2030-06-15T09:10:00Z"  # CHALLENGE_EXPIRY_SECONDS: 600 by default
    clock.advance(seconds=599)
    assert len(pending(bob).json()["items"]) == 1
    clock.advance(seconds=1)
    assert pending(bob).json()["items"] == []
    assert_problem(clocked.post(f"/challenges/{made['id']}/accept", headers=bob.auth), 409, "challenge_expired")
    assert_problem(clocked.post(f"/challenges/{made['id']}/cancel", headers=ann.auth), 409, "challenge_expired")


def test_the_pending_list_pages_newest_first(client: httpx.Client, ann: Player) -> None:
    others = [Player(client, f"P{n}") for n in range(3)]
    made = [challenge(ann, other)["id"] for other in others] + [challenge(others[0], ann)["id"]]
    first = pending(ann, limit=3)
    assert [c["id"] for c in first.json()["items"]] == made[::-1][:3]
    cursor = first.json()["next"]
    assert first.headers["link"] == f'</challenges?limit=3&cursor={cursor}>; rel="next"'
    rest = pending(ann, limit=3, cursor=cursor).json()
    assert ([c["id"] for c in rest["items"]], rest["next"]) == ([made[0]], None)
    assert_problem(client.get("/challenges", params={"cursor": cursor}, headers=others[1].auth), 400,
                   "invalid_request")


def test_a_player_has_at_most_so_many_challenges_pending(client: httpx.Client, ann: Player, bob: Player) -> None:
    made = [challenge(ann, bob)["id"] for _ in range(20)]  # CHALLENGES_PER_PLAYER: 20 by default
    assert_problem(client.post("/challenges", json={"to": bob.id}, headers=ann.auth), 409, "too_many_challenges")
    challenge(bob, ann)  # the cap is the sender's
    assert client.post(f"/challenges/{made[0]}/cancel", headers=ann.auth).status_code == 200
    challenge(ann, bob)


def test_a_deleted_account_takes_its_challenges_with_it(client: httpx.Client, ann: Player, bob: Player) -> None:
    made = challenge(ann, bob)
    assert client.delete("/players/me", headers=ann.auth).status_code == 204
    assert pending(bob).json()["items"] == []
    assert_problem(client.post(f"/challenges/{made['id']}/accept", headers=bob.auth), 409, "challenge_not_pending")


def test_two_processes_accepting_at_once_start_one_race(two_servers: tuple[str, str], clean_database: str) -> None:  # noqa: F811
    first, second = two_servers
    with httpx.Client(base_url=first, timeout=30) as setup:
        ann, bob = Player(setup, "Ann"), Player(setup, "Bob")
        made = [challenge(ann, bob, ruleset="classic")["id"] for _ in range(3)]
    sites = [Site(url, bob) for url in (first, second)]
    for challenge_id in made:
        path = f"/challenges/{challenge_id}/accept"
        answers = at_once([partial(site.post, path) for site in sites])
        assert sorted(a.status_code for a in answers) == [200, 201], [a.text for a in answers]
        assert answers[0].json()["id"] == answers[1].json()["id"]
    with psycopg.connect(clean_database) as conn:
        races = conn.execute("SELECT count(*), count(DISTINCT id) FROM races").fetchone()
        games = conn.execute("SELECT count(*) FROM games").fetchone()
    assert races == (3, 3)
    assert games == (6,)

