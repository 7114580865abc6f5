"""A tournament's standings: per entrant the deals won, the seconds those wins took and the moves
made, their places, and the check that makes a place final.

Order (API.md, "Tournaments"): more deals won first; then fewer total seconds of the won games
(each from its deal to its winning move); then fewer total moves (``moveCount`` over every game
the entrant was dealt: an undo and the move it took back both count, so exploring costs rank).
Entrants equal on all three share a place (1, 2, 2, 4). A final place counts only once every game
of the entrant has been replayed from its stored log through the rules (``verified_standing``,
as races check theirs), cut where the tournament ended: moves after the end count for nothing.
An entrant with a log that does not replay is left unplaced.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.verify import Unverified

from ..deals.contests import TOURNAMENT, contest_id
from ..races.standings import Standing, verified_standing

JSON = dict[str, Any]
SOURCE = TOURNAMENT


def tournament_source(tournament_id: uuid.UUID, number: int) -> JSON:
    """The deal source of an entrant's game of deal ``number``: the tournament, never the deck."""
    return {"source": SOURCE, "tournament": str(tournament_id), "deal": number}


def tournament_of(deal_source: Mapping[str, Any]) -> uuid.UUID | None:
    """The tournament a game was dealt for, if any."""
    return contest_id(deal_source, SOURCE)


@dataclass(frozen=True, slots=True)
class GameResult:
    """One game of an entrant, as figures: its deal, whether it is still in play, won, its seconds
    (a won game's, from the deal to the winning move) and its moves."""

    number: int
    playing: bool
    won: bool
    seconds: float
    move_count: int


@dataclass(frozen=True, slots=True)
class Tally:
    """An entrant's figures over their games; ``verified``: None while live, else whether every log replayed."""

    deals_played: int
    deals_won: int
    won_seconds: float
    move_count: int
    playing: bool
    verified: bool | None = None

    @classmethod
    def of(cls, games: Sequence[GameResult], verified: bool | None = None) -> Tally:
        won = [game for game in games if game.won]
        return cls(len(games), len(won), round(sum(game.seconds for game in won), 3),
                   sum(game.move_count for game in games), any(game.playing for game in games), verified)

    def to_json(self) -> JSON:
        return {"dealsPlayed": self.deals_played, "dealsWon": self.deals_won, "wonSeconds": self.won_seconds,
                "moveCount": self.move_count, "playing": self.playing, "verified": self.verified}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tally:
        return cls(int(data["dealsPlayed"]), int(data["dealsWon"]), float(data["wonSeconds"]),
                   int(data["moveCount"]), bool(data["playing"]), data.get("verified"))


def rank_key(tally: Tally) -> tuple[int, float, int]:
    return (-tally.deals_won, tally.won_seconds, tally.move_count)


def places(tallies: Sequence[Tally | None]) -> list[int | None]:
    """The place of each tally (None ranks nowhere): 1 + how many rank strictly ahead. Sorted once,
    so a thousand entrants cost a sort, not a million comparisons."""
    keyed = sorted((rank_key(tally), index) for index, tally in enumerate(tallies) if tally is not None)
    result: list[int | None] = [None] * len(tallies)
    previous: tuple[int, float, int] | None = None
    place = 0
    for position, (key, index) in enumerate(keyed, start=1):
        if key != previous:
            place, previous = position, key
        result[index] = place
    return result


def live_result(number: int, status: str, move_count: int, started_at: datetime,
                finished_at: datetime | None) -> GameResult:
    """A game's figures as its row shows them now (unchecked)."""
    won = status == "won" and finished_at is not None
    seconds = (finished_at - started_at).total_seconds() if won and finished_at is not None else 0.0
    return GameResult(number, status == "playing", won, seconds, move_count)


def verified_result(
    rows: Sequence[Sequence[Any]], tournament_id: uuid.UUID, number: int, ruleset: tuple[str, int],
    deck: Sequence[str],
) -> GameResult:
    """A game's figures as its stored log ``[(version, type, data, recorded_at), ...]`` (cut where the
    tournament ended) proves them: dealt deal ``number``'s deck as a game of this tournament, every
    move re-decided by the rules. Raises ``Unverified``."""
    standing: Standing = verified_standing(rows, tournament_source(tournament_id, number), ruleset, deck)
    dealt_at: datetime = rows[0][3]
    won = standing.won and standing.finished_at is not None
    seconds = (standing.finished_at - dealt_at).total_seconds() if won and standing.finished_at else 0.0
    return GameResult(number, standing.status == "playing", won, seconds, standing.move_count)


def verified_tally(games: Sequence[tuple[int, Sequence[Sequence[Any]]]], tournament_id: uuid.UUID,
                   ruleset: tuple[str, int], decks: Mapping[int, Sequence[str]]) -> Tally:
    """An entrant's final tally from the stored logs of their games ``[(deal number, log rows)]``;
    ``verified`` False (and the figures of the logs that did replay) when any log does not."""
    results: list[GameResult] = []
    verified = True
    for number, rows in games:
        try:
            results.append(verified_result(rows, tournament_id, number, ruleset, decks[number]))
        except (Unverified, KeyError):
            verified = False
    return Tally.of(results, verified)
