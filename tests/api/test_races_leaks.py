"""No leak between entrants: a random race of three players played to the end. After each move,
every answer each player can get (their own game in every form, the others' games in every form,
the race and its stream, the players' game lists and stats, illegal moves naming any card) shows
only cards that player has seen face up in their own game; the race never shows a card at all."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from domain import CODES
from domain.deal import SplitMix64

from .conftest import Player
from .race_support import CARD, game_of, started_race
from .test_hidden_cards import face_up, foundation_needs
from .test_races import reads

ENDS_AFTER = {"Ann": 14, "Bob": 28, "Cid": 42}  # moves each plays before resigning: their games end apart


class Entrant:
    def __init__(self, player: Player, name: str, game: str) -> None:
        self.player, self.name, self.game = player, name, game
        self.exposed: set[str] = set()
        self.moves = 0
        self.over = False

    def see(self, view: dict[str, Any]) -> None:
        self.exposed |= face_up(view)


def own_answers(entrant: Entrant, rng: SplitMix64, step: int) -> list[httpx.Response]:
    """Every way the player can look at their own game now."""
    client, game, auth = entrant.player.client, entrant.game, entrant.player.auth
    view = client.get(f"/games/{game}", headers=auth)
    assert view.status_code == 200, view.text
    version = view.json()["version"]
    answers = [
        view,
        client.get(f"/games/{game}/legal-moves", headers=auth),
        client.get(f"/games/{game}/hints", headers=auth),
        client.get(f"/games/{game}/events", params={"limit": 1000}, headers=auth),
        client.get(f"/games/{game}/events", headers={**auth, "Accept": "application/x-ndjson"}),
        client.get(f"/games/{game}/states/{version}", headers=auth),
        client.get(f"/games/{game}/states/{1 + rng.below(version)}", headers=auth),
    ]
    if step % 10 == 0:  # the stream: its first view, and every event from the start
        with client.stream("GET", f"/games/{game}/stream", params={"after": 0}, headers=auth,
                           timeout=httpx.Timeout(5)) as stream:
            assert stream.status_code in (200, 204)
            text = ""
            if stream.status_code == 200:
                for line in stream.iter_lines():
                    text += line + "\n"
                    if line.startswith("id: ") and int(line[4:]) >= version:
                        break
            answers.append(httpx.Response(200, text=text, request=stream.request))
    return [a for a in answers if a.status_code < 500]


def probe_errors(entrant: Entrant, probe: str) -> list[httpx.Response]:
    """Illegal moves naming some card: their errors must not say where a hidden card is."""
    answers = []
    for target in ("tableau-2", "foundation"):
        response = entrant.player.move(entrant.game, {"type": "move", "card": probe, "to": target})
        if response.status_code == 200:  # the probe was a legal move: it was played
            entrant.moves += 1
            entrant.see(response.json()["game"])
        answers.append(response)
    return answers


def race_answers(client: httpx.Client, race_id: str, auth: dict[str, str]) -> list[str]:
    texts = [client.get(f"/races/{race_id}", headers=auth).text]
    with client.stream("GET", f"/races/{race_id}/stream", headers=auth, timeout=httpx.Timeout(5)) as stream:
        for line in stream.iter_lines():
            texts.append(line)
            if line.startswith("data: "):
                break
    return texts


@pytest.mark.parametrize(("ruleset", "seed"), [("classic", 4101), ("open-runs", 4102)])
def test_a_random_race_of_three_never_shows_one_entrant_anothers_cards(
    client: httpx.Client, ruleset: str, seed: int
) -> None:
    players = {name: Player(client, name) for name in ENDS_AFTER}
    view = started_race(players["Ann"], [players["Bob"], players["Cid"]], ruleset=ruleset, deal={"seed": seed},
                        maxEntrants=3)
    race_id = view["id"]
    entrants = [Entrant(p, name, game_of(view, p)) for name, p in players.items()]
    for entrant in entrants:
        entrant.see(client.get(f"/games/{entrant.game}", headers=entrant.player.auth).json())
    rng = SplitMix64(seed)
    probes = iter(CODES * 4)
    asked_solver = False
    step = 0
    while not all(e.over for e in entrants):
        step += 1
        for entrant in (e for e in entrants if not e.over):
            auth = entrant.player.auth
            answers: list[httpx.Response] = []
            # a random legal move (now and then an undo); the last one resigns
            if entrant.moves >= ENDS_AFTER[entrant.name]:
                move: dict[str, Any] = {"type": "resign"}
            else:
                legal = client.get(f"/games/{entrant.game}/legal-moves", headers=auth).json()["moves"]
                options = [m for m in legal if m["type"] != "resign"]
                move = {"type": "undo"} if entrant.moves and rng.below(8) == 0 else options[rng.below(len(options))]
            played = entrant.player.move(entrant.game, move)
            if move["type"] == "undo" and played.status_code == 422:
                answers.append(played)  # nothing to undo: try a draw-or-whatever next round
            else:
                assert played.status_code == 200, played.text
                entrant.moves += 1
                entrant.see(played.json()["game"])
                answers.append(played)
                entrant.over = played.json()["game"]["status"] != "playing"
            if not entrant.over:
                probe = next(probes)
                answers += probe_errors(entrant, probe)
            else:
                probe = ""
            if entrant.name == "Bob" and step == 5 and not asked_solver:
                solver = client.get(f"/games/{entrant.game}/hints", params={"solver": "true"}, headers=auth)
                assert solver.status_code == 409, solver.text  # no solver oracle while the race runs
                answers.append(solver)
                asked_solver = True
            answers += own_answers(entrant, rng, step)
            current = client.get(f"/games/{entrant.game}", headers=auth).json()
            race_now = client.get(f"/races/{race_id}").json()["status"]
            for other in entrants:
                if other is entrant:
                    continue
                for response in reads(client, other.game, auth):
                    if race_now != "finished":
                        assert response.status_code == 403, (entrant.name, response.request.url, response.status_code)
                    answers.append(response)
                answers.append(entrant.player.move(other.game, {"type": "draw"}))  # 403: not their game
                answers.append(client.get(f"/players/{other.player.id}/games", headers=auth))
                answers.append(client.get(f"/players/{other.player.id}/stats", headers=auth))
            answers.append(client.get(f"/players/{entrant.player.id}/games", headers=auth))
            for text in race_answers(client, race_id, auth):
                assert not CARD.search(text), ("a race answer shows a card", text[:300])
            if race_now == "finished":
                continue  # after the race its games are public: nothing left to keep apart
            for response in answers:
                shown = set(CARD.findall(response.text))
                if response.status_code >= 400:
                    shown.discard(probe)  # an error may repeat the card the client named
                    shown -= foundation_needs(current)
                never_seen = shown - entrant.exposed
                assert not never_seen, (entrant.name, response.request.url, response.text[-300:], never_seen)
    final = client.get(f"/races/{race_id}").json()
    assert final["status"] == "finished"
    assert all(e["verified"] for e in final["entrants"])
    assert not any(e["assisted"] for e in final["entrants"]), "no solver hint answers while the race runs"
    assert final["deal"] == {"source": "seed", "seed": seed}  # every game over: the deal is named now
    deck = {CODES[c] for c in range(52)}
    assert any(deck - e.exposed for e in entrants), "the test should end with cards some player never saw"
