"""Players: registering one (the token shown once) and a public profile."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar
from uuid import UUID

from msgspec import Meta

from .common import Body, RequestBody


class NewPlayerRequest(RequestBody):
    __schema_name__: ClassVar[str] = "NewPlayer"  # see RequestBody

    name: Annotated[str, Meta(min_length=1, max_length=40, description="1-40 characters")]


class PlayerCreated(Body):
    id: UUID
    name: str
    token: Annotated[str, Meta(description="shown only once; send it as 'Authorization: Bearer <token>'")]
    created_at: datetime


class Player(Body):
    id: UUID
    name: str
    created_at: datetime
