"""A player on the wire: the public profile (``GET /players/{id}``), as a msgspec Struct (camelCase
on the wire). ``Accounts.profile`` builds it; service.http.schemas names it for the HTTP layer and
the OpenAPI document."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from uuid import UUID

from msgspec import Meta

from ..wire import Body


class Player(Body):
    id: UUID
    name: str
    created_at: datetime
    bot: Annotated[bool, Meta(description="a bot account")]
