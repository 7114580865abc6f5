"""Names a reader could mistake for another, over HTTP: look-alikes of the reserved name (compared by
Unicode TR39 skeleton) and invisible or text-direction characters are refused with their own codes,
and nothing is made."""

from __future__ import annotations

import httpx
import psycopg
import pytest

from tests.support import assert_problem

from .conftest import Player

LOOK_ALIKES = [
    "deleted player",
    "Deleted Player",
    "DELETED  PLAYER",
    "d\u0435leted player",  # Cyrillic small ie
    "d\u0435l\u0435t\u0435d \u0440l\u0430y\u0435r",  # Cyrillic e, p, a
    "\uff44\uff45\uff4c\uff45\uff54\uff45\uff44\u3000\uff50\uff4c\uff41\uff59\uff45\uff52",  # fullwidth
    "de1eted p1ayer",  # digit one for l
    "\u217eeleted player",  # SMALL ROMAN NUMERAL FIVE HUNDRED for d
]

HIDDEN = [
    ("Ann\u200bLee", "U+200B zero width space"),
    ("\u202eAnn", "U+202E right-to-left override"),
    ("Ann\u2066Lee\u2069", "U+2066 left-to-right isolate"),
    ("An\u200dn", "U+200D zero width joiner"),
    ("\ufeffAnn", "U+FEFF zero width no-break space"),
    ("Ann\u3164", "U+3164 hangul filler"),
    ("Ann\ufe0f", "U+FE0F variation selector-16"),
    ("\u2800", "U+2800 braille pattern blank"),
]


def _players(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM players").fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_the_reserved_name_and_its_look_alikes_are_refused(
    client: httpx.Client, clean_database: str, name: str
) -> None:
    response = client.post("/players", json={"name": name})
    body = assert_problem(response, 400, "name_reserved")
    assert "'deleted player', the name deleted accounts keep; choose another" in body["detail"]
    assert ("this name is 'deleted player'" in body["detail"]) == (name.casefold().split() == ["deleted", "player"])
    assert name == "deleted player" or name not in body["detail"]  # a look-alike is never echoed
    assert _players(clean_database) == 0


@pytest.mark.parametrize(("name", "named"), HIDDEN)
def test_invisible_and_direction_characters_are_refused(
    client: httpx.Client, clean_database: str, name: str, named: str
) -> None:
    response = client.post("/players", json={"name": name})
    body = assert_problem(response, 400, "name_invisible_characters")
    assert body["detail"].startswith("a player name may not hold invisible or text-direction characters")
    assert named in body["detail"]
    assert _players(clean_database) == 0


def test_a_token_name_may_not_hide_characters_either(client: httpx.Client, ann: Player) -> None:
    response = client.post("/players/me/tokens", headers=ann.auth,
                           json={"name": "phone\u202egnp.exe", "scopes": ["play"]})
    body = assert_problem(response, 400, "name_invisible_characters")
    assert "a token name may not hold" in body["detail"]
    assert "U+202E right-to-left override" in body["detail"]
    registered = client.post("/players", json={"name": "Bob", "tokenName": "laptop\u200b"})
    assert_problem(registered, 400, "name_invisible_characters")


@pytest.mark.parametrize("name", ["Zoë", "Ζωή", "李小龍", "Ann-Marie O'Neil", "deleted", "player", "deleted players",
                                  "e\u0301mile", "\U0001f0a1 Ace"])
def test_names_that_look_like_no_reserved_one_are_taken(client: httpx.Client, name: str) -> None:
    response = client.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    assert response.json()["name"] == name
