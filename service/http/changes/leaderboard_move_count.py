"""2026-12-05: a leaderboard entry's moves are ``moveCount``, as a game's are everywhere else
(2026-12-04: ``moves``)."""

from __future__ import annotations

from typing import Any

from ..version_changes import VersionChange
from . import BOARD, JSON, rename_property, replaced, schema_of


def _entry(entry: Any) -> Any:
    if not isinstance(entry, dict) or "moveCount" not in entry:
        return entry
    return {("moves" if key == "moveCount" else key): value for key, value in entry.items()}


class LeaderboardMoveCount(VersionChange):
    description = "A leaderboard entry's moves are moveCount (was moves)."
    operations = (BOARD,)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if status >= 300 or not isinstance(body, dict) or not isinstance(body.get("items"), list):
            return body
        return replaced(body, "items", [_entry(entry) for entry in body["items"]])

    def downgrade_schema(self, document: JSON) -> None:
        rename_property(schema_of(document, "LeaderboardEntry"), "moveCount", "moves")
