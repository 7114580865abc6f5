"""2026-12-05: a deal request is tagged by its ``source``, as the deal's view is:
``{"source": "seed", "seed": 7}``, ``{"source": "daily", "date": "today"}``, and a race may ask
for ``{"source": "secret"}``. 2026-12-04 took one-field objects (``{"seed": 7}``,
``{"daily": "today"}``); such a request is checked in that version's words and tagged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import BadRequest
from ..version_changes import VersionChange
from ..wording import either, quoted_list
from . import JSON, NEW_GAME, NEW_RACE, schema_of

_GAME_SOURCES = ("seed", "pool", "daily", "deck", "lesson")
_RACE_SOURCES = ("seed", "pool", "deck")


class TaggedDealRequests(VersionChange):
    description = ("A deal request is tagged by source, like the deal's view: {\"source\": \"seed\", \"seed\": 7}, "
                   "{\"source\": \"daily\", \"date\": \"today\"}; a race may ask for {\"source\": \"secret\"}.")
    operations = (NEW_GAME, NEW_RACE)

    def upgrade_request(
        self, operation: str, query: dict[str, list[str]], body: Any, headers: Sequence[tuple[bytes, bytes]]
    ) -> Any:
        if not isinstance(body, dict) or not isinstance(body.get("deal"), dict):
            return body  # no deal, or one the newer version refuses in the same words
        game = operation == NEW_GAME
        return {**body, "deal": _tagged(body["deal"], _GAME_SOURCES if game else _RACE_SOURCES,
                                        "a deal" if game else "a race's deal")}

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        """A refused deal names the field the request gave, and the example is of that version."""
        if status == 400 and isinstance(body, dict) and isinstance(body.get("detail"), str):
            detail = body["detail"].replace("'deal.date'", "'deal.daily'")
            detail = detail.replace('{"source": "seed", "seed": 7}', '{"seed": 7}')
            return {**body, "detail": detail}
        return body

    def downgrade_schema(self, document: JSON) -> None:
        for name, field in (("SeedDealRequest", "seed"), ("PoolDealRequest", "pool"), ("DailyDealRequest", "date"),
                            ("DeckDealRequest", "deck"), ("LessonDealRequest", "lesson")):
            schema = schema_of(document, name)
            properties = schema["properties"]
            properties.pop("source")
            if field == "date":
                properties["daily"] = properties.pop("date")
            schema["required"] = ["daily" if field == "date" else field]
        schema_of(document, "DealRequest")["description"] = (
            'Exactly one deal source: {"seed": N}, {"pool": N}, {"daily": "YYYY-MM-DD" or "today"} (open-runs only, '
            'from today back 366 days), {"deck": [52 codes]} (each card once) or {"lesson": id} (classic only, the '
            "default for a lesson)."
        )
        race_deal = schema_of(document, "RaceDealRequest")
        race_deal["oneOf"] = [one for one in race_deal["oneOf"] if "SecretDealRequest" not in one.get("$ref", "")]
        race_deal["description"] = (
            'Exactly one deal source: {"seed": N}, {"pool": N} or {"deck": [52 codes]}; a race takes no daily or '
            "lesson deal. Leave the deal out for one nobody knows in advance."
        )
        document["components"]["schemas"].pop("SecretDealRequest", None)


def _tagged(deal: JSON, sources: tuple[str, ...], whose: str) -> JSON:
    """A one-field deal of 2026-12-04, checked as that version checked it, tagged by its source."""
    unknown = [name for name in deal if name not in sources]
    if unknown:
        raise BadRequest(f"'deal' has no field {quoted_list(str(name) for name in unknown)}: "
                         f"{whose} is an object with exactly one of {either(sources)}")
    if len(deal) != 1:
        given = f"not {' and '.join(deal)}" if deal else "not none"
        raise BadRequest(f"'deal' names exactly one source ({either(sources)}), {given}")
    ((name, value),) = deal.items()
    return {"source": name, ("date" if name == "daily" else name): value}
