"""Games: dealing one and a player's list of games (a game's view is the game feature's Struct,
service.games.wire)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar, Literal
from uuid import UUID

from msgspec import Meta

from ...deals.wire import DealSource
from .common import Body, RequestBody, RulesetId, RulesetRef
from .deals import DealRequest


class NewGameRequest(RequestBody):
    __schema_name__: ClassVar[str] = "NewGame"  # see RequestBody

    ruleset: RulesetId | None = None
    deal: DealRequest | None = None


class GameSummary(Body):
    id: UUID
    ruleset: RulesetRef
    deal: DealSource
    status: Literal["playing", "won", "stalled", "resigned"]
    version: int
    move_count: int
    undo_count: int
    assisted: bool
    started_at: datetime
    finished_at: datetime | None


class GameList(Body):
    items: Annotated[list[GameSummary], Meta(description="newest first")]
    next: Annotated[
        str, Meta(description="pass as ?cursor= for the next (older) page; null on the last page")
    ] | None
