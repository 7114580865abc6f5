"""2026-12-05: a race entrant's game status is ``status``, as a game's is everywhere else
(2026-12-04: ``gameStatus``)."""

from __future__ import annotations

from typing import Any

from ..version_changes import VersionChange
from . import JSON, RACE_VIEWS, rename_property, replaced, schema_of


def _entrant(entrant: Any) -> Any:
    if not isinstance(entrant, dict) or "status" not in entrant:
        return entrant
    return {("gameStatus" if key == "status" else key): value for key, value in entrant.items()}


class EntrantStatus(VersionChange):
    description = "A race entrant's game status is status (was gameStatus)."
    operations = RACE_VIEWS

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if status >= 300 or not isinstance(body, dict) or not isinstance(body.get("entrants"), list):
            return body
        return replaced(body, "entrants", [_entrant(entrant) for entrant in body["entrants"]])

    def downgrade_message(self, operation: str, event: str, data: Any) -> Any:
        return self.downgrade_reply(operation, 200, data)

    def downgrade_schema(self, document: JSON) -> None:
        status = rename_property(schema_of(document, "RaceEntrant"), "status", "gameStatus")
        status.pop("description", None)
