"""No response about a game in progress shows a card that has never been face up."""

import re
from typing import Any

import httpx
import pytest

from domain import CODES, shuffled_deck
from domain.deal import SplitMix64

from .conftest import Player
from .test_streams import open_stream

CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")


def face_up(view: dict[str, Any]) -> set[str]:
    table = view["table"]
    cards = set(table["waste"])  # face up and listed whole
    if table["reserve"]["top"]:
        cards.add(table["reserve"]["top"])
    for pile in table["foundations"].values():
        cards.update(pile)
    for column in table["tableau"]:
        cards.update(column)
    return cards


RANKS = "A23456789TJQK"


def foundation_needs(view: dict[str, Any]) -> set[str]:
    """The card each foundation takes next: known from the table, wherever that card lies (an
    error may say "it takes TH next" without saying where TH is)."""
    base = view["baseRank"]
    needs = set()
    for suit, pile in view["table"]["foundations"].items():
        rank = base if not pile else RANKS[(RANKS.index(pile[-1][0]) + 1) % 13]
        needs.add(rank + suit)
    return needs


def stream_texts(client: httpx.Client, game_id: str, version: int) -> list[str]:
    """The first message of a live stream (the view), and every event from the start (?after=0)."""
    texts = []
    with open_stream(client, game_id) as stream:
        first = stream.next_event()
        assert first.event == "view"
        assert first.data is not None
        texts.append(first.data)
    with open_stream(client, game_id, params={"after": 0}) as stream:
        while True:
            message = stream.next_event()
            assert message.data is not None
            texts.append(message.data)
            if message.event == "end" or message.id == str(version):
                break
    return texts


@pytest.mark.parametrize("ruleset", ["classic", "draw-one", "open-runs"])
def test_random_play_never_reveals_a_face_down_card(ann: Player, ruleset: str) -> None:
    """Random legal moves and undos; after each, every way of looking at the game (the reply, the
    view, legal moves, hints, the solver's hint once, the events as JSON and NDJSON, a random past
    state, live streams now and then, and errors of illegal moves naming any card) shows only
    cards that have been face up at some point of the game."""
    seed = {"classic": 31, "draw-one": 32, "open-runs": 33}[ruleset]
    game = ann.new_game(ruleset=ruleset, deal={"seed": seed})
    game_id = game["id"]
    exposed = face_up(game)
    rng = SplitMix64(seed)
    hidden_probe = iter(CODES)
    for step in range(60):
        responses: list[httpx.Response] = []
        texts: list[str] = []  # stream messages
        legal = ann.client.get(f"/games/{game_id}/legal-moves")
        moves = [m for m in legal.json()["moves"] if m["type"] != "resign"]
        move = {"type": "undo"} if step and rng.below(8) == 0 else moves[rng.below(len(moves))]
        played = ann.move(game_id, move)
        if move["type"] == "undo" and played.status_code == 422:  # walked back to the deal
            responses.append(played)
            played = ann.move(game_id, moves[rng.below(len(moves))])
        assert played.status_code == 200, played.text
        view = played.json()["game"]
        if view["status"] != "playing":
            break
        exposed |= face_up(view)
        table = view["table"]
        on_table = (table["stock"]["count"] + table["reserve"]["count"] + len(table["waste"])
                    + sum(map(len, table["foundations"].values())) + sum(map(len, table["tableau"])))
        assert on_table == 52, "the waste is listed whole: every card is counted or shown"
        # Illegal moves naming some card: their errors must not place a hidden card either.
        probe = next(hidden_probe, "AS")
        for target in ("tableau-1", "foundation"):
            probed = ann.move(game_id, {"type": "move", "card": probe, "to": target})
            if probed.status_code == 200:  # the probe happened to be a legal move: it was played
                view = probed.json()["game"]
                exposed |= face_up(view)
            responses.append(probed)
        if view["status"] != "playing":
            break
        responses.append(played)
        responses.append(legal)
        responses.append(ann.client.get(f"/games/{game_id}"))
        responses.append(ann.client.get(f"/games/{game_id}/hints"))
        if step == 20:
            solver = ann.client.get(f"/games/{game_id}/hints", params={"solver": "true"}, headers=ann.auth)
            assert solver.status_code == 200, solver.text
            responses.append(solver)
            view = ann.client.get(f"/games/{game_id}").json()  # the hint was recorded as an event
        responses.append(ann.client.get(f"/games/{game_id}/events", params={"limit": 1000}))
        responses.append(ann.client.get(f"/games/{game_id}/events", headers={"Accept": "application/x-ndjson"}))
        responses.append(ann.client.get(f"/games/{game_id}/states/{view['version']}"))
        responses.append(ann.client.get(f"/games/{game_id}/states/{1 + rng.below(view['version'])}"))
        if step % 15 == 0:
            texts += stream_texts(ann.client, game_id, view["version"])
        for response in responses:
            shown = set(CARD.findall(response.text))
            if response.status_code >= 400:
                shown.discard(probe)  # the error may repeat the card the client named
                shown -= foundation_needs(view)
            never_seen = shown - exposed
            assert not never_seen, (response.request.url, response.request.content, response.text[-300:], never_seen)
        for text in texts:
            never_seen = set(CARD.findall(text)) - exposed
            assert not never_seen, ("stream", never_seen)
    deck = {CODES[c] for c in shuffled_deck(seed)}
    assert len(deck - exposed) > 0, "the test should end with cards still hidden"
