"""The changes between API versions, one module each (``service.http.version_changes.VersionChange``).

Each module holds one change the newer version made, as code: how a request of the older version
becomes one of the newer, and how a reply, a stream message or an NDJSON line of the newer version
is shown in the older shape, and how the OpenAPI document changes back. ``service.http.versions``
lists, per version, the changes it introduced. The operations below are the ones the changes touch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from ..schemas import MoveResult

NEW_GAME = "POST /games"
GAME = "GET /games/{game_id}"
MOVE = "POST /games/{game_id}/moves"
STATE = "GET /games/{game_id}/states/{version}"
GAME_STREAM = "GET /games/{game_id}/stream"
EVENTS = "GET /games/{game_id}/events"
EVENTS_NDJSON = "GET /games/{game_id}/events.ndjson"
PLAYER_GAMES = "GET /players/{player_id}/games"
PLAYER_STATS = "GET /players/{player_id}/stats"
GAMES_EXPORT = "GET /players/{player_id}/games/export"
ACCOUNT_EXPORT = "GET /players/me/export"
NEW_RACE = "POST /races"
RACE = "GET /races/{race_id}"
JOIN = "POST /races/{race_id}/entries"
START = "POST /races/{race_id}/start"
LEAVE = "DELETE /races/{race_id}/entries/me"
CANCEL = "POST /races/{race_id}/cancel"
RACE_STREAM = "GET /races/{race_id}/stream"
ACCEPT = "POST /challenges/{challenge_id}/accept"
LOBBY = "GET /races/open"
DAILY = "GET /deals/daily"
DAILY_OF = "GET /deals/daily/{day}"
BOARD = "GET /deals/daily/{day}/leaderboard"
LESSONS = "GET /lessons"
LESSON = "GET /lessons/{lesson_id}"
WATCH = "GET /watch"
WATCH_POSTED = "POST /watch"

GAME_VIEWS = (NEW_GAME, GAME, MOVE, STATE, GAME_STREAM, GAMES_EXPORT, ACCOUNT_EXPORT, WATCH, WATCH_POSTED)
"""The operations whose replies, messages or lines hold a game's view."""
RACE_VIEWS = (NEW_RACE, RACE, JOIN, START, RACE_STREAM, ACCEPT, LEAVE, CANCEL)
"""The operations whose replies or messages are a race's view."""

JSON = dict[str, Any]


def game_view_of(operation: str, body: Any) -> JSON | None:
    """The game view a reply, stream message or export line of a ``GAME_VIEWS`` operation holds."""
    key = view_key(operation, body)
    view = body if key is None else body.get(key) if isinstance(body, dict) else None
    return view if isinstance(view, dict) and "table" in view else None


def view_key(operation: str, body: Any) -> str | None:
    """Where a ``GAME_VIEWS`` body holds its game view: None for the body itself, else its member:
    ``game`` in a move's reply and an export's game line, ``view`` in a watch's message."""
    if not isinstance(body, dict):
        return None
    if operation == MOVE or body.get("type") == "game":
        return "game"
    return "view" if "view" in body and "game" in body else None


def with_view(operation: str, body: JSON, view: JSON) -> JSON:
    """``body`` with ``view`` as its game view (``view_key``)."""
    key = view_key(operation, body)
    return view if key is None else replaced(body, key, view)


def with_moved_view(reply: MoveResult, **older: Any) -> MoveResult:
    """The move route's own reply (a ``PLAIN_BODIES`` operation's: the ``MoveResult`` made for this
    request, service.http.version_changes) with members of its game's view in their older shape.
    Only the view: a move appends no ``GameDealt``, the one event whose shape a change changed."""
    return msgspec.structs.replace(reply, game=msgspec.structs.replace(reply.game, **older))


def replaced(body: JSON, key: str, value: Any) -> JSON:
    """``body`` with ``key`` set to ``value``, as a new dict (replies may share their parts)."""
    return {**body, key: value}


def schema_of(document: JSON, name: str) -> JSON:
    """A component schema of an OpenAPI document, to change in place."""
    found: JSON = document["components"]["schemas"][name]
    return found


def operation_of(document: JSON, operation: str) -> JSON:
    """An operation of an OpenAPI document (``"GET /races/open"``), to change in place."""
    method, _, path = operation.partition(" ")
    found: JSON = document["paths"][path][method.lower()]
    return found


def rename_property(schema: JSON, newer: str, older: str) -> JSON:
    """A component schema's property ``newer`` named ``older`` again (its properties and required
    kept in name order, as the document lists them); the property's schema, to change further."""
    properties = schema["properties"]
    moved: JSON = properties.pop(newer)
    properties[older] = moved
    schema["properties"] = dict(sorted(properties.items()))
    schema["required"] = sorted(older if name == newer else name for name in schema["required"])
    return moved


def with_deal_sources(operation: str, body: Any, source: Callable[[Any], Any]) -> Any:
    """``body`` (a reply or message of ``GAME_VIEWS``, ``EVENTS``, ``EVENTS_NDJSON`` or
    ``PLAYER_GAMES``) with every deal source it shows passed through ``source``: a game view's
    ``deal``, a listed game's, a GameDealt event's ``data.deal``."""
    def event(item: Any) -> Any:
        if not isinstance(item, dict) or item.get("type") != "GameDealt" or not isinstance(item.get("data"), dict):
            return item
        data = item["data"]
        return replaced(item, "data", replaced(data, "deal", source(data.get("deal")))) if "deal" in data else item

    def with_deal(item: Any) -> Any:
        return replaced(item, "deal", source(item["deal"])) if isinstance(item, dict) and "deal" in item else item

    if not isinstance(body, dict):
        return body
    if operation in (EVENTS, PLAYER_GAMES) and isinstance(body.get("items"), list):
        return replaced(body, "items", [(event if operation == EVENTS else with_deal)(item) for item in body["items"]])
    if operation == EVENTS_NDJSON or body.get("type") == "GameDealt":
        return event(body)
    view = game_view_of(operation, body)
    events = body.get("events")
    if isinstance(events, list) and any(event(item) is not item for item in events):  # a move's reply, an export line
        body = replaced(body, "events", [event(item) for item in events])
    if isinstance(body.get("event"), dict):  # a watch's game-event message
        body = replaced(body, "event", event(body["event"]))
    if view is None or source(view.get("deal")) is view.get("deal"):  # nothing to change: no copy
        return body
    return with_view(operation, body, with_deal(view))
