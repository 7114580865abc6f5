"""Tournaments (service/tournaments): creating one; the tournament view with its standings and the
list of tournaments are the tournament feature's Structs (service.tournaments.wire)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar

from msgspec import Meta

from .common import RequestBody, RulesetId


class NewTournamentRequest(RequestBody):
    __schema_name__: ClassVar[str] = "NewTournament"  # see RequestBody

    deals: Annotated[int, Meta(description="how many deals every entrant plays, in the same order: 2 .. 12 "
                               "(else 400 tournament_deals_out_of_range)")]
    starts_at: Annotated[datetime, Meta(description="when dealing starts (with a UTC offset); not in the past "
                                        "(400 tournament_start_passed), at most 30 days ahead")]
    minutes: Annotated[int, Meta(description="how long it runs from startsAt: 1 .. 1440 "
                                 "(else 400 tournament_minutes_out_of_range)")]
    ruleset: RulesetId | None = None
    rated: Annotated[bool, Meta(description="its final standings change the entrants' ratings (default false)")] = False
