"""The body of ``POST /watch`` (service.http.controllers.watch)."""

from __future__ import annotations

from typing import Annotated, ClassVar

from msgspec import Meta, field

from .common import RequestBody

MAX_IDS = 300  # service.streams.watch.MAX_IDS
UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
Id = Annotated[str, Meta(pattern=UUID_PATTERN, description="a UUID, 8-4-4-4-12 hex digits")]
Position = Annotated[int, Meta(ge=0, le=2**31 - 1, description="a game version, 0 .. 2^31 - 1")]


class WatchRequest(RequestBody):
    """The games and players to watch (at most 300 distinct ids in all, at least one; an id given
    twice counts once), and the versions to resume games after."""

    __schema_name__: ClassVar[str] = "WatchRequest"

    games: Annotated[
        list[Id], Meta(max_length=MAX_IDS, description="game ids: each game's messages")
    ] = field(default_factory=list)
    players: Annotated[
        list[Id], Meta(max_length=MAX_IDS, description="player ids: their games in progress and every game they start")
    ] = field(default_factory=list)
    after: Annotated[
        dict[Id, Position],
        Meta(description="resume: a game id -> the version to resume it after (its events after it, no first view)"),
    ] = field(default_factory=dict)

