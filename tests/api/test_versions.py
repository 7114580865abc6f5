"""API versions over HTTP: every answer says its version, a request may pin one, an unknown one
is refused before anything runs, and GET /versions lists them (service/http/versions.py)."""

from __future__ import annotations

from datetime import date

import httpx
import pytest

from service.http.versions import NEWEST, OLDEST, VERSIONS, Version
from tests.support import assert_problem

from .conftest import Player


def test_every_answer_says_its_version_and_varies_on_it(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 100})
    answers = [
        client.get("/rulesets"),
        client.get(f"/games/{game['id']}"),
        ann.move(game["id"], {"type": "draw"}),  # the move's own route
        client.get("/games/00000000-0000-4000-8000-000000000000"),  # a problem
        client.post("/players", json={}),
    ]
    for answer in answers:
        assert answer.headers["api-version"] == OLDEST.name, answer.request.url
        assert "Api-Version" in answer.headers.get_list("vary"), answer.request.url
        assert answer.headers["deprecation"] == "@1796428800", answer.request.url  # 2026-12-05, the next one's day
        assert answer.headers["sunset"] == "Sat, 05 Jun 2027 00:00:00 GMT", answer.request.url
    newest = client.get("/rulesets", headers={"Api-Version": NEWEST.name})
    assert newest.headers["api-version"] == NEWEST.name
    assert "deprecation" not in newest.headers
    assert "sunset" not in newest.headers


def test_a_pinned_version_is_served(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 100})
    moved = ann.move(game["id"], {"type": "draw"}, **{"Api-Version": NEWEST.name})
    assert moved.status_code == 200
    assert moved.headers["api-version"] == NEWEST.name


@pytest.mark.parametrize(("value", "words"), [
    ("1999-01-01", "has no version '1999-01-01'"),
    ("v2", "must be a version's date, YYYY-MM-DD"),
    ("", "must be a version's date"),
])
def test_an_unknown_version_is_refused_and_changes_nothing(
    client: httpx.Client, ann: Player, value: str, words: str
) -> None:
    game = ann.new_game(deal={"seed": 100})
    refused = ann.move(game["id"], {"type": "draw"}, **{"Api-Version": value})
    assert_problem(refused, 400, "unsupported_version")
    assert words in refused.json()["detail"]
    assert client.get(f"/games/{game['id']}").json()["version"] == 1  # the draw was not made
    before = client.get(f"/players/{ann.id}/games").json()["games"]
    assert_problem(client.post("/games", json={"deal": {"seed": 1}}, headers={**ann.auth, "Api-Version": value}),
                   400, "unsupported_version")
    assert client.get(f"/players/{ann.id}/games").json()["games"] == before


def test_the_versions_are_listed(client: httpx.Client) -> None:
    listed = client.get("/versions")
    assert listed.status_code == 200
    body = listed.json()
    assert (body["default"], body["newest"]) == (OLDEST.name, NEWEST.name)
    assert [v["version"] for v in body["versions"]] == [v.name for v in VERSIONS]
    assert all(v["changes"] for v in body["versions"])


def test_a_deprecated_version_carries_its_deprecation_and_sunset() -> None:
    old = Version("2026-01-01", ("a test",), deprecated=date(2026, 6, 1), sunset=date(2026, 12, 1))
    headers = dict(old.headers)
    assert headers[b"deprecation"] == b"@1780272000"  # RFC 9745: an epoch second
    assert headers[b"sunset"] == b"Tue, 01 Dec 2026 00:00:00 GMT"  # RFC 8594: an HTTP date
    assert b"deprecation" not in dict(NEWEST.headers)
    assert OLDEST.sunset is not None
    assert OLDEST.deprecated is not None
    assert (OLDEST.sunset - OLDEST.deprecated).days >= 182  # the policy: at least six months
