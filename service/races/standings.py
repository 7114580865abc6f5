"""A race's standings: each entrant's figures, their places, and the check that makes a place final.

Places (API.md): wins first, by finishing time; then the rest by cards on foundations, then by
fewer moves. Entrants equal on all of that share a place (1, 2, 2, 4). A place counts once the
entrant's *stored event log* has been re-decided move by move through the rules
(``domain.verify.redecide``): when their game ends, and for everyone when the race finishes
(then cut where it ended, and frozen). A log that does not replay, or was not dealt the race's
deck, ranks nowhere (``verified: false``, no place). Entrants still playing have live places.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain import GameState, Status
from domain.codec import restore
from domain.verify import Unverified, redecide

from .rows import EntrantRow

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Standing:
    """One entrant's figures at a moment of the race."""

    status: str  # the game's status: playing, won, stalled, resigned
    cards_on_foundations: int
    move_count: int
    finished_at: datetime | None
    assisted: bool
    verified: bool | None = None  # None while the race runs; then whether the stored log replayed

    @classmethod
    def of(cls, state: GameState, finished_at: datetime | None, verified: bool | None = None) -> Standing:
        ended = not state.playing
        return cls(state.status.value, state.cards_on_foundations, state.move_count,
                   finished_at if ended else None, state.assisted, verified)

    @property
    def won(self) -> bool:
        return self.status == Status.WON.value

    def to_json(self) -> JSON:
        return {
            "status": self.status,
            "cardsOnFoundations": self.cards_on_foundations,
            "moveCount": self.move_count,
            "finishedAt": None if self.finished_at is None else self.finished_at.isoformat(),
            "assisted": self.assisted,
            "verified": self.verified,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Standing:
        finished = data.get("finishedAt")
        return cls(
            str(data["status"]), int(data["cardsOnFoundations"]), int(data["moveCount"]),
            None if finished is None else datetime.fromisoformat(str(finished)), bool(data["assisted"]),
            data.get("verified"),
        )


def _rank_key(standing: Standing) -> tuple[int, float, int, int]:
    if standing.won and standing.finished_at is not None:
        return (0, standing.finished_at.timestamp(), 0, 0)
    return (1, 0.0, -standing.cards_on_foundations, standing.move_count)


def places(standings: Sequence[Standing | None]) -> list[int | None]:
    """The place of each standing (None ranks nowhere): 1 + how many rank strictly ahead."""
    keys = [None if s is None else _rank_key(s) for s in standings]
    ranked = [key for key in keys if key is not None]
    return [None if key is None else 1 + sum(other < key for other in ranked) for key in keys]


def verified_standing(
    rows: Sequence[Sequence[Any]], race_source: Mapping[str, Any], ruleset: tuple[str, int], deck: Sequence[str]
) -> Standing:
    """The standing an entrant's stored log ``[(version, type, data, recorded_at), ...]`` (cut where
    the race ended) proves: versions 1..n, dealt the race's deck under its ruleset as a game of this
    race, every move re-decided by the rules and producing exactly the stored events. Raises
    ``Unverified``."""
    if not rows:
        raise Unverified("the log is empty")
    if [row[0] for row in rows] != list(range(1, len(rows) + 1)):
        raise Unverified("the versions are not 1..n")
    kind, dealt = rows[0][1], rows[0][2]
    if (
        kind != "GameDealt"
        or not isinstance(dealt, Mapping)
        or dealt.get("deal") != dict(race_source)
        or dealt.get("ruleset") != {"id": ruleset[0], "version": ruleset[1]}
        or dealt.get("deck") != list(deck)
    ):
        raise Unverified("the game was not dealt this race's deck")
    state = redecide([(row[1], row[2]) for row in rows])
    return Standing.of(state, rows[-1][3], verified=True)


def claimed(entrant: EntrantRow, verified: bool | None = None) -> Standing:
    """The figures the entrant's game shows now (its snapshot and the events after it)."""
    if entrant.game_snapshot is None or entrant.game_version is None:
        return Standing("playing", 0, 0, None, False, verified)
    state = restore(entrant.game_snapshot, entrant.game_tail, entrant.game_version)
    return Standing.of(state, entrant.game_finished_at, verified)
