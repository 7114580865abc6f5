"""2026-12-05: a daily deal and its leaderboard name their ruleset as every other view does,
``{"id", "version"}`` (2026-12-04: ``ruleset``, the id, and ``rulesetVersion``)."""

from __future__ import annotations

from typing import Any

from ..version_changes import VersionChange
from . import BOARD, DAILY, DAILY_OF, JSON, schema_of


class DailyRuleset(VersionChange):
    description = (
        "A daily deal's and its leaderboard's ruleset is {\"id\", \"version\"} (was ruleset and "
        "rulesetVersion)."
    )
    operations = (DAILY, DAILY_OF, BOARD)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if status >= 300 or not isinstance(body, dict) or "ruleset" not in body:
            return body
        ruleset = body["ruleset"]
        shown: JSON = {}
        for key, value in body.items():
            if key == "ruleset":
                shown["ruleset"] = ruleset.get("id") if isinstance(ruleset, dict) else None
                shown["rulesetVersion"] = ruleset.get("version") if isinstance(ruleset, dict) else None
            else:
                shown[key] = value
        return shown

    def downgrade_schema(self, document: JSON) -> None:
        daily = schema_of(document, "DailyDeal")
        daily["properties"]["ruleset"] = {
            "$ref": "#/components/schemas/RulesetId",
            "description": "the ruleset id the deal is played under: always open-runs",
        }
        daily["properties"]["rulesetVersion"] = {
            "description": "the version of that ruleset the deal's games are dealt under", "type": "integer",
        }
        board = schema_of(document, "Leaderboard")
        board["properties"]["ruleset"] = {
            "description": "the daily deal's ruleset id; null if no deal was made for that date",
            "oneOf": [{"$ref": "#/components/schemas/RulesetId"}, {"type": "null"}],
        }
        board["properties"]["rulesetVersion"] = {
            "description": "its version; null with the ruleset", "oneOf": [{"type": "integer"}, {"type": "null"}],
        }
        for schema in (daily, board):
            schema["properties"] = dict(sorted(schema["properties"].items()))
            schema["required"] = sorted({*schema["required"], "rulesetVersion"})
