"""Players: registering one (the token shown once) and the player's tokens (a public profile is the
players feature's Struct, service.players.wire)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar, Literal
from uuid import UUID

from msgspec import Meta

from .common import Body, RequestBody

Scope = Literal["play", "read-private", "account"]


class NewPlayerRequest(RequestBody):
    __schema_name__: ClassVar[str] = "NewPlayer"  # see RequestBody

    name: Annotated[str, Meta(min_length=1, max_length=40, description="1-40 characters")]
    token_name: (
        Annotated[str, Meta(min_length=1, max_length=100, description="the first token's name ('first token')")]
        | None
    ) = None
    bot: Annotated[bool, Meta(description="a bot account: every view of the player says so (default false)")] = False


class NewTokenRequest(RequestBody):
    """``POST /players/me/tokens``: a token for one client (a phone, a bot, the web table)."""

    name: Annotated[str, Meta(min_length=1, max_length=100, description="1-100 characters, e.g. 'phone'")]
    scopes: Annotated[
        list[Scope],
        Meta(min_length=1, max_length=3, description="what it may do: play, read-private, account (each once)"),
    ]
    expires_in_days: (
        Annotated[int, Meta(ge=1, le=3650, description="days until it expires (1-3650); null: never")] | None
    ) = None


class PlayerCreated(Body):
    id: UUID
    name: str
    token: Annotated[str, Meta(description="shown only once; send it as 'Authorization: Bearer <token>'")]
    created_at: datetime
    bot: Annotated[bool, Meta(description="a bot account")]


class TokenView(Body):
    """A token as listed: never its secret."""

    id: UUID
    name: str
    scopes: list[Scope]
    created_at: datetime
    expires_at: datetime | None


class TokenCreated(TokenView):
    token: Annotated[str, Meta(description="shown only once; send it as 'Authorization: Bearer <token>'")]


class TokenList(Body):
    tokens: list[TokenView]


class Me(Body):
    """The player behind a bearer token, and that token."""

    id: UUID
    name: str
    created_at: datetime
    token: TokenView
    bot: Annotated[bool, Meta(description="a bot account")]
    accept_challenges_from: Annotated[
        Literal["everyone", "humans", "nobody"],
        Meta(description="whom the player accepts challenges from (PATCH /players/me sets it)"),
    ] = "everyone"
