"""2026-12-05: a daily game's deal names its date ``date``, as the daily deal's own view does
(2026-12-04: ``{"source": "daily", "daily": "2030-06-15", "practice": false}``). The stored source
keeps ``daily``; only the view changed."""

from __future__ import annotations

from typing import Any

from ..schemas import DailySource, MoveResult
from ..version_changes import VersionChange
from . import (
    EVENTS,
    EVENTS_NDJSON,
    GAME_VIEWS,
    JSON,
    PLAYER_GAMES,
    game_view_of,
    rename_property,
    replaced,
    schema_of,
    with_moved_view,
    with_view,
)


def _source(deal: Any) -> Any:
    if not isinstance(deal, dict) or deal.get("source") != "daily" or "date" not in deal:
        return deal
    return {("daily" if key == "date" else key): value for key, value in deal.items()}


def _event(event: Any) -> Any:
    """A GameDealt event names its deal source."""
    if not isinstance(event, dict) or event.get("type") != "GameDealt" or not isinstance(event.get("data"), dict):
        return event
    data = event["data"]
    return replaced(event, "data", replaced(data, "deal", _source(data.get("deal")))) if "deal" in data else event


def _with_deal(item: Any) -> Any:
    return replaced(item, "deal", _source(item["deal"])) if isinstance(item, dict) and "deal" in item else item


class DailyDate(VersionChange):
    description = "A daily game's deal source names its date date (was daily), in views and in GameDealt events."
    operations = (*GAME_VIEWS, EVENTS, EVENTS_NDJSON, PLAYER_GAMES)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if isinstance(body, MoveResult):  # the move route's own reply
            deal = body.game.deal
            if not isinstance(deal, DailySource):
                return body
            return with_moved_view(body, deal={"source": "daily", "daily": deal.date, "practice": deal.practice})
        if status >= 300 or not isinstance(body, dict):
            return body
        if operation in (EVENTS, PLAYER_GAMES):
            items = body.get("items")
            each = _event if operation == EVENTS else _with_deal
            return replaced(body, "items", [each(item) for item in items]) if isinstance(items, list) else body
        if operation == EVENTS_NDJSON or body.get("type") == "GameDealt":
            return _event(body)
        view = game_view_of(operation, body)
        events = body.get("events")
        if isinstance(events, list) and any(_event(event) is not event for event in events):  # a GameDealt in them
            body = replaced(body, "events", [_event(event) for event in events])
        if isinstance(body.get("event"), dict):  # a watch's game-event message
            body = replaced(body, "event", _event(body["event"]))
        if view is None or _source(view.get("deal")) is view.get("deal"):  # not a daily game
            return body
        return with_view(operation, body, _with_deal(view))

    def downgrade_message(self, operation: str, event: str, data: Any) -> Any:
        if operation == EVENTS:  # an NDJSON page of the event log, by Accept
            return _event(data)
        return self.downgrade_reply(operation, 200, data)

    def downgrade_schema(self, document: JSON) -> None:
        rename_property(schema_of(document, "DailySource"), "date", "daily")
