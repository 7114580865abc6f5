"""2026-12-05: a tournament's game names its deal source ``tournament`` (with the tournament and the
deal number), and ``GET /stats`` counts tournament games as a source of their own.

2026-12-04 knew no tournaments: a client generated from its document refuses a deal source or a
stats source it does not know. So that version shows a tournament game's deal as ``{"source":
"deck"}`` (dealt from a deck that is not echoed, which is what it is there) and leaves the
tournament row out of the stats' sources. The games are stored with their tournament source in
both versions; only the views changed."""

from __future__ import annotations

from typing import Any

from ..version_changes import VersionChange
from . import EVENTS, EVENTS_NDJSON, GAME_VIEWS, JSON, PLAYER_GAMES, STATS, replaced, schema_of, with_deal_sources

SOURCE = "tournament"


def _source(deal: Any) -> Any:
    return {"source": "deck"} if isinstance(deal, dict) and deal.get("source") == SOURCE else deal


class TournamentSources(VersionChange):
    description = ("A tournament's game has the deal source tournament (was deck), and GET /stats lists "
                   "tournament games as a source of their own (were left out).")
    operations = (*GAME_VIEWS, EVENTS, EVENTS_NDJSON, PLAYER_GAMES, STATS)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if status >= 300:
            return body
        if operation == STATS:
            sources = body.get("sources") if isinstance(body, dict) else None
            if not isinstance(sources, list):
                return body
            return replaced(body, "sources", [row for row in sources
                                              if not (isinstance(row, dict) and row.get("source") == SOURCE)])
        return with_deal_sources(operation, body, _source)

    def downgrade_message(self, operation: str, event: str, data: Any) -> Any:
        if operation == EVENTS:  # an NDJSON page of the event log, by Accept
            return with_deal_sources(EVENTS_NDJSON, data, _source)
        return self.downgrade_reply(operation, 200, data)

    def downgrade_schema(self, document: JSON) -> None:
        deal_source = schema_of(document, "DealSource")
        deal_source["oneOf"] = [member for member in deal_source["oneOf"]
                                if member.get("$ref") != "#/components/schemas/TournamentSource"]
        mapping = deal_source.get("discriminator", {}).get("mapping")
        if isinstance(mapping, dict):
            mapping.pop(SOURCE, None)
        document["components"]["schemas"].pop("TournamentSource", None)
        source = schema_of(document, "SourceTotals")["properties"]["source"]
        source["enum"] = [value for value in source["enum"] if value != SOURCE]
