"""2026-12-05: a ruleset is ``{"id", "version"}`` wherever a view names one with its version, as a
game's view always did: a daily deal, its leaderboard and a lesson (2026-12-04: ``ruleset``, the
id, and ``rulesetVersion`` beside it)."""

from __future__ import annotations

from typing import Any

from ..version_changes import VersionChange
from . import BOARD, DAILY, DAILY_OF, JSON, LESSON, LESSONS, schema_of


def _split(body: Any) -> Any:
    """A view whose ``ruleset`` is a reference, with the id there and its version beside it."""
    if not isinstance(body, dict) or "ruleset" not in body:
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


class RulesetReferences(VersionChange):
    description = (
        "A daily deal's, its leaderboard's and a lesson's ruleset is {\"id\", \"version\"} (was ruleset and "
        "rulesetVersion), as in a game's view."
    )
    operations = (DAILY, DAILY_OF, BOARD, LESSONS, LESSON)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if status >= 300 or not isinstance(body, dict):
            return body
        if operation == LESSONS and isinstance(body.get("lessons"), list):
            return {**body, "lessons": [_split(lesson) for lesson in body["lessons"]]}
        return _split(body)

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
        lesson = schema_of(document, "LessonInfo")
        lesson["properties"]["ruleset"] = {
            "$ref": "#/components/schemas/RulesetId",
            "description": "the ruleset a lesson game is dealt under (classic)",
        }
        lesson["properties"]["rulesetVersion"] = {"type": "integer"}
        for schema in (daily, board, lesson):
            schema["properties"] = dict(sorted(schema["properties"].items()))
            schema["required"] = sorted({*schema["required"], "rulesetVersion"})
