import json
from typing import Any

import httpx
import pytest

from domain import CODES, shuffled_deck
from domain.deal import SplitMix64

from .conftest import Player


def play_a_while(player: Player, game_id: str, steps: int) -> list[dict[str, Any]]:
    """Play the first hint (or draw) ``steps`` times; the views after each move."""
    views = []
    for _ in range(steps):
        hints = player.client.get(f"/games/{game_id}/hints").json()["hints"]
        if not hints:
            break
        response = player.move(game_id, hints[0]["move"])
        assert response.status_code == 200, response.text
        views.append(response.json()["game"])
        if views[-1]["status"] != "playing":
            break
    return views


def test_events_page_with_after_and_limit(ann: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 9})
    play_a_while(ann, game["id"], 6)
    version = ann.client.get(f"/games/{game['id']}").json()["version"]
    page = ann.client.get(f"/games/{game['id']}/events", params={"limit": 3}).json()
    assert [e["version"] for e in page["events"]] == [1, 2, 3]
    assert page["nextAfter"] == 3
    rest = ann.client.get(f"/games/{game['id']}/events", params={"after": 3, "limit": 1000}).json()
    assert [e["version"] for e in rest["events"]] == list(range(4, version + 1))
    assert rest["nextAfter"] is None
    assert all({"version", "type", "data", "recordedAt"} <= set(e) for e in page["events"])


def test_events_as_ndjson(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 9})
    ann.move(game["id"], {"type": "draw"})
    response = ann.client.get(f"/games/{game['id']}/events", headers={"Accept": "application/x-ndjson"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [e["type"] for e in lines] == ["GameDealt", "StockDrawn"]



def test_the_ndjson_export_is_the_accept_form_whatever_accept_says_but_text(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 9})
    play_a_while(ann, game["id"], 6)
    by_accept = ann.client.get(
        f"/games/{game['id']}/events?after=2&limit=3", headers={"Accept": "application/x-ndjson"}
    )
    for accept, media_type in [(None, "application/x-ndjson"), ("application/json", "application/x-ndjson"),
                               ("text/plain", "text/plain")]:  # fmt: skip
        exported = ann.client.get(
            f"/games/{game['id']}/events.ndjson?after=2&limit=3", headers={"Accept": accept} if accept else {}
        )
        assert exported.status_code == 200, accept
        assert exported.headers["content-type"].startswith(media_type), accept
        assert exported.content == by_accept.content
    lines = [json.loads(line) for line in by_accept.text.splitlines()]
    page = ann.client.get(f"/games/{game['id']}/events?after=2&limit=3").json()["events"]
    assert lines == page
    assert [event["version"] for event in lines] == [3, 4, 5]

def test_the_deck_is_withheld_while_playing_and_shown_after(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 77})
    ann.move(game["id"], {"type": "draw"})
    first = ann.client.get(f"/games/{game['id']}/events").json()["events"]
    assert "deck" not in first[0]["data"]
    assert first[1]["data"]["cards"] == ann.client.get(f"/games/{game['id']}").json()["table"]["waste"]  # face up
    ann.move(game["id"], {"type": "resign"})
    after = ann.client.get(f"/games/{game['id']}/events").json()["events"]
    assert after[0]["data"]["deck"] == [CODES[c] for c in shuffled_deck(77)]
    assert len(after[1]["data"]["cards"]) == 3
    view = ann.client.get(f"/games/{game['id']}").json()["table"]
    assert len(view["stock"]["cards"]) == 31
    assert len(view["reserve"]["cards"]) == 13


@pytest.mark.smoke
def test_every_past_state_is_a_replay_of_the_log(ann: Player) -> None:
    game = ann.new_game(ruleset="open-runs", deal={"seed": 21})
    views = [game, *play_a_while(ann, game["id"], 15)]
    for view in views:
        response = ann.client.get(f"/games/{game['id']}/states/{view['version']}")
        assert response.status_code == 200
        past = response.json()
        assert past["table"] == view["table"]
        assert past["version"] == view["version"]
        assert past["moveCount"] == view["moveCount"]


def test_a_state_outside_the_log_is_404(ann: Player, client: httpx.Client) -> None:
    game = ann.new_game(deal={"seed": 21})
    assert client.get(f"/games/{game['id']}/states/2").status_code == 404
    assert client.get(f"/games/{game['id']}/states/0").status_code == 400


def test_every_past_state_is_the_view_the_game_had_then(ann: Player) -> None:
    """Past states after the stored snapshot start from it, older ones replay from the deal: both
    must give exactly the view the game showed at that version (a walk past several snapshots,
    undos included)."""
    game = ann.new_game(ruleset="open-runs", deal={"seed": 21})
    seen = {1: ann.client.get(f"/games/{game['id']}").json()}
    rng = SplitMix64(21)
    for step in range(60):
        moves = [m for m in ann.client.get(f"/games/{game['id']}/legal-moves").json()["moves"] if m["type"] != "resign"]
        move = {"type": "undo"} if step % 7 == 6 else moves[rng.below(len(moves))]
        played = ann.move(game["id"], move)
        if played.status_code != 200:
            continue
        view = played.json()["game"]
        seen[view["version"]] = view
        if view["status"] != "playing":
            break
    assert max(seen) > 2 * 16, "the walk should pass several snapshots"
    for version, view in seen.items():
        assert ann.client.get(f"/games/{game['id']}/states/{version}").json() == view, version
