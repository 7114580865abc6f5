"""2026-12-05: a race that ended before it started is ``cancelled`` (with its ``cancelledReason``).

2026-12-04 knew three statuses and showed such a race as ``finished``, never started, with its
``cancelledReason``; a new status value would break a client generated from that version's
document, so that version keeps seeing ``finished``. The race is stored as finished with its
reason in both versions; only the view changed."""

from __future__ import annotations

from typing import Any

from ..version_changes import VersionChange
from . import JSON, LOBBY, RACE_VIEWS, schema_of


class CancelledRaces(VersionChange):
    description = (
        "A race that ended before it started has the status cancelled (was finished, with its "
        "cancelledReason)."
    )
    operations = (*RACE_VIEWS, LOBBY)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if isinstance(body, dict) and body.get("status") == "cancelled" and "entrants" in body:
            return {**body, "status": "finished"}
        return body

    def downgrade_message(self, operation: str, event: str, data: Any) -> Any:
        return self.downgrade_reply(operation, 200, data)

    def downgrade_schema(self, document: JSON) -> None:
        status = schema_of(document, "RaceView")["properties"]["status"]
        status["enum"] = [value for value in status["enum"] if value != "cancelled"]
        status["description"] = (
            "finished also when it was cancelled before it started (its creator deleted their account and nobody "
            "else had entered): then startedAt is null and cancelledReason says why"
        )
