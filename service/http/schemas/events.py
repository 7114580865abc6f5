"""A page of a game's event log. The events themselves are the game feature's Structs (service.games.wire)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from ...games.wire import EventView
from .common import Body


class EventPage(Body):
    items: Annotated[list[EventView], Meta(description="oldest first")]
    next: Annotated[
        str, Meta(description="pass as ?cursor= for the next page (the version of this page's last event); null "
                  "at the end")
    ] | None
