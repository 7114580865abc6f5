"""No response about a game in progress shows a card that has never been face up."""

import re
from typing import Any

import httpx
import pytest

from domain import CODES, shuffled_deck
from domain.deal import SplitMix64

from .conftest import Player

CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")


def face_up(view: dict[str, Any]) -> set[str]:
    table = view["table"]
    cards = set(table["waste"][-1:])
    if table["reserve"]["top"]:
        cards.add(table["reserve"]["top"])
    for pile in table["foundations"].values():
        cards.update(pile)
    for column in table["tableau"]:
        cards.update(column)
    return cards


@pytest.mark.parametrize("ruleset", ["classic", "draw-one", "open-runs"])
def test_random_play_never_reveals_a_face_down_card(ann: Player, ruleset: str) -> None:
    seed = {"classic": 31, "draw-one": 32, "open-runs": 33}[ruleset]
    game = ann.new_game(ruleset=ruleset, deal={"seed": seed})
    game_id = game["id"]
    exposed = face_up(game)
    rng = SplitMix64(seed)
    hidden_probe = iter(CODES)
    for _ in range(60):
        responses: list[httpx.Response] = []
        legal = ann.client.get(f"/games/{game_id}/legal-moves")
        moves = [m for m in legal.json()["moves"] if m["type"] != "resign"]
        move = moves[rng.below(len(moves))]
        played = ann.move(game_id, move)
        assert played.status_code == 200, played.text
        view = played.json()["game"]
        if view["status"] != "playing":
            break
        exposed |= face_up(view)
        # An illegal move naming some card: its error must not place a hidden card either.
        probe = next(hidden_probe, "AS")
        responses.append(ann.move(game_id, {"type": "move", "card": probe, "to": "tableau-1"}))
        responses.append(played)
        responses.append(legal)
        responses.append(ann.client.get(f"/games/{game_id}"))
        responses.append(ann.client.get(f"/games/{game_id}/hints"))
        responses.append(ann.client.get(f"/games/{game_id}/events", params={"limit": 1000}))
        responses.append(ann.client.get(f"/games/{game_id}/events", headers={"Accept": "application/x-ndjson"}))
        responses.append(ann.client.get(f"/games/{game_id}/states/{view['version']}"))
        for response in responses:
            shown = set(CARD.findall(response.text))
            if response.status_code >= 400:
                shown.discard(probe)  # the error may repeat the card the client named
            never_seen = shown - exposed
            assert not never_seen, (response.request.url, never_seen)
    deck = {CODES[c] for c in shuffled_deck(seed)}
    assert len(deck - exposed) > 0, "the test should end with cards still hidden"
