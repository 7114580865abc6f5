"""Caching by RFC 9110 (service.http.caching): every JSON read carries an ETag, If-None-Match is
compared weakly and answers 304 without spending the read budget, If-Match on a move is compared
strongly, the ETag changes whenever the representation does (a daily game's deck shown once its
date is over included), and Cache-Control / Vary say who may keep what."""

from __future__ import annotations

import httpx
import pytest

from tests.support import assert_problem

from .conftest import Clock, Player, play_line
from .test_stats import daily_line

READS = ["/rulesets", "/rulesets/classic/versions/1", "/deals/pool", "/stats", "/lessons"]


@pytest.mark.parametrize("path", READS)
def test_every_json_read_answers_304_for_its_current_etag(client: httpx.Client, path: str) -> None:
    first = client.get(path)
    assert first.status_code == 200
    tag = first.headers["etag"]
    assert "Authorization" in first.headers["vary"]
    again = client.get(path, headers={"If-None-Match": tag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == tag
    weak = client.get(path, headers={"If-None-Match": f'"other", W/{tag}'})
    assert weak.status_code == 304, "If-None-Match compares weakly"
    assert client.get(path, headers={"If-None-Match": '"something-else"'}).status_code == 200


def test_a_game_view_revalidates_and_changes_tag_when_it_changes(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 5})
    path = f"/games/{game['id']}"
    view = client.get(path)
    assert view.headers["etag"] == '"1"'
    assert view.headers["cache-control"] == "no-cache"
    assert client.get(path, headers={"Authorization": f"Bearer {ann.token}"}).headers["cache-control"] == (
        "private, no-cache"
    )
    assert client.get(path, headers={"If-None-Match": '"1"'}).status_code == 304
    assert ann.move(game["id"], {"type": "draw"}).status_code == 200
    assert client.get(path, headers={"If-None-Match": '"1"'}).status_code == 200
    events = client.get(f"{path}/events")
    assert client.get(f"{path}/events", headers={"If-None-Match": events.headers["etag"]}).status_code == 304
    ann.move(game["id"], {"type": "draw"})
    assert client.get(f"{path}/events", headers={"If-None-Match": events.headers["etag"]}).status_code == 200


def test_if_match_compares_strongly(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 6})
    weak = ann.move(game["id"], {"type": "draw"}, **{"If-Match": 'W/"1"'})
    assert_problem(weak, 412, "version_conflict")
    assert "weak" in weak.json()["detail"]
    assert client.get(f"/games/{game['id']}").json()["version"] == 1, "nothing was played"
    assert ann.move(game["id"], {"type": "draw"}, **{"If-Match": '"1"'}).status_code == 200


def test_a_settled_past_state_is_immutable_and_a_ruleset_version_too(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 7})
    ann.move(game["id"], {"type": "draw"})
    state = client.get(f"/games/{game['id']}/states/1")
    assert "immutable" in state.headers["cache-control"]
    assert "immutable" in client.get("/rulesets/classic/versions/1").headers["cache-control"]
    assert "immutable" not in client.get("/rulesets/classic").headers.get("cache-control", "")


def test_the_tag_changes_when_a_finished_daily_game_shows_its_deck(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann = Player(clocked, "Ann")
    game = ann.new_game(deal={"daily": "today"})
    play_line(ann, game["id"], daily_line(clocked, clean_database)[:3])
    assert ann.move(game["id"], {"type": "resign"}).status_code == 200
    own = {"Authorization": f"Bearer {ann.token}"}
    during = clocked.get(f"/games/{game['id']}", headers=own)
    assert during.headers["etag"].endswith('-hidden"')
    assert "cards" not in during.json()["table"]["stock"]
    clock.advance(days=1)
    after = clocked.get(f"/games/{game['id']}", headers={**own, "If-None-Match": during.headers["etag"]})
    assert after.status_code == 200, "the deck is shown now: a new representation, a new tag"
    assert after.headers["etag"] == f'"{after.json()["version"]}"'
    assert "cards" in after.json()["table"]["stock"]
