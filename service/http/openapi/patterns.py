"""The patterns the controllers and the domain enforce, stated for the OpenAPI document's
parameters (``schema_extra`` on their ``Parameter``, built by ``header``), and the media types and
names the other modules of service.http.openapi share.

Each pattern says what its parser accepts (``IF_MATCH`` and ``IDEMPOTENCY_KEY``:
service.http.controllers.common; ``VERSION_HEADER``: service.http.controllers.streams), so a
request the document allows is never refused as malformed.
"""

from __future__ import annotations

from typing import Any

from litestar.openapi.spec import OpenAPIType

from domain import ALL_RULESETS

DAILY_DATE = "^(?:today|[0-9]{4}-[0-9]{2}-[0-9]{2})$"
IF_MATCH = '^[ \\t]*(?:\\*|(?:W/)?"[0-9]{1,12}"|[0-9]{1,12})[ \\t]*$'
IDEMPOTENCY_KEY = "^[!-~]{1,255}$"
VERSION_HEADER = "^[ \\t]*[0-9]{1,10}[ \\t]*$"
ETAG = '^"[0-9]+(-hidden)?"$'
NDJSON = "application/x-ndjson"
EVENT_STREAM = "text/event-stream"
RULESET_IDS = sorted({ruleset.id for ruleset in ALL_RULESETS})
SUITS = ["S", "H", "D", "C"]
COMPONENTS = "#/components/schemas/"


def header(pattern: str, description: str) -> dict[str, Any]:
    """``schema_extra`` for an optional header: a string matching ``pattern`` (never null)."""
    return {"one_of": None, "type": OpenAPIType.STRING, "pattern": pattern, "description": description}
