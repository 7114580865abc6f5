"""Races (service/races/races.py): creating one; the race view, the lobby and a player's record are
the race feature's Structs (service.races.wire)."""

from __future__ import annotations

from typing import Annotated, ClassVar

from msgspec import Meta

from .common import RequestBody, RulesetId
from .deals import RaceDealRequest


class NewRaceRequest(RequestBody):
    __schema_name__: ClassVar[str] = "NewRace"  # see RequestBody

    max_entrants: Annotated[int, Meta(ge=2, le=8, description="2 .. 8 players, the creator included")]
    ruleset: RulesetId | None = None
    deal: RaceDealRequest | None = None
    time_limit_seconds: Annotated[
        int, Meta(ge=1, le=86_400, description="the race ends this long after its start (1 .. 86400); none: no limit")
    ] | None = None
    rated: Annotated[
        bool,
        Meta(description="the race changes its entrants' ratings once it finishes (default false); it needs a secret "
             "deal: with a deal it is 400 rated_race_needs_secret_deal"),
    ] | None = None
