"""A challenge on the wire: its view and the caller's pending ones, as msgspec Structs (camelCase on
the wire). service.challenges.challenges builds them from the challenge rows; service.http.schemas
names them for the HTTP layer and the OpenAPI document."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from msgspec import Meta, field

from ..wire import Body, PlayerRef, RulesetId


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
