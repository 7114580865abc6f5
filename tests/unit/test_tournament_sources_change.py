"""The 2026-12-04 view of tournament games and stats (service/http/changes/tournament_sources.py)."""

from __future__ import annotations

from service.http.changes import EVENTS, GAME, PLAYER_GAMES
from service.http.changes.tournament_sources import TournamentSources

TOURNAMENT = {"source": "tournament", "tournament": "6f1c2f4e-5f55-4f3a-9d49-2b8f2b0c1d10", "deal": 2}
CHANGE = TournamentSources()


def test_a_tournament_games_deal_is_a_deck_in_every_place_it_shows() -> None:
    assert CHANGE.downgrade_reply(GAME, 200, {"id": "g", "table": {}, "deal": TOURNAMENT})["deal"] == {
        "source": "deck"}
    listed = CHANGE.downgrade_reply(PLAYER_GAMES, 200, {"items": [{"deal": TOURNAMENT}, {"deal": {"source": "seed",
                                                                                                  "seed": 3}}]})
    assert [item["deal"] for item in listed["items"]] == [{"source": "deck"}, {"source": "seed", "seed": 3}]
    dealt = {"type": "GameDealt", "data": {"deal": TOURNAMENT, "deck": []}}
    assert CHANGE.downgrade_reply(EVENTS, 200, {"items": [dealt]})["items"][0]["data"]["deal"] == {"source": "deck"}
    assert dealt["data"]["deal"] == TOURNAMENT  # never changed in place


def test_a_refusal_is_left_as_it_is() -> None:
    problem = {"code": "not_found"}
    assert CHANGE.downgrade_reply(GAME, 404, problem) is problem
