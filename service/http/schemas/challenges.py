"""Challenges (service/challenges): making one, its view, the caller's pending ones, and whom a
player accepts challenges from."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from msgspec import Meta, field

from .common import Body, PlayerRef, RequestBody, RulesetId

ChallengePolicy = Literal["everyone", "humans", "nobody"]


class NewChallengeRequest(RequestBody):
    to: Annotated[UUID, Meta(description="the player challenged")]
    ruleset: RulesetId | None = None
    rated: Annotated[bool, Meta(description="the race changes both players' ratings (default false)")] = False
    time_limit_seconds: Annotated[
        int, Meta(ge=1, le=86_400, description="the race ends this long after its start (1 .. 86400); none: no limit")
    ] | None = None


class ChallengeView(Body):
    id: UUID
    status: Annotated[
        Literal["pending", "accepted", "declined", "cancelled", "expired"],
        Meta(description="pending until accepted, declined (by its recipient), cancelled (by its sender, or when "
             "either account is deleted) or expired (CHALLENGE_EXPIRY_SECONDS after it was made)"),
    ]
    from_: Annotated[PlayerRef, Meta(description="who made it")] = field(name="from")
    to: Annotated[PlayerRef, Meta(description="who was challenged")]
    ruleset: RulesetId
    rated: bool
    time_limit_seconds: int | None
    created_at: datetime
    expires_at: datetime
    ended_at: Annotated[datetime, Meta(description="when it was accepted, declined, cancelled or expired")] | None
    race: Annotated[UUID, Meta(description="the race an accepted challenge started")] | None


class ChallengeList(Body):
    items: Annotated[list[ChallengeView], Meta(description="the caller's pending challenges, both ways, newest first")]
    next: Annotated[
        str, Meta(description="the cursor of the next page (pass it as ?cursor=); null on the last page")
    ] | None


class AccountSettingsRequest(RequestBody):
    """``PATCH /players/me``: the account's settings."""

    accept_challenges_from: Annotated[
        ChallengePolicy, Meta(description="whom the player accepts challenges from: everyone, humans (no bots) or "
                              "nobody")
    ]
