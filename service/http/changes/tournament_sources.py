"""2026-12-05: a tournament's game names its deal source ``tournament`` (with the tournament and the
deal number).

2026-12-04 knew no tournaments: a client generated from its document refuses a deal source it does
not know. So that version shows a tournament game's deal as ``{"source": "deck"}`` (dealt from a
deck that is not echoed, which is what it is there). The games are stored with their tournament
source in both versions; only the views changed. (``GET /stats`` lists no tournament source in
either version: service.stats.projections.UNLISTED_SOURCES.)"""

from __future__ import annotations

from typing import Any

from ..schemas import DeckSource, MoveResult, TournamentSource
from ..version_changes import VersionChange
from . import EVENTS, EVENTS_NDJSON, GAME_VIEWS, JSON, PLAYER_GAMES, schema_of, with_deal_sources, with_moved_view

SOURCE = "tournament"


def _source(deal: Any) -> Any:
    return {"source": "deck"} if isinstance(deal, dict) and deal.get("source") == SOURCE else deal


class TournamentSources(VersionChange):
    description = "A tournament's game has the deal source tournament (was deck), in views and GameDealt events."
    operations = (*GAME_VIEWS, EVENTS, EVENTS_NDJSON, PLAYER_GAMES)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if isinstance(body, MoveResult):  # the move route's own reply
            return with_moved_view(body, deal=DeckSource()) if isinstance(body.game.deal, TournamentSource) else body
        return body if status >= 300 else with_deal_sources(operation, body, _source)

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
