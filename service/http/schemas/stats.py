"""Stats and the daily leaderboard (service/stats/projections.py, service/stats/queries.py): a
player's stats (their figures, service.stats.wire, and their races, service.races.wire) and a
leaderboard page (its entries, service.stats.wire, on the date's daily deal)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from msgspec import Meta

from ...races.wire import RaceRecord
from ...stats.wire import LeaderboardEntry, RulesetStats
from .common import Body, DayText, PlayerRef, RulesetRef


class PlayerStats(Body):
    player: PlayerRef
    rulesets: list[RulesetStats]
    races: RaceRecord  # races branch


class Leaderboard(Body):
    date: DayText
    ruleset: Annotated[
        RulesetRef, Meta(description="the daily deal's ruleset and its version; null if no deal was made for that date")
    ] | None
    closes_at: Annotated[datetime, Meta(description="the end of the date (UTC): from then on no entry can gain a rank")]
    closed: Annotated[bool, Meta(description="the date is over: the ranks are final")]
    items: Annotated[
        list[LeaderboardEntry],
        Meta(description="one per player (their one game of the deal dealt during the date): the ranked "
             "ones first, by moves, then seconds, then who finished first (unassisted wins whose stored event log "
             "replays through the rules to a win, won within the date); then the unranked ones, as they finished"),
    ]
    next: Annotated[
        str, Meta(description="pass as ?cursor= for the next page; null on the last page (each rank counts the "
                  "entries better than it, so ranks run on across pages)")
    ] | None
