"""Stats on the wire: a player's figures per ruleset, the totals over every player, and a daily
leaderboard's entries, as msgspec Structs (camelCase on the wire). service.stats.views is the one
place that builds them from what service.stats.queries reads; service.http.schemas names them for
the HTTP layer and the OpenAPI document (and composes a player's stats and a leaderboard page of
them)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from msgspec import Meta

from ..wire import Body, PlayerRef, RulesetId

WinRate = Annotated[
    float, Meta(ge=0, le=1, description="won / played, rounded to 4 places; null before the first finished game")
]
FewestMoves = Annotated[int, Meta(description="the lowest moveCount of an unassisted win")]
FastestSeconds = Annotated[
    float, Meta(description="the shortest time from deal to winning move of an unassisted win, in seconds")
]


class RulesetStats(Body):
    ruleset: Annotated[RulesetId, Meta(description="a ruleset id (all its versions together)")]
    played: Annotated[int, Meta(description="finished games: won, stalled or resigned")]
    won: int
    win_rate: WinRate | None
    current_streak: Annotated[int, Meta(description="wins in a row up to the last finished game")]
    best_streak: int
    fewest_moves: FewestMoves | None
    fastest_seconds: FastestSeconds | None
    undos: Annotated[int, Meta(description="undos in finished games")]


class RulesetTotals(Body):
    ruleset: RulesetId
    players: Annotated[int, Meta(description="players who finished a game under this ruleset")]
    played: int
    won: int
    win_rate: WinRate | None
    fewest_moves: FewestMoves | None
    fastest_seconds: FastestSeconds | None
    undos: int
    current_streak: Annotated[int, Meta(description="the longest winning streak running now, any player")]
    best_streak: Annotated[int, Meta(description="the longest winning streak any player has had")]


class SourceTotals(Body):
    source: Literal["seed", "deck", "pool", "daily", "race"]
    played: int
    won: int
    win_rate: WinRate | None
    fewest_moves: FewestMoves | None
    fastest_seconds: FastestSeconds | None
    undos: int


class GlobalStats(Body):
    rulesets: list[RulesetTotals]
    sources: Annotated[list[SourceTotals], Meta(description="per deal source, all rulesets together")]


class LeaderboardEntry(Body):
    """A player's entry: their first game of the date's deal (dealt on that date), once ended."""

    rank: Annotated[int, Meta(ge=1)] | None
    player: PlayerRef
    game: UUID
    status: Literal["won", "stalled", "resigned"]
    assisted: Annotated[bool, Meta(description="a solver hint was used: never ranked")]
    unranked: Annotated[
        Literal["not-won", "assisted", "practiced", "unverified", "late"],
        Meta(description="why the entry has no rank: not a win; a solver hint; a practice game of the deal was "
             "dealt before the entry ended; its stored event log does not replay through the rules to a win on "
             "that date's deal; won after the date was over"),
    ] | None
    move_count: Annotated[int, Meta(description="the game's moveCount")]
    seconds: Annotated[float, Meta(description="from the deal to the game's last move")]
    finished_at: datetime
