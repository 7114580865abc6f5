"""Challenges (service/challenges): making one, and whom a player accepts challenges from; its view
and the caller's pending ones are the challenge feature's Structs (service.challenges.wire)."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from msgspec import Meta

from .common import RequestBody, RulesetId

ChallengePolicy = Literal["everyone", "humans", "nobody"]


class NewChallengeRequest(RequestBody):
    to: Annotated[UUID, Meta(description="the player challenged")]
    ruleset: RulesetId | None = None
    rated: Annotated[bool, Meta(description="the race changes both players' ratings (default false)")] = False
    time_limit_seconds: Annotated[
        int, Meta(ge=1, le=86_400, description="the race ends this long after its start (1 .. 86400); none: no limit")
    ] | None = None


class AccountSettingsRequest(RequestBody):
    """``PATCH /players/me``: the account's settings."""

    accept_challenges_from: Annotated[
        ChallengePolicy, Meta(description="whom the player accepts challenges from: everyone, humans (no bots) or "
                              "nobody")
    ]
