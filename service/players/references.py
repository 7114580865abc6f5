"""A player as every view names one: ``{"id", "name", "bot"}`` (a game's player, a race's creator
and entrants, a leaderboard's entries, the lobby). A deleted player keeps their id and shows the
deleted name (``service.store.players.DELETED_NAME``)."""

from __future__ import annotations

import uuid
from typing import Any


def player_ref(player_id: uuid.UUID | str, name: str, bot: bool) -> dict[str, Any]:
    return {"id": str(player_id), "name": name, "bot": bot}
